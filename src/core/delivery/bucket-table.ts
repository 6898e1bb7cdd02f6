/**
 * The buckets of one write scheduler (scheduler.ts): the budgets adapters declare per bucket
 * family from the platforms' documentation (docs/platform-limits.md), the further buckets some
 * writes also spend, and the live {@link Bucket} of every bucket that has something to remember.
 * Buckets are matched by platform and kind ({@link BucketFamily}), keyed by {@link bucketKey}.
 */
import { type BucketFamily, type BucketId, bucketKey } from '../keys.ts';
import { Bucket, type Budget, type NamedWait } from './bucket.ts';

/** The budget of a bucket nothing was declared for: no bound worth the name. */
const UNDECLARED: Budget = { limit: 1_000_000, windowMs: 1000 };

/** The key of a bucket's family (its name without the scope). */
function familyKey(id: BucketId): string {
  return bucketKey({ ...id, scope: undefined });
}

/** Declared budgets and live buckets. Never throws (an `alsoSpend` function's throw excepted). */
export class BucketTable {
  /** Budgets declared for families (`define`), by family key. */
  private readonly declared = new Map<string, Budget>();
  /** Budgets of single buckets (`setBudget`), over their family's, by bucket key. */
  private readonly overrides = new Map<string, Budget>();
  /** Further buckets the buckets of a family spend (`alsoSpend`), in the order declared. */
  private readonly extras: Array<[family: BucketFamily, extra: (bucket: BucketId) => BucketId | undefined]> = [];
  private readonly live = new Map<string, Bucket>();
  /** Every bucket's share of its budget ({@link Bucket.share}). */
  private share = 1;

  /** Divides every bucket's budget by `share` from now on (1: whole). */
  setShare(share: number): void {
    this.share = share;
    for (const bucket of this.live.values()) bucket.share = share;
  }

  /** Declares the budget of every bucket of a family (a later declaration of the family replaces it). */
  define(family: BucketFamily, budget: Budget): void {
    this.declared.set(familyKey(family), budget);
  }

  /** Sets the budget of one bucket over its family's; `undefined` goes back to the family's. Writes already counted stay counted. */
  setBudget(id: BucketId, budget: Budget | undefined): void {
    const key = bucketKey(id);
    if (budget) this.overrides.set(key, budget);
    else this.overrides.delete(key);
    const live = this.live.get(key);
    if (live) live.budget = this.budgetOf(id);
  }

  /** Makes every write that spends a bucket of `family` also spend the bucket `extra(bucket)` names (none when undefined). */
  alsoSpend(family: BucketFamily, extra: (bucket: BucketId) => BucketId | undefined): void {
    this.extras.push([family, extra]);
  }

  /** Whether some buckets spend others ({@link alsoSpend}). */
  get hasExtras(): boolean {
    return this.extras.length > 0;
  }

  /** The buckets with the extra ones {@link alsoSpend} adds, each once, in order. */
  withExtras(ids: readonly BucketId[]): BucketId[] {
    const all = new Map<string, BucketId>();
    const add = (id: BucketId) => {
      const key = bucketKey(id);
      if (!all.has(key)) all.set(key, id);
    };
    for (const id of ids) add(id);
    for (const id of ids) {
      for (const [family, extra] of this.extras) {
        const more = id.platform === family.platform && id.kind === family.kind ? extra(id) : undefined;
        if (more !== undefined) add(more);
      }
    }
    return [...all.values()];
  }

  /** The live bucket `id` names, made with its budget when it has none. */
  get(id: BucketId): Bucket {
    const key = bucketKey(id);
    let live = this.live.get(key);
    if (!live) {
      live = new Bucket(this.budgetOf(id));
      live.share = this.share;
      this.live.set(key, live);
    }
    return live;
  }

  /** The longest wait named beyond MAX_HOLD_MS that runs at `now` (clock ms) on any of the buckets, if one does (Bucket.namedWaitMs). */
  namedWait(ids: readonly BucketId[], now: number): NamedWait | undefined {
    let wait: NamedWait | undefined;
    for (const id of ids) {
      const namedMs = this.live.get(bucketKey(id))?.namedWaitMs(now) ?? 0;
      if (namedMs > (wait?.namedMs ?? 0)) wait = { platform: id.platform, namedMs };
    }
    return wait;
  }

  /**
   * Forgets the buckets with nothing to remember at `now` (clock ms; {@link Bucket.isIdle}).
   * @returns the keys of the pending writes that were parked on them (to look at again).
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

  private budgetOf(id: BucketId): Budget {
    return this.overrides.get(bucketKey(id)) ?? this.declared.get(familyKey(id)) ?? UNDECLARED;
  }
}
