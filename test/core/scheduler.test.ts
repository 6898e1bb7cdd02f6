/**
 * The write scheduler under a fake clock: budgets are never exceeded, pending writes of one
 * message coalesce and never overlap, streams sharing a bucket take turns, final writes go
 * first, and a 429 or an exhausted bucket holds and slows the bucket.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WriteScheduler, type WriteRequest } from '../../src/core/delivery/scheduler.ts';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A scheduler with one budget, and a log of (time, key) for every write that ran. */
function setup(limit: number, windowMs: number) {
  const scheduler = new WriteScheduler();
  scheduler.define('b:', { limit, windowMs });
  const ran: Array<{ at: number; key: string }> = [];
  const request = (key: string, extra: Partial<WriteRequest> = {}): WriteRequest => ({
    key,
    stream: key.split(':')[0]!,
    buckets: ['b:1'],
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
    expect(busiestWindow(ran.map((r) => r.at), 1000)).toBe(5);
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
    const slow = (): WriteRequest => request('a:0', {
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
    scheduler.rateLimited('b:1', 2000);
    const writes = Array.from({ length: 4 }, (_, i) => scheduler.submit(request(`s${i}:0`)));
    await vi.advanceTimersByTimeAsync(1999);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(2100);
    await Promise.all(writes);
    // Two a second (half of four) while slowed.
    expect(busiestWindow(ran.map((r) => r.at), 1000)).toBe(2);
  });

  it('waits out a bucket the platform says is spent (remaining 0) until its reset', async () => {
    const { scheduler, ran, request } = setup(5, 1000);
    scheduler.observe('b:1', { remaining: 0, resetAfterMs: 700, limit: 5 });
    const write = scheduler.submit(request('a:0'));
    await vi.advanceTimersByTimeAsync(650);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(100);
    expect(await write).toBe('written');
  });

  it('passes on what a write threw, and goes on with the others', async () => {
    const { scheduler, ran, request } = setup(10, 1000);
    const failing = scheduler.submit(request('a:0', { run: async () => Promise.reject(new Error('refused')) }));
    const next = scheduler.submit(request('b:0'));
    await expect(failing).rejects.toThrow('refused');
    expect(await next).toBe('written');
    expect(ran.map((r) => r.key)).toEqual(['b:0']);
  });
});
