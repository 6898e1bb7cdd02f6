/**
 * Exchanges answered while the store would not take them (down, stalled past its deadline,
 * SQLite locked or out of room), kept in this process's memory and stored once it takes writes
 * again: tried every {@link PENDING_RETRY_MS}, when a store call succeeds (health.ts), and when
 * the bot stops. Each is put back in its place by time (history.ts `restore`), and not twice when
 * the write that failed its deadline landed after all.
 *
 * Bounded: at most {@link PENDING_MAX_EXCHANGES} exchanges and {@link PENDING_MAX_BYTES} bytes of
 * text over every conversation; past either the oldest are dropped, with a log line. Until they
 * are stored, a conversation's waiting turns are part of its history as this process reads it
 * ({@link PendingTurns.withWaiting}). They do not survive a restart.
 */
import type { Logger } from '../../log.ts';
import type { StoreHealth, WaitingTurns } from './health.ts';
import { type ConversationStore, mergeTurns, type StoredMessage } from './history.ts';

/** Most exchanges kept waiting for the store, over every conversation. */
export const PENDING_MAX_EXCHANGES = 1_000;

/** Most bytes (their text, UTF-8) kept waiting for the store, over every conversation. */
export const PENDING_MAX_BYTES = 4 * 1024 * 1024;

/** How often waiting turns are tried again while the store does not take them, in ms. */
export const PENDING_RETRY_MS = 5_000;

/** One exchange waiting: its conversation and its turns (a question and its answer). */
interface Waiting {
  conversationId: string;
  turns: StoredMessage[];
  bytes: number;
}

