/**
 * The write scheduler's budgets spent in a shared store (Redis: state/redis-budgets.ts), so that every bot process
 * on it together keeps each platform budget (docs/architecture.md, "Several instances").
 *
 * - Leases: a write runs when, besides its local buckets (bucket.ts), every bounded bucket it spends has a slot
 *   leased from the store: all the buckets it lacks in one atomic take, up to {@link MAX_LEASE} slots a bucket and
 *   never more than its fair share (its limit over the live instances; one for a spaced or concurrency-bound
 *   bucket), shared by the pending writes needing them. A slot is used within {@link LEASE_MS}, or left to expire.
 * - What a process learns (a hold, a slow-down, a budget learnt from the platform) is published for every process.
 * - Instances: each announces itself every {@link HEARTBEAT_MS} (an entry expiring after {@link ANNOUNCE_TTL_MS})
 *   and reads how many are live.
 * - Start: until the store first answers, no write runs (a process's own full budgets, spent beside the other
 *   instances' shared ones, would go past the platform's); past {@link DEADLINE_MS} without an answer, the process
 *   starts on its local budgets (said once).
 * - Fallback: when the store fails or does not answer within {@link DEADLINE_MS}, each process keeps its local
 *   buckets with every budget divided by the live instances it last saw (said once in the log), until an
 *   announcement succeeds again (said once too); from then on its writes are spent in the store again, but its
 *   local budgets stay divided for {@link KEEP_SHARE_AFTER_RETURN_MS} (the longest window of a platform budget),
 *   since the writes it made on its share are not in the store's windows.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../log.ts';
import type { BucketNews, BudgetStore, SharedBucket } from '../state/budget-store.ts';
import { withDeadline } from '../state/deadline.ts';
import type { Budget } from './bucket.ts';
import type { Clock } from './clock.ts';
import { LeasedSlots } from './leased-slots.ts';

/** The most slots of one bucket a take asks for. */
export const MAX_LEASE = 4;
/** How long a leased slot may wait for its write, in ms. */
export const LEASE_MS = 500;
/** How long after its lease ends a slot still counts as just written (a write's way to the platform), in ms. */
const TRANSIT_MS = 1_000;
/** How long a call to the store may take before the store counts as not answering, in ms. */
export const DEADLINE_MS = 2_000;
/** How often an instance announces itself, in ms. */
export const HEARTBEAT_MS = 3_000;
/** How long an announcement lasts, in ms. */
export const ANNOUNCE_TTL_MS = 10_000;
/** How long after the store is back an instance keeps its local share beside the shared budgets, in ms. */
export const KEEP_SHARE_AFTER_RETURN_MS = 60_000;
/** How often an instance tries its first announcement until the store answers, in ms. */
const FIRST_ANNOUNCE_EVERY_MS = 50;
/** A budget at least this large bounds nothing worth a round trip (unless it bounds concurrency). */
const UNBOUNDED = 1_000_000;

/** A bucket as the scheduler knows it: its key and its budget in force. */
export interface SharedSpend {
  key: string;
  budget: Budget;
}

/** The pending writes waiting for one take of a set of buckets. */
interface Take {
  buckets: SharedSpend[];
  waiters: Set<string>;
  inFlight: boolean;
  /** No take of the set before this time (clock ms): what the store said. */
  notBefore: number;
}

/** What the scheduler lets the shared budgets do: wake pending writes, and divide its local budgets. */
export interface SharedHooks {
  clock: Clock;
  /** Looks at these pending writes again. */
  wake(keys: Iterable<string>): void;
  /** Every local budget from now on is divided by `share` (1: whole, the store keeps the shared one). */
  share(share: number): void;
}

/** Whether a budget is worth spending in the store. */
function isBounded(budget: Budget): boolean {
  return budget.limit < UNBOUNDED || budget.concurrency !== undefined;
}

/** Budgets spent in a shared store, with the local fallback. Never throws. */
export class SharedBudgets {
  /** This process's name among the instances. */
  readonly instance = randomUUID();
  private hooks: SharedHooks | undefined;
  /** Local budgets while the store is away (and, after the start's deadline, until it first answers). */
  private shared = false;
  /** Whether the store answered once or the start's deadline passed (before: writes wait for the store). */
  private started = false;
  /** Writes waiting for the store's first answer. */
  private readonly startWaiters = new Set<string>();
  private startDeadline: NodeJS.Timeout | undefined;
  /** Ends the local share kept after the store came back. */
  private shareEnd: NodeJS.Timeout | undefined;
  private instances = 1;
  private readonly slots: LeasedSlots;
  private readonly takes = new Map<string, Take>();
  private serial = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;

