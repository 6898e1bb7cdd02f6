/**
 * Rate budgets shared through Redis (src/core/state/redis-budgets.ts, src/core/delivery/shared-budgets.ts),
 * against a real redis-server: the Lua take (sliding window, all or none over several buckets,
 * spacing, concurrency, published holds, slow-downs and learnt budgets), instances announced
 * with an expiry, and two write schedulers on one Redis keeping one budget together; with Redis
 * killed, each keeps half of it locally and says so once, and shares again once Redis is back.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WriteScheduler } from '../../src/core/delivery/scheduler.ts';
import { SharedBudgets } from '../../src/core/delivery/shared-budgets.ts';
import type { BudgetStore, SharedBucket } from '../../src/core/state/budget-store.ts';
import { RedisState } from '../../src/core/state/redis-state.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

let redis: TestRedis;
const stores: RedisState[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const store of stores) await store.close();
  await redis.stop();
});

/** A store on the test's Redis, connected. */
async function connectedStore(): Promise<RedisState> {
  const store = new RedisState(redis.url);
  stores.push(store);
  await store.ping();
  return store;
}

let serial = 0;
const bucket = (name: string, budget: Partial<SharedBucket> = {}): SharedBucket => ({
  bucket: name,
  limit: 5,
  windowMs: 10_000,
  spacingMs: 0,
  concurrency: 0,
  ...budget,
});
const take = (store: RedisState, buckets: SharedBucket[], want: number) =>
  store.budgets.take({ buckets, want, countFromMs: 0, token: `t${++serial}` });

describe('the Lua take', () => {
  it('grants slots up to the limit in the window, then names the wait', async () => {
    const store = await connectedStore();
    const b = bucket('test:window');
    expect(await take(store, [b], 4)).toEqual({ granted: 4, waitMs: 0 });
    expect(await take(store, [b], 4)).toEqual({ granted: 1, waitMs: 0 });
    const denied = await take(store, [b], 1);
    expect(denied.granted).toBe(0);
    expect(denied.waitMs).toBeGreaterThan(9_000);
    expect(denied.waitMs).toBeLessThanOrEqual(10_000);
  });

  it('takes several buckets all or none', async () => {
    const store = await connectedStore();
    const full = bucket('test:full', { limit: 1 });
    const free = bucket('test:free', { limit: 2 });
    expect((await take(store, [full], 1)).granted).toBe(1);
    expect((await take(store, [free, full], 1)).granted).toBe(0);
    // Nothing of `free` was spent by the refused take.
    expect((await take(store, [free], 5)).granted).toBe(2);
  });

  it('grants a spaced bucket one slot at a time, spaced across takers', async () => {
    const store = await connectedStore();
    const other = await connectedStore();
    const b = bucket('test:spaced', { limit: 50, windowMs: 60_000, spacingMs: 5_000 });
    expect((await take(store, [b], 3)).granted).toBe(1);
    const denied = await take(other, [b], 1);
    expect(denied.granted).toBe(0);
    expect(denied.waitMs).toBeGreaterThan(4_000);
  });

  it('keeps a concurrency-bound bucket to its places across takers until released', async () => {
    const store = await connectedStore();
    const b = bucket('test:probe', { limit: Number.MAX_SAFE_INTEGER, concurrency: 1 });
    const token = 'probe-1';
    expect(await store.budgets.take({ buckets: [b], want: 4, countFromMs: 0, token })).toEqual({
      granted: 1,
      waitMs: 0,
    });
    expect((await take(store, [b], 1)).granted).toBe(0);
    await store.budgets.release(['test:probe'], token);
    expect((await take(store, [b], 1)).granted).toBe(1);
  });

  it('obeys what an instance published: a hold, a slow-down, a learnt budget', async () => {
    const store = await connectedStore();
    await store.budgets.publish('test:held', { holdMs: 3_000 });
    const held = await take(store, [bucket('test:held')], 1);
    expect(held.granted).toBe(0);
    expect(held.waitMs).toBeGreaterThan(2_000);

    await store.budgets.publish('test:slow', { slowMs: 60_000 });
    expect((await take(store, [bucket('test:slow', { limit: 10 })], 10)).granted).toBe(5);

    await store.budgets.publish('test:learnt', {
      learnt: { limit: 2, windowMs: 10_000, spacingMs: 0, concurrency: 0, forMs: 60_000 },
    });
    expect((await take(store, [bucket('test:learnt', { limit: 100 })], 4)).granted).toBe(2);
  });

  it('counts the instances announced, each until its announcement expires', async () => {
    const store = await connectedStore();
    expect(await store.budgets.announce('a', 300)).toBe(1);
    expect(await store.budgets.announce('b', 60_000)).toBe(2);
    await sleep(400);
    expect(await store.budgets.announce('b', 60_000)).toBe(1);
  });
});

