/**
 * Tests of the fake Slack's Web API, spoken to with the real @slack/web-api WebClient (what
 * Bolt uses inside) and bare fetch: authentication, chat.*, rate limits, file uploads and
 * response_url. It must speak the wire format those clients expect and refuse what Slack refuses.
 */
import { ErrorCode, type WebAPIRateLimitedError, WebClient, WebClientEvent } from '@slack/web-api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack, RESPONSE_URL_TTL_MS, unescapeSlack } from '../slack.ts';
import { handClock, quiet, rawCall as rawCallTo, slackError, webClient } from './test-helpers.ts';

/** A Slack-side clock the tests move by hand. */
const clock = handClock();

let fake: FakeSlack;
let client: WebClient;
const rawCall = (method: string, form: Record<string, string>, headers?: Record<string, string>) =>
  rawCallTo(fake, method, form, headers);

beforeAll(async () => {
  fake = await FakeSlack.start({
    now: clock.now,
    channels: [
      { id: 'C0ONE', name: 'one' },
      { id: 'C0TWO', name: 'two' },
      { id: 'C0NOBOT', name: 'nobot', botIsMember: false },
      { id: 'C0SMALL', name: 'small', members: ['U0ALICE'] },
    ],
  });
  client = webClient(fake);
});
afterEach(() => {
  fake.reset();
  fake.setRateLimits({ chatUpdate: { limit: 50, windowMs: 60_000 }, postMessage: { perSecond: 1, burst: 3 } });
  clock.advance(120_000);
});
afterAll(async () => {
  await fake.close();
});

