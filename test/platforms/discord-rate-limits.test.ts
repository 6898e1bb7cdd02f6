/**
 * DiscordRateLimits with the write scheduler, under a fake clock: what the bot learns of a
 * channel's writes from Discord's answers. Until it knows, a channel's writes go one at a time
 * (a hidden shared budget then costs one 429); a 429 it did not expect makes the channel
 * `shared` (every write within 5 per 5 s, held until the reset, not halved); more than twice
 * the channel's budget accepted within 5 s makes it `separate` (no bound beyond each token's
 * and the bot token's own); what was learned ends after 10 minutes.
 */

import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WriteScheduler } from '../../src/core/delivery/scheduler.ts';
import type { WriteRequest } from '../../src/core/delivery/write-request.ts';
import { BotEvents, type RateLimitReport } from '../../src/core/events.ts';
import { channelBucket, DISCORD_BUDGETS, DiscordRateLimits } from '../../src/platforms/discord/rate-limits.ts';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

const APP = '1100000000000000001';
const CHANNEL = '1200000000000000001';

/** A scheduler with DiscordRateLimits, and a way to submit writes that take `ms` and record when they ran. */
function setup() {
  const scheduler = new WriteScheduler();
  const events = new BotEvents();
  const limits = new DiscordRateLimits(scheduler, events, pino({ level: 'silent' }));
  const reports: RateLimitReport[] = [];
  events.on('platform.rate_limited', (r) => reports.push(r));
  const ran: Array<{ key: string; at: number }> = [];
  let inFlight = 0;
  let mostInFlight = 0;
  /** An interaction's write (its token's bucket and the channel's all-writes one). */
  const interactionWrite = (key: string, token: string, ms = 20): WriteRequest => ({
    key,
    stream: key,
    buckets: limits.interactionBuckets(token, CHANNEL),
    final: false,
    run: async () => {
      ran.push({ key, at: performance.now() });
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, ms));
      inFlight -= 1;
    },
  });
  /** A bot-token write in the channel (the channel's bucket, as a mention answer names it). */
  const botWrite = (key: string): WriteRequest => ({
    key,
    stream: key,
    buckets: [channelBucket(CHANNEL)],
    final: false,
    run: async () => void ran.push({ key, at: performance.now() }),
  });
  return { scheduler, limits, reports, ran, interactionWrite, botWrite, mostInFlight: () => mostInFlight };
}

/** Headers of a Discord answer. */
function headers(values: Record<string, string>): Headers {
  return new Headers(values);
}

const webhookPath = (token: string) => `/webhooks/${APP}/${token}/messages/@original`;

