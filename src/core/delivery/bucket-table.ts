/**
 * The buckets of one write scheduler (scheduler.ts): the budgets adapters declare from the
 * platforms' documentation (docs/platform-limits.md), the further buckets some writes also
 * spend, and the live {@link Bucket} of every bucket that has something to remember.
 */
import { Bucket, type Budget } from './bucket.ts';

/** The budget of a bucket nothing was declared for: no bound worth the name. */
const UNDECLARED: Budget = { limit: 1_000_000, windowMs: 1000 };

/** Declared budgets and live buckets, by bucket name. */
export class BucketTable {
  private readonly budgets: Array<[prefix: string, budget: Budget]> = [];
  /** Budgets of single buckets (`setBudget`), over the prefixes' ones. */
  private readonly overrides = new Map<string, Budget>();
  /** Further buckets the buckets of a prefix spend (`alsoSpend`). */
  private readonly extras: Array<[prefix: string, extra: (bucket: string) => string | undefined]> = [];
  private readonly live = new Map<string, Bucket>();

  /** Declares the budget of every bucket whose name starts with `prefix` (the longest prefix wins). */
  define(prefix: string, budget: Budget): void {
    this.budgets.push([prefix, budget]);
    this.budgets.sort((a, b) => b[0].length - a[0].length);
  }

  /** Sets the budget of one bucket over its prefix's; `undefined` goes back to the prefix's. Writes already counted stay counted. */
  setBudget(bucket: string, budget: Budget | undefined): void {
    if (budget) this.overrides.set(bucket, budget);
    else this.overrides.delete(bucket);
    const live = this.live.get(bucket);
    if (live) live.budget = this.budgetOf(bucket);
  }

  /** Makes every write that spends a bucket starting with `prefix` also spend the bucket `extra(bucket)` names (none when undefined). */
  alsoSpend(prefix: string, extra: (bucket: string) => string | undefined): void {
    this.extras.push([prefix, extra]);
  }

  /** Whether some buckets spend others ({@link alsoSpend}). */
  get hasExtras(): boolean {
    return this.extras.length > 0;
  }

  /** The buckets with the extra ones {@link alsoSpend} adds, each once, in order. */
  withExtras(buckets: readonly string[]): string[] {
    const all = new Set(buckets);
    for (const bucket of buckets) {
      for (const [prefix, extra] of this.extras) {
        const more = bucket.startsWith(prefix) ? extra(bucket) : undefined;
        if (more !== undefined) all.add(more);
      }
    }
    return [...all];
  }

  /** The live bucket of that name, made with its budget when it has none. */
  get(bucket: string): Bucket {
    let live = this.live.get(bucket);
    if (!live) {
      live = new Bucket(this.budgetOf(bucket));
      this.live.set(bucket, live);
    }
    return live;
  }

  /**
   * Forgets the buckets with nothing to remember at `now` (clock ms; {@link Bucket.isIdle}).
   * @returns the keys that were parked on them (to look at again).
   */
  prune(now: number): string[] {
    const keys: string[] = [];
    for (const [name, bucket] of this.live) {
      if (!bucket.isIdle(now)) continue;
      keys.push(...bucket.unpark());
      this.live.delete(name);
    }
    return keys;
  }

  private budgetOf(bucket: string): Budget {
    return this.overrides.get(bucket) ?? this.budgets.find(([prefix]) => bucket.startsWith(prefix))?.[1] ?? UNDECLARED;
  }
}
