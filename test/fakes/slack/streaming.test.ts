/**
 * Tests of the fake Slack's native streaming (chat.startStream / appendStream / stopStream),
 * spoken to with the real @slack/web-api WebClient and its `chatStream` helper (ChatStreamer):
 * what Slack takes, what it refuses and with which error, expiry, rate limits, and what the
 * fake records. Loading statuses (assistant.threads.setStatus) are in assistant.test.ts.
 */
import { ErrorCode, type WebAPIRateLimitedError, WebClient } from '@slack/web-api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack, type FakeSlackMessage } from '../slack.ts';
import { handClock, quiet, rawCall, slackError, slackFailure, webClient } from './test-helpers.ts';

const clock = handClock();
let fake: FakeSlack;
let client: WebClient;
/** The recipient Slack requires outside DMs. */
let recipient: { recipient_team_id: string; recipient_user_id: string };
/** The bot token's scopes at the start (tests change them). */
let initialScopes: string[];

beforeAll(async () => {
  fake = await FakeSlack.start({
    now: clock.now,
    channels: [
      { id: 'C0ONE', name: 'one' },
      { id: 'C0PRIV', name: 'priv', isPrivate: true },
      { id: 'C0NOBOT', name: 'nobot', botIsMember: false },
      { id: 'C0FLAT', name: 'flat', streaming: false },
      { id: 'C0LOCKED', name: 'locked', streaming: 'restricted_action_thread_locked' },
    ],
  });
  client = webClient(fake);
  recipient = { recipient_team_id: fake.teamId, recipient_user_id: 'U0ALICE' };
  initialScopes = [...fake.scopes];
});
afterEach(() => {
  fake.reset();
  fake.setStreaming({
    streaming: undefined,
    streamingRefusal: undefined,
    streamingChannelTypes: undefined,
    streamTopLevel: undefined,
    streamExpiryMs: undefined,
    streamIdleExpiryMs: undefined,
  });
  fake.setRateLimits({
    startStream: { limit: 20, windowMs: 60_000 },
    appendStream: { limit: 100, windowMs: 60_000 },
    stopStream: { limit: 20, windowMs: 60_000 },
  });
  fake.setScopes(initialScopes);
  clock.advance(120_000);
});
afterAll(async () => {
  await fake.close();
});

/** A user's question in `channel`: the parent of the thread an answer streams into. */
const question = (channel = 'C0ONE') => fake.postUserMessage(channel, 'U0ALICE', 'a question').ts;

/** Starts a stream in the thread of a fresh question. */
async function startIn(channel = 'C0ONE', text = 'Hel'): Promise<{ ts: string; threadTs: string }> {
  const threadTs = question(channel);
  const started = await client.chat.startStream({ channel, thread_ts: threadTs, markdown_text: text, ...recipient });
  return { ts: started.ts!, threadTs };
}

const messageOf = (channel: string, ts: string): FakeSlackMessage => fake.message(channel, ts)!;

