/**
 * The state backends against the same expectations: SQLite (a file) and Redis (a real
 * redis-server on a free port). History keeps conversations apart and every concurrent turn;
 * claims, counters and locks are atomic; two instances on one store agree. SQLite deletes its
 * expired rows on a timer, and never a row without expiry.
 */

import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKeys } from '../../src/core/keys.ts';
import { Claims } from '../../src/core/state/claims.ts';
import { withDeadlines } from '../../src/core/state/deadline.ts';
import { ConversationStore, DEFAULT_RETENTION_MS } from '../../src/core/state/history.ts';
import { LocalState, openLocalStore } from '../../src/core/state/local-state.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import { openRedisStore } from '../../src/core/state/redis-state.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

let redis: TestRedis;
const opened: StateStore[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await Promise.allSettled(opened.map((s) => s.close()));
  await redis?.stop();
});

const tempFile = () => join(mkdtempSync(join(tmpdir(), 'genbot-state-')), 'nested', 'state.sqlite');

/** Backends by name: each call opens another instance on the same underlying store. */
const backends: Array<[string, () => () => StateStore]> = [
  [
    'SQLite',
    () => {
      const path = tempFile();
      return () => track(openLocalStore(path));
    },
  ],
  [
    'Redis',
    () => {
      const prefix = Math.random().toString(36).slice(2);
      return () => track(prefixed(openRedisStore(redis.url), prefix));
    },
  ],
];

function track(store: StateStore): StateStore {
  opened.push(store);
  return store;
}

/** Keeps tests on one Redis server apart: every key of this store starts with `prefix`. */
function prefixed(store: StateStore, prefix: string): StateStore {
  return {
    kind: store.kind,
    keyv: store.keyv,
    setIfAbsent: (k, t) => store.setIfAbsent(`${prefix}:${k}`, t),
    increment: (k, b, t) => store.increment(`${prefix}:${k}`, b, t),
    counter: (k) => store.counter(`${prefix}:${k}`),
    withLock: (k, f, t) => store.withLock(`${prefix}:${k}`, f, t),
    release: (k) => store.release(`${prefix}:${k}`),
    scanKeys: (p, b) => store.scanKeys(p, b),
    deleteKeys: (k) => store.deleteKeys(k),
    ping: () => store.ping(),
    close: () => store.close(),
  };
}

