/**
 * One rate-limit bucket (src/core/delivery/bucket.ts) on its own, with times passed in: its
 * sliding window counted from completions, concurrency, spacing between starts, the hold a
 * 429 or an exhausted report asks for, and the halved budget after a 429 and its end.
 */
import { describe, expect, it } from 'vitest';
import { Bucket, MAX_HOLD_MS } from '../../src/core/delivery/bucket.ts';

/** Starts and completes one write at `at`. */
function write(bucket: Bucket, at: number): void {
  bucket.start(at);
  bucket.complete(at);
}

describe('Bucket: window and concurrency', () => {
  it('allows `limit` writes in any window, and room again when the oldest completion leaves it', () => {
    const bucket = new Bucket({ limit: 2, windowMs: 1000 });
    expect(bucket.readyAt(0)).toBe(0);
    write(bucket, 0);
    expect(bucket.readyAt(100)).toBe(100);
    write(bucket, 300);
    // Full: the first place frees when the write completed at 0 leaves the window.
    expect(bucket.readyAt(400)).toBe(1000);
    expect(bucket.readyAt(1000)).toBe(1000);
    write(bucket, 1000);
    // Now 300 and 1000 are in the window: the next place at 1300.
    expect(bucket.readyAt(1100)).toBe(1300);
  });

  it('counts a write under way, and from its completion once done (not from its start)', () => {
    const bucket = new Bucket({ limit: 1, windowMs: 1000 });
    bucket.start(0);
    // Only the running write fills the window: nothing frees a place until it completes.
    expect(bucket.readyAt(1500)).toBe(Number.POSITIVE_INFINITY);
    expect(bucket.running).toBe(1);
    bucket.complete(1500);
    expect(bucket.running).toBe(0);
    expect(bucket.readyAt(1600)).toBe(2500);
  });

  it('runs at most `concurrency` writes at once, whatever its rate, and hands back the keys parked on it', () => {
    const bucket = new Bucket({ limit: 100, windowMs: 1000, concurrency: 2 });
    bucket.start(0);
    expect(bucket.readyAt(0)).toBe(0);
    bucket.start(0);
    expect(bucket.readyAt(0)).toBe(Number.POSITIVE_INFINITY);
    bucket.park('a:0');
    bucket.park('b:0');
    expect(bucket.complete(10)).toEqual(['a:0', 'b:0']);
    expect(bucket.readyAt(10)).toBe(10);
    // Handed back once: the next completion has nothing parked.
    expect(bucket.complete(20)).toEqual([]);
  });
});

describe('Bucket: spacing, holds and slow-downs', () => {
  it('spaces two starts by spacingMs', () => {
    const bucket = new Bucket({ limit: 10, windowMs: 10_000, spacingMs: 1_000 });
    write(bucket, 0);
    expect(bucket.readyAt(10)).toBe(1_000);
    write(bucket, 1_000);
    expect(bucket.readyAt(1_500)).toBe(2_000);
    expect(bucket.readyAt(2_500)).toBe(2_500);
  });

  it('holds every write until the retry-after of a 429, the later of two holds winning', () => {
    const bucket = new Bucket({ limit: 5, windowMs: 1000 });
    bucket.rateLimited(0, 2_000);
    expect(bucket.readyAt(0)).toBe(2_000);
    bucket.rateLimited(100, 500);
    expect(bucket.readyAt(1_999)).toBe(2_000);
    expect(bucket.readyAt(2_000)).toBe(2_000);
  });

  it('halves the budget after a 429 with a slow-down, until the slow-down ends', () => {
    const bucket = new Bucket({ limit: 4, windowMs: 10_000 });
    bucket.rateLimited(0, 0, 3_000);
    write(bucket, 0);
    write(bucket, 0);
    // Two (half of four) while slowed: the third may come when the slow-down ends, not when the window would let it.
    expect(bucket.readyAt(100)).toBe(3_000);
    // Once it ended, the full budget: two more at once.
    expect(bucket.readyAt(3_000)).toBe(3_000);
    write(bucket, 3_000);
    write(bucket, 3_000);
    expect(bucket.readyAt(3_000)).toBe(10_000);
  });
});