  /** @param store the store's shared budgets; @param log where the fallback and its end are said. */
  constructor(
    private readonly store: BudgetStore,
    private readonly log?: Logger,
  ) {
    this.slots = new LeasedSlots(store, (error) => this.fallBack(error));
    this.startDeadline = setTimeout(() => this.startLocally(), DEADLINE_MS).unref();
    this.schedule(0);
  }

  /** Connects the scheduler (its clock, and how pending writes are woken and local budgets divided). */
  attach(hooks: SharedHooks): void {
    this.hooks = hooks;
  }

  /** Whether budgets are spent in the store now (false while it is away: local shares). */
  get isShared(): boolean {
    return this.shared;
  }

  /**
   * When the pending write `writeKey` may run as far as the shared buckets say (clock ms):
   * `now` when each bounded bucket has a leased slot (or the store is away); a later time the
   * store named; `Infinity` while a take is under way, or before the store's first answer (the
   * write is woken when it ends, or when the store answers or its start deadline passes).
   */
  readyAt(writeKey: string, buckets: readonly SharedSpend[], now: number): number {
    if (!this.started) {
      this.startWaiters.add(writeKey);
      return Number.POSITIVE_INFINITY;
    }
    if (!this.shared || !this.hooks) return now;
    const lacking = buckets.filter((b) => isBounded(b.budget) && !this.slots.has(b.key, now));
    if (lacking.length === 0) return now;
    const setKey = lacking.map((b) => b.key).join('|');
    let take = this.takes.get(setKey);
    if (!take) {
      take = { buckets: lacking, waiters: new Set(), inFlight: false, notBefore: 0 };
      this.takes.set(setKey, take);
    }
    if (take.notBefore > now) return take.notBefore;
    take.buckets = lacking;
    take.waiters.add(writeKey);
    if (!take.inFlight) {
      take.inFlight = true;
      // After the pump: every pending write of this pass that needs the set counts in `want`.
      queueMicrotask(() => this.takeFor(setKey, take));
    }
    return Number.POSITIVE_INFINITY;
  }

  /**
   * A write starts: spends one leased slot of each of these buckets that has some.
   * @returns what to call when the write ends (settles its slots, frees its places).
   */
  spend(keys: readonly string[]): (() => void) | undefined {
    return this.shared ? this.slots.spend(keys) : undefined;
  }

  /** Publishes what was learnt of a bucket for every instance (nothing while the store is away). */
  publish(key: string, news: BucketNews): void {
    if (!this.shared) return;
    withDeadline(this.store.publish(key, news), DEADLINE_MS, 'publish').catch((error: unknown) => this.fallBack(error));
  }

  /**
   * Stops announcing this instance; the writes left (a shutdown's last ones) go on local shares of
   * the budgets, without the store (which may be closing too: a take it refused at once must not
   * be asked again, a loop of microtasks that would starve the event loop).
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.heartbeat);
    clearTimeout(this.startDeadline);
    clearTimeout(this.shareEnd);
    if (!this.started) this.begin();
    this.local();
  }

  /** The next announcement in `ms` (every {@link HEARTBEAT_MS}; more often until the store first answers). */
  private schedule(ms: number): void {
    if (this.closed) return;
    this.heartbeat = setTimeout(() => this.announce(), ms).unref();
  }

