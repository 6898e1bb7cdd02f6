/**
 * One rate-limit bucket of the write scheduler (scheduler.ts): its budget and what it has
 * counted against it, and the rules that say when its next write may start
 * (docs/platform-limits.md, "How the budgets are kept").
 *
 * - Window: at most `limit` writes in any `windowMs`. A write counts from its start; once done,
 *   from the time it completed (the platform saw it somewhere in between, so a window reckoned
 *   from completions never ends before the platform's).
 * - Concurrency: at most `concurrency` writes under way at once (unbounded when absent).
 * - Spacing: at least `spacingMs` between two starts.
 * - Hold: no write before a time the platform named (a 429's retry-after, or its reset when it
 *   reported nothing remaining), held at most {@link MAX_HOLD_MS}: a wait named longer than that
 *   (a 429 saying "an hour") is kept as the bucket's *named wait* instead, which the writes that
 *   go out meanwhile report (scheduler.ts `onHeld`) so that the user is told, until the platform
 *   accepts one of them.
 * - Slow-down: after a 429 the budget is halved (at least one write) until a time after it.
 *
 * Times are clock ms (the scheduler's {@link Clock}, passed in by the caller): the bucket reads
 * no clock of its own.
 */

/**
 * The longest a bucket is held for a wait the platform named, in ms (60 s): a 429's retry-after
 * or a reset announced further away (an hour) would otherwise hold every write of the bucket,
 * and all that wait behind them, that long. After it the bucket's writes are tried again, and
 * an answer held back by such a wait ends with a sentence saying so (docs/platform-limits.md,
 * "Long waits").
 */
export const MAX_HOLD_MS = 60_000;

/** A wait a platform named for a bucket beyond {@link MAX_HOLD_MS}: whose platform, and how long it asked for, in ms. */
export interface NamedWait {
  platform: 'discord' | 'slack';
  namedMs: number;
}

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

/** What a platform reported of a bucket (rate-limit headers): writes `remaining`, the reset in ms, and its `limit` if it says. */
export interface BucketReport {
  remaining: number;
  resetAfterMs: number;
  limit?: number;
}

/** One bucket's budget and state. Never throws. */
export class Bucket {
  /** The budget in force: declared, set by an adapter, or with the limit the platform reported. Writes already counted stay counted when it changes. */
  budget: Budget;
  /** Completion times (ms) of the finished writes in the current window, oldest first. */
  private readonly sent: number[] = [];
  /** Writes under way (each counts in the window until it completes). */
  private inFlight = 0;
  /** No write before this time (a retry-after, or the platform's reset with nothing remaining). */
  private holdUntil = 0;
  /** A wait named beyond {@link MAX_HOLD_MS}: how long (ms), when it was named and until when (clock ms), until a write is accepted after it. */
  private named: { ms: number; at: number; until: number } | undefined;
  /** Until this time the budget is halved (learned from a 429). */
  private slowUntil = 0;
  /** When the last write started, for `spacingMs`. */
  private lastStart = Number.NEGATIVE_INFINITY;
  /** Keys of pending writes that wait for a write of this bucket to complete (its concurrency or window is taken). */
  private readonly parked = new Set<string>();
  /**
   * This process's share of the budget: 1, or the number of instances while the store that
   * shares budgets among them is away (shared-budgets.ts): the limit is divided by it (at
   * least one write) and the spacing multiplied.
   */
  share = 1;

  /** @param budget the bucket's budget (see {@link Budget}). */
  constructor(budget: Budget) {
    this.budget = budget;
  }

  /** Writes of the bucket under way now. */
  get running(): number {
    return this.inFlight;
  }

