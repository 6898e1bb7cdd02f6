/**
 * The one store behind all state: history, event claims, channel settings, button state and
 * quotas. Values live in keyv (JSON, with expiry); what must be atomic across instances
 * (first-claim-wins markers, counters, locks) has operations of its own, which each backend
 * implements with its own guarantees:
 *
 * - SQLite (default, `sqlite://<path>`): one bot process; atomicity in-process.
 * - Redis (`redis://host:port`): several bot processes; `SET NX PX`, `INCRBY` + `PEXPIRE`, and
 *   a lock with expiry and an owner token, atomic for every process sharing the server.
 *
 * Keys can be listed by prefix ({@link StateStore.scanKeys}) and deleted in batches
 * ({@link StateStore.deleteKeys}): what an uninstall's purge (purge.ts) walks. Each batch is one
 * bounded round trip (SQLite: a range of the primary key's index; Redis: `SCAN … MATCH … COUNT`,
 * never `KEYS`), so a long listing never holds the store or the bot's event loop.
 *
 * Every operation throws when the backend is unreachable (callers decide: answer without
 * history, refuse a quota check…); nothing waits for a server that is down. `openStore`
 * (open-store.ts) makes one from a URL.
 */
import type Keyv from 'keyv';
import type { BudgetStore } from './budget-store.ts';

/** Keys a {@link StateStore.scanKeys} batch holds by default. */
export const SCAN_BATCH = 500;

/** What every state backend offers. Keys are plain strings (`history:<id>`, `claim:<key>`, …). */
export interface StateStore {
  /** `sqlite` or `redis`, for logs and health. */
  readonly kind: 'sqlite' | 'redis';
  /** JSON values with optional expiry (keyv's `get`/`set`/`delete`), in the `genbot` namespace. */
  readonly keyv: Keyv;
  /** Rate budgets shared by every process using the store (Redis); absent when one process keeps its own (SQLite). */
  readonly budgets?: BudgetStore;
  /**
   * Sets `key` for `ttlMs` unless it exists.
   * @returns true when this call set it (the first claim), false when it existed.
   */
  setIfAbsent(key: string, ttlMs: number): Promise<boolean>;
  /** Deletes a key {@link setIfAbsent} set (a marker held while work runs), so it may be set again. */
  release(key: string): Promise<void>;
  /**
   * Adds `by` to a counter, creating it with an expiry of `ttlMs` when absent.
   * @returns the new value and the ms left until the counter expires.
   */
  increment(key: string, by: number, ttlMs: number): Promise<{ value: number; resetInMs: number }>;
  /** Reads a counter: its value (0 when absent) and the ms left until it expires. */
  counter(key: string): Promise<{ value: number; resetInMs: number }>;
  /**
   * Runs `fn` while holding the lock on `key` (other holders wait). The lock expires after
   * `ttlMs` even if its holder died.
   * @throws the store's error when the lock cannot be taken; whatever `fn` throws.
   */
  withLock<T>(key: string, fn: () => Promise<T>, ttlMs?: number): Promise<T>;
  /**
   * Lists the keys starting with `prefix` (keys as the other operations take them, without the
   * store's namespace; values, claims, counters and locks alike), in batches of about
   * `batchSize` (default {@link SCAN_BATCH}; Redis may give fewer, or more, per batch), each
   * batch one round trip. Keys written or deleted while the listing runs may or may not be
   * listed; on Redis a key may be listed twice (SCAN's guarantee): callers must tolerate both.
   * `prefix` is compared byte for byte (no pattern characters).
   * @throws the store's error, from the batch that failed.
   */
  scanKeys(prefix: string, batchSize?: number): AsyncIterable<string[]>;
  /**
   * Deletes keys, whatever wrote them (keyv values, claims, counters: on Redis both of its key
   * spaces), in one round trip; absent keys are no error.
   * @throws the store's error.
   */
  deleteKeys(keys: readonly string[]): Promise<void>;
  /** Checks that the backend answers. @throws when it does not. */
  ping(): Promise<void>;
  /** Closes connections; pending writes are flushed first. */
  close(): Promise<void>;
}
