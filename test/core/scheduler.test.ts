/**
 * The write scheduler under a fake clock: budgets are never exceeded, pending writes of one
 * message coalesce and never overlap, streams sharing a bucket take turns, final writes go
 * first, and a 429 or an exhausted bucket holds and slows the bucket; writes count from their
 * completion, a bucket may bound how many run at once, a bucket's budget can be set alone, and
 * the buckets of a family (platform and kind) can spend another one too.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_HOLD_MS, type NamedWait } from '../../src/core/delivery/bucket.ts';
import { RATE_LIMIT_RETRIES } from '../../src/core/delivery/refusals.ts';
import { WriteScheduler } from '../../src/core/delivery/scheduler.ts';
import type { WriteRequest } from '../../src/core/delivery/write-request.ts';
import type { BucketFamily, BucketId } from '../../src/core/keys.ts';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Bucket families for these tests (the scheduler matches buckets on platform and kind only). */
const B: BucketFamily = { platform: 'discord', kind: 'channel' };
const HOOK: BucketFamily = { platform: 'discord', kind: 'webhook' };
const ONE: BucketFamily = { platform: 'discord', kind: 'writes' };
/** A bucket of a family. */
const bucket = (family: BucketFamily, scope: string): BucketId => ({ ...family, scope });

/** A scheduler with one budget, and a log of (time, key) for every write that ran. */
function setup(limit: number, windowMs: number) {
  const scheduler = new WriteScheduler();
  scheduler.define(B, { limit, windowMs });
  const ran: Array<{ at: number; key: string }> = [];
  const request = (key: string, extra: Partial<WriteRequest> = {}): WriteRequest => ({
    key,
    stream: key.split(':')[0]!,
    buckets: [bucket(B, '1')],
    final: false,
    run: async () => void ran.push({ at: performance.now(), key }),
    ...extra,
  });
  return { scheduler, ran, request };
}

/** The most writes that ran in any window of `windowMs`. */
function busiestWindow(times: number[], windowMs: number): number {
  return Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + windowMs).length));
}

