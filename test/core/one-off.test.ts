/**
 * One-off writes (delivery/one-off.ts) under a fake clock: they spend the scheduler's buckets
 * like streamed writes (never beyond the budget), return what their write returned, are never
 * coalesced with one another, and go before a backlog of streams' intermediate edits.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { writeOnce } from '../../src/core/delivery/one-off.ts';
import { WriteScheduler } from '../../src/core/delivery/scheduler.ts';
import type { BucketId } from '../../src/core/keys.ts';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

const POST: BucketId = { platform: 'slack', kind: 'post', scope: 'C1' };

describe('writeOnce', () => {
  it('spends the bucket: one a second, each write run once with its own result, none coalesced', async () => {
    const scheduler = new WriteScheduler();
    scheduler.define({ platform: 'slack', kind: 'post' }, { limit: 1, windowMs: 1000 });
    const ran: number[] = [];
    const all = Array.from({ length: 5 }, (_, i) =>
      writeOnce(scheduler, {
        buckets: [POST],
        run: async () => {
          ran.push(performance.now());
          return i;
        },
      }),
    );
    await vi.advanceTimersByTimeAsync(6000);
    expect(await Promise.all(all)).toEqual([0, 1, 2, 3, 4]);
    expect(ran).toHaveLength(5);
    for (let k = 1; k < ran.length; k++) expect(ran[k]! - ran[k - 1]!).toBeGreaterThanOrEqual(1000);
  });

  it('goes before a backlog of intermediate edits of the same bucket', async () => {
    const scheduler = new WriteScheduler();
    scheduler.define({ platform: 'slack', kind: 'post' }, { limit: 1, windowMs: 1000 });
    const order: string[] = [];
    const edits = Array.from({ length: 10 }, (_, i) =>
      scheduler.submit({
        key: `s${i}`,
        stream: `s${i}`,
        buckets: [POST],
        final: false,
        run: async () => void order.push(`edit ${i}`),
      }),
    );
    // The first edit starts at once; the one-off comes next, before the nine edits waiting.
    const once = writeOnce(scheduler, { buckets: [POST], run: async () => void order.push('once') });
    await vi.advanceTimersByTimeAsync(12_000);
    await Promise.all([once, ...edits]);
    expect(order.slice(0, 2)).toEqual(['edit 0', 'once']);
    expect(order).toHaveLength(11);
  });

  it('passes on what the write threw, and runs at once without buckets or scheduler', async () => {
    const scheduler = new WriteScheduler();
    await expect(
      writeOnce(scheduler, { buckets: [POST], run: () => Promise.reject(new Error('refused')) }),
    ).rejects.toThrow('refused');
    expect(await writeOnce(undefined, { buckets: [POST], run: async () => 'direct' })).toBe('direct');
    expect(await writeOnce(scheduler, { buckets: [], run: async () => 'free' })).toBe('free');
  });
});