describe('chat.startStream → appendStream → stopStream', () => {
  it('streams a reply in a thread: the text is everything appended, every write is recorded with its time', async () => {
    const threadTs = question();
    const started = await client.chat.startStream({
      channel: 'C0ONE',
      thread_ts: threadTs,
      markdown_text: 'Hel',
      ...recipient,
    });
    expect(started).toMatchObject({ ok: true, channel: 'C0ONE', ts: expect.stringMatching(/^\d{10}\.\d{6}$/) });
    const ts = started.ts!;
    expect(messageOf('C0ONE', ts)).toMatchObject({
      via: 'chat.startStream',
      threadTs,
      text: 'Hel',
      stream: { state: 'streaming', mode: 'markdown_text', recipientTeamId: fake.teamId, recipientUserId: 'U0ALICE' },
    });
    clock.advance(300);
    await client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: 'lo' });
    clock.advance(300);
    await client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: ' world' });
    clock.advance(300);
    const blocks = [
      {
        type: 'actions',
        block_id: 'after',
        elements: [{ type: 'button', action_id: 'again', text: { type: 'plain_text', text: 'Again' } }],
      },
    ];
    const stopped = await client.chat.stopStream({ channel: 'C0ONE', ts, markdown_text: '!', blocks });
    expect(stopped).toMatchObject({
      ok: true,
      channel: 'C0ONE',
      ts,
      message: { text: 'Hello world!', ts, thread_ts: threadTs, bot_id: fake.botId, blocks },
    });
    expect(stopped.message).not.toHaveProperty('edited');

    const m = messageOf('C0ONE', ts);
    expect(m.text).toBe('Hello world!');
    expect(m.blocks).toEqual(blocks);
    expect(m.stream).toMatchObject({ state: 'stopped', stopBlocks: blocks, endedAt: clock.ms });
    expect(m.stream!.writes.map((w) => [w.method, w.text])).toEqual([
      ['chat.startStream', 'Hel'],
      ['chat.appendStream', 'lo'],
      ['chat.appendStream', ' world'],
      ['chat.stopStream', '!'],
    ]);
    const times = m.stream!.writes.map((w) => w.at);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times.at(-1)! - times[0]!).toBe(900);
    expect(m.revisions.map((r) => r.text)).toEqual(['Hel', 'Hello', 'Hello world', 'Hello world!']);
    expect(fake.thread('C0ONE', threadTs).map((r) => r.ts)).toEqual([ts]);

    // A stopped stream takes nothing more.
    expect(await slackError(client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: 'more' }))).toBe(
      'message_not_in_streaming_state',
    );
    expect(await slackError(client.chat.stopStream({ channel: 'C0ONE', ts }))).toBe('message_not_in_streaming_state');
    expect(messageOf('C0ONE', ts).text).toBe('Hello world!');
  });

  it('outside DMs both recipient ids are required; in a DM neither is', async () => {
    const threadTs = question('C0PRIV');
    expect(
      await slackError(client.chat.startStream({ channel: 'C0PRIV', thread_ts: threadTs, markdown_text: 'x' })),
    ).toBe('missing_recipient_team_id');
    expect(
      await slackError(
        client.chat.startStream({
          channel: 'C0PRIV',
          thread_ts: threadTs,
          markdown_text: 'x',
          recipient_team_id: fake.teamId,
        }),
      ),
    ).toBe('missing_recipient_user_id');
    expect(
      await slackError(
        client.chat.startStream({
          channel: 'C0PRIV',
          thread_ts: threadTs,
          markdown_text: 'x',
          recipient_team_id: fake.teamId,
          recipient_user_id: 'U0NOBODY',
        }),
      ),
    ).toBe('user_not_found');
    const dm = fake.openIm('U0BOB');
    const dmThread = fake.postUserMessage(dm.id, 'U0BOB', 'hi').ts;
    const started = await client.chat.startStream({ channel: dm.id, thread_ts: dmThread, markdown_text: 'hello' });
    expect(messageOf(dm.id, started.ts!)).toMatchObject({
      text: 'hello',
      threadTs: dmThread,
      stream: { state: 'streaming', recipientUserId: undefined },
    });
  });

  it('thread_ts is required (invalid_arguments, a bad one as in chat.postMessage); streamTopLevel allows top-level streams in channels, never in DMs', async () => {
    const refused = await slackFailure(
      client.apiCall('chat.startStream', { channel: 'C0ONE', markdown_text: 'x', ...recipient }),
    );
    expect(refused).toMatchObject({
      error: 'invalid_arguments',
      response_metadata: { messages: ['[ERROR] missing required field: thread_ts'] },
    });
    expect(
      await slackError(
        client.chat.startStream({ channel: 'C0ONE', thread_ts: '1700000000.000001', markdown_text: 'x', ...recipient }),
      ),
    ).toBe('thread_not_found');
    // A reply's ts streams into its thread, as chat.postMessage does.
    const parent = question();
    const reply = fake.postUserMessage('C0ONE', 'U0BOB', 'me too', parent).ts;
    const inThread = await client.chat.startStream({
      channel: 'C0ONE',
      thread_ts: reply,
      markdown_text: 'x',
      ...recipient,
    });
    expect(messageOf('C0ONE', inThread.ts!).threadTs).toBe(parent);

    fake.setStreaming({ streamTopLevel: true });
    const top = (await client.apiCall('chat.startStream', {
      channel: 'C0ONE',
      markdown_text: 'top',
      ...recipient,
    })) as unknown as { ts: string };
    expect(messageOf('C0ONE', top.ts)).toMatchObject({ threadTs: undefined, text: 'top' });
    const dm = fake.openIm('U0BOB');
    expect(await slackError(client.apiCall('chat.startStream', { channel: dm.id, markdown_text: 'x' }))).toBe(
      'invalid_arguments',
    );
  });

  it("refuses where Slack refuses: unknown channel, bot not in it, channel types it does not take, a channel's own refusal", async () => {
    expect(
      await slackError(
        client.chat.startStream({
          channel: 'C0NOPE',
          thread_ts: '1700000000.000001',
          markdown_text: 'x',
          ...recipient,
        }),
      ),
    ).toBe('channel_not_found');
    expect(
      await slackError(
        client.chat.startStream({
          channel: 'C0NOBOT',
          thread_ts: question('C0NOBOT'),
          markdown_text: 'x',
          ...recipient,
        }),
      ),
    ).toBe('not_in_channel');
    expect(
      await slackError(
        client.chat.startStream({ channel: 'C0FLAT', thread_ts: question('C0FLAT'), markdown_text: 'x', ...recipient }),
      ),
    ).toBe('channel_type_not_supported');
    expect(
      await slackError(
        client.chat.startStream({
          channel: 'C0LOCKED',
          thread_ts: question('C0LOCKED'),
          markdown_text: 'x',
          ...recipient,
        }),
      ),
    ).toBe('restricted_action_thread_locked');
    fake.setStreaming({ streamingChannelTypes: ['im'] });
    expect(
      await slackError(
        client.chat.startStream({ channel: 'C0PRIV', thread_ts: question('C0PRIV'), markdown_text: 'x', ...recipient }),
      ),
    ).toBe('channel_type_not_supported');
    expect(fake.messages().filter((m) => m.via === 'chat.startStream')).toEqual([]);
  });

  it('streaming: false refuses all three methods with unknown_method, or the configured error; turned back on, streams work', async () => {
    const { ts } = await startIn();
    fake.setStreaming({ streaming: false });
    const threadTs = question();
    expect(
      await slackFailure(
        client.chat.startStream({ channel: 'C0ONE', thread_ts: threadTs, markdown_text: 'x', ...recipient }),
      ),
    ).toMatchObject({ error: 'unknown_method', req_method: 'chat.startStream' });
    expect(await slackError(client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: 'x' }))).toBe(
      'unknown_method',
    );
    expect(await slackError(client.chat.stopStream({ channel: 'C0ONE', ts }))).toBe('unknown_method');
    fake.setStreaming({ streamingRefusal: 'feature_not_enabled' });
    expect(
      await slackError(
        client.chat.startStream({ channel: 'C0ONE', thread_ts: threadTs, markdown_text: 'x', ...recipient }),
      ),
    ).toBe('feature_not_enabled');
    fake.setStreaming({ streaming: true });
    await client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: 'lo' });
    expect(messageOf('C0ONE', ts).text).toBe('Hello');

    const off = await FakeSlack.start({ streaming: false, streamingRefusal: 'method_deprecated' });
    try {
      expect(off.streamingSettings).toMatchObject({
        streaming: false,
        streamingRefusal: 'method_deprecated',
        streamExpiryMs: 300_000,
      });
      const parent = off.postUserMessage('C0GENERAL', 'U0ALICE', 'q').ts;
      expect(
        await slackError(
          webClient(off).chat.startStream({
            channel: 'C0GENERAL',
            thread_ts: parent,
            markdown_text: 'x',
            ...recipient,
          }),
        ),
      ).toBe('method_deprecated');
    } finally {
      await off.close();
    }
  });

  it('needs chat:write (missing_scope with needed and provided)', async () => {
    fake.setScopes(fake.scopes.filter((s) => s !== 'chat:write'));
    const refused = await slackFailure(
      client.chat.startStream({ channel: 'C0ONE', thread_ts: question(), markdown_text: 'x', ...recipient }),
    );
    expect(refused).toMatchObject({ error: 'missing_scope', needed: 'chat:write' });
  });
});

