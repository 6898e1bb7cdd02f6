/**
 * Tests of the fake Slack's AI loading states (assistant.threads.setStatus), spoken to with the
 * real @slack/web-api WebClient: what is recorded, when users stop seeing a status (the bot
 * posts or streams in the thread, it is cleared, 2 minutes pass), scopes and refusals.
 */
import type { WebClient } from '@slack/web-api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack } from '../slack.ts';
import { handClock, slackError, slackFailure, webClient } from './test-helpers.ts';

const clock = handClock();
let fake: FakeSlack;
let client: WebClient;
/** The bot token's scopes at the start (tests change them). */
let initialScopes: string[];

beforeAll(async () => {
  fake = await FakeSlack.start({
    now: clock.now,
    channels: [
      { id: 'C0ONE', name: 'one' },
      { id: 'C0QUIET', name: 'quiet', assistantStatus: false },
    ],
  });
  client = webClient(fake);
  initialScopes = [...fake.scopes];
});
afterEach(() => {
  fake.reset();
  fake.setStreaming({ assistantStatusChannelTypes: undefined, assistantStatusTimeoutMs: undefined });
  fake.setScopes(initialScopes);
  clock.advance(120_000);
});
afterAll(async () => {
  await fake.close();
});

/** A user's question in `channel`: the parent of a thread. */
const question = (channel = 'C0ONE') => fake.postUserMessage(channel, 'U0ALICE', 'a question').ts;

describe('assistant.threads.setStatus', () => {
  it('records the status; users see it until the bot posts in the thread', async () => {
    const threadTs = question();
    await client.assistant.threads.setStatus({
      channel_id: 'C0ONE',
      thread_ts: threadTs,
      status: 'is thinking…',
      loading_messages: ['Reading', 'Writing'],
    });
    expect(fake.assistantStatuses).toEqual([
      { channel: 'C0ONE', threadTs, status: 'is thinking…', loadingMessages: ['Reading', 'Writing'], at: clock.ms },
    ]);
    expect(fake.assistantStatus('C0ONE', threadTs)?.status).toBe('is thinking…');
    clock.advance(10);
    await client.chat.startStream({
      channel: 'C0ONE',
      thread_ts: threadTs,
      markdown_text: 'Answer',
      recipient_team_id: fake.teamId,
      recipient_user_id: 'U0ALICE',
    });
    expect(fake.assistantStatus('C0ONE', threadTs)).toBeUndefined();
  });

  it("an empty status clears it, and it times out after 2 minutes; a reply's ts names its thread", async () => {
    const threadTs = question();
    const reply = fake.postUserMessage('C0ONE', 'U0BOB', 'me too', threadTs).ts;
    await client.assistant.threads.setStatus({ channel_id: 'C0ONE', thread_ts: reply, status: 'is thinking…' });
    expect(fake.assistantStatuses[0]!.threadTs).toBe(threadTs);
    await client.assistant.threads.setStatus({ channel_id: 'C0ONE', thread_ts: threadTs, status: '' });
    expect(fake.assistantStatus('C0ONE', threadTs)).toBeUndefined();
    await client.assistant.threads.setStatus({ channel_id: 'C0ONE', thread_ts: threadTs, status: 'still thinking' });
    clock.advance(119_999);
    expect(fake.assistantStatus('C0ONE', reply)?.status).toBe('still thinking');
    clock.advance(1);
    expect(fake.assistantStatus('C0ONE', threadTs)).toBeUndefined();
  });

  it('takes chat:write or assistant:write; refuses bad threads, conversations that cannot take it, and more than 10 loading messages', async () => {
    const threadTs = question();
    fake.setScopes([...fake.scopes.filter((s) => s !== 'chat:write'), 'assistant:write']);
    await client.assistant.threads.setStatus({
      channel_id: 'C0ONE',
      thread_ts: threadTs,
      status: 'ok with assistant:write',
    });
    fake.setScopes(fake.scopes.filter((s) => s !== 'assistant:write'));
    expect(
      await slackFailure(client.assistant.threads.setStatus({ channel_id: 'C0ONE', thread_ts: threadTs, status: 'x' })),
    ).toMatchObject({ error: 'missing_scope', needed: 'chat:write' });
    fake.setScopes([...fake.scopes, 'chat:write']);
    expect(
      await slackError(client.assistant.threads.setStatus({ channel_id: 'C0NOPE', thread_ts: threadTs, status: 'x' })),
    ).toBe('channel_not_found');
    expect(
      await slackError(client.assistant.threads.setStatus({ channel_id: 'C0ONE', thread_ts: 'nope', status: 'x' })),
    ).toBe('invalid_thread_ts');
    expect(
      await slackError(
        client.assistant.threads.setStatus({ channel_id: 'C0ONE', thread_ts: '1700000000.000001', status: 'x' }),
      ),
    ).toBe('invalid_thread_ts');
    expect(
      await slackError(
        client.assistant.threads.setStatus({ channel_id: 'C0QUIET', thread_ts: question('C0QUIET'), status: 'x' }),
      ),
    ).toBe('method_not_supported_for_channel_type');
    fake.setStreaming({ assistantStatusChannelTypes: ['im'] });
    expect(
      await slackError(client.assistant.threads.setStatus({ channel_id: 'C0ONE', thread_ts: threadTs, status: 'x' })),
    ).toBe('method_not_supported_for_channel_type');
    const dm = fake.openIm('U0ALICE');
    await client.assistant.threads.setStatus({
      channel_id: dm.id,
      thread_ts: fake.postUserMessage(dm.id, 'U0ALICE', 'hi').ts,
      status: 'in a DM',
    });
    const eleven = Array.from({ length: 11 }, (_, i) => `step ${i}`);
    expect(
      await slackError(
        client.assistant.threads.setStatus({
          channel_id: dm.id,
          thread_ts: fake.postUserMessage(dm.id, 'U0ALICE', 'hi').ts,
          status: 'x',
          loading_messages: eleven,
        }),
      ),
    ).toBe('invalid_arguments');
    expect(fake.assistantStatuses.map((s) => s.status)).toEqual(['ok with assistant:write', 'in a DM']);
  });
});