/** The exchanges of one process waiting for the store. */
export class PendingTurns implements WaitingTurns {
  private readonly queue: Waiting[] = [];
  /** Exchanges being stored right now ({@link hold}): part of their conversation until their write ends. */
  private readonly held: Waiting[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private storing: Promise<boolean> | undefined;
  private closed = false;

  /** Registers itself with `health`, whose outage then lasts until nothing waits. */
  constructor(
    private readonly history: ConversationStore,
    private readonly health: StoreHealth,
    private readonly log: Logger,
  ) {
    health.waiting = this;
  }

  /** How many exchanges wait. */
  get size(): number {
    return this.queue.length;
  }

  /**
   * Keeps an exchange the store did not take, to store it later; drops the oldest waiting when
   * over the bounds (logged).
   */
  add(conversationId: string, turns: StoredMessage[]): void {
    const bytes = turns.reduce((sum, t) => sum + Buffer.byteLength(t.content) + 64, 0);
    this.queue.push({ conversationId, turns, bytes });
    this.bytes += bytes;
    let dropped = 0;
    while (this.queue.length > PENDING_MAX_EXCHANGES || this.bytes > PENDING_MAX_BYTES) {
      this.bytes -= this.queue.shift()!.bytes;
      dropped++;
    }
    if (dropped > 0)
      this.log.warn(
        { dropped, waiting: this.queue.length, maxExchanges: PENDING_MAX_EXCHANGES, maxBytes: PENDING_MAX_BYTES },
        'state store unreachable: the oldest exchanges waiting to be stored were dropped',
      );
    this.schedule();
  }

  /**
   * Makes an exchange part of its conversation, as this process reads it, while its write to the
   * store runs (exchange.ts `remember`): the answer is on screen before its write ends, and a
   * write may wait (the conversation's lock, a slow store) while the next question is read.
   * @returns ends it (the write landed, or the exchange now waits: {@link add}). Idempotent.
   */
  hold(conversationId: string, turns: StoredMessage[]): () => void {
    const entry: Waiting = { conversationId, turns, bytes: 0 };
    this.held.push(entry);
    return () => {
      const at = this.held.indexOf(entry);
      if (at >= 0) this.held.splice(at, 1);
    };
  }

  /**
   * A conversation's stored turns with those of its turns that wait, or are being stored
   * ({@link hold}), in their place by time (a turn the store holds already is not added twice).
   */
  withWaiting(conversationId: string, stored: readonly StoredMessage[]): StoredMessage[] {
    const waiting = [...this.queue, ...this.held]
      .filter((w) => w.conversationId === conversationId)
      .flatMap((w) => w.turns);
    return waiting.length ? mergeTurns(stored, waiting) : [...stored];
  }

  /**
   * Changes a waiting exchange of a conversation (or one being stored) named by its turns' ids:
   * its answer's text becomes `answer`, or, without one, the exchange is dropped (features/
   * exchange.ts `keepShown`: what the user was shown of an answer whose final write failed).
   */
  amend(conversationId: string, ids: { question: string; answer: string }, answer: string | undefined): void {
    for (const list of [this.queue, this.held]) {
      for (let i = list.length - 1; i >= 0; i--) {
        const entry = list[i]!;
        if (entry.conversationId !== conversationId || !entry.turns.some((t) => t.id === ids.answer)) continue;
        // The turns are shared by the exchange's conversations: each entry gets its own.
        const turns =
          answer === undefined
            ? entry.turns.filter((t) => t.id !== ids.question && t.id !== ids.answer)
            : entry.turns.map((t) => (t.id === ids.answer ? { ...t, content: answer } : t));
        const bytes = list === this.queue ? turns.reduce((sum, t) => sum + Buffer.byteLength(t.content) + 64, 0) : 0;
        this.bytes += bytes - entry.bytes;
        entry.turns = turns;
        entry.bytes = bytes;
        if (!turns.length) {
          list.splice(i, 1);
          this.bytes -= bytes;
        }
      }
    }
  }

  /** Drops a conversation's waiting turns, and those being stored (it was forgotten). */
  forget(conversationId: string): void {
    this.drop((id) => id === conversationId);
  }

  /** Drops the waiting turns of every conversation whose key starts with `prefix` (an uninstalled workspace's, `slack:<team>:`). */
  forgetWithin(prefix: string): void {
    this.drop((id) => id.startsWith(prefix));
  }

  /** Drops the waiting turns, and those being stored, of the conversations `matches` names. */
  private drop(matches: (conversationId: string) => boolean): void {
    for (let i = this.held.length - 1; i >= 0; i--) if (matches(this.held[i]!.conversationId)) this.held.splice(i, 1);
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (!matches(this.queue[i]!.conversationId)) continue;
      this.bytes -= this.queue[i]!.bytes;
      this.queue.splice(i, 1);
    }
  }

  /** Tries to store the waiting exchanges now, in the background. */
  retry(): void {
    void this.flush();
  }

  /**
   * Stores the waiting exchanges, oldest first, until the store refuses one (then it is tried
   * again later); one attempt at a time. Never throws.
   * @returns whether nothing waits any more.
   */
  flush(): Promise<boolean> {
    this.storing ??= this.store().finally(() => {
      this.storing = undefined;
    });
    return this.storing;
  }

  /** Stops trying in the background (the bot stops; {@link flush} still works). */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async store(): Promise<boolean> {
    clearTimeout(this.timer);
    this.timer = undefined;
    let stored = 0;
    while (this.queue.length) {
      const next = this.queue[0]!;
      try {
        await this.history.restore(next.conversationId, next.turns);
      } catch (error) {
        this.health.failed(error, this.log);
        this.schedule();
        return false;
      }
      // Dropped or forgotten meanwhile: already out of the queue.
      const at = this.queue.indexOf(next);
      if (at >= 0) {
        this.queue.splice(at, 1);
        this.bytes -= next.bytes;
      }
      stored++;
    }
    if (stored > 0) this.log.info({ exchanges: stored }, 'stored the exchanges answered while the state store failed');
    this.health.succeeded(this.log);
    return true;
  }

  /** Tries again in {@link PENDING_RETRY_MS} (once; unless closed or nothing waits). */
  private schedule(): void {
    if (this.timer || this.closed || !this.queue.length) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.retry();
    }, PENDING_RETRY_MS);
    this.timer.unref();
  }
}
