/**
 * Deadlines on store calls. A store that is down fails fast (Redis's client queues nothing while
 * disconnected), but one that is stalled does not: a Redis frozen by a long command, swapping or a
 * paused VM keeps its connections open and answers nothing, and every call would wait for it, a
 * user's answer (and, before this, Slack's acknowledgement) with it. So every call of the store
 * `openStore` makes carries {@link STORE_DEADLINE_MS}: past it the call fails with
 * {@link StoreDeadlineError}, which callers treat as the store being unreachable (an answer without
 * history and a notice, a quota let through, a claim not taken…). The call itself is not cancelled
 * (neither backend can take one back): it may still land once the store answers, so what is
 * retried later must tolerate a write that landed (state/pending-turns.ts does).
 */
import type Keyv from 'keyv';
import type { StateStore } from './store.ts';

/**
 * How long a store call may take before it counts as the store not answering, in ms. A store
 * answers in about a millisecond (bench:history: p95 0.64 ms on SQLite, 0.74 ms on Redis); 2 s
 * leaves room for a burst's queued reads (SQLite's busy wait alone is 1 s) while keeping a
 * stalled store from holding an answer for long.
 */
export const STORE_DEADLINE_MS = 2_000;

/** A store call that did not answer within its deadline. */
export class StoreDeadlineError extends Error {
  constructor(
    readonly operation: string,
    readonly deadlineMs: number,
  ) {
    super(`the state store did not answer within ${deadlineMs} ms (${operation})`);
    this.name = 'StoreDeadlineError';
  }
}

/** Calls the store has answered whose callers are resumed later, by the bot's own choice ({@link answeredByStore}). */
const answered = new WeakSet<Promise<unknown>>();

/**
 * Marks `call` as answered by the store: its deadline no longer applies, though its promise
 * settles later. read-batch.ts resumes a burst's callers a group per turn of the event loop (so
 * that the burst's acknowledgements go between them); on a busy loop the last groups were
 * resumed past the deadline, and their answers went without the history the store had returned
 * in time ("I can't reach my memory", bench:streams, 1,000 channels).
 */
export function answeredByStore(call: Promise<unknown>): void {
  answered.add(call);
}

/**
 * `call`'s result, or a {@link StoreDeadlineError} once `ms` have passed without one (`call`
 * goes on; its late failure is ignored), unless the store answered it in time and only its
 * resumption waits ({@link answeredByStore}).
 * @param operation names the call in the error (`get`, `withLock`…), never a key or a value.
 */
export function withDeadline<T>(call: Promise<T>, ms: number, operation: string): Promise<T> {
  // One promise and one timer per call (every store call has one: a burst makes thousands).
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      if (!answered.has(call)) reject(new StoreDeadlineError(operation, ms));
    }, ms);
    call.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** The keyv methods the bot calls (each one store round trip). */
const KEYV_CALLS = ['get', 'getMany', 'set', 'delete', 'has'] as const;

/**
 * `store` with a deadline of `ms` on every call: its own operations (`close` excepted: it waits
 * for pending writes; `withLock` bounds each try at the lock instead, see there) and its keyv's reads and writes (patched on the instance, which stays the
 * same object). `budgets` is left as it is: the shared write budgets keep their own deadline
 * (delivery/shared-budgets.ts).
 */
export function withDeadlines(store: StateStore, ms = STORE_DEADLINE_MS): StateStore {
  const keyv = store.keyv as unknown as Record<(typeof KEYV_CALLS)[number], (...args: unknown[]) => Promise<unknown>>;
  for (const name of KEYV_CALLS) {
    const call = keyv[name].bind(store.keyv);
    keyv[name] = (...args: unknown[]) => withDeadline(call(...args), ms, name);
  }
  const timed = <T>(operation: string, call: () => Promise<T>) => withDeadline(call(), ms, operation);
  return {
    kind: store.kind,
    keyv: store.keyv as Keyv,
    ...(store.budgets ? { budgets: store.budgets } : {}),
    setIfAbsent: (key, ttlMs) => timed('setIfAbsent', () => store.setIfAbsent(key, ttlMs)),
    release: (key) => timed('release', () => store.release(key)),
    increment: (key, by, ttlMs) => timed('increment', () => store.increment(key, by, ttlMs)),
    counter: (key) => timed('counter', () => store.counter(key)),
    // Not the whole call: waiting behind another holder of the lock is no stall (Redis answers each
    // try at once), and `fn`'s own store calls have their deadlines; RedisState bounds each try.
    withLock: (key, fn, ttlMs) => store.withLock(key, fn, ttlMs),
    scanKeys: (prefix, batchSize) => timedBatches(store.scanKeys(prefix, batchSize), ms),
    deleteKeys: (keys) => timed('deleteKeys', () => store.deleteKeys(keys)),
    ping: () => timed('ping', () => store.ping()),
    close: () => store.close(),
  };
}

/** `batches` with a deadline of `ms` on each batch (one store round trip each), not on the whole listing. */
async function* timedBatches(batches: AsyncIterable<string[]>, ms: number): AsyncIterable<string[]> {
  const iterator = batches[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await withDeadline(iterator.next(), ms, 'scanKeys');
      if (next.done) return;
      yield next.value;
    }
  } finally {
    // Not awaited: after a missed deadline the batch asked for may never settle, and return() waits for it.
    Promise.resolve(iterator.return?.()).catch(() => undefined);
  }
}
