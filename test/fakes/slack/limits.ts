/**
 * Slack's rate limits as the fake applies them (shared/PLATFORM-LIMITS.md): `chat.update` at
 * most 50 calls per 60 s per workspace (tier 3, a sliding window), `chat.postMessage` about 1 a
 * second per channel with a burst of 3 (a token bucket), and scripted one-shot 429s for any
 * method. A limited call is answered HTTP 429 with `Retry-After` in whole seconds.
 */
import type { RateLimitRules } from './types.ts';
import { RateLimited } from './wire.ts';

export const DEFAULT_RATE_LIMITS: RateLimitRules = {
  chatUpdate: { limit: 50, windowMs: 60_000 },
  postMessage: { perSecond: 1, burst: 3 },
};

/** The rate-limit state of one workspace, on the Slack-side clock `now`. */
export class RateLimiter {
  private rules: RateLimitRules;
  private readonly updateCalls: number[] = [];
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly scripted: Array<{ method: string; retryAfterSec: number }> = [];

  constructor(
    rules: Partial<RateLimitRules> | undefined,
    private readonly now: () => number,
  ) {
    this.rules = { ...DEFAULT_RATE_LIMITS, ...rules };
  }

  /** Changes the rules from now on (partial: the rest stays) and forgets the windows. */
  setRules(rules: Partial<RateLimitRules>): void {
    this.rules = { ...this.rules, ...rules };
    this.updateCalls.length = 0;
    this.buckets.clear();
  }

  /** The next `count` calls of `method` are answered 429 with `Retry-After: retryAfterSec`. */
  script(method: string, count: number, retryAfterSec: number): void {
    for (let i = 0; i < count; i++) this.scripted.push({ method, retryAfterSec });
  }

  /** Consumes a scripted 429 of `method`, if any. @throws RateLimited. */
  takeScripted(method: string): void {
    const index = this.scripted.findIndex((l) => l.method === method);
    if (index >= 0) throw new RateLimited(this.scripted.splice(index, 1)[0]!.retryAfterSec);
  }

  /** A token bucket per channel for chat.postMessage. @throws RateLimited. */
  takePostToken(channel: string): void {
    const { perSecond, burst } = this.rules.postMessage;
    const now = this.now();
    const bucket = this.buckets.get(channel) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    this.buckets.set(channel, bucket);
    if (bucket.tokens < 1) throw new RateLimited(Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)));
    bucket.tokens -= 1;
  }

  /** A sliding window for chat.update per workspace. @throws RateLimited. */
  takeUpdateSlot(): void {
    const { limit, windowMs } = this.rules.chatUpdate;
    const now = this.now();
    while (this.updateCalls.length > 0 && this.updateCalls[0]! <= now - windowMs) this.updateCalls.shift();
    if (this.updateCalls.length >= limit) {
      throw new RateLimited(Math.max(1, Math.ceil((this.updateCalls[0]! + windowMs - now) / 1000)));
    }
    this.updateCalls.push(now);
  }

  /** Forgets windows, buckets and scripted limits (the rules stay). */
  reset(): void {
    this.updateCalls.length = 0;
    this.buckets.clear();
    this.scripted.length = 0;
  }
}