/** A scheduler on its own connection to the test's Redis, logging into `lines`. */
async function sharedScheduler(lines: string[]) {
  const store = await connectedStore();
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const shared = new SharedBudgets(store.budgets, log);
  const scheduler = new WriteScheduler({ log, shared });
  scheduler.define({ platform: 'discord', kind: 'channel' }, { limit: 5, windowMs: 500 });
  // Shared once the first announcement went through.
  await expect.poll(() => shared.isShared).toBe(true);
  return { scheduler, shared };
}

describe('schedulers sharing budgets through Redis', () => {
  it('two schedulers together keep one budget: never more than its limit in any window', async () => {
    const lines: string[] = [];
    const all = [await sharedScheduler(lines), await sharedScheduler(lines)];
    const starts: number[] = [];
    const channel = { platform: 'discord', kind: 'channel', scope: 'C-shared' } as const;
    await Promise.all(
      all.flatMap(({ scheduler }, s) =>
        Array.from({ length: 15 }, (_, i) =>
          scheduler.submit({
            key: `s${s}:${i}`,
            stream: `s${s}:${i}`,
            buckets: [channel],
            final: true,
            run: async () => void starts.push(Date.now()),
          }),
        ),
      ),
    );
    expect(starts).toHaveLength(30);
    starts.sort((a, b) => a - b);
    // Any 6 starts in a row span at least the window: no window held more than 5.
    for (let i = 5; i < starts.length; i++) expect(starts[i]! - starts[i - 5]!).toBeGreaterThanOrEqual(500);
    for (const { shared } of all) shared.close();
  }, 30_000);

  it('with Redis gone, each keeps its share and says so once; once Redis is back, budgets are shared again', async () => {
    const lines: string[] = [];
    const all = [await sharedScheduler(lines), await sharedScheduler(lines)];
    const said = (text: string) => lines.filter((line) => line.includes(text)).length;
    await redis.kill();
    const starts: number[][] = [[], []];
    const channel = { platform: 'discord', kind: 'channel', scope: 'C-outage' } as const;
    await Promise.all(
      all.flatMap(({ scheduler }, s) =>
        Array.from({ length: 6 }, (_, i) =>
          scheduler.submit({
            key: `o${s}:${i}`,
            stream: `o${s}:${i}`,
            buckets: [channel],
            final: true,
            run: async () => void starts[s]!.push(Date.now()),
          }),
        ),
      ),
    );
    // Every write ran, each scheduler on its half of the budget: 2 writes in any 500 ms.
    for (const own of starts) {
      expect(own).toHaveLength(6);
      for (let i = 2; i < own.length; i++) expect(own[i]! - own[i - 2]!).toBeGreaterThanOrEqual(500);
    }
    expect(said('the store is not answering')).toBe(2);
    expect(all.every(({ shared }) => !shared.isShared)).toBe(true);
    await redis.restart();
    await expect.poll(() => all.every(({ shared }) => shared.isShared), { timeout: 15_000, interval: 100 }).toBe(true);
    expect(said('the store answers again')).toBe(2);
    expect(said('the store is not answering')).toBe(2);
    for (const { shared } of all) shared.close();
  }, 30_000);
});

/** A budget store whose announcements answer only once `answer` is called (a store not yet connected). */
function heldStore() {
  let answer: (() => void) | undefined;
  const answered = new Promise<void>((resolve) => {
    answer = resolve;
  });
  const takes: number[] = [];
  const store: BudgetStore = {
    take: async (request) => {
      takes.push(request.want);
      return { granted: request.want, waitMs: 0 };
    },
    settle: async () => {},
    release: async () => {},
    publish: async () => {},
    announce: async () => {
      await answered;
      return 3;
    },
  };
  return { store, takes, answer: () => answer!() };
}

