/**
 * Tests of the fake Slack's feedback controls: a `context_actions` block with a
 * `feedback_buttons` element checked as Slack checks it (chat.postMessage, chat.update,
 * chat.stopStream's blocks), a press of its 👍 or 👎 delivered to a real Bolt app as Slack sends
 * it (`type: 'feedback_buttons'`, the element's action_id, the pressed button's value and text),
 * and a view_submission acked with `response_action: 'update'` showing the ack's view.
 */
import type { App, BlockAction, FeedbackButtonsAction } from '@slack/bolt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack } from '../slack.ts';
import { boltHttpApp, handClock, slackFailure, webClient } from './test-helpers.ts';

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

/** A feedback_buttons element as Slack's reference shows it. */
const FEEDBACK = {
  type: 'feedback_buttons',
  action_id: 'rate:1',
  positive_button: {
    text: { type: 'plain_text', text: '👍' },
    value: 'up',
    accessibility_label: 'Good answer',
  },
  negative_button: { text: { type: 'plain_text', text: '👎' }, value: 'down' },
};

const BLOCKS = [
  { type: 'section', text: { type: 'mrkdwn', text: 'An answer.' } },
  { type: 'context_actions', elements: [FEEDBACK] },
];

describe('FakeSlack context_actions blocks', () => {
  it('takes a feedback_buttons element in chat.postMessage, chat.update and chat.stopStream', async () => {
    const client = webClient(fake);
    const posted = await client.chat.postMessage({ channel: 'C0ONE', text: 'An answer.', blocks: BLOCKS as never });
    expect(posted.ok).toBe(true);
    const updated = await client.chat.update({ channel: 'C0ONE', ts: posted.ts!, text: 'x', blocks: BLOCKS as never });
    expect(updated.ok).toBe(true);
    const parent = fake.postUserMessage('C0ONE', 'U0ALICE', 'question').ts;
    const stream = await client.chat.startStream({
      channel: 'C0ONE',
      thread_ts: parent,
      markdown_text: 'Streaming',
      recipient_team_id: fake.teamId,
      recipient_user_id: 'U0ALICE',
    });
    await client.chat.stopStream({ channel: 'C0ONE', ts: stream.ts!, blocks: [BLOCKS[1]] as never });
    expect(fake.message('C0ONE', stream.ts!)?.blocks).toEqual([BLOCKS[1]]);
  });

  it('refuses what Slack refuses, naming the field', async () => {
    const client = webClient(fake);
    const at = '/blocks/0/elements';
    const bad: Array<[unknown, string]> = [
      [{ type: 'context_actions', elements: [] }, at],
      [{ type: 'context_actions', elements: Array.from({ length: 6 }, () => FEEDBACK) }, at],
      [{ type: 'context_actions', elements: [{ ...FEEDBACK, negative_button: undefined }] }, `${at}/0/negative_button`],
      [
        {
          type: 'context_actions',
          elements: [{ ...FEEDBACK, positive_button: { ...FEEDBACK.positive_button, value: '' } }],
        },
        `${at}/0/positive_button/value`,
      ],
      [
        {
          type: 'context_actions',
          elements: [
            {
              ...FEEDBACK,
              positive_button: { ...FEEDBACK.positive_button, text: { type: 'plain_text', text: 'x'.repeat(76) } },
            },
          ],
        },
        `${at}/0/positive_button/text/text`,
      ],
      [
        {
          type: 'context_actions',
          elements: [
            { ...FEEDBACK, positive_button: { ...FEEDBACK.positive_button, text: { type: 'mrkdwn', text: 'good' } } },
          ],
        },
        `${at}/0/positive_button/text`,
      ],
      [{ type: 'context_actions', elements: [{ ...FEEDBACK, action_id: 'x'.repeat(256) }] }, `${at}/0/action_id`],
      [
        { type: 'context_actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Go' } }] },
        `${at}/0/type`,
      ],
    ];
    for (const [block, pointer] of bad) {
      clock.advance(2_000); // past the channel's posting budget
      const failure = await slackFailure(
        client.chat.postMessage({ channel: 'C0ONE', text: 'x', blocks: [block] as never }),
      );
      expect(failure.error, pointer).toBe('invalid_blocks');
      expect(JSON.stringify(failure.response_metadata), pointer).toContain(`[json-pointer:${pointer}]`);
    }
  });
});