describe('what a stream takes', () => {
  it('appendStream needs markdown_text or chunks, at most 12,000 characters, not both, and the form the stream started with', async () => {
    const { ts } = await startIn();
    expect(await slackError(client.apiCall('chat.appendStream', { channel: 'C0ONE', ts }))).toBe(
      'markdown_text_or_chunks_required',
    );
    expect(
      await slackError(client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: 'x'.repeat(12_001) })),
    ).toBe('invalid_arguments');
    await client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: 'y'.repeat(12_000) });
    const both = client.chat.appendStream({
      channel: 'C0ONE',
      ts,
      markdown_text: 'a',
      chunks: [{ type: 'markdown_text', text: 'b' }],
    });
    expect(await slackError(both)).toBe('cannot_provide_both_markdown_text_and_chunks');
    expect(
      await slackError(
        client.chat.appendStream({ channel: 'C0ONE', ts, chunks: [{ type: 'markdown_text', text: 'b' }] }),
      ),
    ).toBe('streaming_mode_mismatch');
    expect(messageOf('C0ONE', ts).text).toBe(`Hel${'y'.repeat(12_000)}`);
  });

  it('chunks: markdown text is the message text, task and plan updates are recorded, blocks chunks add blocks, others are invalid_chunks', async () => {
    const threadTs = question();
    const started = await client.chat.startStream({
      channel: 'C0ONE',
      thread_ts: threadTs,
      chunks: [{ type: 'plan_update', title: 'Plan' }],
      ...recipient,
    });
    const ts = started.ts!;
    const task = { type: 'task_update', id: 't1', title: 'Search', status: 'in_progress' } as const;
    await client.chat.appendStream({ channel: 'C0ONE', ts, chunks: [task, { type: 'markdown_text', text: 'Found ' }] });
    const section = { type: 'section', text: { type: 'mrkdwn', text: 'a block' } } as const;
    await client.chat.appendStream({
      channel: 'C0ONE',
      ts,
      chunks: [
        { type: 'markdown_text', text: 'it' },
        { type: 'blocks', blocks: [section] },
      ],
    });
    const bad = await slackFailure(
      client.apiCall('chat.appendStream', { channel: 'C0ONE', ts, chunks: [{ type: 'gif', url: 'x' }] }),
    );
    expect(bad).toMatchObject({
      error: 'invalid_chunks',
      response_metadata: { messages: [expect.stringContaining('/chunks/0/type')] },
    });
    expect(
      await slackError(
        client.apiCall('chat.appendStream', {
          channel: 'C0ONE',
          ts,
          chunks: [{ type: 'task_update', id: 't2', title: 'x', status: 'done' }],
        }),
      ),
    ).toBe('invalid_chunks');
    const m = messageOf('C0ONE', ts);
    expect(m).toMatchObject({
      text: 'Found it',
      blocks: [section],
      stream: { mode: 'chunks', tasks: [{ type: 'plan_update', title: 'Plan' }, task] },
    });
  });

  it("a message that never streamed, another author's, or an unknown ts is refused as Slack does", async () => {
    const posted = await client.chat.postMessage({ channel: 'C0ONE', text: 'plain' });
    expect(await slackError(client.chat.appendStream({ channel: 'C0ONE', ts: posted.ts!, markdown_text: 'x' }))).toBe(
      'message_not_in_streaming_state',
    );
    expect(await slackError(client.chat.appendStream({ channel: 'C0ONE', ts: question(), markdown_text: 'x' }))).toBe(
      'message_not_owned_by_app',
    );
    expect(
      await slackError(client.chat.appendStream({ channel: 'C0ONE', ts: '1700000000.000001', markdown_text: 'x' })),
    ).toBe('message_not_found');
  });

  it('chat.update of a message still streaming is streaming_state_conflict and chat.delete cant_delete_message; the stream goes on, and once stopped it can be updated', async () => {
    const { ts } = await startIn();
    expect(await slackError(client.chat.update({ channel: 'C0ONE', ts, text: 'rewritten' }))).toBe(
      'streaming_state_conflict',
    );
    expect(await slackError(client.chat.delete({ channel: 'C0ONE', ts }))).toBe('cant_delete_message');
    await client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: 'lo' });
    await client.chat.stopStream({ channel: 'C0ONE', ts });
    const updated = await client.chat.update({ channel: 'C0ONE', ts, text: 'rewritten' });
    expect(updated.message).toHaveProperty('edited');
    expect(messageOf('C0ONE', ts).revisions.map((r) => r.method)).toEqual([
      'chat.startStream',
      'chat.appendStream',
      'chat.stopStream',
      'chat.update',
    ]);
  });
});

