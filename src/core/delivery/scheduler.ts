/**
 * The write scheduler: every platform write of a streamed answer (post, edit, follow-up) goes
 * through one instance per bot, which keeps each rate-limit bucket within its budget, so the
 * platforms never have to refuse.
 *
 * - Budgets: a bucket (`discord:channel:<id>`, `discord:webhook:<token>`, `slack:update:<team>`…)
 *   allows `limit` writes in any `windowMs` (a sliding window), and optionally at most
 *   `concurrency` under way at once. A write counts from its start; once done, it counts from
 *   the time it completed (the platform saw it somewhere in between, so a window reckoned from
 *   completions never ends before the platform's: latency and the REST client's own waits and
 *   retries cannot push a write into a window the platform has already filled). Adapters
 *   declare budgets by bucket prefix from the platforms' documentation (`define`), set one
 *   bucket's budget as they learn it (`setBudget`), make the buckets of a prefix also spend
 *   another (`alsoSpend`), and feed what the platform reports: `observe` (remaining writes
 *   and reset, from rate-limit headers) and `rateLimited` (a 429).
 * - Coalescing: one pending write per key (a message); a newer one replaces a pending one, and
 *   the write reads the newest text when it runs. Writes to one key never overlap.
 * - Fairness: streams sharing a bucket are served in turn (least recently served first);
 *   final writes go before intermediate ones, so every answer's last text lands.
 * - Learning: a 429 on a bucket thought open halves that bucket's budget for a while and holds
 *   it until the platform's retry-after: a burst costs one 429, not one per stream.
 */
import TinyQueue from 'tinyqueue';
import type { Logger } from '../../log.ts';
import { type Clock, systemClock } from './clock.ts';

/** How long the last write time of a quiet key or stream is kept, in ms. */
const FORGET_AFTER_MS = 60_000;

/** At most `limit` writes in any `windowMs` (ms), and at most `concurrency` under way at once (unbounded when absent). */
export interface Budget {
  limit: number;
  windowMs: number;
  concurrency?: number;
  /**
   * At least this long between the starts of two writes of the bucket, in ms: spreads a long
   * window's budget evenly (e.g. 60 s / 100), so that streams sharing it each get their turn
   * all along instead of spending it in the first seconds and then waiting out the window.
   */
  spacingMs?: number;
}

/** One write to schedule. */
export interface WriteRequest {
  /** One pending write per key (e.g. `<stream>:<message index>`); a newer submit replaces it. */
  key: string;
  /** The stream (answer) it belongs to: fairness is per stream. */
  stream: string;
  /** The buckets it spends one write of, each (every one must have room). */
  buckets: readonly string[];
  /** A stream's final write: served first, never replaced by an intermediate one. */
  final: boolean;
  /** Shortest time after the previous write of this key, in ms (how often one message may change). */
  minIntervalMs?: number;
  /** Performs the write (reading the newest text then). Its rejection rejects `submit`. */
  run(): Promise<void>;
}

/** What became of a submitted write. */
export type WriteResult = 'written' | 'superseded';

interface Pending {
  request: WriteRequest;
  resolve: (result: WriteResult) => void;
  reject: (error: unknown) => void;
  submittedAt: number;
  /** The number of its latest wake-up: entries of the wake-up queue with another number are stale. */
  wakeSeq: number;
}

/** A pending write to look at again at `at` (clock ms), if it is still the one numbered `seq`. */
interface Wakeup {
  at: number;
  key: string;
  seq: number;
}

interface BucketState {
  budget: Budget;
  /** Completion times (ms) of the finished writes in the current window, oldest first. */
  sent: number[];
  /** Writes under way (each counts in the window until it completes). */
  running: number;
  /** No write before this time (a retry-after, or the platform's reset with nothing remaining). */
  blockedUntil: number;
  /** Until this time the budget is halved (learned from a 429). */
  slowUntil: number;
  /** When the last write started (clock ms), for `spacingMs`. */
  lastStart: number;
  /** Keys of pending writes that wait for a write of this bucket to complete (its concurrency is taken). */
  parked: Set<string>;
}

/** Options of {@link WriteScheduler}. */
export interface WriteSchedulerOptions {
  clock?: Clock;
  log?: Logger;
  /** How long a learned slow-down lasts, in ms (default 60,000). */
  slowForMs?: number;
}

