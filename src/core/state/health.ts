/**
 * Whether the state store answers, as the features see it. When it fails, answers go on
 * without history, the exchanges they could not store wait in memory (pending-turns.ts) until it
 * takes them, the user of each conversation is told once per outage, and the failure is logged
 * once. The outage ends with the first success after it once nothing waits to be stored (while
 * turns wait, a success tries them again instead: a store whose reads work and whose writes fail,
 * SQLite locked by another connection or out of room, is still failing).
 */
import type { Logger } from '../../log.ts';
import { type Sentence, sentence } from '../i18n/words.ts';

/** Said under an answer given without the history, once per conversation and outage (`errors.store.down`). */
export const STORE_DOWN_NOTE: Sentence = sentence('errors.store.down');

/**
 * Said under an answer whose exchange could not be stored (the history was read, the write
 * failed), once per conversation and outage (`errors.store.unsaved`).
 */
export const STORE_UNSAVED_NOTE: Sentence = sentence('errors.store.unsaved');

/** Turns waiting to be stored, as the health sees them (pending-turns.ts). */
export interface WaitingTurns {
  /** How many exchanges wait. */
  readonly size: number;
  /** Tries to store them now (in the background; one attempt at a time). */
  retry(): void;
}

/** Outage bookkeeping; one per bot. */
export class StoreHealth {
  private down = false;
  private readonly told = new Set<string>();
  /** The turns waiting for the store, once pending-turns.ts registered them. */
  waiting: WaitingTurns | undefined;

  /** Whether the last store operation failed. */
  get isDown(): boolean {
    return this.down;
  }

  /**
   * Records a failed store operation.
   * @param conversationId the conversation about to be told (omit when nobody will be, e.g. a
   *   retry in the background).
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

  /**
   * Records a store operation that worked: an outage, if any, is over, unless turns still wait
   * to be stored (they are tried again now; their success ends it).
   */
  succeeded(log: Logger): void {
    if (!this.down) return;
    if (this.waiting && this.waiting.size > 0) {
      this.waiting.retry();
      return;
    }
    this.down = false;
    this.told.clear();
    log.info('state store reachable again');
  }
}