describe('how streams end', () => {
  it('Slack closes a stream after streamExpiryMs (default 5 minutes) even while it is appended to; the message can then be updated', async () => {
    const { ts } = await startIn();
    const startedAt = clock.ms;
    for (let i = 0; i < 4; i++) {
      clock.advance(60_000);
      await client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: '.' });
    }
    expect(messageOf('C0ONE', ts).stream!.state).toBe('streaming');
    clock.advance(60_000);
    // No call needed: the record reads the clock.
    expect(messageOf('C0ONE', ts).stream).toMatchObject({ state: 'expired', endedAt: startedAt + 300_000 });
    expect(await slackError(client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: 'late' }))).toBe(
      'message_not_in_streaming_state',
    );
    expect(await slackError(client.chat.stopStream({ channel: 'C0ONE', ts }))).toBe('message_not_in_streaming_state');
    await client.chat.update({ channel: 'C0ONE', ts, text: 'Hel.... and the rest' });
    expect(messageOf('C0ONE', ts)).toMatchObject({ text: 'Hel.... and the rest', stream: { state: 'expired' } });
  });

  it('streamExpiryMs and an idle expiry are configurable', async () => {
    fake.setStreaming({ streamExpiryMs: 10_000, streamIdleExpiryMs: 3_000 });
    const { ts } = await startIn();
    clock.advance(2_999);
    await client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: '1' });
    clock.advance(3_000);
    expect(await slackError(client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: '2' }))).toBe(
      'message_not_in_streaming_state',
    );
    expect(messageOf('C0ONE', ts).stream!.endedAt).toBe(clock.ms);
    fake.setStreaming({ streamIdleExpiryMs: undefined });
    const second = await startIn();
    clock.advance(9_999);
    await client.chat.appendStream({ channel: 'C0ONE', ts: second.ts, markdown_text: '1' });
    clock.advance(1);
    expect(await slackError(client.chat.appendStream({ channel: 'C0ONE', ts: second.ts, markdown_text: '2' }))).toBe(
      'message_not_in_streaming_state',
    );
  });

  it('a user who stops the stream in Slack: append is stopped_by_user, stop message_not_in_streaming_state', async () => {
    const { ts } = await startIn();
    fake.stopStreamByUser('C0ONE', ts);
    expect(messageOf('C0ONE', ts).stream!.state).toBe('stopped_by_user');
    expect(await slackError(client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: 'x' }))).toBe(
      'stopped_by_user',
    );
    expect(await slackError(client.chat.stopStream({ channel: 'C0ONE', ts }))).toBe('message_not_in_streaming_state');
    expect(() => fake.stopStreamByUser('C0ONE', ts)).toThrow(/not a message in the streaming state/);
  });
});