describe.each(backends)('%s state', (_name, makeFactory) => {
  it('replaces an exchange in place by its turn ids (answer, and question when given), leaving other turns and unknown ids alone', async () => {
    const history = new ConversationStore(makeFactory()());
    const id = `r${Math.random()}`;
    await history.append(
      id,
      { role: 'user', content: 'q1', at: 1, id: 'Q1' },
      { role: 'assistant', content: 'a1', at: 2, id: 'A1' },
      { role: 'user', content: 'q2', at: 3, id: 'Q2' },
      { role: 'assistant', content: 'a2', at: 4, id: 'A2' },
    );
    expect(await history.replaceExchange(id, { question: 'Q1', answer: 'A1' }, { answer: 'a1 again', at: 5 })).toBe(
      true,
    );
    expect(
      await history.replaceExchange(
        id,
        { question: 'Q2', answer: 'A2' },
        { question: 'q2 edited', answer: 'a2 new', at: 6 },
      ),
    ).toBe(true);
    expect(await history.replaceExchange(id, { question: 'Qx', answer: 'Ax' }, { answer: 'nothing', at: 7 })).toBe(
      false,
    );
    expect((await history.asChatMessages(id)).map((m) => m.content)).toEqual(['q1', 'a1 again', 'q2 edited', 'a2 new']);
    // The ids stay in the store, never in what is sent to the service.
    expect(Object.keys((await history.asChatMessages(id))[0]!)).toEqual(['role', 'content']);
  });

  it('a marker set by setIfAbsent can be released and set again', async () => {
    const store = makeFactory()();
    const key = `held:${Math.random()}`;
    expect(await store.setIfAbsent(key, 60_000)).toBe(true);
    expect(await store.setIfAbsent(key, 60_000)).toBe(false);
    await store.release(key);
    expect(await store.setIfAbsent(key, 60_000)).toBe(true);
  });

  it('keeps each conversation apart and a second instance reads what the first wrote', async () => {
    const open = makeFactory();
    const id = `c${Math.random()}`;
    const first = new ConversationStore(open());
    await first.append(
      `${id}:a`,
      { role: 'user', content: 'hi', at: 1 },
      { role: 'assistant', content: 'hello', at: 2 },
    );
    await first.append(`${id}:b`, { role: 'user', content: 'other', at: 3 });
    const second = new ConversationStore(open());
    expect(await second.asChatMessages(`${id}:a`)).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ]);
    expect((await second.get(`${id}:b`)).map((m) => m.content)).toEqual(['other']);
    expect(await second.get(`${id}:c`)).toEqual([]);
  });

  it('loses no turn of 20 concurrent appends to one conversation made through two instances', async () => {
    const open = makeFactory();
    const stores = [
      new ConversationStore(open(), { maxMessages: 100 }),
      new ConversationStore(open(), { maxMessages: 100 }),
    ];
    const id = `c${Math.random()}`;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        stores[i % 2]!.append(
          id,
          { role: 'user', content: String(i), at: i },
          { role: 'assistant', content: `a${i}`, at: i },
        ),
      ),
    );
    const turns = await stores[0]!.get(id);
    expect(turns).toHaveLength(40);
    // Each exchange stays together: every question is followed by its own answer.
    for (let i = 0; i < 40; i += 2) expect(turns[i + 1]!.content).toBe(`a${turns[i]!.content}`);
    expect(
      turns
        .filter((t) => t.role === 'user')
        .map((t) => Number(t.content))
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('keeps only the newest maxMessages', async () => {
    const store = new ConversationStore(makeFactory()(), { maxMessages: 3 });
    for (let i = 0; i < 5; i++) await store.append('cap', { role: 'user', content: String(i), at: i });
    expect((await store.get('cap')).map((m) => m.content)).toEqual(['2', '3', '4']);
  });

  it('lets exactly one of 20 concurrent claims of a key win, across two instances, until it expires', async () => {
    const open = makeFactory();
    const claims = [new Claims(open()), new Claims(open())];
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => claims[i % 2]!.claim('event:Ev1', 200)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await claims[1]!.claim('event:Ev2', 200)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await claims[0]!.claim('event:Ev1', 200)).toBe(true);
  });

  it('counts atomically across two instances, with a window that rolls over', async () => {
    const open = makeFactory();
    const [a, b] = [open(), open()];
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).increment('quota:u1', 3, 300)));
    const counted = await a.counter('quota:u1');
    expect(counted.value).toBe(30);
    expect(counted.resetInMs).toBeGreaterThan(0);
    expect(counted.resetInMs).toBeLessThanOrEqual(300);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await b.counter('quota:u1')).toEqual({ value: 0, resetInMs: 0 });
    expect((await b.increment('quota:u1', 1, 300)).value).toBe(1);
  });

  it('a lock makes read-modify-write sections of two instances take turns', async () => {
    const open = makeFactory();
    const [a, b] = [open(), open()];
    const order: string[] = [];
    const section = (store: StateStore, name: string) =>
      store.withLock('section', async () => {
        order.push(`${name}:in`);
        await new Promise((resolve) => setTimeout(resolve, 30));
        order.push(`${name}:out`);
      });
    await Promise.all([section(a, 'a'), section(b, 'b'), section(a, 'c')]);
    for (let i = 0; i < order.length; i += 2) expect(order[i]!.split(':')[0]).toBe(order[i + 1]!.split(':')[0]);
  });
});

