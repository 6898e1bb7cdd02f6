/**
 * The write scheduler: every platform write of a streamed answer (post, edit, follow-up) goes
 * through one instance per bot, which keeps each rate-limit bucket within its budget, so the
 * platforms never have to refuse (docs/platform-limits.md).
 *
 * - Budgets: each bucket (a typed BucketId, keys.ts) is a {@link Bucket} (bucket.ts: window,
 *   concurrency, spacing, hold, slow-down); adapters declare budgets per platform and kind
 *   (`define`, `setBudget`, `alsoSpend`: bucket-table.ts) and feed what the platform reports:
 *   `observe` (rate-limit headers) and `rateLimited` (a 429: held, and halved for a while).
 *   Holds last at most MAX_HOLD_MS, writes under a longer named wait are told (`onHeld`), and a
 *   write refused for the rate limit goes again (`retryRateLimited`, refusals.ts).
 * - Coalescing: one pending write per key (a message); a newer one replaces a pending one, and
 *   the write reads the newest text when it runs. Writes to one key never overlap.
 * - Fairness: streams sharing a bucket are served in turn (least recently served first);
 *   final writes go before intermediate ones, so every answer's last text lands.
 * - Several instances: with `shared` (a Redis store), bounded buckets are also spent in the
 *   store, in leases, and what is learnt is published (shared-budgets.ts).
 */
import { type BucketFamily, type BucketId, bucketKey } from '../keys.ts';
import { type Bucket, type BucketReport, type Budget, MAX_HOLD_MS } from './bucket.ts';
import { BucketTable } from './bucket-table.ts';
import { type Clock, systemClock } from './clock.ts';
import { PendingWrites } from './pending-writes.ts';
import { RateLimitRetries, type RateLimitWaitOf } from './refusals.ts';
import { ServedTimes } from './served.ts';
import { Wakeups } from './wakeups.ts';
import type { Pending, Runnable, WriteRequest, WriteResult, WriteSchedulerOptions } from './write-request.ts';
import { submitTraced } from './write-spans.ts';

/** The scheduler; one per bot (docs/platform-limits.md). No method throws; a write's own error rejects its submit. */
export class WriteScheduler {
  /** The clock the scheduler reads and sleeps on; adapters that learn budgets read the same one. */
  readonly clock: Clock;
  private readonly buckets = new BucketTable();
  private readonly pending = new PendingWrites();
  /** The writes under way, by key. */
  private readonly running = new Map<string, WriteRequest>();
  private readonly retries = new RateLimitRetries();
  private readonly served = new ServedTimes();
  /**
   * When each pending write may run at the earliest (a lower bound: it is looked at again then).
   * A write that waits for a completion is parked on its bucket (or key) instead.
   */
  private readonly wakeups: Wakeups;
  /** Keys of pending writes to look at in the next pump (new, replaced, or something freed their way). */
  private readonly dirty = new Set<string>();
  /** A pump is queued (a microtask) and will see every change made before it runs. */
  private pumpQueued = false;
  private startsSincePrune = 0;

  /** @param options the clock (default: real time), the log, and how long a slow-down lasts. */
  constructor(private readonly options: WriteSchedulerOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.wakeups = new Wakeups(this.clock, () => this.pump());
    options.shared?.attach({
      clock: this.clock,
      wake: (keys) => {
        for (const key of keys) if (this.pending.has(key)) this.dirty.add(key);
        this.schedulePump();
      },
      share: (share) => {
        this.buckets.setShare(share);
        this.lookAgainAtAll();
        this.schedulePump();
      },
    });
  }

  /** Declares the budget of every bucket of a family (platform and kind), e.g. every Discord channel's. */
  define(family: BucketFamily, budget: Budget): void {
    this.buckets.define(family, budget);
  }

  /**
   * Sets the budget of one bucket (what an adapter learned of it), over its family's; `undefined`
   * goes back to the family's. Writes already counted stay counted. A budget `learntForMs` (learnt
   * from the platform) is published for every instance sharing the store, for that long.
   */
  setBudget(bucket: BucketId, budget: Budget | undefined, learntForMs?: number): void {
    this.buckets.setBudget(bucket, budget);
    if (budget && learntForMs) this.publishBudget(bucket, budget, learntForMs);
    this.lookAgainAtAll();
    this.schedulePump();
  }

  /**
   * Makes every write that spends a bucket of `family` also spend the bucket `extra(bucket)`
   * names (none when it returns undefined), e.g. every write of a channel spending the channel's
   * all-writes budget. Read when a write is submitted.
   */
  alsoSpend(family: BucketFamily, extra: (bucket: BucketId) => BucketId | undefined): void {
    this.buckets.alsoSpend(family, extra);
  }