describe('rate limits', () => {
  it('chat.startStream is tier 2 and chat.appendStream tier 4, per workspace: HTTP 429 with Retry-After beyond the window', async () => {
    fake.setRateLimits({ startStream: { limit: 2, windowMs: 60_000 }, appendStream: { limit: 3, windowMs: 60_000 } });
    const { ts } = await startIn();
    await startIn('C0PRIV');
    const limited = await rawCall(fake, 'chat.startStream', {
      channel: 'C0ONE',
      thread_ts: question(),
      markdown_text: 'x',
      ...recipient,
    });
    expect(limited).toMatchObject({ status: 429, json: { ok: false, error: 'ratelimited' } });
    expect(limited.headers.get('retry-after')).toBe('60');
    for (let i = 0; i < 3; i++) await client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: '.' });
    const impatient = new WebClient(fake.botToken, {
      slackApiUrl: fake.apiUrl,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      logger: quiet,
    });
    const error = await impatient.chat
      .appendStream({ channel: 'C0ONE', ts, markdown_text: '.' })
      .catch((e: unknown) => e as WebAPIRateLimitedError);
    expect(error).toMatchObject({ code: ErrorCode.RateLimitedError, retryAfter: 60 });
    clock.advance(60_000);
    await client.chat.appendStream({ channel: 'C0ONE', ts, markdown_text: '!' });
    expect(messageOf('C0ONE', ts).text).toBe('Hel...!');
  });
});

