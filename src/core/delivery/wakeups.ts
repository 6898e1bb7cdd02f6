/**
 * The write scheduler's wake-ups (scheduler.ts): when each pending write that may not run yet
 * is to be looked at again, earliest first, and the one timer (on the scheduler's clock) that
 * wakes the scheduler for the earliest of them.
 */
import TinyQueue from 'tinyqueue';
import type { Clock } from './clock.ts';

/** A pending write to look at again at `at` (clock ms), if it is still the one numbered `seq`. */
export interface Wakeup {
  at: number;
  key: string;
  seq: number;
}

/** The wake-up queue and its timer. Never throws. */
export class Wakeups {
  private readonly queue = new TinyQueue<Wakeup>([], (a, b) => a.at - b.at);
  private serial = 0;
  /** When the armed timer is due (clock ms); `Infinity` when none is. */
  private timerAt = Number.POSITIVE_INFINITY;
  /** The number of the latest timer armed: an earlier one that fires does nothing. */
  private generation = 0;

  /**
   * @param clock the scheduler's clock (its `sleep` is the timer).
   * @param onWake called when the earliest wake-up is due (the scheduler's pump).
   */
  constructor(
    private readonly clock: Clock,
    private readonly onWake: () => void,
  ) {}

  /** A new number for a pending write's latest wake-up: entries queued with an older number are stale. */
  nextSeq(): number {
    return ++this.serial;
  }

  /** Queues a wake-up of `key` at `at` (clock ms), numbered `seq` (from {@link nextSeq}). */
  add(at: number, key: string, seq: number): void {
    this.queue.push({ at, key, seq });
  }

  /** Takes every wake-up due at `now` (clock ms) out of the queue, earliest first (stale ones included: the caller checks `seq`). */
  takeDue(now: number): Wakeup[] {
    const due: Wakeup[] = [];
    for (let top = this.queue.peek(); top && top.at <= now; top = this.queue.peek()) due.push(this.queue.pop()!);
    return due;
  }

  /** Arms the timer for the earliest wake-up queued, unless one as early is armed already (a later arm makes earlier timers stale). */
  arm(): void {
    const at = this.queue.peek()?.at ?? Number.POSITIVE_INFINITY;
    if (!Number.isFinite(at) || at >= this.timerAt) return;
    this.timerAt = at;
    const generation = ++this.generation;
    void this.clock.sleep(Math.max(0, at - this.clock.now())).then(() => {
      if (generation !== this.generation) return;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.onWake();
    });
  }
}
