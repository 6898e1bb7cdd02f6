/**
 * Spend in money, counted per user, per channel and per server (Discord guild or Slack
 * workspace) and per UTC day and month, in micro-units of the price table's currency, with caps
 * (`SPEND_CAP_*`) that hold under parallel requests on every instance sharing the store.
 *
 * The mechanism is the token quota's (quotas.ts, token-reservation.ts): before a request is sent,
 * its worst case (prompt estimate + `max_tokens` at the model's prices, or one image) is added to
 * each capped counter with one atomic increment (`StateStore.increment`: in-process on SQLite,
 * INCRBY on Redis). The request is admitted when every capped counter was under its cap before
 * its own reservation; otherwise its reservations are taken back and it is refused. So parallel
 * requests go past a cap by at most one request's reservation. Once the service answered, the
 * reservation is settled to the real cost (one more increment by the difference); a request that
 * generated nothing settles to 0. Uncapped counters (for /usage) and each server's spend per
 * model are counted after, in the count batch (count-batch.ts).
 *
 * Periods are calendar periods in UTC: a day ends at 00:00 UTC, a month on its first day's
 * 00:00 UTC; each period has counters of its own (keys.ts `storeKeys.spend`), which expire at its
 * end. A correction that comes after the period ended is dropped (it would count in the next).
 * A store that does not answer lets the request through (logged), as quotas do.
 */
import type { Logger } from '../../log.ts';
import { storeKeys } from '../keys.ts';
import { type PriceTable, unpricedModels } from '../spend/prices.ts';
import { capReached } from '../spend/sentences.ts';
import { CountBatch } from './count-batch.ts';
import { QuotaError } from './quotas.ts';
import type { StateStore } from './store.ts';

/** Caps of one scope, in micro-units (0: off). */
export interface SpendPeriodCaps {
  day: number;
  month: number;
}

/** The price table and the caps, in micro-units of its currency. */
export interface SpendConfig {
  prices: PriceTable;
  caps: { user: SpendPeriodCaps; channel: SpendPeriodCaps; server: SpendPeriodCaps };
}

export type SpendScope = 'user' | 'channel' | 'server';
export type SpendPeriod = 'day' | 'month';

/** Whom a request is counted for. */
export interface Spender {
  /** `<platform>:<user id>`. */
  user: string;
  /** The channel key. */
  channel: string;
  /** The server's key (keys.ts `workspaceOf`); undefined in a Discord DM, which belongs to no server. */
  server: string | undefined;
}

/** One cap: whose, which period, its amount and its period's end (ms since the epoch). */
export interface CapLine {
  scope: SpendScope;
  period: SpendPeriod;
  /** Micro-units; 0: no cap. */
  cap: number;
  /** Micro-units spent in the period (reservations under way included). */
  spent: number;
  /** When the period ends, ms since the epoch. */
  endsAt: number;
}

/** A request refused by a cap; `line` says which, what is left and when it resets. Code `quota_exceeded`. */
export class SpendCapError extends QuotaError {
  constructor(
    readonly line: CapLine,
    currency: string,
  ) {
    super(capReached(line, currency, Date.now()), Math.max(0, line.endsAt - Date.now()));
  }
}

/** The id of the UTC day or month holding `at` (`2026-11-29`, `2026-11`) and when it ends (ms since the epoch). */
export function periodOf(period: SpendPeriod, at: number): { id: string; endsAt: number } {
  const d = new Date(at);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const month = `${y}-${String(m + 1).padStart(2, '0')}`;
  if (period === 'month') return { id: month, endsAt: Date.UTC(y, m + 1, 1) };
  return { id: `${month}-${String(d.getUTCDate()).padStart(2, '0')}`, endsAt: Date.UTC(y, m, d.getUTCDate() + 1) };
}

/** One counter of a request: its key, scope, period and cap. */
interface Counter {
  key: string;
  scope: SpendScope;
  period: SpendPeriod;
  /** The id it is kept under (user subject, channel key, server key). */
  id: string;
  periodId: string;
  cap: number;
  endsAt: number;
}

/** A request's reservation: settled once with its real cost. Never throws. */
export interface SpendReservation {
  /** Micro-units reserved. */
  readonly reserved: number;
  /**
   * Replaces the reservation with the real cost (micro-units; 0: nothing was generated). Only the
   * first call counts.
   * @param estimated the cost comes from the bot's own token count (the service sent no `usage`).
   * @returns the caps whose 80 % this request's spend reached first in their period (to be told once).
   */
  settle(cost: number, estimated: boolean): Promise<CapLine[]>;
}

