/**
 * Per-user quotas, off by default, enforced across every instance through the state store's
 * atomic counters: chat requests a minute (`QUOTA_CHAT_PER_MINUTE`: /chat, /complete,
 * mentions), images a day (`QUOTA_IMAGES_PER_DAY`: /imagine) and tokens a day
 * (`QUOTA_TOKENS_PER_DAY`: prompt + completion, from the service's `usage` or estimated).
 * Each window starts with the first use and rolls over when it expires. Admins are exempt
 * unless `QUOTA_ADMINS=true`. Use is also counted per channel (never enforced) for /usage.
 *
 * Quotas hold under parallel requests: each admission is one atomic increment that is undone
 * when it went past the limit (requests, images), and a chat request reserves its estimated
 * tokens (prompt + `max_tokens`) with one atomic increment before it runs, admitted only while
 * the day's count before it is under the limit, and settles the reservation with the real count
 * after ({@link TokenReservation}). So parallel requests together go past the tokens a day by at
 * most one request's reservation; a generation that fails gives its image back.
 *
 * A store that does not answer lets requests through (logged): quotas never stop the bot.
 *
 * Counts that nothing waits for (use where no limit holds, per channel, tokens) are added up in
 * memory and written together every {@link COUNT_FLUSH_MS}: four of the six store queries of a
 * /chat were such counts, and a burst of commands queued its own history reads behind them
 * (bench:streams: batching brings the first text sooner; written every 2 s, the batch landed
 * among the first texts). This process's reads add what it has not written yet; other
 * instances see it at most that much later; a clean stop writes it.
 */

import type { Logger } from '../../log.ts';
import { InputError } from '../errors.ts';
import { type Sentence, sentence } from '../i18n/words.ts';
import { storeKeys } from '../keys.ts';
import type { InvocationUser } from '../platform.ts';
import { CountBatch } from './count-batch.ts';
import type { StateStore } from './store.ts';
import { StoredReservation, type TokenReservation } from './token-reservation.ts';
import { waitIn } from './waits.ts';

export type { TokenReservation } from './token-reservation.ts';

/** Limits per user; 0 turns one off. */
export interface QuotaLimits {
  chatPerMinute: number;
  imagesPerDay: number;
  tokensPerDay: number;
  /** Whether admins are held to the quotas too. */
  admins: boolean;
}

/** No quotas. */
export const NO_QUOTAS: QuotaLimits = { chatPerMinute: 0, imagesPerDay: 0, tokensPerDay: 0, admins: false };

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export { COUNT_FLUSH_MS } from './count-batch.ts';

/** A quota that is used up; its sentence says which, and when the user may try again. Code `quota_exceeded`. */
export class QuotaError extends InputError {
  override readonly code = 'quota_exceeded';

  /**
   * @param said the sentence for the user (`errors.quota.*`, `errors.spend.cap_reached`, /export's limit).
   * @param retryInMs when the user may try again, in ms.
   */
  constructor(
    said: Sentence,
    readonly retryInMs: number,
  ) {
    super(said);
  }
}

export { waitIn } from './waits.ts';

/** One counter as /usage shows it. */
export interface UsageLine {
  used: number;
  /** 0: no limit. */
  limit: number;
  /** The counter's window. */
  window: 'minute' | 'day';
  /** ms until the window rolls over (0 when nothing was used). */
  resetInMs: number;
}

/** A user's (or a channel's) use: chat requests, images, tokens. */
export interface UsageReport {
  chat: UsageLine;
  images: UsageLine;
  tokens: UsageLine;
}

/** Quotas on one store. */
export class Quotas {
  private readonly minuteMs: number;
  private readonly dayMs: number;
  /** Counts nothing waits for, written together every {@link COUNT_FLUSH_MS}. */
  private readonly batch: CountBatch;

  /** The limits in force: set at start, and by a configuration reload ({@link reconfigure}). */
  private current: QuotaLimits;

