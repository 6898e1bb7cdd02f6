/**
 * Tests of the fake Slack's modals: `views.open` exchanging a trigger_id the fake sent (once,
 * within 3 s, no scope needed) for a view checked as Slack checks it, and `view_submission`
 * payloads sent to a real Bolt app (`app.view`) over HTTP and Socket Mode, with the ack's
 * `response_action: 'errors'` keeping the modal open. Also: message shortcuts need `commands`.
 */
import type { App, ViewSubmitAction } from '@slack/bolt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack } from '../slack.ts';
import { boltHttpApp, boltSocketApp, handClock, slackError, slackFailure, webClient } from './test-helpers.ts';

const clock = handClock();
let fake: FakeSlack;
let stops: Array<() => Promise<void>> = [];

beforeAll(async () => {
  fake = await FakeSlack.start({ channels: [{ id: 'C0ONE', name: 'one' }], now: clock.now });
});
afterEach(async () => {
  for (const stop of stops) await stop();
  stops = [];
  fake.reset();
});
afterAll(async () => {
  await fake.close();
});

/** A valid modal with one required input (at most 20 characters). */
const VIEW = {
  type: 'modal',
  callback_id: 'ask',
  private_metadata: '{"c":"C0ONE"}',
  title: { type: 'plain_text', text: 'Ask about a message' },
  submit: { type: 'plain_text', text: 'Ask' },
  blocks: [
    {
      type: 'input',
      block_id: 'q',
      label: { type: 'plain_text', text: 'Your question' },
      element: { type: 'plain_text_input', action_id: 'q', max_length: 20 },
    },
  ],
};

/** A Bolt app (HTTP) that acks shortcuts and records the view submissions it gets, acking with `answer`. */
async function app(answer: (view: ViewSubmitAction) => Record<string, unknown> | undefined = () => undefined) {
  const submissions: ViewSubmitAction[] = [];
  const setup = (a: App) => {
    a.shortcut('any', async ({ ack }) => ack());
    a.view('ask', async ({ ack, body }) => {
      submissions.push(body as ViewSubmitAction);
      const reply = answer(body as ViewSubmitAction);
      await (reply ? ack(reply as never) : ack());
    });
  };
  const bolt = await boltHttpApp(fake, setup);
  stops.push(bolt.stop);
  return { url: bolt.url, submissions };
}

/** A trigger_id the fake sent with a message shortcut. */
async function trigger(url: string): Promise<string> {
  const ts = fake.channelMessageEvent({ channel: 'C0ONE', user: 'U0ALICE', text: 'hello' }).ts as string;
  const sent = await fake.sendMessageShortcut(url, {
    user: 'U0ALICE',
    channel: 'C0ONE',
    messageTs: ts,
    callbackId: 'any',
  });
  expect(sent.ackedInTime).toBe(true);
  return sent.triggerId;
}

describe('FakeSlack views.open', () => {
  it('exchanges a trigger the fake sent for a modal, once and within 3 s; an unknown one is invalid', async () => {
    const { url } = await app();
    const client = webClient(fake);
    const id = await trigger(url);
    const opened = await client.views.open({ trigger_id: id, view: VIEW as never });
    expect(opened.view).toMatchObject({
      id: expect.stringMatching(/^V[0-9A-F]+$/),
      team_id: fake.teamId,
      callback_id: 'ask',
      private_metadata: '{"c":"C0ONE"}',
      state: { values: {} },
    });
    expect(fake.views.at(-1)).toMatchObject({ id: opened.view!.id, user: 'U0ALICE', state: 'open' });
    expect(await slackError(client.views.open({ trigger_id: id, view: VIEW as never }))).toBe('exchanged_trigger_id');
    expect(await slackError(client.views.open({ trigger_id: '1.2.abc', view: VIEW as never }))).toBe(
      'invalid_trigger_id',
    );
    const late = await trigger(url);
    clock.advance(3_001);
    expect(await slackError(client.views.open({ trigger_id: late, view: VIEW as never }))).toBe('expired_trigger_id');
  });

  it('refuses a view Slack would refuse, naming the field, without spending the trigger', async () => {
    const { url } = await app();
    const client = webClient(fake);
    const id = await trigger(url);
    const input = VIEW.blocks[0]!;
    const bad: Array<[unknown, string]> = [
      [{ ...VIEW, title: { type: 'plain_text', text: 'x'.repeat(25) } }, '/view/title/text'],
      [{ ...VIEW, submit: { type: 'plain_text', text: 'x'.repeat(25) } }, '/view/submit/text'],
      [{ ...VIEW, submit: undefined }, '/view/submit'],
      [{ ...VIEW, private_metadata: 'x'.repeat(3001) }, '/view/private_metadata'],
      [{ ...VIEW, blocks: [] }, '/view/blocks'],
      [
        { ...VIEW, blocks: [{ ...input, element: { ...input.element, max_length: 3001 } }] },
        '/view/blocks/0/element/max_length',
      ],
      [{ ...VIEW, blocks: [{ ...input, label: undefined }] }, '/view/blocks/0/label'],
    ];
    for (const [view, pointer] of bad) {
      const failure = await slackFailure(client.views.open({ trigger_id: id, view: view as never }));
      expect(failure.error, pointer).toBe('invalid_arguments');
      expect(JSON.stringify(failure.response_metadata), pointer).toContain(`[json-pointer:${pointer}]`);
    }
    expect((await client.views.open({ trigger_id: id, view: VIEW as never })).ok).toBe(true);
  });
});

