/**
 * FakeDiscord rate-limit modes: `shared` (the default: one budget per channel for every write)
 * and `documented` (a bucket of 5 per 2 s per interaction token for its webhook routes, 5 per
 * 5 s per channel for bot-token creates and edits), each answering with Discord's headers, and
 * discord.js's REST client staying within the documented buckets from those headers alone.
 */

import { REST, Routes } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeDiscord, FakeInteraction } from '../discord.ts';
import { api, cleanup, connectBot, deferred, json, type RawGateway, startFake, webhookPath } from './test-helpers.ts';

afterEach(cleanup);

/** PATCH of an interaction's original response (through its webhook token). */
const editOriginal = (fake: FakeDiscord, ix: FakeInteraction, content: string) =>
  api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'PATCH', body: { content } });

/** POST of a message with the bot token. */
const postInChannel = (fake: FakeDiscord, channelId: string, content: string) =>
  api(fake, `/channels/${channelId}/messages`, { method: 'POST', auth: true, body: { content } });

/** The `x-ratelimit-*` headers of a response (and `retry-after`), by name without the prefix. */
function limitHeaders(res: Response): Record<string, string | null> {
  const h = (name: string) => res.headers.get(name);
  return {
    bucket: h('x-ratelimit-bucket'),
    limit: h('x-ratelimit-limit'),
    remaining: h('x-ratelimit-remaining'),
    reset: h('x-ratelimit-reset'),
    resetAfter: h('x-ratelimit-reset-after'),
    retryAfter: h('retry-after'),
    scope: h('x-ratelimit-scope'),
  };
}