  /** @param windows the windows' lengths in ms (default a minute and a day; tests shorten them). */
  constructor(
    private readonly state: StateStore,
    limits: QuotaLimits,
    private readonly log: Logger,
    windows: { minuteMs?: number; dayMs?: number } = {},
  ) {
    this.current = { ...limits };
    this.minuteMs = windows.minuteMs ?? MINUTE_MS;
    this.dayMs = windows.dayMs ?? DAY_MS;
    this.batch = new CountBatch(state, log);
  }

  /** The limits in force, read at each admission. */
  get limits(): QuotaLimits {
    return this.current;
  }

  /**
   * The limits from now on (a configuration reload). Counts are kept: a lowered limit refuses
   * the next request of a user already past it, a raised one lets it through.
   */
  reconfigure(limits: QuotaLimits): void {
    this.current = { ...limits };
  }

  /**
   * Writes the counts not written yet. Runs every {@link COUNT_FLUSH_MS} while there are some,
   * and must run before the store closes (closeCore does). Never throws.
   */
  flush(): Promise<void> {
    return this.batch.flush();
  }

  /** Whether any quota is on. */
  get enabled(): boolean {
    return this.limits.chatPerMinute > 0 || this.limits.imagesPerDay > 0 || this.limits.tokensPerDay > 0;
  }