describe('WriteScheduler', () => {
  it('keeps a bucket within its budget in every sliding window', async () => {
    const { scheduler, ran, request } = setup(5, 1000);
    const all = Array.from({ length: 20 }, (_, i) => scheduler.submit(request(`s${i}:0`)));
    await vi.advanceTimersByTimeAsync(5000);
    expect(await Promise.all(all)).toEqual(Array(20).fill('written'));
    expect(ran).toHaveLength(20);
    expect(
      busiestWindow(
        ran.map((r) => r.at),
        1000,
      ),
    ).toBe(5);
    expect(ran.at(-1)!.at - ran[0]!.at).toBeGreaterThanOrEqual(3000);
  });

  it('coalesces pending writes of one key: the replaced one resolves "superseded", one write runs', async () => {
    const { scheduler, ran, request } = setup(1, 1000);
    await scheduler.submit(request('a:0'));
    const first = scheduler.submit(request('a:1'));
    const second = scheduler.submit(request('a:1'));
    const third = scheduler.submit(request('a:1'));
    await vi.advanceTimersByTimeAsync(1500);
    expect(await Promise.all([first, second, third])).toEqual(['superseded', 'superseded', 'written']);
    expect(ran.map((r) => r.key)).toEqual(['a:0', 'a:1']);
  });

  it('never runs two writes of one key at once, and spaces them by minIntervalMs', async () => {
    const { scheduler, request } = setup(100, 1000);
    let inFlight = 0;
    let most = 0;
    const times: number[] = [];
    const slow = (): WriteRequest =>
      request('a:0', {
        minIntervalMs: 300,
        run: async () => {
          inFlight += 1;
          most = Math.max(most, inFlight);
          times.push(performance.now());
          await new Promise((resolve) => setTimeout(resolve, 100));
          inFlight -= 1;
        },
      });
    const writes = [scheduler.submit(slow())];
    await vi.advanceTimersByTimeAsync(10);
    writes.push(scheduler.submit(slow()));
    await vi.advanceTimersByTimeAsync(1000);
    await Promise.all(writes);
    expect(most).toBe(1);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(300);
  });

  it('serves streams sharing a bucket in turn, and final writes first', async () => {
    const { scheduler, ran, request } = setup(1, 100);
    const writes: Array<Promise<unknown>> = [];
    // Stream a submits three messages before b and c submit one each: turns still alternate.
    for (const key of ['a:0', 'a:1', 'a:2', 'b:0', 'c:0']) writes.push(scheduler.submit(request(key)));
    writes.push(scheduler.submit(request('d:0', { final: true })));
    await vi.advanceTimersByTimeAsync(1000);
    await Promise.all(writes);
    expect(ran.map((r) => r.key)).toEqual(['a:0', 'd:0', 'b:0', 'c:0', 'a:1', 'a:2']);
  });

  it('after a 429 holds the bucket until retry-after and then halves its budget for a while', async () => {
    const { scheduler, ran, request } = setup(4, 1000);
    scheduler.rateLimited(bucket(B, '1'), 2000);
    const writes = Array.from({ length: 4 }, (_, i) => scheduler.submit(request(`s${i}:0`)));
    await vi.advanceTimersByTimeAsync(1999);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(2100);
    await Promise.all(writes);
    // Two a second (half of four) while slowed.
    expect(
      busiestWindow(
        ran.map((r) => r.at),
        1000,
      ),
    ).toBe(2);
  });

  it('when a slow-down ends, a write held by the halved budget runs at once, not when the halved window would have let it', async () => {
    const scheduler = new WriteScheduler({ slowForMs: 1500 });
    scheduler.define(B, { limit: 2, windowMs: 10_000 });
    const ran: number[] = [];
    const write = (key: string): WriteRequest => ({
      key,
      stream: key,
      buckets: [bucket(B, '1')],
      final: false,
      run: async () => void ran.push(performance.now()),
    });
    scheduler.rateLimited(bucket(B, '1'), 0);
    // Halved to one write per 10 s: the second waits, but only until the slow-down ends at 1.5 s.
    const writes = [scheduler.submit(write('a')), scheduler.submit(write('b'))];
    await vi.advanceTimersByTimeAsync(1400);
    expect(ran).toEqual([0]);
    await vi.advanceTimersByTimeAsync(200);
    await Promise.all(writes);
    expect(ran).toEqual([0, 1500]);
  });

  it('with a thousand streams waiting on their own budgets, runs each write when its budget allows, within the budget', async () => {
    const scheduler = new WriteScheduler();
    scheduler.define(HOOK, { limit: 5, windowMs: 2000 });
    const ran = new Map<string, number[]>();
    const streams = Array.from({ length: 1000 }, (_, i) => `s${i}`);
    // Each stream writes 12 times as fast as it may, one message, at most one edit a second.
    const all: Array<Promise<unknown>> = [];
    for (let round = 0; round < 12; round++) {
      for (const stream of streams) {
        all.push(
          scheduler.submit({
            key: stream,
            stream,
            buckets: [bucket(HOOK, stream)],
            final: round === 11,
            minIntervalMs: 1000,
            run: async () => void ran.set(stream, [...(ran.get(stream) ?? []), performance.now()]),
          }),
        );
      }
      await vi.advanceTimersByTimeAsync(250);
    }
    await vi.advanceTimersByTimeAsync(3000);
    await Promise.all(all);
    expect(scheduler.waiting).toBe(0);
    for (const stream of streams) {
      const times = ran.get(stream)!;
      // First write at once, then one a second (coalesced), the final one last.
      expect(times[0]).toBe(0);
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(1000);
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeLessThanOrEqual(1000);
      expect(busiestWindow(times, 2000)).toBeLessThanOrEqual(5);
    }
  });

  it('waits out a bucket the platform says is spent (remaining 0) until its reset', async () => {
    const { scheduler, ran, request } = setup(5, 1000);
    scheduler.observe(bucket(B, '1'), { remaining: 0, resetAfterMs: 700, limit: 5 });
    const write = scheduler.submit(request('a:0'));
    await vi.advanceTimersByTimeAsync(650);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(100);
    expect(await write).toBe('written');
  });

  it('counts a write from its completion: a slow write keeps its place in the window until it is done, and for a window after', async () => {
    const { scheduler, ran, request } = setup(1, 1000);
    const completed: number[] = [];
    // The first write takes 1.5 s (a REST client waiting out a retry-after before it lands).
    const slow = scheduler.submit(
      request('a:0', {
        run: async () => {
          ran.push({ at: performance.now(), key: 'a:0' });
          await new Promise((resolve) => setTimeout(resolve, 1500));
          completed.push(performance.now());
        },
      }),
    );
    const next = scheduler.submit(request('b:0'));
    await vi.advanceTimersByTimeAsync(1200);
    // Counted from its start, a:0 would have left the window at 1 s while still under way.
    expect(ran.map((r) => r.key)).toEqual(['a:0']);
    await vi.advanceTimersByTimeAsync(1400);
    await Promise.all([slow, next]);
    expect(completed).toEqual([1500]);
    expect(ran.map((r) => [r.key, r.at])).toEqual([
      ['a:0', 0],
      ['b:0', 2500],
    ]);
  });

  it('runs at most `concurrency` writes of a bucket at once, whatever its rate', async () => {
    const scheduler = new WriteScheduler();
    scheduler.define(ONE, { limit: 1_000, windowMs: 1000, concurrency: 1 });
    let inFlight = 0;
    let most = 0;
    const order: string[] = [];
    const write = (key: string): WriteRequest => ({
      key,
      stream: key,
      buckets: [bucket(ONE, 'x')],
      final: false,
      run: async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        order.push(key);
        await new Promise((resolve) => setTimeout(resolve, 50));
        inFlight -= 1;
      },
    });
    const all = ['a', 'b', 'c', 'd'].map((k) => scheduler.submit(write(k)));
    await vi.advanceTimersByTimeAsync(120);
    expect(order).toEqual(['a', 'b', 'c']);
    await vi.advanceTimersByTimeAsync(100);
    expect(await Promise.all(all)).toEqual(Array(4).fill('written'));
    expect(most).toBe(1);
    expect(order).toEqual(['a', 'b', 'c', 'd']);
  });

  it("sets one bucket's budget over its prefix's (and back), keeping what was already written", async () => {
    const { scheduler, ran, request } = setup(100, 1000);
    scheduler.setBudget(bucket(B, '1'), { limit: 2, windowMs: 1000 });
    const first = Array.from({ length: 4 }, (_, i) => scheduler.submit(request(`s${i}:0`)));
    await vi.advanceTimersByTimeAsync(10);
    expect(ran).toHaveLength(2);
    // Another bucket of the prefix keeps the prefix's budget.
    const other = Array.from({ length: 4 }, (_, i) =>
      scheduler.submit(request(`o${i}:0`, { buckets: [bucket(B, '2')] })),
    );
    await vi.advanceTimersByTimeAsync(10);
    expect(ran.filter((r) => r.key.startsWith('o'))).toHaveLength(4);
    scheduler.setBudget(bucket(B, '1'), undefined);
    await vi.advanceTimersByTimeAsync(10);
    expect(ran.filter((r) => r.key.startsWith('s'))).toHaveLength(4);
    await Promise.all([...first, ...other]);
  });

  it('makes the buckets of a prefix also spend the bucket alsoSpend names', async () => {
    const scheduler = new WriteScheduler();
    const [chan, token, all] = [B, HOOK, ONE];
    scheduler.define(chan, { limit: 100, windowMs: 1000 });
    scheduler.define(token, { limit: 100, windowMs: 1000 });
    scheduler.define(all, { limit: 3, windowMs: 1000 });
    scheduler.alsoSpend(chan, (spent) => (spent.scope === undefined ? undefined : bucket(all, spent.scope)));
    const ran: string[] = [];
    const write = (key: string, buckets: BucketId[]): WriteRequest => ({
      key,
      stream: key,
      buckets,
      final: false,
      run: async () => void ran.push(key),
    });
    // Two bot-token writes (chan:1, implying all:1) and two interaction writes naming all:1 themselves.
    const writes = [
      scheduler.submit(write('bot1', [bucket(chan, '1')])),
      scheduler.submit(write('bot2', [bucket(chan, '1')])),
      scheduler.submit(write('ix1', [bucket(token, 'a'), bucket(all, '1')])),
      scheduler.submit(write('ix2', [bucket(token, 'b'), bucket(all, '1')])),
      scheduler.submit(write('elsewhere', [bucket(chan, '2')])),
    ];
    await vi.advanceTimersByTimeAsync(10);
    expect(ran).toEqual(['bot1', 'bot2', 'ix1', 'elsewhere']);
    await vi.advanceTimersByTimeAsync(1000);
    await Promise.all(writes);
    expect(ran).toEqual(['bot1', 'bot2', 'ix1', 'elsewhere', 'ix2']);
  });

  it('after a 429 with slowDown false holds the bucket until retry-after without halving its budget', async () => {
    const { scheduler, ran, request } = setup(4, 1000);
    scheduler.rateLimited(bucket(B, '1'), 2000, { slowDown: false });
    const writes = Array.from({ length: 4 }, (_, i) => scheduler.submit(request(`s${i}:0`)));
    await vi.advanceTimersByTimeAsync(1999);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(10);
    await Promise.all(writes);
    expect(ran.map((r) => r.at)).toEqual([2000, 2000, 2000, 2000]);
  });

  it('passes on what a write threw, and goes on with the others', async () => {
    const { scheduler, ran, request } = setup(10, 1000);
    const failing = scheduler.submit(request('a:0', { run: async () => Promise.reject(new Error('refused')) }));
    const next = scheduler.submit(request('b:0'));
    await expect(failing).rejects.toThrow('refused');
    expect(await next).toBe('written');
    expect(ran.map((r) => r.key)).toEqual(['b:0']);
  });

  it('submits a write refused for the rate limit again after the wait it named, reading the newest state, and rejects after RATE_LIMIT_RETRIES refusals', async () => {
    const { scheduler, request } = setup(10, 1000);
    const limited = Object.assign(new Error('429'), { retryAfterMs: 2_000 });
    scheduler.retryRateLimited((error) => (error as { retryAfterMs?: number }).retryAfterMs);
    const attempts: number[] = [];
    const twice = scheduler.submit(
      request('a:0', {
        run: async () => {
          attempts.push(performance.now());
          if (attempts.length <= 2) throw limited;
        },
      }),
    );
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await twice).toBe('written');
    expect(attempts).toEqual([0, 2_000, 4_000]);
    let refusals = 0;
    const always = scheduler.submit(
      request('b:0', {
        run: async () => {
          refusals += 1;
          throw limited;
        },
      }),
    );
    const failed = expect(always).rejects.toBe(limited);
    await vi.advanceTimersByTimeAsync(10_000);
    await failed;
    expect(refusals).toBe(1 + RATE_LIMIT_RETRIES);
  });

  it('a newer write of a refused one replaces it, final if either was, and waits out the wait the refusal named', async () => {
    const { scheduler, ran, request } = setup(10, 1000);
    scheduler.retryRateLimited((error) => (error as { retryAfterMs?: number }).retryAfterMs);
    const refused = scheduler.submit(
      request('a:0', { run: async () => Promise.reject(Object.assign(new Error('429'), { retryAfterMs: 3_000 })) }),
    );
    await vi.advanceTimersByTimeAsync(10);
    const newer = scheduler.submit(request('a:0', { final: true }));
    expect(await refused).toBe('superseded');
    await vi.advanceTimersByTimeAsync(2_900);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(200);
    expect(await newer).toBe('written');
    expect(ran.map((r) => r.at)).toEqual([3_000]);
  });

  it('holds a bucket at most MAX_HOLD_MS for a 429 naming an hour, and tells the write under way and the next one (onHeld), not a later one once a write was accepted', async () => {
    const { scheduler, ran, request } = setup(10, 1000);
    const told: Array<[string, number]> = [];
    const onHeld = (key: string) => (wait: NamedWait) => told.push([key, wait.namedMs]);
    let release: () => void = () => {};
    const first = scheduler.submit(
      request('a:0', { run: () => new Promise<void>((resolve) => (release = resolve)), onHeld: onHeld('a:0') }),
    );
    await vi.advanceTimersByTimeAsync(10);
    scheduler.rateLimited(bucket(B, '1'), 3_600_000);
    release();
    await first;
    const next = scheduler.submit(request('b:0', { onHeld: onHeld('b:0') }));
    await vi.advanceTimersByTimeAsync(MAX_HOLD_MS - 100);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(200);
    expect(await next).toBe('written');
    expect(ran.map((r) => r.key)).toEqual(['b:0']);
    await scheduler.submit(request('c:0', { onHeld: onHeld('c:0') }));
    expect(told).toEqual([
      ['a:0', 3_600_000],
      ['b:0', 3_600_000],
    ]);
  });

  it("spreads a long window's budget evenly with spacingMs: streams sharing it each get a turn all along, none waits out the window", async () => {
    const scheduler = new WriteScheduler();
    scheduler.define(B, { limit: 10, windowMs: 10_000, spacingMs: 1_000 });
    const ran: Array<{ at: number; stream: string }> = [];
    // Four streams, each with a write pending again as soon as its last one ran.
    const streams = ['s1', 's2', 's3', 's4'];
    const submit = (stream: string): Promise<unknown> =>
      scheduler
        .submit({
          key: stream,
          stream,
          buckets: [bucket(B, '1')],
          final: false,
          run: async () => void ran.push({ at: performance.now(), stream }),
        })
        .then(() => (performance.now() < 15_000 ? submit(stream) : undefined));
    const all = Promise.all(streams.map(submit));
    // The last writes are submitted before 15 s; the bucket lets them all run by 20 s.
    await vi.advanceTimersByTimeAsync(25_000);
    await all;
    const times = ran.map((r) => r.at);
    // One write a second, never a burst: in any 10 s at most the budget.
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(1_000);
    expect(busiestWindow(times, 10_000)).toBeLessThanOrEqual(10);
    // Each stream's longest wait is about its fair share (4 streams × 1 s), not the window.
    for (const stream of streams) {
      const own = ran.filter((r) => r.stream === stream).map((r) => r.at);
      let gap = 0;
      for (let i = 1; i < own.length; i++) gap = Math.max(gap, own[i]! - own[i - 1]!);
      expect(gap).toBeLessThanOrEqual(4_000);
    }
  });
});
