/**
 * Per-conversation history (a channel, a thread or a DM) in the state store.
 *
 * Key: `history:<conversationId>`; value: `{ version: 1, messages: StoredMessage[] }`.
 * An append is a read-modify-write under the store's lock on the conversation (in-process on
 * SQLite; a Redis lock with expiry shared by every instance), so two processes appending to
 * one conversation at the same moment both keep their turns, in order.
 */

import { storeKeys } from '../keys.ts';
import type { ChatMessage } from '../service/schemas.ts';
import type { StateStore } from './store.ts';

/** A stored turn: what was said, when (ms since epoch) and by whom (platform user id). */
export interface StoredMessage {
  role: 'user' | 'assistant' | 'system';
  /** Text; images a user sent are not stored (only a note that they were there). */
  content: string;
  at: number;
  userId?: string;
  /** Names the turn for a later replacement (Regenerate, an edited question: {@link ConversationStore.replaceExchange}). */
  id?: string;
}

/** The stored value of one conversation. */
export interface StoredConversation {
  version: 1;
  messages: StoredMessage[];
}

/** Options of {@link ConversationStore}. */
export interface ConversationStoreOptions {
  /** Most messages kept per conversation (oldest dropped first); default 50. */
  maxMessages?: number;
}

/** How long a read started ahead ({@link ConversationStore.prefetch}) waits for its taker, in ms. */
export const PREFETCH_MS = 5_000;

/** Reads started ahead kept at most. */
const PREFETCH_KEPT = 10_000;

/** Reads and appends conversation history. */
export class ConversationStore {
  private readonly maxMessages: number;
  /** Reads started ahead, by key, each for one taker until `until` (ms since the epoch). */
  private readonly ahead = new Map<string, { read: Promise<StoredMessage[]>; until: number }>();

  constructor(
    private readonly state: StateStore,
    options: ConversationStoreOptions = {},
  ) {
    this.maxMessages = options.maxMessages ?? 50;
  }

  /**
   * The stored turns of a conversation, oldest first (empty when none): the read started ahead
   * for it ({@link prefetch}) when there is one, else a read now.
   * @throws the store's error.
   */
  async get(conversationId: string): Promise<StoredMessage[]> {
    const key = this.key(conversationId);
    const ahead = this.ahead.get(key);
    this.ahead.delete(key);
    if (ahead && ahead.until > Date.now()) return ahead.read;
    return this.read(key);
  }

  /**
   * Starts reading a conversation that is likely to be read soon (a /chat's, while its channel's
   * settings are read): the next {@link get} of it within {@link PREFETCH_MS} takes this read
   * instead of waiting for one of its own. An append, replacement or clear of the conversation by
   * this process drops it (the next get reads again). Never throws (a failed read fails its taker).
   */
  prefetch(conversationId: string): void {
    const now = Date.now();
    // Reads nobody took (the answer went to a new thread) make room, oldest first.
    if (this.ahead.size >= PREFETCH_KEPT) this.ahead.delete(this.ahead.keys().next().value!);
    const key = this.key(conversationId);
    const read = this.read(key);
    read.catch(() => undefined);
    this.ahead.set(key, { read, until: now + PREFETCH_MS });
  }

  private async read(key: string): Promise<StoredMessage[]> {
    return (await this.state.keyv.get<StoredConversation>(key))?.messages ?? [];
  }

  /** The history as chat messages (§2.1) to send before a new user message. */
  async asChatMessages(conversationId: string): Promise<ChatMessage[]> {
    return (await this.get(conversationId)).map(({ role, content }) => ({ role, content }));
  }

  /**
   * Appends turns, keeping the newest `maxMessages`; atomic with respect to every other append
   * to the conversation, in this process and (on Redis) in every other.
   * @throws the store's error when it is unreachable.
   */
  async append(conversationId: string, ...messages: StoredMessage[]): Promise<void> {
    const key = this.key(conversationId);
    this.ahead.delete(key);
    await this.state.withLock(key, async () => {
      const current = (await this.state.keyv.get<StoredConversation>(key))?.messages ?? [];
      const next = [...current, ...messages].slice(-this.maxMessages);
      await this.state.keyv.set(key, { version: 1, messages: next });
    });
  }