describe('the start of an instance on a shared store', () => {
  const global = { platform: 'discord', kind: 'global' } as const;

  it('runs no write before the store first answers, then spends the shared budgets', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const { store, takes, answer } = heldStore();
    const shared = new SharedBudgets(store, log);
    const scheduler = new WriteScheduler({ log, shared });
    scheduler.setBudget(global, { limit: 48, windowMs: 1_000 });
    let ran = 0;
    const writes = Array.from({ length: 6 }, (_, i) =>
      scheduler.submit({ key: `w${i}`, stream: `w${i}`, buckets: [global], final: false, run: async () => void ran++ }),
    );
    await sleep(300);
    // With the instance's own full budget these six would have run already, beside the other instances'.
    expect(ran).toBe(0);
    expect(takes).toEqual([]);
    answer();
    await Promise.all(writes);
    expect(ran).toBe(6);
    expect(shared.isShared).toBe(true);
    // Every write ran on slots taken from the store.
    expect(takes.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(6);
    expect(lines.filter((line) => line.includes('did not answer at start'))).toHaveLength(0);
    shared.close();
  });

  it('starts on its local budgets when the store does not answer within the deadline, and says so once', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const { store, takes } = heldStore();
    const shared = new SharedBudgets(store, log);
    const scheduler = new WriteScheduler({ log, shared });
    let ran = 0;
    const writes = Array.from({ length: 3 }, (_, i) =>
      scheduler.submit({ key: `l${i}`, stream: `l${i}`, buckets: [global], final: false, run: async () => void ran++ }),
    );
    await Promise.all(writes);
    expect(ran).toBe(3);
    expect(takes).toEqual([]);
    expect(shared.isShared).toBe(false);
    expect(lines.filter((line) => line.includes('did not answer at start'))).toHaveLength(1);
    shared.close();
  });
});

describe('the return of the store after an outage', () => {
  it('keeps the local share beside the shared budgets for a while: writes made on the share are not in the store', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    let away = false;
    const refuse = async () => {
      if (away) throw new Error('connection refused');
    };
    const store: BudgetStore = {
      take: async (request) => {
        await refuse();
        return { granted: request.want, waitMs: 0 };
      },
      settle: refuse,
      release: refuse,
      publish: refuse,
      announce: async () => {
        await refuse();
        return 2;
      },
    };
    const shared = new SharedBudgets(store, log);
    const scheduler = new WriteScheduler({ log, shared });
    const channel = { platform: 'discord', kind: 'channel', scope: 'C-return' } as const;
    scheduler.setBudget(channel, { limit: 4, windowMs: 20_000 });
    await expect.poll(() => shared.isShared).toBe(true);
    const starts: number[] = [];
    const write = (key: string) =>
      scheduler.submit({
        key,
        stream: key,
        buckets: [channel],
        final: true,
        run: async () => void starts.push(Date.now()),
      });
    away = true;
    // The next announcement fails: half of the budget (2 instances), locally.
    await expect.poll(() => shared.isShared, { timeout: 10_000 }).toBe(false);
    await Promise.all([write('a'), write('b')]);
    away = false;
    await expect.poll(() => shared.isShared, { timeout: 10_000 }).toBe(true);
    expect(lines.filter((line) => line.includes('the store answers again'))).toHaveLength(1);
    // The store knows nothing of a and b: with the whole budget back at once, c and d would run now.
    // (c and d wait for a and b to leave the window, 20 s on: past the test's end.)
    void write('c');
    void write('d');
    await sleep(500);
    expect(starts).toHaveLength(2);
    shared.close();
    scheduler.close();
  }, 30_000);
});

describe('closing an instance on a shared store', () => {
  it('runs the writes left on local budgets, never asking again a store that refuses at once (no loop of microtasks)', async () => {
    let takes = 0;
    const refused = async () => {
      throw new Error('the store is closed');
    };
    const store: BudgetStore = {
      take: () => {
        takes++;
        // Past 50 asks, a take that never answers ends the loop the old code went into.
        return takes > 50 ? new Promise(() => {}) : refused();
      },
      settle: refused,
      release: refused,
      publish: refused,
      announce: async () => 1,
    };
    const shared = new SharedBudgets(store);
    const scheduler = new WriteScheduler({ shared });
    const global = { platform: 'discord', kind: 'global' } as const;
    scheduler.setBudget(global, { limit: 48, windowMs: 1_000 });
    await expect.poll(() => shared.isShared).toBe(true);
    // The shutdown: the scheduler closes, then the store; the last writes still go.
    scheduler.close();
    let ran = 0;
    await Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        scheduler.submit({
          key: `c${i}`,
          stream: `c${i}`,
          buckets: [global],
          final: true,
          run: async () => void ran++,
        }),
      ),
    );
    expect(ran).toBe(3);
    expect(takes).toBe(0);
    expect(shared.isShared).toBe(false);
  });
});