/** The scheduler; one per bot. */
export class WriteScheduler {
  private readonly budgets: Array<[prefix: string, budget: Budget]> = [];
  /** Budgets of single buckets (`setBudget`), over the prefixes' ones. */
  private readonly overrides = new Map<string, Budget>();
  /** Further buckets the buckets of a prefix spend (`alsoSpend`). */
  private readonly extras: Array<[prefix: string, extra: (bucket: string) => string | undefined]> = [];
  private readonly buckets = new Map<string, BucketState>();
  private readonly pending = new Map<string, Pending>();
  private readonly running = new Set<string>();
  private readonly lastWriteOf = new Map<string, number>();
  private readonly lastServed = new Map<string, number>();
  /**
   * When each pending write may run at the earliest (a lower bound: it is looked at again then),
   * earliest first. A write that waits for a completion is parked on its bucket (or key) instead.
   */
  private readonly wakeups = new TinyQueue<Wakeup>([], (a, b) => a.at - b.at);
  /** Keys of pending writes to look at in the next pump (new, replaced, or something freed their way). */
  private readonly dirty = new Set<string>();
  private wakeSerial = 0;
  /** When the next wake-up is due (clock ms), and its number (a later arm() makes earlier ones stale). */
  private timerAt = Number.POSITIVE_INFINITY;
  private generation = 0;
  private readonly clock: Clock;
  private serial = 0;
  /** A pump is queued (a microtask) and will see every change made before it runs. */
  private pumpQueued = false;
  private startsSincePrune = 0;

  constructor(private readonly options: WriteSchedulerOptions = {}) {
    this.clock = options.clock ?? systemClock;
  }

  /** Declares the budget of every bucket whose name starts with `prefix` (the longest prefix wins). */
  define(prefix: string, budget: Budget): void {
    this.budgets.push([prefix, budget]);
    this.budgets.sort((a, b) => b[0].length - a[0].length);
  }

  /**
   * Sets the budget of one bucket (what an adapter learned of it), over its prefix's; `undefined`
   * goes back to the prefix's. Writes already counted stay counted.
   */
  setBudget(bucket: string, budget: Budget | undefined): void {
    if (budget) this.overrides.set(bucket, budget);
    else this.overrides.delete(bucket);
    const state = this.buckets.get(bucket);
    if (state) state.budget = this.budgetOf(bucket);
    this.lookAgainAtAll();
    this.wake();
  }

  /**
   * Makes every write that spends a bucket starting with `prefix` also spend the bucket
   * `extra(bucket)` names (none when it returns undefined), e.g. every write of a channel
   * spending the channel's all-writes budget. Read when a write is submitted.
   */
  alsoSpend(prefix: string, extra: (bucket: string) => string | undefined): void {
    this.extras.push([prefix, extra]);
  }

  /**
   * What the platform reported for a bucket (rate-limit headers): with nothing `remaining`,
   * no write before `resetAfterMs`; a different `limit` replaces the declared one.
   */
  observe(bucket: string, report: { remaining: number; resetAfterMs: number; limit?: number }): void {
    const state = this.state(bucket);
    if (report.limit !== undefined && report.limit > 0 && report.limit !== state.budget.limit) {
      state.budget = { ...state.budget, limit: report.limit };
      this.lookAgainAtAll();
    }
    if (report.remaining <= 0)
      state.blockedUntil = Math.max(state.blockedUntil, this.clock.now() + report.resetAfterMs);
    this.wake();
  }

  /**
   * The platform refused a write of this bucket (429): no write before `retryAfterMs` (ms), and
   * half the budget for a while (`slowForMs`) unless `slowDown` is false (the adapter knows why
   * the write was refused and has set the bucket's budget itself).
   */
  rateLimited(bucket: string, retryAfterMs: number, options: { slowDown?: boolean } = {}): void {
    const state = this.state(bucket);
    const now = this.clock.now();
    state.blockedUntil = Math.max(state.blockedUntil, now + retryAfterMs);
    if (options.slowDown !== false) {
      state.slowUntil = now + (this.options.slowForMs ?? 60_000);
      this.options.log?.info({ bucket, retryAfterMs }, 'rate limited: slowing this bucket down');
    }
    this.wake();
  }