  /** One take for the writes waiting on a set of buckets. */
  private takeFor(setKey: string, take: Take): void {
    const { clock } = this.hooks!;
    const want = Math.min(take.waiters.size, ...take.buckets.map((b) => this.fairLease(b.budget)));
    const token = `${this.instance}:${++this.serial}`;
    const sentAt = clock.now();
    const buckets: SharedBucket[] = take.buckets.map(({ key, budget }) => ({
      bucket: key,
      limit: budget.limit,
      windowMs: budget.windowMs,
      spacingMs: budget.spacingMs ?? 0,
      concurrency: budget.concurrency ?? 0,
    }));
    const done = () => {
      take.inFlight = false;
      const waiters = [...take.waiters];
      take.waiters.clear();
      if (take.notBefore <= clock.now()) this.takes.delete(setKey);
      this.hooks!.wake(waiters);
    };
    const running = buckets.filter((b) => b.concurrency > 0).map((b) => b.bucket);
    const taking = this.store.take({ buckets, want, countFromMs: LEASE_MS + TRANSIT_MS, token });
    withDeadline(taking, DEADLINE_MS, 'take').then(
      ({ granted, waitMs }) => {
        if (granted > 0 && this.shared)
          this.slots.add({ token, running, used: false }, granted, sentAt + LEASE_MS, buckets);
        else if (granted === 0) take.notBefore = clock.now() + waitMs;
        done();
      },
      (error: unknown) => {
        this.fallBack(error);
        done();
        // A take past its deadline (a stalled store) may still land once the store answers: its
        // places of concurrency-bound buckets are nobody's, and counted as writes under way for a
        // minute they held every write of those buckets back (Discord's, after a 10 s freeze).
        if (running.length)
          taking
            .then(
              ({ granted }) => (granted > 0 ? this.store.release(running, token) : undefined),
              () => undefined,
            )
            .catch(() => undefined);
      },
    );
  }

  /** The most slots of a bucket one take asks for: its fair share of the limit, at most {@link MAX_LEASE}. */
  private fairLease(budget: Budget): number {
    if (budget.concurrency !== undefined || budget.spacingMs) return 1;
    return Math.max(1, Math.min(MAX_LEASE, Math.floor(budget.limit / this.instances)));
  }

  /** Announces this instance; reads how many are live; ends the fallback when the store answers again. */
  private announce(): void {
    this.prune(this.hooks?.clock.now() ?? 0);
    withDeadline(this.store.announce(this.instance, ANNOUNCE_TTL_MS), DEADLINE_MS, 'announce').then(
      (count) => {
        if (this.closed) return;
        this.instances = Math.max(1, count);
        this.schedule(HEARTBEAT_MS);
        if (this.shared) return;
        this.shared = true;
        const said = 'rate budgets: the store answers again: budgets are shared again';
        if (this.started) {
          this.log?.warn({ instances: this.instances }, said);
          this.shareEnd = setTimeout(() => this.shared && this.hooks?.share(1), KEEP_SHARE_AFTER_RETURN_MS).unref();
        } else this.hooks?.share(1);
        this.begin();
      },
      (error: unknown) => {
        this.schedule(this.started ? HEARTBEAT_MS : FIRST_ANNOUNCE_EVERY_MS);
        this.fallBack(error);
      },
    );
  }

  /** The store did not answer within {@link DEADLINE_MS} of the start: local budgets until it does. Said once. */
  private startLocally(): void {
    if (this.started || this.closed) return;
    this.log?.warn(
      { instances: this.instances },
      'rate budgets: the store did not answer at start: this instance keeps its local budgets until it does',
    );
    this.begin();
  }

  /** Ends the start (shared, or local past its deadline): the writes that waited for it are looked at again. */
  private begin(): void {
    this.started = true;
    clearTimeout(this.startDeadline);
    const waiting = [...this.startWaiters];
    this.startWaiters.clear();
    this.hooks?.wake(waiting);
  }

  /** Forgets takes nobody waits for and expired slots (freeing their places). */
  private prune(now: number): void {
    for (const [key, take] of this.takes) if (!take.inFlight && take.notBefore <= now) this.takes.delete(key);
    this.slots.prune(now);
  }

  /** The store failed: local budgets, each divided by the live instances last seen. Said once. */
  private fallBack(error: unknown): void {
    if (!this.shared || this.closed) return;
    this.log?.warn(
      { instances: this.instances, err: error instanceof Error ? error.message : String(error) },
      'rate budgets: the store is not answering: each instance keeps its share of every budget until it is back',
    );
    this.local();
  }

  /** Local budgets, each divided by the live instances last seen; the writes waiting for a take are looked at again. */
  private local(): void {
    if (!this.shared) return;
    this.shared = false;
    clearTimeout(this.shareEnd);
    this.slots.clear();
    const waiting = [...this.takes.values()].flatMap((t) => [...t.waiters]);
    this.takes.clear();
    this.hooks?.share(this.instances);
    this.hooks?.wake(waiting);
  }
}