  /**
   * Puts back turns that were answered while the store could not take them (state/pending-turns.ts),
   * in their place by time ({@link mergeTurns}: a turn already stored, by a write that landed
   * after its caller gave up on it, is not added twice), keeping the newest `maxMessages`; under
   * the same lock as {@link append}.
   * @throws the store's error when it is unreachable.
   */
  async restore(conversationId: string, turns: readonly StoredMessage[]): Promise<void> {
    const key = this.key(conversationId);
    this.ahead.delete(key);
    await this.state.withLock(key, async () => {
      const current = (await this.state.keyv.get<StoredConversation>(key))?.messages ?? [];
      const next = mergeTurns(current, turns);
      if (next.length !== current.length)
        await this.state.keyv.set(key, { version: 1, messages: next.slice(-this.maxMessages) });
    });
  }

  /**
   * Replaces the turns of one exchange in place (a regenerated answer, an edited question), under
   * the same lock as {@link append}: the turn named `ids.answer` gets `answer` as its content,
   * and the one named `ids.question` gets `question` when it is given. Turns no longer stored
   * (trimmed, forgotten) are left alone.
   * @returns whether the answer's turn was found.
   * @throws the store's error when it is unreachable.
   */
  async replaceExchange(
    conversationId: string,
    ids: { question: string; answer: string },
    replacement: { question?: string | undefined; answer: string; at: number },
  ): Promise<boolean> {
    const key = this.key(conversationId);
    this.ahead.delete(key);
    return this.state.withLock(key, async () => {
      const current = (await this.state.keyv.get<StoredConversation>(key))?.messages ?? [];
      let found = false;
      const next = current.map((m) => {
        if (m.id === ids.answer) {
          found = true;
          return { ...m, content: replacement.answer, at: replacement.at };
        }
        if (m.id === ids.question && replacement.question !== undefined)
          return { ...m, content: replacement.question, at: replacement.at };
        return m;
      });
      if (found) await this.state.keyv.set(key, { version: 1, messages: next });
      return found;
    });
  }

  /**
   * Removes the turns of one exchange (named `ids.question` and `ids.answer`), under the same lock
   * as {@link append}: an answer whose final write failed before the user saw any of it.
   * @throws the store's error when it is unreachable.
   */
  async dropExchange(conversationId: string, ids: { question: string; answer: string }): Promise<void> {
    const key = this.key(conversationId);
    this.ahead.delete(key);
    await this.state.withLock(key, async () => {
      const current = (await this.state.keyv.get<StoredConversation>(key))?.messages ?? [];
      const next = current.filter((m) => m.id !== ids.question && m.id !== ids.answer);
      if (next.length !== current.length) await this.state.keyv.set(key, { version: 1, messages: next });
    });
  }

  /** Forgets a conversation. */
  async clear(conversationId: string): Promise<void> {
    this.ahead.delete(this.key(conversationId));
    await this.state.keyv.delete(this.key(conversationId));
  }

  private key(conversationId: string): string {
    return storeKeys.history(conversationId);
  }
}

/** Whether two stored turns are the same turn: the same id, or (without ids) the same role, time and text. */
function sameTurn(a: StoredMessage, b: StoredMessage): boolean {
  if (a.id !== undefined || b.id !== undefined) return a.id === b.id;
  return a.at === b.at && a.role === b.role && a.content === b.content;
}

/**
 * `stored` with the `late` turns it lacks, ordered by time (`at`; the sort is stable, so turns of
 * one time keep their order: a question before its answer).
 * @returns `stored` itself when it holds every late turn already.
 */
export function mergeTurns(stored: readonly StoredMessage[], late: readonly StoredMessage[]): StoredMessage[] {
  const missing = late.filter((turn) => !stored.some((s) => sameTurn(s, turn)));
  if (!missing.length) return stored as StoredMessage[];
  return [...stored, ...missing].sort((a, b) => a.at - b.at);
}