describe('Bucket: slow-downs, reports and idleness', () => {
  it('halves to no less than one write', () => {
    const bucket = new Bucket({ limit: 1, windowMs: 1_000 });
    bucket.rateLimited(0, 0, 60_000);
    expect(bucket.readyAt(0)).toBe(0);
    write(bucket, 0);
    expect(bucket.readyAt(10)).toBe(1_000);
  });

  it('keeps a slow-down under way when a 429 comes without one', () => {
    const bucket = new Bucket({ limit: 2, windowMs: 10_000 });
    bucket.rateLimited(0, 0, 5_000);
    bucket.rateLimited(1_000, 1_000);
    write(bucket, 2_000);
    // Still halved (one write) until 5 s.
    expect(bucket.readyAt(2_000)).toBe(5_000);
  });

  it("with 0 remaining reported, holds until the reset; a reported limit replaces the budget's", () => {
    const bucket = new Bucket({ limit: 5, windowMs: 1_000 });
    expect(bucket.observe(100, { remaining: 3, resetAfterMs: 700 })).toBe(false);
    expect(bucket.readyAt(100)).toBe(100);
    expect(bucket.observe(100, { remaining: 0, resetAfterMs: 700, limit: 5 })).toBe(false);
    expect(bucket.readyAt(100)).toBe(800);
    expect(bucket.readyAt(800)).toBe(800);
    expect(bucket.observe(900, { remaining: 1, resetAfterMs: 100, limit: 2 })).toBe(true);
    expect(bucket.budget).toEqual({ limit: 2, windowMs: 1_000 });
  });

  it('is idle once nothing is under way, in its window, held or slowed', () => {
    const bucket = new Bucket({ limit: 5, windowMs: 1_000 });
    expect(bucket.isIdle(0)).toBe(true);
    bucket.start(0);
    expect(bucket.isIdle(0)).toBe(false);
    bucket.complete(100);
    expect(bucket.isIdle(1_099)).toBe(false);
    expect(bucket.isIdle(1_100)).toBe(true);
    bucket.rateLimited(1_100, 500, 2_000);
    expect(bucket.isIdle(1_600)).toBe(false);
    expect(bucket.isIdle(3_100)).toBe(true);
  });
});

describe('Bucket: a wait named beyond MAX_HOLD_MS', () => {
  it('holds a 429 naming an hour at most a minute, and keeps the hour as its named wait until a write started after it is accepted', () => {
    const bucket = new Bucket({ limit: 5, windowMs: 1_000 });
    bucket.start(0);
    bucket.rateLimited(100, 3_600_000);
    expect(bucket.readyAt(200)).toBe(100 + MAX_HOLD_MS);
    expect(bucket.namedWaitMs(200)).toBe(3_600_000);
    // The write under way when the wait was named completes: the wait stays.
    bucket.accepted(0);
    bucket.complete(60_000);
    expect(bucket.namedWaitMs(60_100)).toBe(3_600_000);
    expect(bucket.isIdle(70_000)).toBe(false);
    // A write after the hold is accepted: the platform takes writes again.
    bucket.start(60_100);
    bucket.accepted(60_100);
    bucket.complete(60_200);
    expect(bucket.namedWaitMs(60_300)).toBe(0);
  });

  it('holds a reset announced an hour away at most a minute; a wait within MAX_HOLD_MS is no named wait', () => {
    const bucket = new Bucket({ limit: 5, windowMs: 1_000 });
    bucket.observe(0, { remaining: 0, resetAfterMs: 3_600_000 });
    expect(bucket.readyAt(0)).toBe(MAX_HOLD_MS);
    expect(bucket.namedWaitMs(0)).toBe(3_600_000);
    const short = new Bucket({ limit: 5, windowMs: 1_000 });
    short.rateLimited(0, MAX_HOLD_MS);
    expect(short.readyAt(0)).toBe(MAX_HOLD_MS);
    expect(short.namedWaitMs(0)).toBe(0);
  });
});
