/**
 * A chat request's tokens reserved in the user's count for the day before it runs
 * (quotas.ts reserveTokens), corrected in the store as what it really used becomes known.
 */

import type { Logger } from '../../log.ts';
import type { StateStore } from './store.ts';

/**
 * Tokens reserved for one request before it runs, in the user's count for the day: settled
 * with what the request really used once known. Idempotent; never throws (a store that does not
 * answer costs the correction, logged at debug).
 */
export interface TokenReservation {
  /** Tokens reserved so far. */
  readonly reserved: number;
  /** Adds to the reservation what became known later (the history sent with the question). */
  extend(tokens: number): Promise<void>;
  /** Replaces the reservation with the tokens really used (prompt + completion). Only the first call counts. */
  settle(tokens: number): Promise<void>;
}

/** A reservation held in a store counter. */
export class StoredReservation implements TokenReservation {
  private held: number;
  private settled = false;

  /**
   * @param where `key`: the counter; `reserved`: the tokens already added to it; `windowEnds`:
   *   when the counter's window ends (ms since the epoch): corrections after it are dropped, as
   *   they would land in the next day's count; `windowMs`: a day, for a counter made again.
   */
  constructor(
    private readonly state: StateStore,
    private readonly where: { key: string; reserved: number; windowEnds: number; windowMs: number },
    private readonly log: Logger,
  ) {
    this.held = where.reserved;
  }

  get reserved(): number {
    return this.held;
  }

  async extend(tokens: number): Promise<void> {
    if (this.settled || tokens <= 0) return;
    this.held += tokens;
    await this.adjust(tokens);
  }

  async settle(tokens: number): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await this.adjust(Math.max(0, Math.round(tokens)) - this.held);
  }

  private async adjust(by: number): Promise<void> {
    const { key, windowEnds, windowMs } = this.where;
    if (by === 0 || Date.now() >= windowEnds) return;
    await this.state
      .increment(key, by, windowMs)
      .catch((error: unknown) =>
        this.log.debug(
          { err: error instanceof Error ? error.message : String(error), key },
          'token reservation not corrected',
        ),
      );
  }
}