describe('FakeSlack feedback presses', () => {
  it('sends a press of 👍 or 👎 as Slack does: type feedback_buttons, the element’s action_id, the button’s value and text', async () => {
    const seen: Array<BlockAction<FeedbackButtonsAction>> = [];
    const bolt = await boltHttpApp(fake, (app: App) => {
      app.action<BlockAction<FeedbackButtonsAction>>({ type: 'block_actions' }, async ({ ack, body }) => {
        await ack();
        seen.push(body);
      });
    });
    stops.push(bolt.stop);
    const ts = (
      await webClient(fake).chat.postMessage({ channel: 'C0ONE', text: 'An answer.', blocks: BLOCKS as never })
    ).ts!;
    const result = await fake.sendBlockAction(bolt.url, {
      user: 'U0ALICE',
      channel: 'C0ONE',
      messageTs: ts,
      actionId: 'rate:1',
      value: 'down',
    });
    expect(result).toMatchObject({ status: 200, ackedInTime: true });
    const [action] = (result.payload as { actions: unknown[] }).actions;
    expect(action).toEqual({
      action_id: 'rate:1',
      block_id: expect.any(String),
      text: { type: 'plain_text', text: '👎' },
      value: 'down',
      type: 'feedback_buttons',
      action_ts: expect.any(String),
    });
    expect(seen[0]?.actions[0]).toMatchObject({ type: 'feedback_buttons', action_id: 'rate:1', value: 'down' });
    expect(fake.blockActions.at(-1)).toMatchObject({ actionId: 'rate:1', value: 'down', user: 'U0ALICE' });
    // Only a value the element has can be pressed.
    await expect(
      fake.sendBlockAction(bolt.url, {
        user: 'U0ALICE',
        channel: 'C0ONE',
        messageTs: ts,
        actionId: 'rate:1',
        value: 'meh',
      }),
    ).rejects.toThrow(/no button with action_id rate:1, value meh/);
  });
});

describe('FakeSlack view submissions acked with an update', () => {
  const VIEW = {
    type: 'modal',
    callback_id: 'why',
    title: { type: 'plain_text', text: 'What was wrong?' },
    submit: { type: 'plain_text', text: 'Send' },
    blocks: [
      {
        type: 'input',
        block_id: 'r',
        label: { type: 'plain_text', text: 'Reason' },
        element: { type: 'plain_text_input', action_id: 'r' },
      },
    ],
  };

  /** A Bolt app acking the form with `answer`; a trigger from a button press on a posted message. */
  async function setup(answer: Record<string, unknown>) {
    const bolt = await boltHttpApp(fake, (app: App) => {
      app.action({ type: 'block_actions' }, async ({ ack }) => ack());
      app.view('why', async ({ ack }) => ack(answer as never));
    });
    stops.push(bolt.stop);
    const client = webClient(fake);
    const ts = (await client.chat.postMessage({ channel: 'C0ONE', text: 'An answer.', blocks: BLOCKS as never })).ts!;
    const press = await fake.sendBlockAction(bolt.url, {
      user: 'U0ALICE',
      channel: 'C0ONE',
      messageTs: ts,
      actionId: 'rate:1',
      value: 'down',
    });
    const { view } = await client.views.open({ trigger_id: press.triggerId, view: VIEW as never });
    return { url: bolt.url, viewId: view!.id! };
  }

  it('shows the view of a response_action update, the modal left open', async () => {
    const thanks = {
      type: 'modal',
      title: { type: 'plain_text', text: 'Thanks' },
      close: { type: 'plain_text', text: 'Close' },
      blocks: [{ type: 'section', text: { type: 'plain_text', text: 'Noted.' } }],
    };
    const { url, viewId } = await setup({ response_action: 'update', view: thanks });
    const result = await fake.submitView(url, { viewId, values: { r: { r: 'Out of date' } } });
    expect(result).toMatchObject({ ackedInTime: true, failure: undefined });
    expect(fake.views.at(-1)).toMatchObject({ id: viewId, state: 'open', view: thanks });
    expect(fake.platformFailures).toEqual([]);
  });

  it('records a platform failure for an update whose view Slack refuses', async () => {
    const bad = { type: 'modal', title: { type: 'plain_text', text: 'x'.repeat(25) }, blocks: [] };
    const { url, viewId } = await setup({ response_action: 'update', view: bad });
    await fake.submitView(url, { viewId, values: { r: { r: 'Out of date' } } });
    expect(fake.platformFailures).toEqual([
      expect.objectContaining({ kind: 'invalid_response', command: 'view_submission' }),
    ]);
    expect(fake.views.at(-1)?.view).toMatchObject({ callback_id: 'why' });
  });
});