  /**
   * What the platform reported for a bucket (rate-limit headers): with nothing `remaining`, no
   * write before `resetAfterMs` (at most MAX_HOLD_MS); a different `limit` replaces the declared one.
   */
  observe(bucket: BucketId, report: BucketReport): void {
    const live = this.buckets.get(bucket);
    if (live.observe(this.clock.now(), report)) {
      this.lookAgainAtAll();
      this.publishBudget(bucket, live.budget, 10 * 60_000);
    }
    if (report.remaining <= 0) this.held(bucket, report.resetAfterMs);
    this.schedulePump();
  }

  /**
   * The platform refused a write of this bucket (429): no write before `retryAfterMs` (ms; at most
   * MAX_HOLD_MS, a longer wait is the bucket's named wait), and half the budget for a while
   * (`slowForMs`) unless `slowDown` is false (the adapter set the bucket's budget itself).
   */
  rateLimited(bucket: BucketId, retryAfterMs: number, options: { slowDown?: boolean } = {}): void {
    const slowForMs = options.slowDown === false ? undefined : (this.options.slowForMs ?? 60_000);
    this.buckets.get(bucket).rateLimited(this.clock.now(), retryAfterMs, slowForMs);
    const holdMs = Math.min(retryAfterMs, MAX_HOLD_MS);
    this.options.log?.info({ bucket: bucketKey(bucket), retryAfterMs, holdMs }, 'rate limited: holding this bucket');
    this.held(bucket, retryAfterMs, slowForMs);
    this.schedulePump();
  }

  /**
   * Makes writes refused for the platform's rate limit go again (refusals.ts): `waitOf` tells
   * such a refusal (an adapter's SDK error) from any other failure, by the wait it named (ms).
   */
  retryRateLimited(waitOf: RateLimitWaitOf): void {
    this.retries.recognize(waitOf);
  }

  /**
   * Schedules a write.
   * @returns `written` once it ran, `superseded` when a newer write of the key replaced it first.
   * @throws what the write's `run` threw.
   */
  submit(submitted: WriteRequest): Promise<WriteResult> {
    return submitTraced(submitted, this.enqueue, this.clock);
  }

  /** Adds a write to the pending ones (a span around it with tracing on: write-spans.ts). */
  private readonly enqueue = (submitted: WriteRequest): Promise<WriteResult> => {
    const request = this.buckets.hasExtras
      ? { ...submitted, buckets: this.buckets.withExtras(submitted.buckets) }
      : submitted;
    return new Promise<WriteResult>((resolve, reject) => {
      this.pending.add(request, resolve, reject, this.clock.now());
      this.dirty.add(request.key);
      // A lone write starts at once; a burst of submits in one tick shares one pass.
      if (this.pending.size <= 1 && !this.pumpQueued) this.pump();
      else this.schedulePump();
    });
  };

  /** Writes waiting (for tests and metrics). */
  get waiting(): number {
    return this.pending.size;
  }

  /** Stops what runs in the background (announcing this instance to a shared store). */
  close(): void {
    this.options.shared?.close();
  }

  private publishBudget(bucket: BucketId, budget: Budget, forMs: number): void {
    const { limit, windowMs, spacingMs = 0, concurrency = 0 } = budget;
    this.options.shared?.publish(bucketKey(bucket), { learnt: { limit, windowMs, spacingMs, concurrency, forMs } });
  }

  /**
   * When a pending write may run at the earliest (clock ms), and when that is "not until a write
   * completes", the buckets whose completions it waits for (none: it waits for its own key's).
   */
  private runnableAt(p: Pending, now: number): Runnable {
    const waitFor: Bucket[] = [];
    if (this.running.has(p.request.key)) return { at: Number.POSITIVE_INFINITY, waitFor };
    let at = Math.max(now, p.notBefore ?? now);
    const last = this.served.lastWriteOf(p.request.key);
    if (last !== undefined && p.request.minIntervalMs) at = Math.max(at, last + p.request.minIntervalMs);
    for (const id of p.request.buckets) {
      const bucket = this.buckets.get(id);
      const ready = bucket.readyAt(now);
      if (ready === Number.POSITIVE_INFINITY) waitFor.push(bucket);
      at = Math.max(at, ready);
    }
    // Within the local budgets: the shared ones (a leased slot of each; or a take under way, or the store's
    // first answer, that wakes it).
    const { shared } = this.options;
    if (at <= now && shared) {
      const spends = p.request.buckets.map((id) => ({ key: bucketKey(id), budget: this.buckets.get(id).budget }));
      at = shared.readyAt(p.request.key, spends, now);
    }
    return { at, waitFor };
  }

  /** Puts a pending write that may not run now where it will be looked at again: the wake-up queue, or its buckets' (or key's) completions. */
  private park(p: Pending, when: Runnable): void {
    p.wakeSeq = this.wakeups.nextSeq();
    if (Number.isFinite(when.at)) this.wakeups.add(when.at, p.request.key, p.wakeSeq);
    else for (const bucket of when.waitFor) bucket.park(p.request.key);
    // With neither, it waits for its own key's write under way, whose completion looks at it again.
  }