describe('authentication and methods', () => {
  it('auth.test with the bot token answers the bot identity', async () => {
    const result = await client.auth.test();
    expect(result).toMatchObject({ ok: true, team_id: fake.teamId, user_id: fake.botUserId, bot_id: fake.botId });
    expect(fake.callsTo('auth.test')[0]?.auth).toBe('header');
  });

  it('a missing token is not_authed, a wrong one invalid_auth, both with HTTP 200 like Slack', async () => {
    const none = await rawCall('auth.test', {}, {});
    expect(none).toMatchObject({ status: 200, json: { ok: false, error: 'not_authed' } });
    const wrong = webClient(fake, 'xoxb-wrong');
    expect(await slackError(wrong.auth.test())).toBe('invalid_auth');
  });

  it('a token in a form body is accepted, a token inside a JSON body is not read', async () => {
    expect((await rawCall('auth.test', { token: fake.botToken }, {})).json).toMatchObject({ ok: true });
    const res = await fetch(`${fake.apiUrl}auth.test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: fake.botToken }),
    });
    expect(await res.json()).toMatchObject({ ok: false, error: 'not_authed' });
  });

  it('an unknown method is unknown_method', async () => {
    expect(await slackError(client.apiCall('chat.frobnicate', {}))).toBe('unknown_method');
  });

  it('users.info and conversations.info answer known ids and refuse unknown ones', async () => {
    expect((await client.users.info({ user: 'U0ALICE' })).user).toMatchObject({
      id: 'U0ALICE',
      name: 'alice',
      is_admin: true,
    });
    expect(await slackError(client.users.info({ user: 'U0NOBODY' }))).toBe('user_not_found');
    expect((await client.conversations.info({ channel: 'C0ONE' })).channel).toMatchObject({
      id: 'C0ONE',
      name: 'one',
      is_member: true,
    });
    expect(await slackError(client.conversations.info({ channel: 'C0NOPE' }))).toBe('channel_not_found');
  });

  it('users.list gives every user with the admin fields, by pages of limit', async () => {
    const first = await client.users.list({ limit: 1 });
    expect(first.members).toMatchObject([{ id: 'U0ALICE', name: 'alice', is_admin: true, is_owner: false }]);
    const rest = await client.users.list({ limit: 200, cursor: first.response_metadata!.next_cursor! });
    expect(rest.members).toMatchObject([{ id: 'U0BOB', is_admin: false }]);
    expect(rest.response_metadata?.next_cursor).toBe('');
  });

  it('users.info is tier 4 (100 a minute) and users.list tier 2 (20 a minute) per workspace: then HTTP 429 until the window moves', async () => {
    for (let i = 0; i < 100; i++) await client.users.info({ user: i % 2 ? 'U0ALICE' : 'U0BOB' });
    clock.advance(30_000);
    const limited = await rawCall('users.info', { user: 'U0ALICE' });
    expect([limited.status, limited.headers.get('retry-after'), limited.json]).toEqual([
      429,
      '30',
      { ok: false, error: 'ratelimited' },
    ]);
    // users.list has its own window.
    for (let i = 0; i < 20; i++) await client.users.list({ limit: 200 });
    expect((await rawCall('users.list', {})).status).toBe(429);
    clock.advance(30_000);
    expect((await rawCall('users.info', { user: 'U0ALICE' })).status).toBe(200);
  });
});

describe('chat.postMessage and chat.update', () => {
  it('stores a posted message with its ts, text, blocks (sent as a JSON string) and first revision', async () => {
    const blocks = [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'hi' } }];
    const posted = await client.chat.postMessage({ channel: 'C0ONE', text: 'fish &amp; chips', blocks });
    expect(posted).toMatchObject({
      ok: true,
      channel: 'C0ONE',
      message: { text: 'fish &amp; chips', bot_id: fake.botId },
    });
    expect(posted.ts).toMatch(/^\d{10}\.\d{6}$/);
    expect(typeof fake.callsTo('chat.postMessage')[0]?.params.blocks).toBe('string');
    const stored = fake.message('C0ONE', posted.ts!);
    expect(stored).toMatchObject({ channel: 'C0ONE', user: fake.botUserId, blocks, threadTs: undefined });
    expect(stored?.revisions).toHaveLength(1);
    expect(unescapeSlack(stored!.text)).toBe('fish & chips');
  });

  it('failNext refuses the matching calls with the scripted error, doing nothing, then answers again', async () => {
    const posted = await client.chat.postMessage({ channel: 'C0ONE', text: 'first' });
    // Only updates that send `blocks: []` are refused, twice; others go through.
    fake.failNext('chat.update', 'cant_update_message', { count: 2, when: (p) => p.blocks === '[]' });
    await client.chat.update({ channel: 'C0ONE', ts: posted.ts!, text: 'second' });
    for (let i = 0; i < 2; i++)
      expect(
        await slackError(client.chat.update({ channel: 'C0ONE', ts: posted.ts!, text: 'third', blocks: [] })),
      ).toBe('cant_update_message');
    expect(unescapeSlack(fake.message('C0ONE', posted.ts!)!.text)).toBe('second');
    expect(fake.callsTo('chat.update').map((c) => c.error)).toEqual([
      undefined,
      'cant_update_message',
      'cant_update_message',
    ]);
    await client.chat.update({ channel: 'C0ONE', ts: posted.ts!, text: 'third', blocks: [] });
    expect(unescapeSlack(fake.message('C0ONE', posted.ts!)!.text)).toBe('third');
    // Infinity: until stopFailing; a bad token is still not_authed/invalid_auth first.
    fake.failNext('chat.postMessage', 'is_archived', { count: Infinity });
    expect(await slackError(webClient(fake, 'xoxb-wrong').chat.postMessage({ channel: 'C0ONE', text: 'x' }))).toBe(
      'invalid_auth',
    );
    for (let i = 0; i < 3; i++)
      expect(await slackError(client.chat.postMessage({ channel: 'C0ONE', text: 'x' }))).toBe('is_archived');
    fake.stopFailing('chat.postMessage');
    await expect(client.chat.postMessage({ channel: 'C0ONE', text: 'x' })).resolves.toMatchObject({ ok: true });
  });

  it('refuses text over 4,000 characters with msg_too_long and accepts exactly 4,000', async () => {
    expect(await slackError(client.chat.postMessage({ channel: 'C0ONE', text: 'x'.repeat(4001) }))).toBe(
      'msg_too_long',
    );
    await expect(client.chat.postMessage({ channel: 'C0ONE', text: 'x'.repeat(4000) })).resolves.toMatchObject({
      ok: true,
    });
    // Counted as sent: 800 escaped ampersands are 4,000 characters on the wire, 801 are too many.
    expect(await slackError(client.chat.postMessage({ channel: 'C0TWO', text: '&amp;'.repeat(801) }))).toBe(
      'msg_too_long',
    );
  });

  it('refuses more than 50 blocks and section text of 3,001 characters with invalid_blocks', async () => {
    const section = (text: string) => ({ type: 'section' as const, text: { type: 'mrkdwn' as const, text } });
    expect(
      await slackError(
        client.chat.postMessage({
          channel: 'C0ONE',
          text: 't',
          blocks: Array.from({ length: 51 }, () => section('a')),
        }),
      ),
    ).toBe('invalid_blocks');
    expect(
      await slackError(client.chat.postMessage({ channel: 'C0ONE', text: 't', blocks: [section('a'.repeat(3001))] })),
    ).toBe('invalid_blocks');
    await expect(
      client.chat.postMessage({ channel: 'C0TWO', text: 't', blocks: [section('a'.repeat(3000))] }),
    ).resolves.toMatchObject({ ok: true });
    const bad = await rawCall('chat.postMessage', { channel: 'C0TWO', text: 't', blocks: '[{"type":' });
    expect(bad.json).toMatchObject({ ok: false, error: 'invalid_blocks_format' });
    const noAlt = await rawCall('chat.postMessage', {
      channel: 'C0TWO',
      text: 't',
      blocks: JSON.stringify([{ type: 'image', image_url: 'https://x/y.png' }]),
    });
    expect(noAlt.json).toMatchObject({ ok: false, error: 'invalid_blocks' });
  });

  it('refuses unknown channels, channels without the bot, and an empty message', async () => {
    expect(await slackError(client.chat.postMessage({ channel: 'C0NOPE', text: 'x' }))).toBe('channel_not_found');
    expect(await slackError(client.chat.postMessage({ channel: 'C0NOBOT', text: 'x' }))).toBe('not_in_channel');
    expect(await slackError(client.chat.postMessage({ channel: 'C0ONE', text: '' }))).toBe('no_text');
  });

  it('threads: a malformed thread_ts is invalid_thread_ts, an unknown one thread_not_found, a reply ts resolves to its parent', async () => {
    const parent = await client.chat.postMessage({ channel: 'C0ONE', text: 'parent' });
    const reply = await client.chat.postMessage({ channel: 'C0ONE', text: 'reply', thread_ts: parent.ts! });
    const nested = await client.chat.postMessage({ channel: 'C0ONE', text: 'reply 2', thread_ts: reply.ts! });
    expect(fake.thread('C0ONE', parent.ts!).map((m) => m.ts)).toEqual([reply.ts, nested.ts]);
    expect(await slackError(client.chat.postMessage({ channel: 'C0TWO', text: 'x', thread_ts: 'nope' }))).toBe(
      'invalid_thread_ts',
    );
    expect(
      await slackError(client.chat.postMessage({ channel: 'C0TWO', text: 'x', thread_ts: '1700000000.000001' })),
    ).toBe('thread_not_found');
  });

  it('chat.update records every revision with its time; a wrong ts is message_not_found; a user message cant_update_message', async () => {
    const posted = await client.chat.postMessage({ channel: 'C0ONE', text: 'one' });
    clock.advance(1000);
    await client.chat.update({ channel: 'C0ONE', ts: posted.ts!, text: 'one two' });
    clock.advance(1000);
    const updated = await client.chat.update({ channel: 'C0ONE', ts: posted.ts!, text: 'one two three' });
    expect(updated).toMatchObject({ ok: true, ts: posted.ts, text: 'one two three' });
    const revisions = fake.message('C0ONE', posted.ts!)!.revisions;
    expect(revisions.map((r) => r.text)).toEqual(['one', 'one two', 'one two three']);
    expect(revisions[2]!.at - revisions[0]!.at).toBe(2000);
    expect(await slackError(client.chat.update({ channel: 'C0ONE', ts: '1700000000.000001', text: 'x' }))).toBe(
      'message_not_found',
    );
    expect(await slackError(client.chat.update({ channel: 'C0TWO', ts: posted.ts!, text: 'x' }))).toBe(
      'message_not_found',
    );
    expect(await slackError(client.chat.update({ channel: 'C0ONE', ts: posted.ts!, text: 'y'.repeat(4001) }))).toBe(
      'msg_too_long',
    );
    const theirs = fake.postUserMessage('C0ONE', 'U0BOB', 'mine');
    expect(await slackError(client.chat.update({ channel: 'C0ONE', ts: theirs.ts, text: 'edited' }))).toBe(
      'cant_update_message',
    );
    expect(await slackError(client.chat.delete({ channel: 'C0ONE', ts: theirs.ts }))).toBe('cant_delete_message');
    await client.chat.delete({ channel: 'C0ONE', ts: posted.ts! });
    expect(fake.messages('C0ONE').map((m) => m.ts)).toEqual([theirs.ts]);
  });

  it('records the mentions Slack would render: raw <!channel> and <@U…> count, escaped ones do not', async () => {
    const raw = await client.chat.postMessage({ channel: 'C0ONE', text: 'hey <!channel> and <@U0BOB|bob>' });
    const escaped = await client.chat.postMessage({ channel: 'C0ONE', text: 'hey &lt;!channel&gt; &lt;@U0BOB&gt;' });
    expect(fake.message('C0ONE', raw.ts!)?.mentions).toEqual(['<!channel>', '<@U0BOB>']);
    expect(fake.message('C0ONE', escaped.ts!)?.mentions).toEqual([]);
  });

  it('chat.postEphemeral stores a message for one member and refuses non-members', async () => {
    await client.chat.postEphemeral({ channel: 'C0SMALL', user: 'U0ALICE', text: 'psst' });
    expect(fake.ephemerals).toMatchObject([
      { channel: 'C0SMALL', user: 'U0ALICE', text: 'psst', via: 'chat.postEphemeral' },
    ]);
    expect(await slackError(client.chat.postEphemeral({ channel: 'C0SMALL', user: 'U0BOB', text: 'psst' }))).toBe(
      'user_not_in_channel',
    );
  });
});

describe('rate limits', () => {
  it('chat.update beyond the per-workspace window is HTTP 429 with Retry-After and error ratelimited, until the window moves', async () => {
    fake.setRateLimits({ chatUpdate: { limit: 3, windowMs: 60_000 } });
    const posted = await client.chat.postMessage({ channel: 'C0ONE', text: 'a' });
    for (let i = 0; i < 3; i++) await client.chat.update({ channel: 'C0ONE', ts: posted.ts!, text: `a${i}` });
    clock.advance(10_000);
    const limited = await rawCall('chat.update', { channel: 'C0ONE', ts: posted.ts!, text: 'b' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('50');
    expect(limited.json).toEqual({ ok: false, error: 'ratelimited' });
    // What @slack/web-api makes of it when told not to wait:
    const impatient = new WebClient(fake.botToken, {
      slackApiUrl: fake.apiUrl,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      logger: quiet,
    });
    const error = await impatient.chat
      .update({ channel: 'C0ONE', ts: posted.ts!, text: 'b' })
      .catch((e: unknown) => e as WebAPIRateLimitedError);
    expect(error).toMatchObject({ code: ErrorCode.RateLimitedError, retryAfter: 50 });
    clock.advance(50_000);
    await expect(client.chat.update({ channel: 'C0ONE', ts: posted.ts!, text: 'b' })).resolves.toMatchObject({
      ok: true,
    });
  });

  it('chat.postMessage allows a burst per channel, then 429; other channels are unaffected; the WebClient waits Retry-After and succeeds', async () => {
    fake.setRateLimits({ postMessage: { perSecond: 1, burst: 2 } });
    await client.chat.postMessage({ channel: 'C0ONE', text: '1' });
    await client.chat.postMessage({ channel: 'C0ONE', text: '2' });
    const limited = await rawCall('chat.postMessage', { channel: 'C0ONE', text: '3' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    await expect(client.chat.postMessage({ channel: 'C0TWO', text: 'elsewhere' })).resolves.toMatchObject({ ok: true });
    // The default WebClient behaviour: wait Retry-After, retry. Slack's clock moves on meanwhile.
    const patient = new WebClient(fake.botToken, {
      slackApiUrl: fake.apiUrl,
      retryConfig: { retries: 1, minTimeout: 0, maxTimeout: 0 },
      logger: quiet,
    });
    patient.on(WebClientEvent.RATE_LIMITED, (seconds: number) => clock.advance(seconds * 1000));
    await expect(patient.chat.postMessage({ channel: 'C0ONE', text: '3' })).resolves.toMatchObject({ ok: true });
    expect(fake.callsTo('chat.postMessage').map((c) => c.status)).toEqual([200, 200, 429, 200, 429, 200]);
  });

  it('rateLimitNext answers the next call of a method 429 with the scripted Retry-After, once', async () => {
    fake.rateLimitNext('chat.postMessage', 1, 7);
    const limited = await rawCall('chat.postMessage', { channel: 'C0ONE', text: 'x' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    await expect(client.chat.postMessage({ channel: 'C0ONE', text: 'x' })).resolves.toMatchObject({ ok: true });
  });

  it('rateLimitNext with a scope answers 429 only to the calls in its channel whose parameters it accepts, as many times as scripted', async () => {
    fake.rateLimitNext('chat.postMessage', 2, 3600, { channel: 'C0TWO', when: (params) => params.text === 'held' });
    const elsewhere = await rawCall('chat.postMessage', { channel: 'C0ONE', text: 'held' });
    const otherText = await rawCall('chat.postMessage', { channel: 'C0TWO', text: 'free' });
    expect([elsewhere.status, otherText.status]).toEqual([200, 200]);
    for (let i = 0; i < 2; i++) {
      const limited = await rawCall('chat.postMessage', { channel: 'C0TWO', text: 'held' });
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('3600');
      expect(limited.json).toEqual({ ok: false, error: 'ratelimited' });
      clock.advance(2_000);
    }
    expect((await rawCall('chat.postMessage', { channel: 'C0TWO', text: 'held' })).status).toBe(200);
  });
});

describe('file uploads', () => {
  it('filesUploadV2 runs getUploadURLExternal → bytes to upload_url → completeUploadExternal and shares the file in the thread', async () => {
    const parent = await client.chat.postMessage({ channel: 'C0ONE', text: 'parent' });
    const bytes = Buffer.from('\x89PNG fake image bytes');
    const result = await client.filesUploadV2({
      channel_id: 'C0ONE',
      thread_ts: parent.ts!,
      initial_comment: 'a fox &amp; a hound',
      file_uploads: [{ file: bytes, filename: 'fox.png', alt_text: 'a red fox' }],
    });
    expect(result.ok).toBe(true);
    const [get] = fake.callsTo('files.getUploadURLExternal');
    expect(get?.params).toMatchObject({ filename: 'fox.png', length: String(bytes.length), alt_text: 'a red fox' });
    expect(fake.uploads).toMatchObject([{ status: 200, bytes: bytes.length }]);
    const [file] = [...fake.files.values()];
    expect(file).toMatchObject({
      filename: 'fox.png',
      altText: 'a red fox',
      title: 'fox.png',
      completed: true,
      channel: 'C0ONE',
      threadTs: parent.ts,
    });
    expect(file?.data?.equals(bytes)).toBe(true);
    const shared = fake.message('C0ONE', file!.messageTs!);
    expect(shared).toMatchObject({
      files: [file!.id],
      threadTs: parent.ts,
      via: 'files.completeUploadExternal',
      text: 'a fox &amp; a hound',
    });
    expect(fake.calls.map((c) => c.method)).toEqual([
      'chat.postMessage',
      'files.getUploadURLExternal',
      'files.completeUploadExternal',
    ]);
  });

  it('refuses bytes of another length than declared, and completing a file twice or before its bytes arrived', async () => {
    const { upload_url, file_id } = await client.files.getUploadURLExternal({ filename: 'a.txt', length: 5 });
    const wrong = await fetch(upload_url!, { method: 'POST', body: 'four' });
    expect(wrong.status).toBe(400);
    expect(
      await slackError(client.files.completeUploadExternal({ files: [{ id: file_id! }], channel_id: 'C0ONE' })),
    ).toBe('file_not_found');
    expect((await fetch(upload_url!, { method: 'POST', body: 'five!' })).status).toBe(200);
    await client.files.completeUploadExternal({ files: [{ id: file_id!, title: 'A' }], channel_id: 'C0ONE' });
    expect(
      await slackError(client.files.completeUploadExternal({ files: [{ id: file_id! }], channel_id: 'C0ONE' })),
    ).toBe('file_not_found');
    expect(await slackError(client.files.getUploadURLExternal({ filename: 'b.txt', length: 0 }))).toBe(
      'invalid_arguments',
    );
  });
});

describe('response_url', () => {
  async function issue(): Promise<string> {
    // A bot that is not listening: the command is not acked, but the response_url is issued.
    const result = await fake.sendSlashCommand('http://127.0.0.1:9', {
      command: '/chat',
      text: 'x',
      channel_id: 'C0ONE',
    });
    fake.platformFailures.length = 0;
    return result.responseUrl;
  }
  const post = (url: string, body: unknown) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('takes five posts, then answers 404 used_url; ephemeral (the default) and in_channel posts land where Slack shows them', async () => {
    const url = await issue();
    expect((await post(url, { text: 'only you' })).status).toBe(200);
    expect((await post(url, { text: 'everyone', response_type: 'in_channel' })).status).toBe(200);
    for (let i = 0; i < 3; i++)
      expect((await post(url, { text: `n${i}`, response_type: 'ephemeral' })).status).toBe(200);
    const sixth = await post(url, { text: 'one too many' });
    expect(sixth.status).toBe(404);
    expect(await sixth.json()).toEqual({ ok: false, error: 'used_url' });
    expect(fake.ephemerals.map((e) => e.text)).toEqual(['only you', 'n0', 'n1', 'n2']);
    expect(fake.messages('C0ONE')).toMatchObject([{ text: 'everyone', via: 'response_url' }]);
    expect(fake.responsePosts().map((p) => [p.responseType, p.status])).toEqual([
      ['ephemeral', 200],
      ['in_channel', 200],
      ['ephemeral', 200],
      ['ephemeral', 200],
      ['ephemeral', 200],
      ['ephemeral', 404],
    ]);
  });

  it('expires 30 minutes after the command and refuses a body that is not JSON', async () => {
    const url = await issue();
    expect((await fetch(url, { method: 'POST', body: 'text=hi' })).status).toBe(400);
    clock.advance(RESPONSE_URL_TTL_MS + 1);
    const late = await post(url, { text: 'late' });
    expect(late.status).toBe(404);
    expect(await late.json()).toEqual({ ok: false, error: 'expired_url' });
  });
});
