/**
 * What a shared store offers the write scheduler so that several bot processes spend one set
 * of platform rate budgets (core/delivery/shared-budgets.ts): slots of a bucket's window taken
 * atomically for several buckets at once, a bucket's hold, slow-down and learnt budget
 * published for every process, and the live instances counted. Redis implements it
 * (redis-budgets.ts); SQLite does not (one process keeps its budgets itself).
 *
 * Times the store keeps are the store's own (Redis `TIME`): what crosses this interface are
 * durations in ms, never a process's clock readings.
 */

/** One bucket of a take: its store key (`storeKeys.budget`) and the budget the caller knows of it. */
export interface SharedBucket {
  /** The bucket's key (keys.ts `bucketKey`). */
  bucket: string;
  /** At most this many writes in any `windowMs` (ms). */
  limit: number;
  windowMs: number;
  /** At least this long between two grants of the bucket, across every process, in ms (0: none). */
  spacingMs: number;
  /** At most this many writes under way at once across every process (0: unbounded). */
  concurrency: number;
}

/** A take: up to `want` slots of every bucket of the list, all or none. */
export interface TakeRequest {
  buckets: readonly SharedBucket[];
  /** How many slots of each bucket are wanted (at least 1). */
  want: number;
  /**
   * How long after the grant a slot counts from, in ms: the latest a write may reach the
   * platform (a lease's life plus a margin for the request), so that the window the store
   * keeps never ends before the platform's.
   */
  countFromMs: number;
  /** Unique to this take (the slots' names, and the token of a write under way in a concurrency-bound bucket). */
  token: string;
}

/** What a take got. */
export interface TakeGrant {
  /** Slots granted in every bucket of the take (0 to `want`). */
  granted: number;
  /** With none granted: how long until one may be, in ms (a lower bound). */
  waitMs: number;
}

/** A slot whose write ended: it counts from the store's now on (`member`: the take's token, `:`, the slot's number from 1). */
export interface SlotSettlement {
  bucket: string;
  member: string;
  /** The bucket's window, in ms (how long the slot is kept from now). */
  windowMs: number;
}

/** What a process learnt of a bucket, for every process: a hold, a slow-down, a budget. Durations in ms from now. */
export interface BucketNews {
  /** No write before this long from now. */
  holdMs?: number;
  /** Half the budget for this long from now. */
  slowMs?: number;
  /** The bucket's budget learnt from the platform, in force for `forMs`. */
  learnt?: { limit: number; windowMs: number; spacingMs: number; concurrency: number; forMs: number };
}

/**
 * Shared rate budgets in a store several processes use. Every method throws when the store
 * does not answer (the caller falls back to its local budgets).
 */
export interface BudgetStore {
  /** Takes up to `want` slots of every bucket of the request, atomically. */
  take(request: TakeRequest): Promise<TakeGrant>;
  /**
   * Writes ended: each slot counts from now on, instead of from the end of its lease (a write's
   * slot is kept from its take to its end plus the window, as the platform may have seen it
   * any time in between).
   */
  settle(slots: readonly SlotSettlement[]): Promise<void>;
  /** A write under way in concurrency-bound buckets ended: frees its place (`token` of its take). */
  release(buckets: readonly string[], token: string): Promise<void>;
  /** Publishes what was learnt of a bucket (holds and slow-downs only lengthen). */
  publish(bucket: string, news: BucketNews): Promise<void>;
  /**
   * Announces this instance for `ttlMs` (an entry that expires unless announced again).
   * @returns how many instances are announced now, this one included.
   */
  announce(instance: string, ttlMs: number): Promise<number>;
}
