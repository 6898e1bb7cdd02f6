/**
 * Whether the state store answers, as the features see it. When it fails, answers go on
 * without history (and without saving), the user of each conversation is told once per
 * outage, and the failure is logged once; the first success after that ends the outage.
 */
import type { Logger } from '../../log.ts';

/** Said under an answer given without the history, once per conversation and outage. */
export const STORE_DOWN_NOTE =
  "I can't reach my memory right now, so this answer does not see earlier messages and will not be remembered.";

/** Outage bookkeeping; one per bot. */
export class StoreHealth {
  private down = false;
  private readonly told = new Set<string>();

  /** Whether the last store operation failed. */
  get isDown(): boolean {
    return this.down;
  }

  /**
   * Records a failed store operation.
   * @param conversationId the conversation about to be told (omit when nobody will be, e.g. a
   *   failed save after the answer was shown).
   * @returns true when this conversation has not been told of the outage yet (tell it now).
   */
  failed(error: unknown, log: Logger, conversationId?: string): boolean {
    if (!this.down)
      log.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'state store unreachable: answering without history',
      );
    this.down = true;
    if (conversationId === undefined || this.told.has(conversationId)) return false;
    this.told.add(conversationId);
    return true;
  }

  /** Records a store operation that worked: an outage, if any, is over. */
  succeeded(log: Logger): void {
    if (!this.down) return;
    this.down = false;
    this.told.clear();
    log.info('state store reachable again');
  }
}