/** Share of a cap past which its user is told, once a period. */
export const NOTICE_SHARE = 0.8;

/** Spend counters and caps on one store. */
export class Spend {
  private readonly batch: CountBatch;
  /** Models already logged as unpriced. */
  private readonly warned = new Set<string>();

  /** The price table and caps in force: set at start, and by a configuration reload ({@link reconfigure}). */
  private current: SpendConfig;

  constructor(
    private readonly state: StateStore,
    config: SpendConfig,
    private readonly log: Logger,
  ) {
    this.current = config;
    this.batch = new CountBatch(state, log);
  }

  /** The price table and caps in force, read at each reservation. */
  get config(): SpendConfig {
    return this.current;
  }

  /**
   * The price table and caps from now on (a configuration reload: PRICES_FILE read again,
   * SPEND_CAP_*). Counters are kept; a reservation already made settles at the price it was made at.
   */
  reconfigure(config: SpendConfig): void {
    this.current = config;
  }

  /** The table's currency. */
  get currency(): string {
    return this.config.prices.currency;
  }

  /** Whether any cap is on. */
  get capped(): boolean {
    const { user, channel, server } = this.config.caps;
    return [user, channel, server].some((c) => c.day > 0 || c.month > 0);
  }

  /**
   * Logs a model the table prices neither by a row of its own nor by `default`, once per model:
   * with caps on, requests to it are refused (features/spend.ts).
   */
  unpriced(model: string): void {
    if (this.warned.has(model)) return;
    this.warned.add(model);
    this.log.warn(
      { model },
      this.capped
        ? 'model not in PRICES_FILE and no default row: requests to it are refused while spending caps are on'
        : 'model not in PRICES_FILE and no default row: its spend is not counted',
    );
  }

  /** Logs, at start, the default models (DEFAULT_CHAT_MODEL, DEFAULT_VISION_MODEL, DEFAULT_IMAGE_MODEL) the table does not price. */
  warnUnpriced(models: { chat?: string | undefined; vision?: string | undefined; image?: string | undefined }): void {
    const named = { chat: [models.chat, models.vision], images: [models.image] };
    for (const model of unpricedModels(this.config.prices, named)) this.unpriced(model);
  }

  /** Writes the counts not written yet (must run before the store closes). Never throws. */
  flush(): Promise<void> {
    return this.batch.flush();
  }

  /** The six counters of `who` now (the server's two only with a server). */
  private counters(who: Spender, now: number): Counter[] {
    const ids: Array<[SpendScope, string | undefined]> = [
      ['user', who.user],
      ['channel', who.channel],
      ['server', who.server],
    ];
    return ids.flatMap(([scope, id]) =>
      id === undefined
        ? []
        : (['day', 'month'] as const).map((period): Counter => {
            const { id: periodId, endsAt } = periodOf(period, now);
            const cap = this.config.caps[scope][period];
            return { key: storeKeys.spend(scope, periodId, id), scope, period, id, periodId, cap, endsAt };
          }),
    );
  }

  /**
   * Reserves `worst` micro-units for a request of `who` on `model`, atomically on each capped
   * counter, as the file says.
   * @throws SpendCapError naming the cap (the one that resets last, where several are reached).
   */
  async reserve(who: Spender, model: string, worst: number): Promise<SpendReservation> {
    const now = Date.now();
    const counters = this.counters(who, now);
    const capped = counters.filter((c) => c.cap > 0);
    const reserved = Math.max(0, Math.ceil(worst));
    let held: Counter[] = [];
    if (capped.length > 0 && reserved > 0) {
      const results = await Promise.allSettled(
        capped.map((c) => this.state.increment(c.key, reserved, c.endsAt - now)),
      );
      held = capped.filter((_, i) => results[i]!.status === 'fulfilled');
      const refused = capped.flatMap((c, i) => {
        const r = results[i]!;
        const before = r.status === 'fulfilled' ? r.value.value - reserved : 0;
        return r.status === 'fulfilled' && before >= c.cap ? [{ ...c, spent: before }] : [];
      });
      if (results.some((r) => r.status === 'rejected'))
        this.log.warn({ key: 'spend' }, 'spend store unreachable: request let through where a counter did not answer');
      if (refused.length > 0) {
        await Promise.all(held.map((c) => this.state.increment(c.key, -reserved, 1).catch(() => undefined)));
        const last = refused.sort((a, b) => b.endsAt - a.endsAt)[0]!;
        const { scope, period, cap, spent, endsAt } = last;
        throw new SpendCapError({ scope, period, cap, spent, endsAt }, this.currency);
      }
    }
    return this.reservation(who, model, counters, held, reserved);
  }

