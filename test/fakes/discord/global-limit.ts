/**
 * Discord's global rate limit as the fake applies it: at most `globalRateLimit.limit` (50)
 * requests made with the bot token (`Authorization: Bot …`) in any `windowMs` (1 s, a sliding
 * window over the requests accepted), whatever their route; interaction callbacks and webhook
 * routes (`/interactions/…`, `/webhooks/…`) are exempt, as Discord's documentation says
 * ("Interaction endpoints are not bound to the bot's Global Rate Limit"). Over it: 429 with
 * `global: true` in the body, `X-RateLimit-Global: true`, `X-RateLimit-Scope: global` and
 * `Retry-After` (whole seconds), recorded in `rateLimits` with bucket `global`.
 */
import { HttpError } from './errors.ts';
import type { FakeState } from './state.ts';
import type { FakeRequestRecord, RateLimitRecord } from './types.ts';

/** Whether a request counts in the bot token's global budget. */
export function countsGlobally(record: Pick<FakeRequestRecord, 'headers' | 'path'>): boolean {
  const auth = record.headers.authorization;
  return typeof auth === 'string' && auth.startsWith('Bot ') && !/\/(interactions|webhooks)\//.test(record.path);
}

/** The bot token's requests in the current window. */
export class GlobalLimit {
  private readonly accepted: number[] = [];

  constructor(private readonly state: FakeState) {}

  /**
   * Counts a request, or refuses it.
   * @throws HttpError 429 (global) when the window is full.
   */
  take(record: FakeRequestRecord): void {
    if (!countsGlobally(record)) return;
    const { limit, windowMs } = this.state.options.globalRateLimit;
    const now = Date.now();
    while (this.accepted.length && this.accepted[0]! <= now - windowMs) this.accepted.shift();
    if (this.accepted.length < limit) {
      this.accepted.push(now);
      return;
    }
    const retryAfterMs = this.accepted[0]! + windowMs - now;
    const limited: RateLimitRecord = {
      at: now,
      channelId: '',
      method: record.method,
      path: record.path,
      retryAfterMs,
      bucket: 'global',
    };
    this.state.rateLimits.push(limited);
    this.state.events.emit('rateLimited', limited);
    throw new HttpError(
      429,
      { message: 'You are being rate limited.', retry_after: Number((retryAfterMs / 1000).toFixed(3)), global: true },
      {
        'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))),
        'x-ratelimit-global': 'true',
        'x-ratelimit-scope': 'global',
      },
    );
  }
}
