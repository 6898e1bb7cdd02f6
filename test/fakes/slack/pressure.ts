/**
 * Scripted 429s of Slack's Web API, beyond the windows limits.ts keeps: Slack may limit any call
 * (issue 22: a `chat.postMessage` in one channel answered `Retry-After: 3600`; a `chat.update`
 * answered `ratelimited` twice in a row). A script serves the next `count` calls of its method
 * that it matches (in the order scripts were added), whatever the windows say: HTTP 429,
 * `Retry-After: retryAfterSec` and `{ ok: false, error: 'ratelimited' }` (web-api.ts).
 */
import { type Json, RateLimited, str } from './wire.ts';

/** Which calls of a method a script answers 429. */
export interface RateLimitScope {
  /** Only calls in this channel (their `channel`, or `channel_id`, parameter). */
  channel?: string;
  /** Only calls whose parameters (as received: nested values are JSON strings) it accepts. */
  when?: (params: Json) => boolean;
}

interface Script extends RateLimitScope {
  method: string;
  retryAfterSec: number;
  left: number;
}

/** The scripted 429s not used up yet. */
export class ScriptedRateLimits {
  private readonly scripts: Script[] = [];

  /** The next `count` calls of `method` in `scope` (Infinity: every one) are answered 429 with `Retry-After: retryAfterSec`. */
  add(method: string, count: number, retryAfterSec: number, scope: RateLimitScope = {}): void {
    this.scripts.push({ method, retryAfterSec, left: count, ...scope });
  }

  /** Uses one serving of the first script matching the call, if any. @throws RateLimited. */
  take(method: string, params: Json): void {
    const index = this.scripts.findIndex(
      (s) =>
        s.method === method &&
        (s.channel === undefined || (str(params, 'channel') ?? str(params, 'channel_id')) === s.channel) &&
        (s.when?.(params) ?? true),
    );
    if (index < 0) return;
    const script = this.scripts[index]!;
    script.left -= 1;
    if (script.left <= 0) this.scripts.splice(index, 1);
    throw new RateLimited(script.retryAfterSec);
  }

  /** Forgets every script. */
  clear(): void {
    this.scripts.length = 0;
  }
}
