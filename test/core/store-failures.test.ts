/**
 * The parts that keep answers going when the store fails (issue 22, items 2 and 3): a deadline on
 * every store call (deadline.ts), exchanges the store refused waiting in memory, bounded, and put
 * back in their place once it takes writes (pending-turns.ts, history.ts `restore`), and the
 * outage lasting, for the notice, until none waits (health.ts).
 */
import Keyv from 'keyv';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { STORE_DEADLINE_MS, StoreDeadlineError, withDeadline, withDeadlines } from '../../src/core/state/deadline.ts';
import { StoreHealth } from '../../src/core/state/health.ts';
import { ConversationStore, mergeTurns, type StoredMessage } from '../../src/core/state/history.ts';
import { PENDING_MAX_BYTES, PENDING_MAX_EXCHANGES, PendingTurns } from '../../src/core/state/pending-turns.ts';
import { RedisState } from '../../src/core/state/redis-state.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import { startRedis } from '../helpers/redis.ts';

/** A store in memory whose writes can be refused, as SQLite's are while another connection holds its lock. */
function lockableStore() {
  const keyv = new Keyv();
  const set = keyv.set.bind(keyv);
  const state = { refusing: false };
  keyv.set = (async (...args: Parameters<typeof set>) => {
    if (state.refusing) throw Object.assign(new Error('SQLITE_BUSY: database is locked'), { code: 'SQLITE_BUSY' });
    return set(...args);
  }) as typeof keyv.set;
  const store: StateStore = {
    kind: 'sqlite',
    keyv,
    setIfAbsent: async () => true,
    release: async () => undefined,
    increment: async (_key, by) => ({ value: by, resetInMs: 0 }),
    counter: async () => ({ value: 0, resetInMs: 0 }),
    withLock: (_key, fn) => fn(),
    scanKeys: async function* () {},
    deleteKeys: async () => undefined,
    ping: async () => undefined,
    close: async () => undefined,
  };
  return { store, state };
}

/** An exchange's two turns at `at`. */
const exchange = (question: string, at: number, ids?: [string, string]): StoredMessage[] => [
  { role: 'user', content: question, at, ...(ids ? { id: ids[0] } : {}) },
  { role: 'assistant', content: `Answer to: ${question}`, at, ...(ids ? { id: ids[1] } : {}) },
];

const contents = (turns: readonly StoredMessage[]) => turns.map((t) => t.content);

function setUp() {
  const { store, state } = lockableStore();
  const log = pino({ level: 'silent' });
  const history = new ConversationStore(store);
  const health = new StoreHealth();
  const pending = new PendingTurns(history, health, log);
  return { store, state, log, history, health, pending };
}

describe('deadlines on store calls', () => {
  const never = new Promise<never>(() => undefined);
  const silent: StateStore = {
    kind: 'redis',
    keyv: new Keyv({
      store: { get: () => never, set: () => never, delete: () => never, clear: () => never, has: () => never },
    }),
    setIfAbsent: () => never,
    release: () => never,
    increment: () => never,
    counter: () => never,
    withLock: () => never,
    scanKeys: async function* () {
      yield await never;
    },
    deleteKeys: () => never,
    ping: () => never,
    close: async () => undefined,
  };

  it('every call of a store that never answers fails with StoreDeadlineError, naming the call and not its key', async () => {
    const store = withDeadlines(silent, 20);
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['setIfAbsent', () => store.setIfAbsent('claim:secret-key', 1_000)],
      ['release', () => store.release('claim:secret-key')],
      ['increment', () => store.increment('quota:secret-key', 1, 1_000)],
      ['counter', () => store.counter('quota:secret-key')],
      ['ping', () => store.ping()],
      ['deleteKeys', () => store.deleteKeys(['history:secret-key'])],
      ['scanKeys', () => store.scanKeys('history:secret-key')[Symbol.asyncIterator]().next()],
      ['get', () => store.keyv.get('history:secret-key')],
      ['set', () => store.keyv.set('history:secret-key', 1)],
      ['delete', () => store.keyv.delete('history:secret-key')],
    ];
    for (const [name, call] of calls) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, name).toBeInstanceOf(StoreDeadlineError);
      expect((error as Error).message).toBe(`the state store did not answer within 20 ms (${name})`);
    }
  });

  it('a call that answers in time gives its answer; one that fails after its deadline is ignored', async () => {
    expect(await withDeadline(Promise.resolve('value'), 1_000, 'get')).toBe('value');
    let fail: (error: Error) => void = () => undefined;
    const late = new Promise<never>((_, reject) => {
      fail = reject;
    });
    await expect(withDeadline(late, 10, 'get')).rejects.toBeInstanceOf(StoreDeadlineError);
    fail(new Error('connection reset'));
    // No unhandled rejection follows (vitest fails the file on one).
    await new Promise((resolve) => setImmediate(resolve));
  });

  it('the deadline is 2 s by default, and the budgets of a shared store are left as they are', () => {
    expect(STORE_DEADLINE_MS).toBe(2_000);
    const budgets = {} as NonNullable<StateStore['budgets']>;
    expect(withDeadlines({ ...silent, budgets }).budgets).toBe(budgets);
  });
});