  private reservation(
    who: Spender,
    model: string,
    counters: Counter[],
    held: Counter[],
    reserved: number,
  ): SpendReservation {
    let settled = false;
    return {
      reserved,
      settle: async (cost, estimated) => {
        if (settled) return [];
        settled = true;
        const real = Math.max(0, Math.round(cost));
        const now = Date.now();
        for (const c of counters) if (!held.includes(c) && real > 0) this.batch.count(c.key, real, c.endsAt - now);
        if (real > 0) this.countAfter(who, model, real, estimated, now);
        const crossed = await Promise.all(held.map((c) => this.correct(c, real - reserved, real > 0, now)));
        return crossed.filter((line): line is CapLine => line !== undefined);
      },
    };
  }

  /** The per-model and estimated counts of a settled cost (nothing waits for them). */
  private countAfter(who: Spender, model: string, cost: number, estimated: boolean, now: number): void {
    const month = periodOf('month', now);
    if (who.server !== undefined)
      this.batch.count(storeKeys.spendModel(who.server, month.id, model), cost, month.endsAt - now);
    if (!estimated) return;
    for (const period of ['day', 'month'] as const) {
      const { id, endsAt } = periodOf(period, now);
      this.batch.count(storeKeys.spendEstimated(id, who.user), cost, endsAt - now);
    }
  }

  /**
   * Corrects a held counter by `by`; when the request spent something and the counter is now
   * past {@link NOTICE_SHARE} of its cap, claims the period's notice for it.
   * @returns the cap's line when this call claimed its notice.
   */
  private async correct(c: Counter, by: number, spent: boolean, now: number): Promise<CapLine | undefined> {
    if (now >= c.endsAt) return undefined;
    try {
      const { value } = await this.state.increment(c.key, by, c.endsAt - now);
      if (!spent || value < c.cap * NOTICE_SHARE) return undefined;
      const first = await this.state.setIfAbsent(storeKeys.spendNotice(c.scope, c.periodId, c.id), c.endsAt - now);
      return first ? { scope: c.scope, period: c.period, cap: c.cap, spent: value, endsAt: c.endsAt } : undefined;
    } catch (error) {
      this.log.debug(
        { err: error instanceof Error ? error.message : String(error) },
        'spend reservation not corrected',
      );
      return undefined;
    }
  }

  /** A counter plus what this process has not written to it yet (0 when the store does not answer). */
  private async read(key: string): Promise<number> {
    const stored = await this.state.counter(key).catch(() => ({ value: 0, resetInMs: 0 }));
    return this.batch.withUnwritten(key, stored).value;
  }

  /**
   * What a scope spent today and this month, with its caps. Never throws (unknown counts read as 0).
   * @returns the day's line, then the month's; `estimated`: the user's part of it the bot counted
   *   itself (only for scope `user`).
   */
  async usageOf(scope: SpendScope, id: string): Promise<Array<CapLine & { estimated: number }>> {
    const now = Date.now();
    return Promise.all(
      (['day', 'month'] as const).map(async (period) => {
        const { id: periodId, endsAt } = periodOf(period, now);
        const [spent, estimated] = await Promise.all([
          this.read(storeKeys.spend(scope, periodId, id)),
          scope === 'user' ? this.read(storeKeys.spendEstimated(periodId, id)) : Promise.resolve(0),
        ]);
        return { scope, period, cap: this.config.caps[scope][period], spent, endsAt, estimated };
      }),
    );
  }

  /**
   * A server's spend this month per model, most first (at most `max` models). Lists the month's
   * per-model counters by prefix (store.ts `scanKeys`: one bounded query a batch).
   * @throws the store's error.
   */
  async byModel(server: string, max = 25): Promise<Array<{ model: string; spent: number }>> {
    const now = Date.now();
    const prefix = storeKeys.spendModels(server, periodOf('month', now).id);
    // What this process counted and has not written yet is listed too.
    await this.batch.flush();
    const keys = new Set<string>();
    for await (const batch of this.state.scanKeys(prefix)) for (const key of batch) keys.add(key);
    const lines = await Promise.all(
      [...keys].map(async (key) => ({ model: key.slice(prefix.length), spent: await this.read(key) })),
    );
    return lines
      .filter((l) => l.spent > 0)
      .sort((a, b) => b.spent - a.spent)
      .slice(0, max);
  }
}
