/**
 * Scripted rate-limit pressure on Discord's message writes, beyond what the budgets of
 * limits.ts answer: Discord naming a long wait (a 429 whose `retry_after` is an hour, or an
 * accepted write whose `X-RateLimit-*` headers announce a reset an hour away), on one channel or
 * on the bot token's global limit. Each script serves the next `times` matching requests, in the
 * order scripts were added, then is gone; Discord's answers are as it sends them:
 *
 * - `refuse` on a channel: every message write there (create or edit; bot token and interaction
 *   webhook alike) is answered 429 with `retry_after` in the body, `Retry-After` (whole seconds),
 *   `X-RateLimit-Limit`, `-Remaining: 0`, `-Reset-After` (the same wait), `-Bucket` and
 *   `-Scope` (`user`, or `shared` for a per-resource limit); recorded in `rateLimits`;
 * - `announce` on a channel: the write is accepted, and its answer says `X-RateLimit-Remaining:
 *   0` and `X-RateLimit-Reset-After: afterSec`;
 * - `global`: the next requests made with the bot token (any route but interaction callbacks and
 *   webhooks, which Discord exempts) are answered 429 with `global: true`,
 *   `X-RateLimit-Global: true` and `X-RateLimit-Scope: global`.
 */
import { createHash } from 'node:crypto';
import { HttpError } from './errors.ts';
import { countsGlobally } from './global-limit.ts';
import type { FakeRequestRecord, RateLimitRecord } from './types.ts';

/** A long wait Discord names on a channel's message writes (see the file's comment). */
export interface ChannelPressure {
  channelId: string;
  /** `refuse`: a 429; `announce`: accepted, with headers saying nothing remains until the reset. */
  kind: 'refuse' | 'announce';
  /** The wait named, in seconds (`retry_after` / `X-RateLimit-Reset-After`). */
  afterSec: number;
  /** How many writes it serves. Default 1. */
  times?: number;
  /** `X-RateLimit-Scope` of a refusal. Default `user`. */
  scope?: 'user' | 'shared';
}

/** A global 429 of the bot token's requests (see the file's comment). */
export interface GlobalPressure {
  /** The wait named, in seconds. */
  afterSec: number;
  /** How many requests it serves. Default 1. */
  times?: number;
}

type Script = ({ kind: 'refuse' | 'announce'; channelId: string; scope: 'user' | 'shared' } | { kind: 'global' }) & {
  afterSec: number;
  left: number;
};

/** The scripts not used up yet, and the answers they make. */
export class RatePressure {
  private readonly scripts: Script[] = [];

  /** @param record where a 429 served is recorded (the fake's `rateLimits`, and its event). */
  constructor(private readonly record: (limited: RateLimitRecord) => void) {}

  /** Adds a script on a channel's writes. */
  onChannel(pressure: ChannelPressure): void {
    const { channelId, kind, afterSec, times = 1, scope = 'user' } = pressure;
    this.scripts.push({ kind, channelId, scope, afterSec, left: times });
  }

  /** Adds a global 429 script. */
  onGlobal(pressure: GlobalPressure): void {
    this.scripts.push({ kind: 'global', afterSec: pressure.afterSec, left: pressure.times ?? 1 });
  }

  /** Drops every script not used up yet. */
  clear(): void {
    this.scripts.length = 0;
  }

  /**
   * Refuses a bot-token request when a global script is left. @throws HttpError 429 (global).
   */
  global(request: Pick<FakeRequestRecord, 'headers' | 'path' | 'method'>): void {
    if (!countsGlobally(request)) return;
    const script = this.take((s) => s.kind === 'global');
    if (!script) return;
    this.record({
      at: Date.now(),
      channelId: '',
      method: request.method,
      path: request.path,
      retryAfterMs: script.afterSec * 1000,
      bucket: 'global',
    });
    throw new HttpError(
      429,
      { message: 'You are being rate limited.', retry_after: script.afterSec, global: true },
      { 'retry-after': String(script.afterSec), 'x-ratelimit-global': 'true', 'x-ratelimit-scope': 'global' },
    );
  }

  /**
   * Refuses a message write in `channelId` when a `refuse` script of it is left.
   * @param bucket the budget the write counts against (for the record).
   * @throws HttpError 429 with the headers of the file's comment.
   */
  refusal(channelId: string, method: string, path: string, bucket: RateLimitRecord['bucket']): void {
    const script = this.take((s) => s.kind === 'refuse' && s.channelId === channelId);
    if (script?.kind !== 'refuse') return;
    this.record({ at: Date.now(), channelId, method, path, retryAfterMs: script.afterSec * 1000, bucket });
    throw new HttpError(
      429,
      { message: 'You are being rate limited.', retry_after: script.afterSec, global: false },
      {
        ...this.headers(channelId, script.afterSec),
        'retry-after': String(script.afterSec),
        'x-ratelimit-scope': script.scope,
      },
    );
  }

  /**
   * The headers of an accepted write in `channelId` when an `announce` script of it is left
   * (nothing remaining until a reset `afterSec` away), else undefined.
   */
  announcement(channelId: string): Record<string, string> | undefined {
    const script = this.take((s) => s.kind === 'announce' && s.channelId === channelId);
    return script ? this.headers(channelId, script.afterSec) : undefined;
  }

  /** Uses one serving of the first script `match` accepts. */
  private take(match: (script: Script) => boolean): Script | undefined {
    const index = this.scripts.findIndex(match);
    if (index < 0) return undefined;
    const script = this.scripts[index]!;
    script.left -= 1;
    if (script.left <= 0) this.scripts.splice(index, 1);
    return script;
  }

  private headers(channelId: string, afterSec: number): Record<string, string> {
    return {
      'x-ratelimit-bucket': createHash('sha1').update(`pressure:${channelId}`).digest('hex').slice(0, 32),
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': (Date.now() / 1000 + afterSec).toFixed(3),
      'x-ratelimit-reset-after': afterSec.toFixed(3),
    };
  }
}