describe('turns put back in their place', () => {
  it('orders late turns by time among the stored ones, a question before its answer', () => {
    const stored = [...exchange('one', 1), ...exchange('three', 3)];
    expect(contents(mergeTurns(stored, exchange('two', 2)))).toEqual([
      'one',
      'Answer to: one',
      'two',
      'Answer to: two',
      'three',
      'Answer to: three',
    ]);
  });

  it('adds no turn that is stored already: by id, or by role, time and text without ids', () => {
    const stored = [...exchange('one', 1, ['q1', 'a1']), ...exchange('two', 2)];
    expect(mergeTurns(stored, [...exchange('one', 1, ['q1', 'a1']), ...exchange('two', 2)])).toBe(stored);
    // Another exchange with the same words at another time is another exchange.
    expect(contents(mergeTurns(stored, exchange('two', 5)))).toHaveLength(6);
  });
});

describe('exchanges waiting for the store', () => {
  it('are stored once the store takes writes again, in their place, and are part of the conversation meanwhile', async () => {
    const { state, history, pending } = setUp();
    await history.append('c', ...exchange('one', 1));
    state.refusing = true;
    await expect(history.append('c', ...exchange('two', 2))).rejects.toThrow(/SQLITE_BUSY/);
    pending.add('c', exchange('two', 2));
    expect(contents(pending.withWaiting('c', await history.get('c')))).toEqual([
      'one',
      'Answer to: one',
      'two',
      'Answer to: two',
    ]);
    expect(await pending.flush()).toBe(false);
    expect(pending.size).toBe(1);

    state.refusing = false;
    await history.append('c', ...exchange('three', 3));
    expect(await pending.flush()).toBe(true);
    expect(pending.size).toBe(0);
    expect(contents(await history.get('c'))).toEqual([
      'one',
      'Answer to: one',
      'two',
      'Answer to: two',
      'three',
      'Answer to: three',
    ]);
    pending.close();
  });

  it('are not stored twice when the write that missed its deadline landed after all', async () => {
    const { history, pending } = setUp();
    await history.append('c', ...exchange('one', 1, ['q1', 'a1']));
    pending.add('c', exchange('one', 1, ['q1', 'a1']));
    expect(await pending.flush()).toBe(true);
    expect(contents(await history.get('c'))).toEqual(['one', 'Answer to: one']);
    pending.close();
  });

  it(`keep at most ${PENDING_MAX_EXCHANGES} exchanges and ${PENDING_MAX_BYTES} bytes, dropping the oldest with a log line`, () => {
    const { log, pending } = setUp();
    const warn = vi.spyOn(log, 'warn');
    for (let i = 0; i <= PENDING_MAX_EXCHANGES; i++) pending.add(`c${i}`, exchange(`q${i}`, i));
    expect(pending.size).toBe(PENDING_MAX_EXCHANGES);
    expect(pending.withWaiting('c0', [])).toEqual([]);
    expect(contents(pending.withWaiting('c1', []))).toEqual(['q1', 'Answer to: q1']);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatchObject({ dropped: 1, waiting: PENDING_MAX_EXCHANGES });

    // Exchanges of about 40% of the byte bound each (question and answer): the third pushes out every older one.
    const big = 'x'.repeat(PENDING_MAX_BYTES / 5);
    for (const [i, name] of ['big1', 'big2', 'big3'].entries()) pending.add(name, exchange(big, i));
    expect(pending.withWaiting('big1', [])).toEqual([]);
    expect(pending.withWaiting('big2', [])).toHaveLength(2);
    expect(pending.withWaiting('big3', [])).toHaveLength(2);
    expect(pending.size).toBe(2);
    pending.close();
  });

  it('include an exchange being stored until its write ends, and are changed or dropped in place', () => {
    const { pending } = setUp();
    const release = pending.hold('c', exchange('one', 1, ['q1', 'a1']));
    // Stored meanwhile by the write itself: not twice.
    expect(contents(pending.withWaiting('c', exchange('one', 1, ['q1', 'a1'])))).toEqual(['one', 'Answer to: one']);
    expect(contents(pending.withWaiting('c', []))).toEqual(['one', 'Answer to: one']);
    release();
    expect(pending.withWaiting('c', [])).toEqual([]);

    const turns = exchange('two', 2, ['q2', 'a2']);
    pending.add('c', turns);
    pending.add('d', turns);
    pending.amend('c', { question: 'q2', answer: 'a2' }, 'Answer to\n[stopped]');
    expect(contents(pending.withWaiting('c', []))).toEqual(['two', 'Answer to\n[stopped]']);
    // The other conversation's copy is its own.
    expect(contents(pending.withWaiting('d', []))).toEqual(['two', 'Answer to: two']);
    pending.amend('d', { question: 'q2', answer: 'a2' }, undefined);
    expect(pending.withWaiting('d', [])).toEqual([]);
    expect(pending.size).toBe(1);
    pending.close();
  });

  it("of a forgotten conversation are dropped, the others' kept", () => {
    const { pending } = setUp();
    pending.add('a', exchange('one', 1));
    pending.add('b', exchange('two', 2));
    pending.add('a', exchange('three', 3));
    pending.forget('a');
    expect(pending.size).toBe(1);
    expect(pending.withWaiting('a', [])).toEqual([]);
    expect(contents(pending.withWaiting('b', []))).toEqual(['two', 'Answer to: two']);
    pending.close();
  });

  it('keep the outage going, for the notice once per conversation, until they are stored', async () => {
    const { state, log, health, pending } = setUp();
    state.refusing = true;
    const busy = new Error('SQLITE_BUSY: database is locked');
    expect(health.failed(busy, log, 'c')).toBe(true);
    pending.add('c', exchange('two', 2));
    // A read that works (SQLite's reads go on while another connection holds its write lock) ends nothing.
    health.succeeded(log);
    expect(health.isDown).toBe(true);
    expect(health.failed(busy, log, 'c')).toBe(false);
    state.refusing = false;
    expect(await pending.flush()).toBe(true);
    expect(health.isDown).toBe(false);
    // A new outage is told again.
    expect(health.failed(busy, log, 'c')).toBe(true);
    pending.close();
  });
});

