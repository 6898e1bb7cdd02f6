/**
 * Tests of the fake Slack's AI-app experiences and App Home (agent.ts, home.ts), with the real
 * @slack/web-api WebClient and real Bolt apps: which events Slack sends for the agent and
 * assistant views (over HTTP and Socket Mode) and their shapes, setSuggestedPrompts and setTitle
 * (limits, scopes, the agent view's silent failure with `thread_ts`), views.publish (a home view
 * within 100 blocks and Block Kit's limits; the view sent back with the next app_home_opened).
 */
import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack } from '../slack.ts';
import { boltHttpApp, boltSocketApp, slackError, slackFailure, webClient } from './test-helpers.ts';

let fake: FakeSlack;
let client: WebClient;
let initialScopes: string[];

beforeAll(async () => {
  fake = await FakeSlack.start({ channels: [{ id: 'C0ONE', name: 'one' }] });
  client = webClient(fake);
  initialScopes = [...fake.scopes];
});
afterEach(() => {
  fake.reset();
  fake.setAgent({ appView: 'agent', homeTab: true });
  fake.setScopes(initialScopes);
});
afterAll(async () => {
  await fake.close();
});

const PROMPTS = [
  { title: 'Ask', message: 'What can you do?' },
  { title: 'Imagine', message: 'imagine a fox' },
];

/** Events a Bolt app's listeners receive, by type. */
function recorder(types: string[]) {
  const seen: Array<Record<string, unknown>> = [];
  const setup = (app: App) => {
    for (const type of types)
      app.event(type, async ({ event }) => void seen.push(event as unknown as Record<string, unknown>));
  };
  return { seen, setup };
}

describe('the agent and assistant views', () => {
  it('an agent app gets app_home_opened (with the viewed channel on the Messages tab) and app_context_changed over HTTP; no assistant_thread_started', async () => {
    const { seen, setup } = recorder(['app_home_opened', 'app_context_changed']);
    const bolt = await boltHttpApp(fake, setup);
    try {
      const opened = fake.appHomeOpenedEvent({ user: 'U0ALICE', tab: 'messages', viewing: 'C0ONE' });
      const dm = fake.openIm('U0ALICE').id;
      expect(opened).toMatchObject({
        type: 'app_home_opened',
        user: 'U0ALICE',
        channel: dm,
        tab: 'messages',
        context: { entities: [{ type: 'slack#/types/channel_id', value: 'C0ONE', team_id: fake.teamId }] },
      });
      expect((await fake.sendEvent(bolt.url, opened)).ackedInTime).toBe(true);
      const changed = fake.appContextChangedEvent({ user: 'U0ALICE', viewing: 'C0ONE' });
      expect((await fake.sendEvent(bolt.url, changed)).ackedInTime).toBe(true);
      const nothing = fake.appContextChangedEvent({ user: 'U0ALICE' });
      expect(nothing).toMatchObject({ type: 'app_context_changed', channel: dm, user: 'U0ALICE', context: {} });
      await fake.sendEvent(bolt.url, nothing);
      expect(seen.map((e) => e.type)).toEqual(['app_home_opened', 'app_context_changed', 'app_context_changed']);
      const started = fake.assistantThreadStartedEvent({ user: 'U0ALICE' });
      await expect(fake.sendEvent(bolt.url, started)).rejects.toThrow(/assistant view/);
    } finally {
      await bolt.stop();
    }
  });

  it('an assistant app gets assistant_thread_started over Socket Mode, with a root message in the DM; no app_context_changed', async () => {
    fake.setAgent({ appView: 'assistant' });
    const { seen, setup } = recorder(['assistant_thread_started', 'assistant_thread_context_changed']);
    const bolt = await boltSocketApp(fake, setup);
    try {
      const started = fake.assistantThreadStartedEvent({ user: 'U0BOB', viewing: 'C0ONE' });
      const dm = fake.openIm('U0BOB').id;
      const thread = started.assistant_thread as { thread_ts: string };
      expect(started).toMatchObject({
        type: 'assistant_thread_started',
        assistant_thread: { user_id: 'U0BOB', channel_id: dm, context: { channel_id: 'C0ONE', team_id: fake.teamId } },
      });
      expect(fake.message(dm, thread.thread_ts)).toMatchObject({ user: fake.botUserId, via: 'assistant_thread' });
      expect((await fake.sendSocketEvent(started)).ackedInTime).toBe(true);
      const changed = fake.assistantThreadContextChangedEvent({ user: 'U0BOB', threadTs: thread.thread_ts });
      expect((await fake.sendSocketEvent(changed)).ackedInTime).toBe(true);
      expect(seen.map((e) => e.type)).toEqual(['assistant_thread_started', 'assistant_thread_context_changed']);
      await expect(fake.sendSocketEvent(fake.appContextChangedEvent({ user: 'U0BOB' }))).rejects.toThrow(/agent view/);
    } finally {
      await bolt.stop();
    }
  });

  it('setSuggestedPrompts: pinned to the Messages tab without thread_ts in the agent view; with thread_ts it silently fails', async () => {
    const dm = fake.openIm('U0ALICE').id;
    await client.assistant.threads.setSuggestedPrompts({ channel_id: dm, prompts: PROMPTS, title: 'Hi' });
    const ts = fake.postUserMessage(dm, 'U0ALICE', 'question').ts;
    await client.assistant.threads.setSuggestedPrompts({ channel_id: dm, thread_ts: ts, prompts: PROMPTS });
    expect(fake.suggestedPrompts.map((p) => [p.threadTs, p.shownAt, p.title])).toEqual([
      [undefined, 'tab', 'Hi'],
      [ts, undefined, undefined],
    ]);
    expect(fake.suggestedPrompts[0]!.prompts).toEqual(PROMPTS);
  });

  it('setSuggestedPrompts in the assistant view: in the thread given, else on the latest message', async () => {
    fake.setAgent({ appView: 'assistant' });
    const dm = fake.openIm('U0ALICE').id;
    const root = (fake.assistantThreadStartedEvent({ user: 'U0ALICE' }).assistant_thread as { thread_ts: string })
      .thread_ts;
    await client.assistant.threads.setSuggestedPrompts({ channel_id: dm, thread_ts: root, prompts: PROMPTS });
    const later = fake.postUserMessage(dm, 'U0ALICE', 'hello').ts;
    await client.assistant.threads.setSuggestedPrompts({ channel_id: dm, prompts: PROMPTS });
    expect(fake.suggestedPrompts.map((p) => p.shownAt)).toEqual([root, later]);
  });

  it('setSuggestedPrompts and setTitle refuse what Slack refuses: 5 prompts, empty ones, a channel, a bad thread, an empty title, no assistant:write', async () => {
    const dm = fake.openIm('U0ALICE').id;
    const five = Array.from({ length: 5 }, (_, i) => ({ title: `t${i}`, message: `m${i}` }));
    expect(await slackError(client.assistant.threads.setSuggestedPrompts({ channel_id: dm, prompts: five }))).toBe(
      'invalid_arguments',
    );
    expect(
      await slackError(
        client.assistant.threads.setSuggestedPrompts({ channel_id: dm, prompts: [{ title: '', message: 'x' }] }),
      ),
    ).toBe('invalid_arguments');
    expect(
      await slackError(client.assistant.threads.setSuggestedPrompts({ channel_id: 'C0ONE', prompts: PROMPTS })),
    ).toBe('method_not_supported_for_channel_type');
    const ts = fake.postUserMessage(dm, 'U0ALICE', 'a question').ts;
    await client.assistant.threads.setTitle({ channel_id: dm, thread_ts: ts, title: 'A question' });
    expect(fake.threadTitles).toEqual([{ channel: dm, threadTs: ts, title: 'A question', at: expect.any(Number) }]);
    expect(await slackError(client.assistant.threads.setTitle({ channel_id: dm, thread_ts: ts, title: '' }))).toBe(
      'invalid_arguments',
    );
    expect(
      await slackError(
        client.assistant.threads.setTitle({ channel_id: dm, thread_ts: '1700000000.000001', title: 'x' }),
      ),
    ).toBe('invalid_thread_ts');
    fake.setScopes(initialScopes.filter((s) => s !== 'assistant:write'));
    expect(
      await slackFailure(client.assistant.threads.setTitle({ channel_id: dm, thread_ts: ts, title: 'x' })),
    ).toMatchObject({ error: 'missing_scope', needed: 'assistant:write' });
    expect(fake.threadTitles).toHaveLength(1);
  });
});