  /**
   * Schedules a write.
   * @returns `written` once it ran, `superseded` when a newer write of the key replaced it first.
   * @throws what the write's `run` threw.
   */
  submit(submitted: WriteRequest): Promise<WriteResult> {
    const request = this.extras.length ? { ...submitted, buckets: this.withExtras(submitted.buckets) } : submitted;
    return new Promise<WriteResult>((resolve, reject) => {
      const previous = this.pending.get(request.key);
      if (previous) {
        // A final write stays final whatever replaces it.
        const final = previous.request.final || request.final;
        previous.resolve('superseded');
        this.pending.set(request.key, {
          request: { ...request, final },
          resolve,
          reject,
          submittedAt: previous.submittedAt,
          wakeSeq: 0,
        });
      } else {
        this.pending.set(request.key, {
          request,
          resolve,
          reject,
          submittedAt: this.clock.now() + this.serial++ * 1e-6,
          wakeSeq: 0,
        });
      }
      this.dirty.add(request.key);
      // A lone write starts at once; a burst of submits in one tick shares one pass.
      if (this.pending.size <= 1 && !this.pumpQueued) this.pump();
      else this.schedulePump();
    });
  }

  /** Writes waiting (for tests and metrics). */
  get waiting(): number {
    return this.pending.size;
  }

  /** The buckets with the extra ones `alsoSpend` adds, each once. */
  private withExtras(buckets: readonly string[]): string[] {
    const all = new Set(buckets);
    for (const bucket of buckets) {
      for (const [prefix, extra] of this.extras) {
        const more = bucket.startsWith(prefix) ? extra(bucket) : undefined;
        if (more !== undefined) all.add(more);
      }
    }
    return [...all];
  }

  private budgetOf(bucket: string): Budget {
    return (
      this.overrides.get(bucket) ??
      this.budgets.find(([prefix]) => bucket.startsWith(prefix))?.[1] ?? { limit: 1_000_000, windowMs: 1000 }
    );
  }

  private state(bucket: string): BucketState {
    let state = this.buckets.get(bucket);
    if (!state) {
      state = {
        budget: this.budgetOf(bucket),
        sent: [],
        running: 0,
        blockedUntil: 0,
        slowUntil: 0,
        lastStart: Number.NEGATIVE_INFINITY,
        parked: new Set(),
      };
      this.buckets.set(bucket, state);
    }
    return state;
  }

  /**
   * When the bucket has room for one more write, in clock ms: now, or later (a lower bound while
   * it is slowed down: the end of the slow-down may come first), or never until a write of it
   * completes (its `concurrency` is taken, or only writes under way fill its window).
   */
  private readyAt(bucket: string, now: number): number {
    const state = this.state(bucket);
    const { budget } = state;
    if (budget.concurrency !== undefined && state.running >= budget.concurrency) return Number.POSITIVE_INFINITY;
    const slowed = now < state.slowUntil;
    const limit = slowed ? Math.max(1, Math.floor(budget.limit / 2)) : budget.limit;
    while (state.sent.length && state.sent[0]! <= now - budget.windowMs) state.sent.shift();
    // Writes under way count too: a place frees when enough finished ones leave the window.
    const excess = state.running + state.sent.length - limit;
    let windowFree: number;
    if (excess < 0) windowFree = now;
    else if (excess < state.sent.length) windowFree = state.sent[excess]! + budget.windowMs;
    else windowFree = Number.POSITIVE_INFINITY; // only a running write's completion frees a place
    const at = Math.max(windowFree, state.blockedUntil, state.lastStart + (budget.spacingMs ?? 0));
    return slowed && Number.isFinite(at) ? Math.min(at, Math.max(state.slowUntil, state.blockedUntil)) : at;
  }

  /**
   * When a pending write may run at the earliest (clock ms), and when that is "not until a write
   * completes", the buckets whose completions it waits for (none: it waits for its own key's).
   */
  private runnableAt(p: Pending, now: number): { at: number; waitFor: BucketState[] } {
    const waitFor: BucketState[] = [];
    if (this.running.has(p.request.key)) return { at: Number.POSITIVE_INFINITY, waitFor };
    let at = now;
    const last = this.lastWriteOf.get(p.request.key);
    if (last !== undefined && p.request.minIntervalMs) at = Math.max(at, last + p.request.minIntervalMs);
    for (const bucket of p.request.buckets) {
      const ready = this.readyAt(bucket, now);
      if (ready === Number.POSITIVE_INFINITY) waitFor.push(this.state(bucket));
      at = Math.max(at, ready);
    }
    return { at, waitFor };
  }