describe('openStore', () => {
  it('creates the SQLite folder, and refuses an unknown scheme', async () => {
    const path = tempFile();
    const store = track(await openStore(`sqlite://${path}`));
    await store.keyv.set('x', 1);
    expect(existsSync(path)).toBe(true);
    await expect(openStore('mysql://db')).rejects.toThrow(/unsupported STORE_URL scheme: mysql/);
  });

  it('keeps a SQLite file in write-ahead-log mode with synchronous NORMAL (no fsync per write)', async () => {
    const path = tempFile();
    const store = track(await openStore(`sqlite://${path}`));
    await store.keyv.set('x', 1);
    expect(existsSync(`${path}-wal`)).toBe(true);
    // The connection's own settings, read back through the same store (1 = NORMAL).
    const sqlite = store.keyv.store as { query(sql: string): Promise<Array<Record<string, unknown>>> };
    expect(await sqlite.query('PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
    expect(await sqlite.query('PRAGMA synchronous')).toEqual([{ synchronous: 1 }]);
  });

  it('while another process holds the SQLite write lock: a read does not wait for the stuck writes, and a write given up before its turn never lands', async () => {
    const path = tempFile();
    // Deadlines long enough to see the order; a write's turn may come up to 2.5 s after it was asked for.
    const store = track(withDeadlines(new LocalState(path, { writeStartWithinMs: 2_500 }), 5_000));
    await store.keyv.set('kept', 'before the lock');
    const locker = new sqlite3.Database(path);
    const run = (sql: string) =>
      new Promise<void>((resolve, reject) => locker.exec(sql, (error) => (error ? reject(error) : resolve())));
    await run('BEGIN EXCLUSIVE');
    const keys = ['a', 'b', 'c', 'd', 'e'];
    const settled: string[] = [];
    try {
      // Five writes wait for the lock (node-sqlite3's busy wait: 1 s each, then SQLITE_BUSY)…
      const writes = keys.map((key) =>
        store.keyv.set(key, 1).then(
          () => settled.push(`${key} stored`),
          () => settled.push(`${key} refused`),
        ),
      );
      // …the first well into its wait…
      await new Promise((resolve) => setTimeout(resolve, 200));
      // …and a read asked for after them does not wait for them (on one connection it waited for
      // all five, 5 s): when it answers, the second has not (it settles 2 s in).
      await expect(store.keyv.get('kept')).resolves.toBe('before the lock');
      expect(settled.length).toBeLessThanOrEqual(1);
      await Promise.all(writes);
      expect(settled.sort()).toEqual(keys.map((key) => `${key} refused`));
    } finally {
      await run('ROLLBACK');
      await new Promise<void>((resolve) => locker.close(() => resolve()));
    }
    // Every caller was told its write failed (the last ones without being run: their turn came
    // past 2.5 s); none of them lands once the lock goes.
    await store.keyv.set('after', 2);
    expect(await store.keyv.get('after')).toBe(2);
    const landed = (await Promise.all(keys.map((key) => store.keyv.get(key)))).filter((value) => value !== undefined);
    expect(landed).toEqual([]);
  });

  it('writes asked for just before close() land before the SQLite connections close', async () => {
    const path = tempFile();
    const store = await openStore(`sqlite://${path}`);
    const keys = Array.from({ length: 50 }, (_, i) => `late-${i}`);
    const writes = keys.map((key) => store.keyv.set(key, key));
    await store.close();
    await Promise.all(writes);
    const again = track(await openStore(`sqlite://${path}`));
    expect(await Promise.all(keys.map((key) => again.keyv.get(key)))).toEqual(keys);
  });

  it('with Redis gone, operations fail at once instead of hanging, and work again when it is back', async () => {
    const own = await startRedis();
    const store = await openStore(own.url);
    try {
      const history = new ConversationStore(store);
      await history.append('c', { role: 'user', content: 'before', at: 1 });
      await own.kill();
      const started = performance.now();
      await expect(history.append('c', { role: 'user', content: 'during', at: 2 })).rejects.toThrow();
      await expect(store.ping()).rejects.toThrow();
      expect(performance.now() - started).toBeLessThan(5_000);
      await own.restart();
      await expect
        .poll(
          () =>
            store.ping().then(
              () => true,
              () => false,
            ),
          { timeout: 10_000, interval: 100 },
        )
        .toBe(true);
      await history.append('c', { role: 'user', content: 'after', at: 3 });
      expect((await history.get('c')).map((m) => m.content)).toEqual(['after']);
    } finally {
      await store.close();
      await own.stop();
    }
  });
});

describe('SQLite sweep of expired rows', () => {
  /** The rows of the keyv table in the file, read through the store's own connection. */
  const rowsOf = async (store: LocalState) => {
    const sqlite = store.keyv.store as { query(sql: string): Promise<Array<{ key: string; value: string }>> };
    return (await sqlite.query('SELECT key, value FROM keyv ORDER BY key')).map((r) => r.key);
  };

  it('deletes expired claims, counters, stop requests and buttons on its timer, and keeps every row without expiry', async () => {
    const errors: unknown[] = [];
    const store = new LocalState(tempFile(), {
      onError: (e) => errors.push(e),
      firstSweepAfterMs: 100,
      sweepEveryMs: 100,
    });
    opened.push(store);
    const history = new ConversationStore(store);
    await history.append('kept', { role: 'user', content: 'a turn that says "expires": 1 and {"expires":1}', at: 1 });
    await store.keyv.set('settings:C1', { model: 'm', expires: 1 }); // no TTL: a field named like keyv's is not an expiry
    await store.keyv.set('plain', '"expires":0'); // no TTL, the text of an expiry
    await store.keyv.set('stop:live', true, 60_000);
    await new Claims(store).claim('slack:request:live', 60_000);
    await new Claims(store).claim('slack:request:old', 1_000);
    await store.increment('quota:old', 1, 1_000);
    await store.keyv.set('stop:old', true, 1_000);
    await store.keyv.set('imagine:old', { prompt: 'p' }, 1_000);
    // Every row is there until the short-lived ones expire (1 s), sweeps or not; the history's
    // retention marker (history.ts) with them.
    expect(await rowsOf(store)).toHaveLength(10);

    await expect
      .poll(() => rowsOf(store), { timeout: 5_000, interval: 50 })
      .toEqual(
        [
          'genbot:claim:slack:request:live',
          'genbot:history:kept',
          `genbot:${storeKeys.historyDue('kept', 1 + DEFAULT_RETENTION_MS)}`,
          'genbot:plain',
          'genbot:settings:C1',
          'genbot:stop:live',
        ].sort(),
      );
    expect((await history.get('kept')).map((m) => m.content)).toEqual([
      'a turn that says "expires": 1 and {"expires":1}',
    ]);
    expect(await store.keyv.get('settings:C1')).toEqual({ model: 'm', expires: 1 });
    expect(await store.keyv.get('plain')).toBe('"expires":0');
    expect(await store.keyv.get('stop:live')).toBe(true);
    expect(errors).toEqual([]);
  });

  it('sweeps once shortly after opening, keeps sweeping on its interval, and stops when closed', async () => {
    const path = tempFile();
    const before = new LocalState(path, { firstSweepAfterMs: 3_600_000 });
    await new Claims(before).claim('old', 1);
    await before.close();
    // Reopened: the expired claim left by the previous process goes at the first sweep.
    const store = new LocalState(path, { firstSweepAfterMs: 50, sweepEveryMs: 3_600_000 });
    opened.push(store);
    expect(await rowsOf(store)).toEqual(['genbot:claim:old']);
    await expect.poll(() => rowsOf(store), { timeout: 2_000, interval: 20 }).toEqual([]);
    await store.close();
    const errors: unknown[] = [];
    const closed = new LocalState(tempFile(), {
      onError: (e) => errors.push(e),
      firstSweepAfterMs: 1,
      sweepEveryMs: 1,
    });
    await closed.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(errors).toEqual([]);
  });

  it('tells onError of a failed sweep and sweeps again at the next interval', async () => {
    const errors: unknown[] = [];
    const store = new LocalState(tempFile(), {
      onError: (e) => errors.push(e),
      firstSweepAfterMs: 50,
      sweepEveryMs: 50,
    });
    opened.push(store);
    const sqlite = store.keyv.store as { query(sql: string, ...params: unknown[]): Promise<unknown> };
    const query = sqlite.query.bind(sqlite);
    let failures = 1;
    sqlite.query = (sql, ...params) =>
      sql.startsWith('DELETE') && failures-- > 0 ? Promise.reject(new Error('disk I/O error')) : query(sql, ...params);
    await new Claims(store).claim('old', 1);
    await expect.poll(() => rowsOf(store), { timeout: 2_000, interval: 20 }).toEqual([]);
    expect(errors).toEqual([expect.objectContaining({ message: 'disk I/O error' })]);
  });
});