describe('the lock of a Redis store', () => {
  it('waits behind another holder past the deadline, but a try a stalled Redis does not answer fails with StoreDeadlineError', async () => {
    const redis = await startRedis();
    const first = new RedisState(redis.url);
    const second = new RedisState(redis.url);
    try {
      await Promise.all([first.ping(), second.ping()]);
      // Contention: the second waits behind a holder for longer than the deadline, and gets the lock.
      let release: () => void = () => undefined;
      const held = first.withLock('conversation', () => new Promise<void>((r) => (release = r)));
      await new Promise((r) => setTimeout(r, 50));
      const waiting = second.withLock('conversation', async () => 'mine');
      await new Promise((r) => setTimeout(r, STORE_DEADLINE_MS + 300));
      release();
      await held;
      expect(await waiting).toBe('mine');
      // A stall: Redis answers nothing; the try fails at its deadline.
      redis.pause();
      const error = await second.withLock('conversation', async () => 'never').catch((e: unknown) => e);
      redis.resume();
      expect(error).toBeInstanceOf(StoreDeadlineError);
      // The try was still queued, and took the lock once Redis answered: it is released at once,
      // not held for its TTL (10 s) by nobody.
      await expect.poll(() => first.setIfAbsent('lock:conversation', 50), { timeout: 3_000, interval: 100 }).toBe(true);
    } finally {
      redis.resume();
      await Promise.allSettled([first.close(), second.close()]);
      await redis.stop();
    }
  }, 20_000);
});