describe('FakeDiscord rate-limit modes', () => {
  it('is in shared mode by default: interaction webhook writes and bot-token writes of a channel spend one budget', async () => {
    const fake = await startFake({ messageBudget: { limit: 3, windowMs: 60_000 } });
    expect(fake.rateLimitMode).toBe('shared');
    await connectBot(fake);
    const ix = await deferred(fake);
    const channelId = ix.channelId;
    const first = await editOriginal(fake, ix, 'one');
    const second = await postInChannel(fake, channelId, 'two');
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(limitHeaders(first).bucket).toBe(limitHeaders(second).bucket);
    expect([limitHeaders(first).remaining, limitHeaders(second).remaining]).toEqual(['2', '1']);
    expect((await postInChannel(fake, channelId, 'three')).status).toBe(200);
    const refused = await editOriginal(fake, ix, 'four');
    expect(refused.status).toBe(429);
    expect(limitHeaders(refused)).toMatchObject({ remaining: '0', limit: '3', scope: 'user' });
    expect(fake.rateLimits.map((r) => [r.bucket, r.channelId, r.method])).toEqual([['shared', channelId, 'PATCH']]);
    expect(ix.original!.content).toBe('one');
  });

  it('documented mode: 5 writes per 2 s per interaction token over its webhook routes, then 429 with retry-after and x-ratelimit-scope user; another token keeps its own bucket', async () => {
    const fake = await startFake({ rateLimitMode: 'documented' });
    await connectBot(fake);
    const ix = await deferred(fake);
    const other = await deferred(fake);
    // Edits of the original, a follow-up and an edit of the follow-up all count against the token.
    const answers: Response[] = [];
    for (let i = 1; i <= 3; i++) answers.push(await editOriginal(fake, ix, `edit ${i}`));
    const followUp = await api(fake, `${webhookPath(fake, ix)}?wait=true`, {
      method: 'POST',
      body: { content: 'follow-up' },
    });
    answers.push(followUp);
    const followUpId = (await json(followUp)).id as string;
    answers.push(
      await api(fake, webhookPath(fake, ix, `/messages/${followUpId}`), {
        method: 'PATCH',
        body: { content: 'follow-up edited' },
      }),
    );
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.map((r) => limitHeaders(r).remaining)).toEqual(['4', '3', '2', '1', '0']);
    for (const r of answers) {
      expect(r.headers.get('x-ratelimit-limit')).toBe('5');
      expect(Number(r.headers.get('x-ratelimit-reset-after'))).toBeGreaterThan(0);
      expect(Number(r.headers.get('x-ratelimit-reset-after'))).toBeLessThanOrEqual(2);
      expect(r.headers.get('x-ratelimit-bucket')).toMatch(/^[0-9a-f]{32}$/);
    }
    expect(new Set(answers.map((r) => limitHeaders(r).bucket)).size).toBe(1);

    const refused = await editOriginal(fake, ix, 'too many');
    expect(refused.status).toBe(429);
    const headers = limitHeaders(refused);
    expect(headers).toMatchObject({
      limit: '5',
      remaining: '0',
      scope: 'user',
      bucket: limitHeaders(answers[0]!).bucket,
    });
    expect(Number(headers.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(headers.retryAfter)).toBeLessThanOrEqual(2);
    expect(Number(headers.resetAfter)).toBeLessThanOrEqual(2);
    expect(Number(headers.reset)).toBeCloseTo(Date.now() / 1000 + Number(headers.resetAfter), 0);
    const body = await json(refused);
    expect(body).toMatchObject({ message: 'You are being rate limited.', global: false });
    expect(body.retry_after as number).toBeLessThanOrEqual(2);
    expect(ix.original!.content).toBe('edit 3');
    expect(fake.rateLimits.map((r) => [r.bucket, r.channelId, r.method])).toEqual([['webhook', ix.channelId, 'PATCH']]);

    // The other interaction, in the same channel, has its own token bucket (same route hash).
    const elsewhere = await editOriginal(fake, other, 'mine');
    expect(elsewhere.status).toBe(200);
    expect(limitHeaders(elsewhere)).toMatchObject({ remaining: '4', bucket: limitHeaders(answers[0]!).bucket });
  });

  it('documented mode: bot-token creates and edits spend 5 per 5 s per channel, apart from interaction tokens, under their own bucket hash', async () => {
    const fake = await startFake({ rateLimitMode: 'documented' });
    await connectBot(fake);
    const ix = await deferred(fake);
    const channelId = ix.channelId;
    const webhookAnswer = await editOriginal(fake, ix, 'interaction');
    // Bot-token writes: a create and 4 edits of it.
    const created = await postInChannel(fake, channelId, 'v0');
    const id = (await json(created)).id as string;
    const answers = [created];
    for (let i = 1; i <= 4; i++)
      answers.push(
        await api(fake, `/channels/${channelId}/messages/${id}`, {
          method: 'PATCH',
          auth: true,
          body: { content: `v${i}` },
        }),
      );
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.map((r) => limitHeaders(r).remaining)).toEqual(['4', '3', '2', '1', '0']);
    expect(Number(limitHeaders(created).resetAfter)).toBeGreaterThan(2);
    expect(Number(limitHeaders(created).resetAfter)).toBeLessThanOrEqual(5);
    const channelHash = limitHeaders(created).bucket;
    expect(channelHash).toMatch(/^[0-9a-f]{32}$/);
    expect(channelHash).not.toBe(limitHeaders(webhookAnswer).bucket);
    for (const r of answers) expect(limitHeaders(r).bucket).toBe(channelHash);

    const refused = await postInChannel(fake, channelId, 'one more');
    expect(refused.status).toBe(429);
    expect(limitHeaders(refused)).toMatchObject({ limit: '5', remaining: '0', scope: 'user', bucket: channelHash });
    expect(Number(limitHeaders(refused).retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(limitHeaders(refused).retryAfter)).toBeLessThanOrEqual(5);
    expect(fake.rateLimits.map((r) => [r.bucket, r.channelId, r.method])).toEqual([['channel', channelId, 'POST']]);
    // The interaction's token is untouched by the channel's spent bucket.
    const still = await editOriginal(fake, ix, 'interaction again');
    expect(still.status).toBe(200);
    expect(limitHeaders(still).remaining).toBe('3');
    // Another channel has its own bucket.
    const other = fake.addChannel('other');
    const there = await postInChannel(fake, other.id, 'hello');
    expect([there.status, limitHeaders(there).remaining]).toEqual([200, '4']);
  });

  it("accepts a token's writes again once its window resets (webhookBudget sets the bucket)", async () => {
    const fake = await startFake({ rateLimitMode: 'documented', webhookBudget: { limit: 2, windowMs: 300 } });
    await connectBot(fake);
    const ix = await deferred(fake);
    expect((await editOriginal(fake, ix, 'a')).status).toBe(200);
    expect((await editOriginal(fake, ix, 'b')).status).toBe(200);
    const refused = await editOriginal(fake, ix, 'c');
    expect(refused.status).toBe(429);
    await new Promise((r) => setTimeout(r, Number(refused.headers.get('x-ratelimit-reset-after')) * 1000 + 20));
    const again = await editOriginal(fake, ix, 'c');
    expect([again.status, limitHeaders(again).remaining, limitHeaders(again).limit]).toEqual([200, '1', '2']);
    expect(ix.original!.content).toBe('c');
  });

  it('switches modes at run time with setRateLimitMode, every window starting afresh', async () => {
    const fake = await startFake({ messageBudget: { limit: 2, windowMs: 60_000 } });
    await connectBot(fake);
    const ix = await deferred(fake);
    await editOriginal(fake, ix, '1');
    await editOriginal(fake, ix, '2');
    expect((await postInChannel(fake, ix.channelId, 'shared and spent')).status).toBe(429);
    fake.setRateLimitMode('documented');
    expect(fake.rateLimitMode).toBe('documented');
    // The channel's bot-token bucket is fresh, and interaction writes no longer spend it.
    expect((await editOriginal(fake, ix, '3')).status).toBe(200);
    const posted = await postInChannel(fake, ix.channelId, 'now fine');
    expect([posted.status, limitHeaders(posted).remaining]).toEqual([200, '1']);
    fake.setRateLimitMode('shared');
    const shared = await editOriginal(fake, ix, '4');
    expect([shared.status, limitHeaders(shared).remaining]).toEqual([200, '1']);
    expect(fake.rateLimits.map((r) => r.bucket)).toEqual(['shared']);
  });

  it('documented mode: discord.js REST, from the headers alone, sends 12 edits of one token without a 429, waiting each window out', async () => {
    const fake = await startFake({ rateLimitMode: 'documented', webhookBudget: { limit: 5, windowMs: 400 } });
    await connectBot(fake);
    const ix = await deferred(fake);
    const rest = new REST({ api: fake.apiUrl });
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        rest.patch(Routes.webhookMessage(fake.applicationId, ix.token, '@original'), {
          auth: false,
          body: { content: `edit ${i + 1}` },
        }),
      ),
    );
    expect(fake.rateLimits).toEqual([]);
    const edits = fake.writes.filter((w) => w.interactionId === ix.id);
    expect(edits).toHaveLength(12);
    // No 5 + 1 consecutive edits inside one 400 ms window: the 6th and 11th waited for a reset.
    expect(edits[5]!.at - edits[0]!.at).toBeGreaterThanOrEqual(400);
    expect(edits[10]!.at - edits[5]!.at).toBeGreaterThanOrEqual(400);
    expect(ix.original!.content).toMatch(/^edit \d+$/);
  });
});

