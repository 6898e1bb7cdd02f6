/**
 * Per-conversation history (a channel, a thread or a DM) in the state store.
 *
 * Key: `history:<conversationId>`; value: `{ version: 1, messages: StoredMessage[] }`.
 * An append is a read-modify-write under the store's lock on the conversation (in-process on
 * SQLite; a Redis lock with expiry shared by every instance), so two processes appending to
 * one conversation at the same moment both keep their turns, in order.
 *
 * Retention (HISTORY_RETENTION_DAYS; state/retention.ts): every write sets the history to expire
 * a retention after it, and, when its oldest turn changed, writes the marker of when that turn
 * passes the retention (keys.ts `historyDue`), which the sweep lists to drop old turns from
 * histories still in use. A user's turn notes the conversation in their index (user-index.ts:
 * what `/forget me` erases).
 */

import { storeKeys } from '../keys.ts';
import type { ChatMessage } from '../service/schemas.ts';
import type { StateStore } from './store.ts';
import type { UserIndex } from './user-index.ts';

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
  /** How long turns are kept, in ms (HISTORY_RETENTION_DAYS; default {@link DEFAULT_RETENTION_MS}). */
  retentionMs?: number;
  /** The users' indexes that appends note conversations in (none: not noted). */
  userIndex?: UserIndex;
}

/** The retention when none is given, in ms: 90 days (HISTORY_RETENTION_DAYS's default). */
export const DEFAULT_RETENTION_MS = 90 * 24 * 3_600_000;

/** How long a retention marker outlives its time, in ms (the sweep, hourly, reads it before then). */
export const DUE_MARKER_MARGIN_MS = 7 * 24 * 3_600_000;

/** When a history's oldest turn was said, ms since the epoch (turns without a time left out); undefined when none has one. */
export function oldestAt(messages: readonly StoredMessage[]): number | undefined {
  let oldest: number | undefined;
  for (const m of messages) if (Number.isFinite(m.at) && (oldest === undefined || m.at < oldest)) oldest = m.at;
  return oldest;
}

/** How long a read started ahead ({@link ConversationStore.prefetch}) waits for its taker, in ms. */
export const PREFETCH_MS = 5_000;

/** Reads started ahead kept at most. */
const PREFETCH_KEPT = 10_000;

/** Reads and appends conversation history. */
export class ConversationStore {
  private readonly maxMessages: number;
  /** How long turns are kept, in ms. */
  readonly retentionMs: number;
  private readonly userIndex: UserIndex | undefined;
  /** Reads started ahead, by key, each for one taker until `until` (ms since the epoch). */
  private readonly ahead = new Map<string, { read: Promise<StoredMessage[]>; until: number }>();

  constructor(
    private readonly state: StateStore,
    options: ConversationStoreOptions = {},
  ) {
    this.maxMessages = options.maxMessages ?? 50;
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.userIndex = options.userIndex;
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
    await Promise.all([
      this.state.withLock(key, async () => {
        const current = (await this.state.keyv.get<StoredConversation>(key))?.messages ?? [];
        await this.write(conversationId, current, [...current, ...messages].slice(-this.maxMessages));
      }),
      this.userIndex?.noteTurns(conversationId, messages),
    ]);
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
      if (next.length !== current.length) await this.write(conversationId, current, next.slice(-this.maxMessages));
    });
    await this.userIndex?.noteTurns(conversationId, turns);
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
      if (found) await this.write(conversationId, current, next);
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
      if (next.length !== current.length) await this.write(conversationId, current, next);
    });
  }

  /**
   * Changes a conversation's turns under the same lock as {@link append} (the retention sweep,
   * `/forget me`): `change` gets the stored turns and returns the ones to keep (the same array:
   * nothing to write). No turn left deletes the history.
   * @param options.mark writes the retention marker of the oldest turn kept even when it did not
   *   change (the sweep consumed the one there was).
   * @returns how many turns there were and are.
   * @throws the store's error; what `change` throws.
   */
  async edit(
    conversationId: string,
    change: (messages: StoredMessage[]) => StoredMessage[],
    options: { mark?: boolean } = {},
  ): Promise<{ before: number; after: number }> {
    const key = this.key(conversationId);
    this.ahead.delete(key);
    return this.state.withLock(key, async () => {
      const stored = await this.state.keyv.get<StoredConversation>(key);
      const current = Array.isArray(stored?.messages) ? stored.messages : [];
      const next = change(current);
      if (next !== current || (options.mark && current.length))
        await this.write(conversationId, options.mark ? [] : current, next);
      return { before: current.length, after: next.length };
    });
  }

  /**
   * Writes a conversation's turns (`before` what it held) with the retention's expiry, and the
   * marker of when its oldest turn passes the retention if that turn changed; no turn deletes it.
   * Run under the conversation's lock.
   */
  private async write(conversationId: string, before: readonly StoredMessage[], next: StoredMessage[]): Promise<void> {
    const key = this.key(conversationId);
    if (!next.length) {
      await this.state.keyv.delete(key);
      return;
    }
    const writes: Array<Promise<unknown>> = [
      this.state.keyv.set(key, { version: 1, messages: next } satisfies StoredConversation, this.retentionMs),
    ];
    const oldest = oldestAt(next);
    const previous = oldestAt(before);
    if (oldest !== undefined && oldest !== previous) {
      const due = oldest + this.retentionMs;
      const ttl = Math.max(0, due - Date.now()) + DUE_MARKER_MARGIN_MS;
      writes.push(this.state.keyv.set(storeKeys.historyDue(conversationId, due), 1, ttl));
      // The marker of the turn that was oldest would only make the sweep read the history for nothing.
      if (previous !== undefined)
        writes.push(this.state.keyv.delete(storeKeys.historyDue(conversationId, previous + this.retentionMs)));
    }
    await Promise.all(writes);
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