  /** Every pending write is looked at in the next pump (a budget changed: some may run sooner). */
  private lookAgainAtAll(): void {
    for (const key of this.pending.keys()) this.dirty.add(key);
  }

  /**
   * Starts every pending write that may run now, in order: final writes first, then the stream
   * served longest ago, then the oldest submission. Only the writes that may run now are looked
   * at: those whose wake-up time has come and those something changed for (new, replaced, or a
   * completion freed their bucket or key); every other pending write has its earliest time in
   * the wake-up queue, or is parked on a bucket whose completion looks at it again. One sorted
   * pass over them (a started write updates its buckets first): O(k log n) for k such writes out
   * of n pending; then a wake-up is armed for the earliest of the rest.
   */
  private pump(): void {
    this.pumpQueued = false;
    const now = this.clock.now();
    const due = this.dirty.size ? [...this.dirty] : [];
    this.dirty.clear();
    for (const { key, seq } of this.wakeups.takeDue(now)) if (this.pending.get(key)?.wakeSeq === seq) due.push(key);
    const candidates = [...new Set(due)]
      .flatMap((key) => this.pending.get(key) ?? [])
      .sort(
        (a, b) =>
          Number(b.request.final) - Number(a.request.final) ||
          this.served.lastServed(a.request.stream) - this.served.lastServed(b.request.stream) ||
          a.submittedAt - b.submittedAt,
      );
    // Nothing a started write does makes a bucket ready sooner, so a write that may not run
    // now cannot be overtaken by a later one of the same buckets within this pass.
    for (const candidate of candidates) {
      const when = this.runnableAt(candidate, now);
      if (when.at <= now) this.start(candidate, now);
      else this.park(candidate, when);
    }
    // A prune while starting may have freed parked writes: they get a pass of their own.
    if (this.dirty.size) this.schedulePump();
    this.wakeups.arm();
  }

  /**
   * Runs {@link pump} once after the current task (many submits and completions in one tick share
   * one pass; after a bucket's change, a wake-up already set stays, at worst early).
   */
  private schedulePump(): void {
    if (this.pumpQueued) return;
    this.pumpQueued = true;
    queueMicrotask(() => this.pump());
  }

  private start(p: Pending, now: number): void {
    const { request } = p;
    this.pending.delete(request.key);
    this.running.set(request.key, request);
    const buckets = request.buckets.map((id) => this.buckets.get(id));
    for (const bucket of buckets) bucket.start(now);
    const release = this.options.shared?.spend(request.buckets.map(bucketKey));
    this.served.started(request.key, request.stream, now);
    if (++this.startsSincePrune >= 1024) this.prune(now);
    // Past a capped hold while the platform's named wait runs: the write's answer says so.
    const named = this.buckets.namedWait(request.buckets, now);
    if (named) request.onHeld?.(named);
    const ended = (failure?: { error: unknown }) => {
      // Counted from its completion from now on; a place under way freed: what waited for one is looked at again.
      const done = this.clock.now();
      release?.();
      for (const bucket of buckets) {
        if (!failure) bucket.accepted(now);
        for (const key of bucket.complete(done)) this.dirty.add(key);
      }
      this.running.delete(request.key);
      if (this.pending.has(request.key)) this.dirty.add(request.key);
      const again = failure && this.retries.retryAt(p, failure.error, done);
      if (!failure) p.resolve('written');
      else if (again === undefined) p.reject(failure.error);
      // Refused for the rate limit: it goes again after the wait (or a newer write of its key does).
      else this.dirty.add(this.pending.again(p, again));
      this.schedulePump();
    };
    request.run().then(
      () => ended(),
      (error: unknown) => ended({ error }),
    );
  }

  /**
   * Publishes a bucket's hold of `ms` (at most MAX_HOLD_MS) and slow-down for the instances sharing
   * the store, and tells the writes under way of a wait named beyond MAX_HOLD_MS on it, if one runs.
   */
  private held(bucket: BucketId, ms: number, slowMs = 0): void {
    const key = bucketKey(bucket);
    this.options.shared?.publish(key, { holdMs: Math.min(ms, MAX_HOLD_MS), ...(slowMs ? { slowMs } : {}) });
    const named = this.buckets.namedWait([bucket], this.clock.now());
    if (named)
      for (const r of this.running.values()) if (r.buckets.some((id) => bucketKey(id) === key)) r.onHeld?.(named);
  }

  /** Forgets buckets with nothing to remember (bucket-table.ts), and keys and streams quiet for a minute (served.ts). */
  private prune(now: number): void {
    this.startsSincePrune = 0;
    for (const key of this.buckets.prune(now)) this.dirty.add(key);
    this.served.forget(now, (key) => this.running.has(key));
  }
}
