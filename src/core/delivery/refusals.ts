/**
 * Writes a platform refused for its rate limit (a 429), in the write scheduler (scheduler.ts):
 * such a write is not a failure of its answer but a wait the platform asked for, so it goes
 * again once that wait has passed (at most {@link MAX_HOLD_MS}: bucket.ts), up to
 * {@link RATE_LIMIT_RETRIES} times; only then does its error reach whoever submitted it
 * (docs/platform-limits.md, "Long waits"). Adapters say which errors are such refusals
 * (`WriteScheduler.retryRateLimited`): the core knows no platform's errors.
 */
import { MAX_HOLD_MS } from './bucket.ts';
import type { Pending } from './write-request.ts';

/** How many times one write refused for the platform's rate limit goes again before its error is thrown. */
export const RATE_LIMIT_RETRIES = 3;

/**
 * Tells a refusal for the platform's rate limit from any other error: the wait the platform
 * named, in ms (0 when it named none), or undefined for another error.
 */
export type RateLimitWaitOf = (error: unknown) => number | undefined;

/** The adapters' ways of telling rate-limit refusals, and when a refused write goes again. Never throws. */
export class RateLimitRetries {
  private readonly waits: RateLimitWaitOf[] = [];

  /** Adds an adapter's way of telling its platform's rate-limit refusals. */
  recognize(waitOf: RateLimitWaitOf): void {
    this.waits.push(waitOf);
  }

  /** The wait a rate-limit refusal named, in ms, or undefined when `error` is not one. */
  waitOf(error: unknown): number | undefined {
    for (const waitOf of this.waits) {
      const ms = waitOf(error);
      if (ms !== undefined) return Math.max(0, ms);
    }
    return undefined;
  }

  /**
   * When a write that failed at `now` (clock ms) goes again: after the wait its refusal named (at
   * most MAX_HOLD_MS, at least a second when it named none), or undefined when it fails for good
   * (another error, or refused {@link RATE_LIMIT_RETRIES} times already).
   */
  retryAt(pending: Pending, error: unknown, now: number): number | undefined {
    const ms = this.waitOf(error);
    if (ms === undefined || (pending.retries ?? 0) >= RATE_LIMIT_RETRIES) return undefined;
    return now + Math.min(Math.max(ms, 1000), MAX_HOLD_MS);
  }
}
