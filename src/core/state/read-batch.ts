/**
 * Reads of one key coalesced into reads of many: while a read is on its way to the store, the
 * keys asked for meanwhile wait and go together in one `getMany` (SQLite: one `SELECT … WHERE
 * key IN …`; Redis: one `MGET`) as soon as a read slot is free. A burst of commands (1,000
 * /chat at once, each reading its channel's settings and its history) then costs the store a
 * few dozen queries instead of thousands, each of which cost the bot's event loop a callback and
 * its thread pool a statement (bench:streams). A read alone goes at once, as before.
 */
import type Keyv from 'keyv';
import { answeredByStore } from './deadline.ts';

/** Reads on their way to the store at once, at most (each a `get` or a `getMany`). */
const READS_IN_FLIGHT = 2;

/** Keys in one `getMany`, at most. */
const KEYS_PER_READ = 256;

/**
 * Callers resumed in one turn of the event loop when a batch answers; the rest wait for the next
 * turns, so that what arrived meanwhile (a burst's next interactions, each deferred at once) goes
 * first instead of behind every continuation of the batch (bench:streams, the ack's tail).
 */
const RESUMED_PER_TURN = 32;

/** Runs `calls` {@link RESUMED_PER_TURN} at a time, one group per turn of the event loop (setImmediate). */
function resumeInTurns(calls: Array<() => void>): void {
  let next = 0;
  const turn = () => {
    const end = Math.min(next + RESUMED_PER_TURN, calls.length);
    while (next < end) calls[next++]!();
    if (next < calls.length) setImmediate(turn);
  };
  turn();
}

/** The callers waiting for one key. */
interface Waiting {
  /** What the caller was given (its deadline's: deadline.ts `answeredByStore`). */
  promise: Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Makes `keyv.get(key)` (one key, no options) coalesce as the file says; every other call
 * (several keys, `raw`) goes to keyv as it is. Values, expiry and errors are keyv's own (a
 * batch's error is each of its callers' error).
 * @returns the same keyv.
 */
export function coalesceReads(keyv: Keyv): Keyv {
  const single = keyv.get.bind(keyv) as (key: string | string[], options?: unknown) => Promise<unknown>;
  const queued = new Map<string, Waiting[]>();
  let inFlight = 0;

  const settle = (keys: string[], read: Promise<unknown[]>) => {
    const waiting = keys.map((key) => queued.get(key) ?? []);
    for (const key of keys) queued.delete(key);
    inFlight++;
    // The store answered every caller now; they are resumed in turns (their deadlines no longer run).
    const answer = (settle: (w: Waiting, i: number) => void) =>
      resumeInTurns(
        waiting.flatMap((list, i) =>
          list.map((w) => {
            answeredByStore(w.promise);
            return () => settle(w, i);
          }),
        ),
      );
    read
      .then(
        (values) => answer((w, i) => w.resolve(values[i])),
        (error: unknown) => answer((w) => w.reject(error)),
      )
      .finally(() => {
        inFlight--;
        next();
      });
  };
  const next = () => {
    while (inFlight < READS_IN_FLIGHT && queued.size > 0) {
      const keys = [...queued.keys()].slice(0, KEYS_PER_READ);
      settle(keys, keys.length === 1 ? single(keys[0]!).then((v) => [v]) : keyv.getMany(keys));
    }
  };

  keyv.get = ((key: string | string[], options?: unknown) => {
    if (typeof key !== 'string' || options !== undefined) return single(key, options);
    let resolve: (value: unknown) => void = () => undefined;
    let reject: (error: unknown) => void = () => undefined;
    const promise = new Promise<unknown>((yes, no) => {
      resolve = yes;
      reject = no;
    });
    const waiting = { promise, resolve, reject };
    const list = queued.get(key);
    if (list) list.push(waiting);
    else queued.set(key, [waiting]);
    next();
    return promise;
  }) as Keyv['get'];
  return keyv;
}