describe("@slack/web-api's chatStream helper (ChatStreamer)", () => {
  it('streams through the fake: chunks mode, written several times while streaming, the final text exact', async () => {
    const threadTs = question();
    const streamer = client.chatStream({ channel: 'C0ONE', thread_ts: threadTs, ...recipient, buffer_size: 8 });
    const pieces = ['Once ', 'upon ', 'a ', 'time ', 'there ', 'was ', 'a ', 'fake ', 'Slack.'];
    for (const piece of pieces) {
      await streamer.append({ markdown_text: piece });
      clock.advance(50);
    }
    expect(streamer.ts).toBeDefined();
    const m = messageOf('C0ONE', streamer.ts!);
    expect(m.stream!.state).toBe('streaming');
    await streamer.stop();
    expect(m.text).toBe(pieces.join(''));
    expect(m.stream).toMatchObject({ state: 'stopped', mode: 'chunks' });
    const whileStreaming = m.stream!.writes.filter((w) => w.method !== 'chat.stopStream');
    expect(whileStreaming.length).toBeGreaterThanOrEqual(2);
    expect(whileStreaming.every((w) => w.text.length >= 8)).toBe(true);
    expect(fake.callsTo('chat.startStream')[0]!.params).toMatchObject({
      channel: 'C0ONE',
      thread_ts: threadTs,
      ...recipient,
    });
  });

  it('a stream with less than one buffer starts and stops at stop(), with the stop blocks under the text', async () => {
    const threadTs = question();
    const streamer = client.chatStream({ channel: 'C0ONE', thread_ts: threadTs, ...recipient });
    await streamer.append({ markdown_text: 'short' });
    expect(fake.callsTo('chat.startStream')).toEqual([]);
    const blocks = [{ type: 'context', elements: [{ type: 'mrkdwn', text: 'generated' }] }];
    await streamer.stop({ blocks });
    const m = messageOf('C0ONE', streamer.ts!);
    expect(m).toMatchObject({ text: 'short', blocks, stream: { state: 'stopped', stopBlocks: blocks } });
    expect(m.stream!.writes.map((w) => w.method)).toEqual(['chat.startStream', 'chat.stopStream']);
  });
});
