/**
 * The write scheduler's requests and options (scheduler.ts).
 */
import type { Logger } from '../../log.ts';
import type { BucketId } from '../keys.ts';
import type { Bucket, NamedWait } from './bucket.ts';
import type { Clock } from './clock.ts';
import type { SharedBudgets } from './shared-budgets.ts';

/** One write to schedule. */
export interface WriteRequest {
  /** One pending write per key (e.g. `<stream>:<message index>`); a newer submit replaces it. */
  key: string;
  /** The stream (answer) it belongs to: fairness is per stream. */
  stream: string;
  /** The buckets it spends one write of, each (every one must have room). */
  buckets: readonly BucketId[];
  /** A stream's final write: served first, never replaced by an intermediate one. */
  final: boolean;
  /** Shortest time after the previous write of this key, in ms (how often one message may change). */
  minIntervalMs?: number;
  /** Performs the write (reading the newest text then). Its rejection rejects `submit` (a rate-limit refusal first goes again: refusals.ts). */
  run(): Promise<void>;
  /**
   * Told when the write starts, or runs, while a bucket it spends carries a wait the platform
   * named beyond MAX_HOLD_MS (bucket.ts): the write goes out against the platform's word, and
   * the answer it belongs to says so.
   */
  onHeld?(wait: NamedWait): void;
}

/** What became of a submitted write. */
export type WriteResult = 'written' | 'superseded';

/** Options of the WriteScheduler. */
export interface WriteSchedulerOptions {
  /** The clock of every time the scheduler reads or waits for (default: real time). */
  clock?: Clock;
  log?: Logger;
  /** How long a learned slow-down lasts, in ms (default 60,000). */
  slowForMs?: number;
  /** Budgets shared with other instances through the store (Redis); without it, this process keeps them alone. */
  shared?: SharedBudgets;
}

/** A submitted write not started yet (scheduler.ts's own). */
export interface Pending {
  request: WriteRequest;
  resolve: (result: WriteResult) => void;
  reject: (error: unknown) => void;
  submittedAt: number;
  /** The number of its latest wake-up: entries of the wake-up queue with another number are stale. */
  wakeSeq: number;
  /** How many times it went again after a rate-limit refusal (refusals.ts). */
  retries?: number;
  /** Not before this time (clock ms): a refused write's retry. */
  notBefore?: number;
}

/** When a pending write may run at the earliest (clock ms), and the buckets whose completions it waits for when that is `Infinity`. */
export interface Runnable {
  at: number;
  waitFor: Bucket[];
}
