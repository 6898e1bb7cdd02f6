/**
 * The slots one process leased from the shared budgets (shared-budgets.ts), by bucket: how
 * many are left of each take and until when they may be used, which write used which slot,
 * and, when a write ends, its slot settled at the store's now (a write counts in its window
 * from its end, as the local buckets count it: bucket.ts) and its place in a concurrency-bound
 * bucket freed. Settlements go to the store together, a batch per tick.
 */
import type { BudgetStore, SlotSettlement } from '../state/budget-store.ts';

/** One take's grant, shared by the buckets it covered. */
export interface Lease {
  token: string;
  /** Its concurrency-bound buckets (their place is freed when the write ends, or the slot expires unused). */
  running: string[];
  used: boolean;
}

/** Slots of one bucket from one take, usable until `until` (clock ms). */
interface Slots {
  lease: Lease;
  granted: number;
  taken: number;
  until: number;
  windowMs: number;
}

/** Leased slots. `onError` is told when the store refuses a settlement or release. Never throws. */
export class LeasedSlots {
  private readonly byBucket = new Map<string, Slots[]>();
  private settling: SlotSettlement[] = [];

  /**
   * @param store the shared budgets' store.
   * @param onError told when a settlement or release fails (the store is away).
   */
  constructor(
    private readonly store: BudgetStore,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Adds a take's grant: `granted` slots of each bucket (with its window, ms), usable until `until` (clock ms). */
  add(
    lease: Lease,
    granted: number,
    until: number,
    buckets: ReadonlyArray<{ bucket: string; windowMs: number }>,
  ): void {
    for (const { bucket, windowMs } of buckets) {
      const list = this.byBucket.get(bucket) ?? [];
      list.push({ lease, granted, taken: 0, until, windowMs });
      this.byBucket.set(bucket, list);
    }
  }

  /** Whether `bucket` has a slot usable at `now` (clock ms); forgets (and frees) expired ones. */
  has(bucket: string, now: number): boolean {
    const list = this.byBucket.get(bucket);
    if (!list) return false;
    const live = list.filter((s) => {
      if (s.until > now) return true;
      if (!s.lease.used) this.release(s.lease);
      return false;
    });
    if (live.length) this.byBucket.set(bucket, live);
    else this.byBucket.delete(bucket);
    return live.some((s) => s.taken < s.granted);
  }

  /**
   * A write starts: takes one slot of each of these buckets that has one.
   * @returns what to call when the write ends (settles its slots, frees its places), or undefined when it took none.
   */
  spend(buckets: readonly string[]): (() => void) | undefined {
    const settle: SlotSettlement[] = [];
    const leases = new Set<Lease>();
    for (const bucket of buckets) {
      const slot = this.byBucket.get(bucket)?.find((s) => s.taken < s.granted);
      if (!slot) continue;
      slot.taken += 1;
      slot.lease.used = true;
      settle.push({ bucket, member: `${slot.lease.token}:${slot.taken}`, windowMs: slot.windowMs });
      leases.add(slot.lease);
    }
    if (settle.length === 0) return undefined;
    return () => {
      for (const lease of leases) this.release(lease);
      if (this.settling.length === 0) queueMicrotask(() => this.flush());
      this.settling.push(...settle);
    };
  }

  /** Forgets every slot (the store went away: what it granted is not spent). */
  clear(): void {
    this.byBucket.clear();
    this.settling = [];
  }

  /** Forgets expired slots of every bucket. */
  prune(now: number): void {
    for (const bucket of [...this.byBucket.keys()]) this.has(bucket, now);
  }

  /** Frees a lease's places in its concurrency-bound buckets, once. */
  private release(lease: Lease): void {
    if (!lease.running.length) return;
    const running = lease.running;
    lease.running = [];
    this.store.release(running, lease.token).catch(this.onError);
  }

  private flush(): void {
    const batch = this.settling;
    this.settling = [];
    if (batch.length) this.store.settle(batch).catch(this.onError);
  }
}