describe('DiscordRateLimits', () => {
  it("sends a channel's writes one at a time while it does not know whether they share one budget", async () => {
    const { scheduler, limits, interactionWrite, mostInFlight, ran } = setup();
    expect(limits.sharing(CHANNEL)).toBe('unknown');
    const writes = ['a', 'b', 'c'].map((t) => scheduler.submit(interactionWrite(`${t}:0`, `token-${t}`)));
    await vi.advanceTimersByTimeAsync(100);
    expect(await Promise.all(writes)).toEqual(['written', 'written', 'written']);
    expect(mostInFlight()).toBe(1);
    expect(ran.map((r) => r.at)).toEqual([0, 20, 40]);
  });

  it('learns from an unexpected 429 that the channel shares one budget: every write within 5 per 5 s, held until the reset, not halved', async () => {
    const { scheduler, limits, interactionWrite, botWrite, ran, reports } = setup();
    // Five accepted writes, then a 429 on another token's first write (retry-after 5 s).
    for (let i = 0; i < 5; i++)
      limits.response(
        'PATCH',
        webhookPath(`t${i}`),
        200,
        headers({ 'x-ratelimit-remaining': '4', 'x-ratelimit-reset-after': '2', 'x-ratelimit-limit': '5' }),
      );
    limits.interactionBuckets('t5', CHANNEL);
    limits.response(
      'PATCH',
      webhookPath('t5'),
      429,
      headers({
        'retry-after': '5',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset-after': '4.9',
        'x-ratelimit-limit': '5',
        'x-ratelimit-scope': 'user',
      }),
    );
    expect(limits.sharing(CHANNEL)).toBe('shared');
    expect(limits.isShared(CHANNEL)).toBe(true);
    expect(reports).toEqual([{ platform: 'discord', route: 'PATCH /webhooks/:id/:token/messages/@original' }]);

    // Twelve writes: eight of interactions (own tokens), four with the bot token.
    const writes = [
      ...Array.from({ length: 8 }, (_, i) => scheduler.submit(interactionWrite(`i${i}:0`, `u${i}`, 0))),
      ...Array.from({ length: 4 }, (_, i) => scheduler.submit(botWrite(`b${i}:0`))),
    ];
    await vi.advanceTimersByTimeAsync(4_990);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(20);
    // After the hold, the full budget (not half of it) for all writes together, then the next window.
    expect(ran).toHaveLength(5);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(ran).toHaveLength(10);
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all(writes);
    expect(ran).toHaveLength(12);
    const times = ran.map((r) => r.at);
    for (const t of times) expect(times.filter((u) => u >= t && u < t + 5_000).length).toBeLessThanOrEqual(5);
  });

  it('halves the shared budget when a channel known to share is refused again', async () => {
    const { scheduler, limits, botWrite, ran } = setup();
    limits.response(
      'POST',
      `/channels/${CHANNEL}/messages`,
      429,
      headers({ 'retry-after': '1', 'x-ratelimit-reset-after': '1' }),
    );
    expect(limits.sharing(CHANNEL)).toBe('shared');
    limits.response(
      'POST',
      `/channels/${CHANNEL}/messages`,
      429,
      headers({ 'retry-after': '1', 'x-ratelimit-reset-after': '1' }),
    );
    const writes = Array.from({ length: 4 }, (_, i) => scheduler.submit(botWrite(`b${i}:0`)));
    await vi.advanceTimersByTimeAsync(1_010);
    // Two (half of five) in the first window.
    expect(ran).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all(writes);
    expect(ran).toHaveLength(4);
  });

  it('learns that a channel does not share when more than twice its budget is accepted within 5 s, and lets its writes run together', async () => {
    const { scheduler, limits, interactionWrite, mostInFlight } = setup();
    limits.interactionBuckets('t', CHANNEL);
    for (let i = 0; i < 10; i++) {
      limits.response(
        'PATCH',
        webhookPath('t'),
        200,
        headers({ 'x-ratelimit-remaining': '4', 'x-ratelimit-reset-after': '2', 'x-ratelimit-limit': '5' }),
      );
      await vi.advanceTimersByTimeAsync(400);
    }
    // Ten in 4 s: one shared budget could have allowed that across a window's reset.
    expect(limits.sharing(CHANNEL)).toBe('unknown');
    limits.response(
      'POST',
      `/channels/${CHANNEL}/messages`,
      200,
      headers({ 'x-ratelimit-remaining': '4', 'x-ratelimit-reset-after': '5' }),
    );
    expect(limits.sharing(CHANNEL)).toBe('separate');
    const writes = ['a', 'b', 'c'].map((t) => scheduler.submit(interactionWrite(`${t}:0`, `token-${t}`)));
    await vi.advanceTimersByTimeAsync(30);
    await Promise.all(writes);
    expect(mostInFlight()).toBe(3);
  });

  it('forgets what it learned after 10 minutes: the channel is probed again', async () => {
    const { limits } = setup();
    limits.response('POST', `/channels/${CHANNEL}/messages`, 429, headers({ 'retry-after': '1' }));
    expect(limits.sharing(CHANNEL)).toBe('shared');
    await vi.advanceTimersByTimeAsync(10 * 60_000 - 1_000);
    expect(limits.sharing(CHANNEL)).toBe('shared');
    await vi.advanceTimersByTimeAsync(2_000);
    expect(limits.sharing(CHANNEL)).toBe('unknown');
  });

  it("keeps what it learned on the scheduler's clock (one clock for budgets and learning)", () => {
    let now = 0;
    const scheduler = new WriteScheduler({ clock: { now: () => now, sleep: () => new Promise(() => undefined) } });
    const limits = new DiscordRateLimits(scheduler, new BotEvents(), pino({ level: 'silent' }));
    limits.response('POST', `/channels/${CHANNEL}/messages`, 429, headers({ 'retry-after': '1' }));
    expect(limits.sharing(CHANNEL)).toBe('shared');
    now = 10 * 60_000 - 1;
    expect(limits.sharing(CHANNEL)).toBe('shared');
    now = 10 * 60_000 + 1;
    expect(limits.sharing(CHANNEL)).toBe('unknown');
  });

  it("keeps bot-token writes of many channels within Discord's global 50 a second, while interaction writes are not held by it", async () => {
    const { scheduler, limits } = setup();
    const times: number[] = [];
    // 120 bot-token writes in 120 channels known not to share (their own buckets are open).
    const writes = Array.from({ length: 120 }, (_, i) => {
      const channel = String(1300000000000000000n + BigInt(i));
      return scheduler.submit({
        key: `w${i}`,
        stream: `w${i}`,
        buckets: [channelBucket(channel)],
        final: false,
        run: async () => void times.push(performance.now()),
      });
    });
    // The first write of each channel probes it (one at a time per channel): all of them may start at once.
    await vi.advanceTimersByTimeAsync(3_000);
    expect(await Promise.all(writes)).toEqual(Array(120).fill('written'));
    for (let start = 0; start < 3_000; start += 100)
      expect(times.filter((t) => t >= start && t < start + 1_000).length).toBeLessThanOrEqual(50);
    // 48 of them: 2 a second are left for discord.js's own requests (GET /gateway/bot).
    expect(times.filter((t) => t < 1_000)).toHaveLength(DISCORD_BUDGETS.global.limit);
    expect(DISCORD_BUDGETS.global.limit).toBe(48);
    // Interaction webhooks are exempt: 60 of them in 60 channels all run at once.
    const before = times.length;
    const submittedAt = performance.now();
    const interactions = Array.from({ length: 60 }, (_, i) => {
      const channel = String(1400000000000000000n + BigInt(i));
      return scheduler.submit({
        key: `i${i}`,
        stream: `i${i}`,
        buckets: limits.interactionBuckets(`token-${i}`, channel),
        final: false,
        run: async () => void times.push(performance.now()),
      });
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(await Promise.all(interactions)).toEqual(Array(60).fill('written'));
    expect(times.slice(before).map((t) => t - submittedAt)).toEqual(Array(60).fill(0));
  });

  it('holds every bot-token write after a global 429 (X-RateLimit-Global) for its retry-after, without learning anything of the channel', async () => {
    const { scheduler, limits, reports, ran, botWrite } = setup();
    limits.response(
      'POST',
      `/channels/${CHANNEL}/messages`,
      429,
      new Headers({ 'retry-after': '2', 'x-ratelimit-global': 'true', 'x-ratelimit-scope': 'global' }),
    );
    expect(reports).toEqual([{ platform: 'discord', route: 'POST /channels/:id/messages' }]);
    expect(limits.sharing(CHANNEL)).toBe('unknown');
    const written = scheduler.submit(botWrite('after-global'));
    await vi.advanceTimersByTimeAsync(1_900);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(200);
    expect(await written).toBe('written');
    expect(ran.map((r) => r.key)).toEqual(['after-global']);
  });
});