  /**
   * Lets one request of `kind` through for `user`, counting it, or refuses it. A chat request
   * is also refused once the day's tokens are used up (what it will cost is reserved by
   * {@link reserveTokens}).
   * @param subject `<platform>:<user id>`.
   * @returns gives the count back (an image that was not generated); a no-op where nothing was counted in the store.
   * @throws QuotaError naming the quota and the wait.
   */
  async admit(
    kind: 'chat' | 'image',
    subject: string,
    user: InvocationUser,
    channelKey: string,
  ): Promise<() => Promise<void>> {
    const none = async () => undefined;
    // Counting alone is buffered (count() neither waits for the store nor throws): a command
    // must not wait on the store before Discord's 3 s acknowledgement.
    this.batch.count(storeKeys.usage(kind, channelKey), 1, this.dayMs);
    const key = storeKeys.quota(kind, subject);
    const windowMs = kind === 'chat' ? this.minuteMs : this.dayMs;
    const limit = kind === 'chat' ? this.limits.chatPerMinute : this.limits.imagesPerDay;
    // Use is counted even where no limit holds (quotas off, an exempt admin): /usage shows it.
    if (!(await this.holds(user))) {
      this.batch.count(key, 1, windowMs);
      return none;
    }
    try {
      if (kind === 'chat' && this.limits.tokensPerDay > 0) {
        const tokens = await this.counted(storeKeys.quota('tokens', subject));
        if (tokens.value >= this.limits.tokensPerDay) throw this.tokensUsed(tokens.resetInMs);
      }
      if (limit <= 0) {
        this.batch.count(key, 1, windowMs);
        return none;
      }
      // One atomic increment: of parallel requests, exactly those within the limit pass.
      const counted = await this.state.increment(key, 1, windowMs);
      if (counted.value > limit) {
        await this.state.increment(key, -1, 1).catch(() => undefined);
        const wait = waitIn(counted.resetInMs);
        throw new QuotaError(
          sentence(kind === 'chat' ? 'errors.quota.chat' : 'errors.quota.images', { limit, wait }),
          counted.resetInMs,
        );
      }
      const windowEnds = Date.now() + counted.resetInMs;
      let given = false;
      return async () => {
        if (given || Date.now() >= windowEnds) return;
        given = true;
        await this.state
          .increment(key, -1, windowMs)
          .catch((error: unknown) =>
            this.log.debug(
              { err: error instanceof Error ? error.message : String(error), key },
              'count not given back',
            ),
          );
      };
    } catch (error) {
      if (error instanceof QuotaError) throw error;
      this.log.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'quota store unreachable: request let through',
      );
      return none;
    }
  }

  /**
   * Reserves the tokens a chat request may use (`tokens`: its estimated prompt plus its
   * `max_tokens`) in the user's count for the day, with one atomic increment, before the request
   * runs. The request is admitted when the count before its reservation is under the limit, so
   * parallel requests go past the limit by at most one reservation. Where no token quota holds
   * for the user, nothing is reserved and the real count is added with the next flush.
   * @param subject `<platform>:<user id>`.
   * @throws QuotaError (the day's tokens are used up, with the wait). A store that does not
   *   answer lets the request through (logged).
   */
  async reserveTokens(subject: string, user: InvocationUser, tokens: number): Promise<TokenReservation> {
    const key = storeKeys.quota('tokens', subject);
    // Nothing reserved: the real count joins the next flush.
    const counting = (): TokenReservation => {
      let settled = false;
      return {
        reserved: 0,
        extend: async () => undefined,
        settle: async (used) => {
          if (settled) return;
          settled = true;
          if (used > 0) this.batch.count(key, Math.round(used), this.dayMs);
        },
      };
    };
    if (this.limits.tokensPerDay <= 0 || !(await this.holds(user))) return counting();
    const wanted = Math.max(1, Math.ceil(tokens));
    let counted: { value: number; resetInMs: number };
    try {
      counted = this.batch.withUnwritten(key, await this.state.increment(key, wanted, this.dayMs));
    } catch (error) {
      this.log.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'quota store unreachable: request let through',
      );
      return counting();
    }
    if (counted.value - wanted >= this.limits.tokensPerDay) {
      await this.state.increment(key, -wanted, this.dayMs).catch(() => undefined);
      throw this.tokensUsed(counted.resetInMs);
    }
    return new StoredReservation(
      this.state,
      { key, reserved: wanted, windowEnds: Date.now() + counted.resetInMs, windowMs: this.dayMs },
      this.log,
    );
  }

  /** Adds the tokens a request used to the channel's day, for /usage (written with the next flush; the user's are its reservation's). Never throws. */
  async recordChannelTokens(channelKey: string, tokens: number): Promise<void> {
    if (tokens > 0) this.batch.count(storeKeys.usage('tokens', channelKey), tokens, this.dayMs);
  }

  /**
   * Whether the quotas hold for `user` (any is on, and they are not an exempt admin). Rights that
   * could not be checked (the platform did not answer) exempt no one: the quotas hold.
   */
  private async holds(user: InvocationUser): Promise<boolean> {
    return this.enabled && (this.limits.admins || !(await user.isAdmin().catch(() => false)));
  }

  private tokensUsed(resetInMs: number): QuotaError {
    return new QuotaError(
      sentence('errors.quota.tokens', { limit: this.limits.tokensPerDay, wait: waitIn(resetInMs) }),
      resetInMs,
    );
  }

  /** A user's use against the limits. Never throws (unknown counts read as 0). */
  async usageOf(subject: string): Promise<UsageReport> {
    const [chat, images, tokens] = await Promise.all(
      (['chat', 'image', 'tokens'] as const).map((kind) => this.read(storeKeys.quota(kind, subject))),
    );
    return {
      chat: { ...chat!, limit: this.limits.chatPerMinute, window: 'minute' },
      images: { ...images!, limit: this.limits.imagesPerDay, window: 'day' },
      tokens: { ...tokens!, limit: this.limits.tokensPerDay, window: 'day' },
    };
  }

  /** A channel's use today (chat requests, images, tokens); limits are per user, so none is shown. */
  async usageOfChannel(channelKey: string): Promise<UsageReport> {
    const [chat, images, tokens] = await Promise.all(
      (['chat', 'image', 'tokens'] as const).map((kind) => this.read(storeKeys.usage(kind, channelKey))),
    );
    return {
      chat: { ...chat!, limit: 0, window: 'day' },
      images: { ...images!, limit: 0, window: 'day' },
      tokens: { ...tokens!, limit: 0, window: 'day' },
    };
  }

  /** A stored counter plus what this process has not written to it yet. @throws what the store throws. */
  private async counted(key: string): Promise<{ value: number; resetInMs: number }> {
    return this.batch.withUnwritten(key, await this.state.counter(key));
  }

  private async read(key: string): Promise<{ used: number; resetInMs: number }> {
    const counted = this.batch.withUnwritten(
      key,
      await this.state.counter(key).catch(() => ({ value: 0, resetInMs: 0 })),
    );
    return { used: counted.value, resetInMs: counted.resetInMs };
  }
}