  /** Puts a pending write that may not run now where it will be looked at again: the wake-up queue, or its buckets' (or key's) completions. */
  private park(p: Pending, when: { at: number; waitFor: BucketState[] }): void {
    p.wakeSeq = ++this.wakeSerial;
    if (Number.isFinite(when.at)) this.wakeups.push({ at: when.at, key: p.request.key, seq: p.wakeSeq });
    else for (const state of when.waitFor) state.parked.add(p.request.key);
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
   * pass over them (a started write updates its buckets before the next one is looked at), so a
   * pump costs O(k log n) for k such writes out of n pending (with a thousand streams waiting
   * on their budgets, a pump looks at the few whose turn came); then a wake-up is armed for the
   * earliest of the rest.
   */
  private pump(): void {
    this.pumpQueued = false;
    const now = this.clock.now();
    const due = this.dirty.size ? [...this.dirty] : [];
    this.dirty.clear();
    for (let top = this.wakeups.peek(); top && top.at <= now; top = this.wakeups.peek()) {
      this.wakeups.pop();
      if (this.pending.get(top.key)?.wakeSeq === top.seq) due.push(top.key);
    }
    const candidates = [...new Set(due)]
      .flatMap((key) => this.pending.get(key) ?? [])
      .sort(
        (a, b) =>
          Number(b.request.final) - Number(a.request.final) ||
          (this.lastServed.get(a.request.stream) ?? -1) - (this.lastServed.get(b.request.stream) ?? -1) ||
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
    this.arm(this.wakeups.peek()?.at ?? Number.POSITIVE_INFINITY);
  }

  /** Runs {@link pump} once after the current task (many submits and completions in one tick share one pass). */
  private schedulePump(): void {
    if (this.pumpQueued) return;
    this.pumpQueued = true;
    queueMicrotask(() => this.pump());
  }

  private start(p: Pending, now: number): void {
    const { request } = p;
    this.pending.delete(request.key);
    this.running.add(request.key);
    const states = request.buckets.map((bucket) => this.state(bucket));
    for (const state of states) {
      state.running += 1;
      state.lastStart = now;
    }
    this.lastWriteOf.set(request.key, now);
    this.lastServed.set(request.stream, now);
    if (++this.startsSincePrune >= 1024) this.prune(now);
    request
      .run()
      .finally(() => {
        // Counted from its completion from now on (completions come in clock order: `sent` stays sorted).
        const done = this.clock.now();
        for (const state of states) {
          state.running -= 1;
          state.sent.push(done);
          // A place under way freed: what waited for one is looked at again.
          for (const key of state.parked) this.dirty.add(key);
          state.parked.clear();
        }
        this.running.delete(request.key);
        if (this.pending.has(request.key)) this.dirty.add(request.key);
      })
      .then(
        () => p.resolve('written'),
        (error: unknown) => p.reject(error),
      )
      .finally(() => this.schedulePump());
  }

  /**
   * Forgets buckets with nothing to remember (no write in their window or under way, not held or
   * slowed), and the last write times of keys and streams quiet for a minute (longer than any
   * `minIntervalMs`; a stream not served for a minute comes first anyway).
   */
  private prune(now: number): void {
    this.startsSincePrune = 0;
    for (const [bucket, state] of this.buckets) {
      const quiet =
        state.running === 0 && (state.sent.at(-1) ?? Number.NEGATIVE_INFINITY) <= now - state.budget.windowMs;
      if (quiet && state.blockedUntil <= now && state.slowUntil <= now) {
        for (const key of state.parked) this.dirty.add(key);
        this.buckets.delete(bucket);
      }
    }
    for (const [key, at] of this.lastWriteOf)
      if (at <= now - FORGET_AFTER_MS && !this.running.has(key)) this.lastWriteOf.delete(key);
    for (const [stream, at] of this.lastServed) if (at <= now - FORGET_AFTER_MS) this.lastServed.delete(stream);
  }

  /** Wakes the pump at `at` (through the clock, so tests can drive time); an earlier wake-up wins. */
  private arm(at: number): void {
    if (!Number.isFinite(at) || at >= this.timerAt) return;
    this.timerAt = at;
    const generation = ++this.generation;
    void this.clock.sleep(Math.max(0, at - this.clock.now())).then(() => {
      if (generation !== this.generation) return;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.pump();
    });
  }

  /** Something changed a bucket's state: look again (a wake-up already set stays, at worst early). */
  private wake(): void {
    this.schedulePump();
  }
}