describe("FakeDiscord's global rate limit and spread events", () => {
  it('refuses the bot token past 50 requests in a second with a global 429; interaction webhook routes are exempt', async () => {
    const fake = await startFake({ rateLimitMode: 'documented', messageBudget: { limit: 1000, windowMs: 1_000 } });
    await connectBot(fake);
    const ix = await deferred(fake);
    const channelId = ix.channelId;
    const statuses = await Promise.all(
      Array.from({ length: 51 }, (_, i) => postInChannel(fake, channelId, `m${i}`).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    const refused = await postInChannel(fake, channelId, 'one more');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-global')).toBe('true');
    expect(refused.headers.get('x-ratelimit-scope')).toBe('global');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await json(refused)).toMatchObject({ global: true });
    expect(fake.rateLimits.every((r) => r.bucket === 'global')).toBe(true);
    // The interaction's webhook is not bound by the global limit.
    expect((await editOriginal(fake, ix, 'still')).status).toBe(200);
  });

  it('spreadEvents: each interaction goes to one of the sessions, in turn', async () => {
    const fake = await startFake({ spreadEvents: true });
    const sessions = [await connectBot(fake), await connectBot(fake)];
    for (let i = 0; i < 4; i++) fake.dispatchInteraction({ command: 'chat', options: { prompt: `q${i}` } });
    const got = (s: RawGateway) => s.frames.filter((f) => f.t === 'INTERACTION_CREATE').length;
    await expect.poll(() => sessions.map(got)).toEqual([2, 2]);
  });
});
