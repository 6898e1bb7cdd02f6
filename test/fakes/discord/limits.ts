/**
 * The per-channel message budget: every create and edit of a message in a channel (bot token,
 * webhook or interaction token alike) counts against `limit` writes per `windowMs`, the window
 * starting with its first write. Over it, 429 with `retry-after` and `x-ratelimit-*` headers,
 * which discord.js waits out and retries; accepted writes report the same budget in theirs.
 */
import { createHash } from 'node:crypto';
import { HttpError } from './errors.ts';
import type { FakeState } from './state.ts';
import type { MessageBudget, RateLimitRecord } from './types.ts';

export class MessageBudgets {
  private readonly windows = new Map<string, { resetAt: number; used: number }>();
  private readonly budgets = new Map<string, MessageBudget>();

  constructor(private readonly state: FakeState) {}

  /** Sets the budget of one channel (or the default for all, when `channelId` is undefined); restarts its window(s). */
  set(channelId: string | undefined, budget: MessageBudget): void {
    if (channelId === undefined) this.state.options.messageBudget = budget;
    else this.budgets.set(channelId, budget);
    if (channelId !== undefined) this.windows.delete(channelId);
    else this.windows.clear();
  }

  /**
   * Throws the 429 when the channel's budget is spent (and records it in `rateLimits`).
   * @throws HttpError 429 with `retry-after` (whole seconds) and `x-ratelimit-*` headers.
   */
  check(channelId: string, method: string, path: string): void {
    const { limit, windowMs } = this.budgetOf(channelId);
    const now = Date.now();
    let window = this.windows.get(channelId);
    if (!window || now >= window.resetAt) {
      window = { resetAt: now + windowMs, used: 0 };
      this.windows.set(channelId, window);
    }
    if (window.used < limit) return;
    const retryAfterMs = window.resetAt - now;
    const record: RateLimitRecord = { at: now, channelId, method, path, retryAfterMs };
    this.state.rateLimits.push(record);
    this.state.events.emit('rateLimited', record);
    throw new HttpError(
      429,
      { message: 'You are being rate limited.', retry_after: Number((retryAfterMs / 1000).toFixed(3)), global: false },
      { ...this.bucketHeaders(limit, 0, window.resetAt, now), 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))), 'x-ratelimit-scope': 'user' },
    );
  }

  /** Uses one write of the channel's budget (after {@link check}); returns the headers of the accepted answer. */
  spend(channelId: string): Record<string, string> {
    const { limit } = this.budgetOf(channelId);
    const window = this.windows.get(channelId)!;
    window.used += 1;
    return this.bucketHeaders(limit, Math.max(0, limit - window.used), window.resetAt, Date.now());
  }

  private budgetOf(channelId: string): MessageBudget {
    return this.budgets.get(channelId) ?? this.state.options.messageBudget;
  }

  private bucketHeaders(limit: number, remaining: number, resetAt: number, now: number): Record<string, string> {
    return {
      'x-ratelimit-bucket': createHash('sha1').update(`message-writes:${this.state.applicationId}`).digest('hex').slice(0, 32),
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': (resetAt / 1000).toFixed(3),
      'x-ratelimit-reset-after': (Math.max(0, resetAt - now) / 1000).toFixed(3),
    };
  }
}