  /**
   * When the bucket has room for one more write, at `now` or later (clock ms): `now`, a later
   * time (a lower bound while it is slowed down: the end of the slow-down may come first), or
   * `Infinity` until a write of it completes (its `concurrency` is taken, or only writes under
   * way fill its window). Forgets completions that have left the window.
   */
  readyAt(now: number): number {
    const { budget } = this;
    if (budget.concurrency !== undefined && this.inFlight >= budget.concurrency) return Number.POSITIVE_INFINITY;
    const slowed = now < this.slowUntil;
    const whole = this.share > 1 ? Math.max(1, Math.floor(budget.limit / this.share)) : budget.limit;
    const limit = slowed ? Math.max(1, Math.floor(whole / 2)) : whole;
    while (this.sent.length && this.sent[0]! <= now - budget.windowMs) this.sent.shift();
    // Writes under way count too: a place frees when enough finished ones leave the window.
    const excess = this.inFlight + this.sent.length - limit;
    let windowFree: number;
    if (excess < 0) windowFree = now;
    else if (excess < this.sent.length) windowFree = this.sent[excess]! + budget.windowMs;
    else windowFree = Number.POSITIVE_INFINITY; // only a running write's completion frees a place
    const at = Math.max(windowFree, this.holdUntil, this.lastStart + (budget.spacingMs ?? 0) * this.share);
    return slowed && Number.isFinite(at) ? Math.min(at, Math.max(this.slowUntil, this.holdUntil)) : at;
  }

  /** A write of the bucket starts at `now` (clock ms): it is under way, and the next start is spaced from it. */
  start(now: number): void {
    this.inFlight += 1;
    this.lastStart = now;
  }

  /**
   * A write of the bucket completed at `at` (clock ms; completions come in clock order): it
   * counts in the window from then on.
   * @returns the keys parked on the bucket (a place under way freed: they are looked at again), no longer parked.
   */
  complete(at: number): string[] {
    this.inFlight -= 1;
    this.sent.push(at);
    return this.unpark();
  }

  /** Parks a pending write's key until a write of the bucket completes ({@link complete} returns it). */
  park(key: string): void {
    this.parked.add(key);
  }

  /** @returns the keys parked on the bucket, no longer parked (when it completes a write, or is forgotten). */
  unpark(): string[] {
    const keys = [...this.parked];
    this.parked.clear();
    return keys;
  }

  /**
   * What the platform reported (rate-limit headers) at `now` (clock ms): with nothing
   * `remaining`, no write before `now + resetAfterMs`; a different positive `limit` replaces
   * the budget's.
   * @returns whether the budget changed (pending writes may run sooner or later).
   */
  observe(now: number, report: BucketReport): boolean {
    let changed = false;
    if (report.limit !== undefined && report.limit > 0 && report.limit !== this.budget.limit) {
      this.budget = { ...this.budget, limit: report.limit };
      changed = true;
    }
    if (report.remaining <= 0) this.hold(now, report.resetAfterMs);
    return changed;
  }

  /**
   * The platform refused a write at `now` (a 429): no write before `now + retryAfterMs` (at most
   * {@link MAX_HOLD_MS} later: a longer wait is the bucket's named wait), and, given `slowForMs`,
   * half the budget until `now + slowForMs` (without it, a slow-down under way is left as it
   * is). All in ms.
   */
  rateLimited(now: number, retryAfterMs: number, slowForMs?: number): void {
    this.hold(now, retryAfterMs);
    if (slowForMs !== undefined) this.slowUntil = now + slowForMs;
  }

  /**
   * The wait named beyond {@link MAX_HOLD_MS} that still runs at `now` (clock ms): how long the
   * platform asked for, in ms; 0 when none (none named, it ran out, or a write was accepted since).
   */
  namedWaitMs(now: number): number {
    return this.named && this.named.until > now ? this.named.ms : 0;
  }

  /**
   * A write of the bucket that started at `startedAt` (clock ms) was accepted: a named wait older
   * than that start is over (the platform takes writes again). A write under way when the wait
   * was named leaves it (its answer may be what named it).
   */
  accepted(startedAt: number): void {
    if (this.named && this.named.at <= startedAt) this.named = undefined;
  }

  /** Holds the bucket `ms` from `now` (at most {@link MAX_HOLD_MS}); a longer wait is kept as the named wait. */
  private hold(now: number, ms: number): void {
    this.holdUntil = Math.max(this.holdUntil, now + Math.min(ms, MAX_HOLD_MS));
    if (ms > MAX_HOLD_MS && now + ms > (this.named?.until ?? 0)) this.named = { ms, at: now, until: now + ms };
  }

  /** Whether the bucket has nothing to remember at `now` (clock ms): no write in its window or under way, not held, not slowed, no named wait. */
  isIdle(now: number): boolean {
    const quiet = this.inFlight === 0 && (this.sent.at(-1) ?? Number.NEGATIVE_INFINITY) <= now - this.budget.windowMs;
    return quiet && this.holdUntil <= now && this.slowUntil <= now && this.namedWaitMs(now) === 0;
  }
}