describe('FakeSlack view submissions', () => {
  it('sends view_submission over HTTP with what was typed; errors in the ack keep the modal open, a plain ack closes it', async () => {
    let refuse = true;
    const { url, submissions } = await app(() =>
      refuse ? { response_action: 'errors', errors: { q: 'Say more.' } } : undefined,
    );
    const id = await trigger(url);
    const { view } = await webClient(fake).views.open({ trigger_id: id, view: VIEW as never });
    const viewId = view!.id!;
    await expect(fake.submitView(url, { viewId, values: {} })).rejects.toThrow(/required/);
    await expect(fake.submitView(url, { viewId, values: { q: { q: 'x'.repeat(21) } } })).rejects.toThrow(/at most 20/);
    await expect(fake.submitView(url, { viewId, values: { q: { other: 'x' } } })).rejects.toThrow(/no input q\/other/);

    const first = await fake.submitView(url, { viewId, values: { q: { q: 'Hm' } } });
    expect(first).toMatchObject({ ackedInTime: true, ack: { response_action: 'errors', errors: { q: 'Say more.' } } });
    expect(fake.views.at(-1)).toMatchObject({ state: 'open', errors: { q: 'Say more.' } });
    expect(submissions[0]).toMatchObject({
      type: 'view_submission',
      user: { id: 'U0ALICE' },
      view: {
        id: viewId,
        callback_id: 'ask',
        private_metadata: '{"c":"C0ONE"}',
        state: { values: { q: { q: { type: 'plain_text_input', value: 'Hm' } } } },
      },
    });
    refuse = false;
    await fake.submitView(url, { viewId, values: { q: { q: 'When?' } } });
    expect(fake.views.at(-1)).toMatchObject({ state: 'submitted', errors: undefined });
    await expect(fake.submitView(url, { viewId, values: { q: { q: 'again' } } })).rejects.toThrow(/no open view/);
  });

  it('sends view_submission over Socket Mode in an interactive envelope, and message shortcuts too', async () => {
    const submissions: ViewSubmitAction[] = [];
    const bolt = await boltSocketApp(fake, (a) => {
      a.shortcut('any', async ({ ack }) => ack());
      a.view('ask', async ({ ack, body }) => {
        submissions.push(body as ViewSubmitAction);
        await ack();
      });
    });
    stops.push(bolt.stop);
    const ts = fake.channelMessageEvent({ channel: 'C0ONE', user: 'U0ALICE', text: 'hi' }).ts as string;
    const shortcut = await fake.sendSocketMessageShortcut({
      user: 'U0ALICE',
      channel: 'C0ONE',
      messageTs: ts,
      callbackId: 'any',
    });
    expect(shortcut).toMatchObject({ ackedInTime: true, failure: undefined, payload: { type: 'message_action' } });
    const { view } = await webClient(fake).views.open({ trigger_id: shortcut.triggerId, view: VIEW as never });
    const result = await fake.submitSocketView({ viewId: view!.id!, values: { q: { q: 'Why?' } } });
    expect(result).toMatchObject({ ackedInTime: true, failure: undefined });
    expect(submissions[0]?.view.state.values).toEqual({ q: { q: { type: 'plain_text_input', value: 'Why?' } } });
    expect(fake.views.at(-1)?.state).toBe('submitted');
  });

  it('shows no message shortcut of an app without the commands scope', async () => {
    const bare = await FakeSlack.start({
      channels: [{ id: 'C0ONE', name: 'one' }],
      scopes: ['chat:write', 'users:read'],
    });
    try {
      const ts = bare.channelMessageEvent({ channel: 'C0ONE', user: 'U0ALICE', text: 'hi' }).ts as string;
      await expect(
        bare.sendMessageShortcut('http://127.0.0.1:9', {
          user: 'U0ALICE',
          channel: 'C0ONE',
          messageTs: ts,
          callbackId: 'x',
        }),
      ).rejects.toThrow(/commands scope/);
    } finally {
      await bare.close();
    }
  });
});