describe('views.publish (the Home tab)', () => {
  const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });

  it("stores the user's Home tab, keeps its id, and sends it back in the user's next app_home_opened (tab home)", async () => {
    const first = await client.views.publish({ user_id: 'U0ALICE', view: { type: 'home', blocks: [section('one')] } });
    const second = await client.views.publish({ user_id: 'U0ALICE', view: { type: 'home', blocks: [section('two')] } });
    expect(first.view?.id).toBe(second.view?.id);
    expect(fake.homeView('U0ALICE')!.view.blocks).toEqual([section('two')]);
    expect(fake.homeView('U0BOB')).toBeUndefined();
    expect(fake.appHomeOpenedEvent({ user: 'U0ALICE', tab: 'home' }).view).toEqual({
      type: 'home',
      blocks: [section('two')],
    });
    expect(fake.appHomeOpenedEvent({ user: 'U0BOB', tab: 'home' }).view).toBeUndefined();
  });

  it('refuses more than 100 blocks, a section over 3,000 characters, a modal, an unknown user, 250 kB, and a Home tab that is off', async () => {
    const publish = (view: Record<string, unknown>, user = 'U0ALICE') =>
      slackFailure(client.views.publish({ user_id: user, view: view as never }));
    const blocks = (n: number) => Array.from({ length: n }, (_, i) => section(`block ${i}`));
    await client.views.publish({ user_id: 'U0ALICE', view: { type: 'home', blocks: blocks(100) } });
    expect(await publish({ type: 'home', blocks: blocks(101) })).toMatchObject({ error: 'invalid_blocks' });
    expect(await publish({ type: 'home', blocks: [section('x'.repeat(3001))] })).toMatchObject({
      error: 'invalid_blocks',
    });
    expect(await publish({ type: 'home', blocks: [] })).toMatchObject({ error: 'invalid_arguments' });
    expect(await publish({ type: 'modal', blocks: blocks(1) })).toMatchObject({ error: 'invalid_arguments' });
    expect(await publish({ type: 'home', blocks: blocks(1) }, 'U0NOBODY')).toMatchObject({
      error: 'invalid_arguments',
    });
    expect(await publish({ type: 'home', blocks: blocks(1), private_metadata: 'x'.repeat(260_000) })).toMatchObject({
      error: 'view_too_large',
    });
    fake.setAgent({ homeTab: false });
    expect(await publish({ type: 'home', blocks: blocks(1) })).toMatchObject({ error: 'not_enabled' });
    expect(fake.homePublishes).toHaveLength(1);
  });
});
