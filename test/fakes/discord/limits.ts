/**
 * The fake's rate limits on message writes, in one of two modes (`rateLimitMode`):
 *
 * - `shared` (the default; the long-standing community figure): one hidden budget per channel,
 *   `messageBudget` (5 per 5 s), spent by every create and edit in the channel, bot token,
 *   interaction webhook token alike;
 * - `documented` (what Discord's documentation describes: buckets per route and top-level
 *   resource): per interaction token a bucket of `webhookBudget` (5 per 2 s) for its webhook
 *   routes (follow-ups, edits of the original and of follow-ups), and per channel a bucket of
 *   `messageBudget` (5 per 5 s) for bot-token creates and edits; the two never mix.
 *
 * A window starts with its bucket's first write. Every answer of a counted write carries the
 * bucket's `x-ratelimit-bucket` (a hash per kind of bucket, the same for every token or channel
 * of that kind, as Discord's route hashes are), `-limit`, `-remaining`, `-reset` (epoch
 * seconds) and `-reset-after` (seconds); over the budget, 429 with `retry-after` (whole
 * seconds, rounded up), `x-ratelimit-scope: user` and Discord's body, which discord.js waits
 * out and retries. Interaction callbacks are not counted, as on Discord. Long waits scripted by a
 * test (a 429 naming an hour, headers announcing a reset an hour away) come from pressure.ts.
 */
import { createHash } from 'node:crypto';
import { HttpError } from './errors.ts';
import type { FakeState } from './state.ts';
import type { MessageBudget, RateLimitMode, RateLimitRecord } from './types.ts';

/** The bucket a write counts against. */
interface Bucket {
  /** Window key: `channel:<id>` or `webhook:<token>`. */
  key: string;
  kind: RateLimitRecord['bucket'];
  budget: MessageBudget;
}

export class MessageBudgets {
  private readonly windows = new Map<string, { resetAt: number; used: number }>();
  private readonly budgets = new Map<string, MessageBudget>();

  constructor(private readonly state: FakeState) {}

  /** Sets the budget of one channel (or the default for all, when `channelId` is undefined); restarts its window(s). */
  set(channelId: string | undefined, budget: MessageBudget): void {
    if (channelId === undefined) this.state.options.messageBudget = budget;
    else this.budgets.set(channelId, budget);
    if (channelId !== undefined) this.windows.delete(`channel:${channelId}`);
    else this.windows.clear();
  }

  /** Switches the mode (see the file's comment); every window starts afresh. */
  setMode(mode: RateLimitMode): void {
    this.state.options.rateLimitMode = mode;
    this.windows.clear();
  }

  /**
   * Throws the 429 when the write's bucket is spent (and records it in `rateLimits`).
   * @param channelId the channel the write lands in.
   * @param token the interaction token of a write through an interaction webhook; undefined for the bot token.
   * @throws HttpError 429 with `retry-after` (whole seconds), `x-ratelimit-scope: user` and `x-ratelimit-*` headers.
   */
  check(channelId: string, method: string, path: string, token?: string): void {
    const bucket = this.bucketOf(channelId, token);
    this.state.pressure.refusal(channelId, method, path, bucket.kind);
    const now = Date.now();
    const window = this.windowOf(bucket, now);
    if (window.used < bucket.budget.limit) return;
    const retryAfterMs = window.resetAt - now;
    const record: RateLimitRecord = { at: now, channelId, method, path, retryAfterMs, bucket: bucket.kind };
    this.state.rateLimits.push(record);
    this.state.events.emit('rateLimited', record);
    throw new HttpError(
      429,
      { message: 'You are being rate limited.', retry_after: Number((retryAfterMs / 1000).toFixed(3)), global: false },
      {
        ...this.headers(bucket, 0, window.resetAt, now),
        'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))),
        'x-ratelimit-scope': 'user',
      },
    );
  }

  /**
   * Uses one write of the bucket (after {@link check}, with the same arguments).
   * @returns the `x-ratelimit-*` headers of the accepted answer.
   */
  spend(channelId: string, token?: string): Record<string, string> {
    const bucket = this.bucketOf(channelId, token);
    const now = Date.now();
    // If the window ran out while the body was checked, the write opens the next one.
    const window = this.windowOf(bucket, now);
    window.used += 1;
    const announced = this.state.pressure.announcement(channelId);
    return announced ?? this.headers(bucket, Math.max(0, bucket.budget.limit - window.used), window.resetAt, now);
  }

  /** The bucket's current window (a new one once the last has reset). */
  private windowOf(bucket: Bucket, now: number): { resetAt: number; used: number } {
    let window = this.windows.get(bucket.key);
    if (!window || now >= window.resetAt) {
      window = { resetAt: now + bucket.budget.windowMs, used: 0 };
      this.windows.set(bucket.key, window);
    }
    return window;
  }

  private bucketOf(channelId: string, token: string | undefined): Bucket {
    const { options } = this.state;
    if (options.rateLimitMode === 'documented' && token !== undefined)
      return { key: `webhook:${token}`, kind: 'webhook', budget: options.webhookBudget };
    const budget = this.budgets.get(channelId) ?? options.messageBudget;
    return { key: `channel:${channelId}`, kind: options.rateLimitMode === 'documented' ? 'channel' : 'shared', budget };
  }

  private headers(bucket: Bucket, remaining: number, resetAt: number, now: number): Record<string, string> {
    // Shared mode keeps the one hash it always had; documented mode has one per kind of route.
    const name =
      bucket.kind === 'shared' ? 'message-writes' : bucket.kind === 'webhook' ? 'webhook-messages' : 'channel-messages';
    return {
      'x-ratelimit-bucket': createHash('sha1').update(`${name}:${this.state.applicationId}`).digest('hex').slice(0, 32),
      'x-ratelimit-limit': String(bucket.budget.limit),
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': (resetAt / 1000).toFixed(3),
      'x-ratelimit-reset-after': (Math.max(0, resetAt - now) / 1000).toFixed(3),
    };
  }
}
