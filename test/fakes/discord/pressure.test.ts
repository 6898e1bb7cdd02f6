/**
 * FakeDiscord's scripted long waits (pressure.ts): a 429 naming an hour on one channel's writes
 * (bot token and interaction webhook alike), an accepted write announcing a reset an hour away,
 * and a global 429 of the bot token's requests that interaction webhooks are exempt from; each
 * serves as many requests as scripted, then the fake answers as before.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeDiscord, FakeInteraction } from '../discord.ts';
import { api, cleanup, connectBot, deferred, json, startFake, webhookPath } from './test-helpers.ts';

afterEach(cleanup);

const editOriginal = (fake: FakeDiscord, ix: FakeInteraction, content: string) =>
  api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'PATCH', body: { content } });

const postInChannel = (fake: FakeDiscord, channelId: string, content: string) =>
  api(fake, `/channels/${channelId}/messages`, { method: 'POST', auth: true, body: { content } });

describe('FakeDiscord scripted long waits', () => {
  it("refuse: the channel's next writes, webhook and bot token alike, are 429 naming the wait with Discord's headers; another channel is not", async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = await deferred(fake);
    const other = fake.addChannel('other');
    fake.pressRateLimits({ channelId: ix.channelId, kind: 'refuse', afterSec: 3600, times: 2, scope: 'shared' });
    expect((await postInChannel(fake, other.id, 'elsewhere')).status).toBe(200);
    const refused = await editOriginal(fake, ix, 'held');
    expect(refused.status).toBe(429);
    expect(await json(refused)).toMatchObject({ retry_after: 3600, global: false });
    expect(refused.headers.get('retry-after')).toBe('3600');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('x-ratelimit-reset-after')).toBe('3600.000');
    expect(refused.headers.get('x-ratelimit-scope')).toBe('shared');
    expect((await postInChannel(fake, ix.channelId, 'held too')).status).toBe(429);
    expect(fake.rateLimits.map((r) => [r.channelId, r.method, r.retryAfterMs])).toEqual([
      [ix.channelId, 'PATCH', 3_600_000],
      [ix.channelId, 'POST', 3_600_000],
    ]);
    expect((await editOriginal(fake, ix, 'accepted')).status).toBe(200);
    expect(ix.original!.content).toBe('accepted');
  });

  it('announce: the write is accepted, its answer saying nothing remains until a reset an hour away', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const channel = fake.addChannel('announced');
    fake.pressRateLimits({ channelId: channel.id, kind: 'announce', afterSec: 3600 });
    const announced = await postInChannel(fake, channel.id, 'first');
    expect(announced.status).toBe(200);
    expect(announced.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(announced.headers.get('x-ratelimit-reset-after')).toBe('3600.000');
    const next = await postInChannel(fake, channel.id, 'second');
    expect(next.status).toBe(200);
    expect(next.headers.get('x-ratelimit-reset-after')).not.toBe('3600.000');
    expect(fake.rateLimits).toEqual([]);
  });

  it('global: the next bot-token request is a global 429 naming the wait; interaction webhooks are exempt', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = await deferred(fake);
    fake.pressRateLimits({ global: true, afterSec: 3600 });
    expect((await editOriginal(fake, ix, 'a webhook write')).status).toBe(200);
    const refused = await postInChannel(fake, ix.channelId, 'a bot-token write');
    expect(refused.status).toBe(429);
    expect(await json(refused)).toMatchObject({ retry_after: 3600, global: true });
    expect(refused.headers.get('x-ratelimit-global')).toBe('true');
    expect(refused.headers.get('x-ratelimit-scope')).toBe('global');
    expect(fake.rateLimits.map((r) => r.bucket)).toEqual(['global']);
    expect((await postInChannel(fake, ix.channelId, 'again')).status).toBe(200);
  });
});
