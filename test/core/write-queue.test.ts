/**
 * The SQLite writer's queue (state/write-queue.ts): writes that wait together go as one
 * statement (keyv's upserts as one multi-row upsert, its deletes as one `DELETE … IN`), in the
 * order they were asked for, each write told its own outcome; and through LocalState, a burst of
 * keyv writes costs a few statements, every value landing as the last write of its key left it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreDeadlineError } from '../../src/core/state/deadline.ts';
import { LocalState } from '../../src/core/state/local-state.ts';
import { ROWS_PER_STATEMENT, WriteQueue } from '../../src/core/state/write-queue.ts';

/** keyv's own statements (@keyv/sqlite 4), as its `set` and `delete` send them. */
const UPSERT = `INSERT INTO keyv (key, value)
			VALUES(?, ?) 
			ON CONFLICT(key) 
			DO UPDATE SET value=excluded.value;`;
const DELETE = 'DELETE FROM keyv WHERE key = ?';

/** An in-memory SQLite with keyv's table, and a query that records each statement it runs. */
function database() {
  const db = new sqlite3.Database(':memory:');
  const ran: string[] = [];
  const all = (sql: string, ...parameters: unknown[]) =>
    new Promise<unknown[]>((resolve, reject) =>
      db.all(sql, parameters, (error, rows) => (error ? reject(error) : resolve(rows))),
    );
  const query = (sql: string, ...parameters: unknown[]) => {
    ran.push(sql.replace(/\s+/g, ' ').slice(0, 60).trim());
    return all(sql, ...parameters);
  };
  const ready = all('CREATE TABLE keyv (key VARCHAR(255) PRIMARY KEY, value TEXT)');
  const rows = async () =>
    Object.fromEntries(
      ((await all('SELECT key, value FROM keyv ORDER BY key')) as Array<{ key: string; value: string }>).map((r) => [
        r.key,
        r.value,
      ]),
    );
  return { db, ran, query, ready, rows };
}

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((s) => s.close()));
});

