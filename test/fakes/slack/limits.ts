/**
 * Slack's rate limits as the fake applies them (docs/platform-limits.md): `chat.update` at
 * most 50 calls per 60 s per workspace (tier 3, a sliding window), `chat.postMessage` and
 * `chat.postEphemeral` together about 1 a second per channel with a burst of 3 (a token bucket), the streaming methods per workspace
 * (`chat.startStream` / `chat.stopStream` tier 2: 20 per 60 s; `chat.appendStream` tier 4: 100
 * per 60 s; docs.slack.dev method pages), `users.info` (tier 4: 100 per 60 s) and `users.list` (tier
 * 2: 20 per 60 s) per workspace, and scripted 429s of any method (pressure.ts). A
 * limited call is answered HTTP 429 with `Retry-After` in whole seconds.
 */
import { type RateLimitScope, ScriptedRateLimits } from './pressure.ts';
import type { RateLimitRules } from './types.ts';
import { type Json, RateLimited } from './wire.ts';

export const DEFAULT_RATE_LIMITS: RateLimitRules = {
  chatUpdate: { limit: 50, windowMs: 60_000 },
  postMessage: { perSecond: 1, burst: 3 },
  startStream: { limit: 20, windowMs: 60_000 },
  appendStream: { limit: 100, windowMs: 60_000 },
  stopStream: { limit: 20, windowMs: 60_000 },
  usersInfo: { limit: 100, windowMs: 60_000 },
  usersList: { limit: 20, windowMs: 60_000 },
};

/** The rules that are sliding windows per workspace. */
export type WindowRule = 'chatUpdate' | 'startStream' | 'appendStream' | 'stopStream' | 'usersInfo' | 'usersList';

/** The rate-limit state of one workspace, on the Slack-side clock `now`. */
export class RateLimiter {
  private rules: RateLimitRules;
  /** Times of the calls in each sliding window. */
  private readonly windows = new Map<WindowRule, number[]>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly scripted = new ScriptedRateLimits();

  constructor(
    rules: Partial<RateLimitRules> | undefined,
    private readonly now: () => number,
  ) {
    this.rules = { ...DEFAULT_RATE_LIMITS, ...rules };
  }

  /** Changes the rules from now on (partial: the rest stays) and forgets the windows. */
  setRules(rules: Partial<RateLimitRules>): void {
    this.rules = { ...this.rules, ...rules };
    this.windows.clear();
    this.buckets.clear();
  }

  /** The next `count` calls of `method` in `scope` are answered 429 with `Retry-After: retryAfterSec` (pressure.ts). */
  script(method: string, count: number, retryAfterSec: number, scope?: RateLimitScope): void {
    this.scripted.add(method, count, retryAfterSec, scope);
  }

  /** Drops the scripted 429s not used up yet. */
  clearScripts(): void {
    this.scripted.clear();
  }

  /** Consumes a scripted 429 of the call, if any. @throws RateLimited. */
  takeScripted(method: string, params: Json): void {
    this.scripted.take(method, params);
  }

  /** A token bucket per channel for chat.postMessage and chat.postEphemeral. @throws RateLimited. */
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
    this.takeWindowSlot('chatUpdate');
  }

  /** A sliding window per workspace for `rule` (at most `limit` calls in any `windowMs`). @throws RateLimited. */
  takeWindowSlot(rule: WindowRule): void {
    const { limit, windowMs } = this.rules[rule];
    const now = this.now();
    const calls = this.windows.get(rule) ?? [];
    this.windows.set(rule, calls);
    while (calls.length > 0 && calls[0]! <= now - windowMs) calls.shift();
    if (calls.length >= limit) {
      throw new RateLimited(Math.max(1, Math.ceil((calls[0]! + windowMs - now) / 1000)));
    }
    calls.push(now);
  }

  /** Forgets windows, buckets and scripted limits (the rules stay). */
  reset(): void {
    this.windows.clear();
    this.buckets.clear();
    this.scripted.clear();
  }
}