describe('WriteQueue', () => {
  it('sends the upserts and deletes that waited together as one statement each, in order, the later write of a key winning', async () => {
    const { ran, query, ready, rows } = database();
    await ready;
    const queue = new WriteQueue(query, 5_000);
    const writes = [
      queue.run(UPSERT, ['a', '1']),
      queue.run(UPSERT, ['b', '2']),
      queue.run(UPSERT, ['a', '3']),
      queue.run(DELETE, ['b']),
      queue.run(DELETE, ['c']),
      queue.run(UPSERT, ['b', '4']),
      queue.run('UPDATE keyv SET value = ? WHERE key = ?', ['5', 'a']),
      queue.run(UPSERT, ['c', '6']),
    ];
    await Promise.all(writes);
    expect(await rows()).toEqual({ a: '5', b: '4', c: '6' });
    // Three upserts, two deletes, one upsert, the statement of another shape alone, one upsert.
    expect(ran).toEqual([
      'INSERT INTO keyv (key, value) VALUES (?, ?), (?, ?), (?, ?)',
      'DELETE FROM keyv WHERE key IN (?, ?)',
      'INSERT INTO keyv (key, value) VALUES(?, ?) ON CONFLICT(key)',
      'UPDATE keyv SET value = ? WHERE key = ?',
      'INSERT INTO keyv (key, value) VALUES(?, ?) ON CONFLICT(key)',
    ]);
    expect(queue.statements).toBe(5);
  });

  it(`groups at most ${ROWS_PER_STATEMENT} writes into a statement, and a write asked for while one runs waits for it`, async () => {
    const { ran, query, ready, rows } = database();
    await ready;
    const queue = new WriteQueue(query, 5_000);
    const first = Array.from({ length: ROWS_PER_STATEMENT + 10 }, (_, i) => queue.run(UPSERT, [`k${i}`, 'first']));
    // Asked for while the first statement runs: after it, so its value stays.
    await Promise.resolve();
    await Promise.resolve();
    const later = queue.run(UPSERT, ['k0', 'later']);
    await Promise.all([...first, later]);
    const stored = await rows();
    expect(Object.keys(stored)).toHaveLength(ROWS_PER_STATEMENT + 10);
    expect(stored.k0).toBe('later');
    expect(stored.k1).toBe('first');
    expect(ran.length).toBeGreaterThanOrEqual(2);
    expect(ran.length).toBeLessThanOrEqual(3);
  });

  it('runs a write asked for by a caller resumed as the queue empties (no write left waiting)', async () => {
    const { query, ready, rows } = database();
    await ready;
    const queue = new WriteQueue(query, 5_000);
    // Asked for in the continuation of the last write of a drain, before that drain has wound down.
    const second = queue.run(UPSERT, ['a', '1']).then(() => queue.run(UPSERT, ['b', '2']));
    const stranded = new Promise((resolve) => setTimeout(() => resolve('stranded'), 1_000));
    expect(await Promise.race([second.then(() => 'stored'), stranded])).toBe('stored');
    expect(await rows()).toEqual({ a: '1', b: '2' });
  });

  it("tells each write of a failed statement the statement's error, and runs the writes after it", async () => {
    const { ready, query, rows } = database();
    await ready;
    let calls = 0;
    const failing = (sql: string, ...parameters: unknown[]) =>
      ++calls === 1 ? Promise.reject(new Error('SQLITE_FULL: database or disk is full')) : query(sql, ...parameters);
    const queue = new WriteQueue(failing, 5_000);
    const grouped = [queue.run(UPSERT, ['a', '1']), queue.run(UPSERT, ['b', '2'])];
    const outcomes = await Promise.allSettled(grouped);
    expect(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'stored'))).toEqual([
      'Error: SQLITE_FULL: database or disk is full',
      'Error: SQLITE_FULL: database or disk is full',
    ]);
    await queue.run(UPSERT, ['c', '3']);
    expect(await rows()).toEqual({ c: '3' });
  });

  it('gives up a write whose turn comes past its deadline, without running it; the writes within theirs still go', async () => {
    const { ready, query, rows } = database();
    await ready;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The first statement takes 80 ms: the writes asked for during it wait past a 30 ms deadline.
    const slow = async (sql: string, ...parameters: unknown[]) => {
      if (sql.startsWith('UPDATE')) await held;
      return query(sql, ...parameters);
    };
    const queue = new WriteQueue(slow, 30);
    const first = queue.run('UPDATE keyv SET value = ? WHERE key = ?', ['x', 'none']);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const late = queue.run(UPSERT, ['late', '1']);
    setTimeout(release, 80);
    await first;
    await expect(late).rejects.toBeInstanceOf(StoreDeadlineError);
    await queue.run(UPSERT, ['on-time', '2']);
    expect(await rows()).toEqual({ 'on-time': '2' });
  });
});

describe('LocalState writes', () => {
  it('a burst of 1,000 keyv writes goes to SQLite in a few statements, each key ending as its last write left it', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'genbot-writes-')), 'state.sqlite');
    const store = new LocalState(path);
    opened.push(store);
    await store.keyv.set('warm', 1);
    const writes = (store as unknown as { writes: WriteQueue }).writes;
    const before = writes.statements;
    const keys = Array.from({ length: 500 }, (_, i) => `burst-${i}`);
    await Promise.all([
      ...keys.map((key) => store.keyv.set(key, `${key} first`)),
      ...keys.map((key) => store.keyv.set(key, `${key} second`, 60_000)),
    ]);
    // One statement per write was 1,000 (each a thread-pool round trip and a callback on the event loop).
    expect(writes.statements - before).toBeLessThanOrEqual(5);
    expect(await Promise.all(keys.map((key) => store.keyv.get(key)))).toEqual(keys.map((key) => `${key} second`));
    await store.keyv.delete('burst-0');
    expect(await store.keyv.get('burst-0')).toBeUndefined();
  });
});
