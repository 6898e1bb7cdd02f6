/**
 * Per-conversation history (a channel, or a thread) in keyv.
 *
 * Key: `history:<conversationId>`; value: `{ version: 1, messages: StoredMessage[] }`.
 * Appends to one conversation are serialised in-process; several instances sharing one
 * Redis store will need a lock or a Redis list (a later issue).
 */
import type Keyv from 'keyv';
import type { ChatMessage } from '../service/schemas.ts';

/** A stored turn: what was said, when (ms since epoch) and by whom (platform user id). */
export interface StoredMessage {
  role: 'user' | 'assistant' | 'system';
  /** Text; images a user sent are not stored (only a note that they were there). */
  content: string;
  at: number;
  userId?: string;
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

/** Reads and appends conversation history. */
export class ConversationStore {
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly maxMessages: number;

  constructor(
    private readonly keyv: Keyv,
    options: ConversationStoreOptions = {},
  ) {
    this.maxMessages = options.maxMessages ?? 50;
  }

  /** The stored turns of a conversation, oldest first (empty when none). */
  async get(conversationId: string): Promise<StoredMessage[]> {
    const value = await this.keyv.get<StoredConversation>(this.key(conversationId));
    return value?.messages ?? [];
  }

  /** The history as chat messages (§2.1) to send before a new user message. */
  async asChatMessages(conversationId: string): Promise<ChatMessage[]> {
    return (await this.get(conversationId)).map(({ role, content }) => ({ role, content }));
  }

  /** Appends turns atomically with respect to other appends in this process. */
  async append(conversationId: string, ...messages: StoredMessage[]): Promise<void> {
    await this.withLock(conversationId, async () => {
      const key = this.key(conversationId);
      const current = (await this.keyv.get<StoredConversation>(key))?.messages ?? [];
      const next = [...current, ...messages].slice(-this.maxMessages);
      await this.keyv.set(key, { version: 1, messages: next });
    });
  }

  /** Forgets a conversation. */
  async clear(conversationId: string): Promise<void> {
    await this.keyv.delete(this.key(conversationId));
  }

  private key(conversationId: string): string {
    return `history:${conversationId}`;
  }

  private async withLock<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(id) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const settled = run.catch(() => undefined);
    this.locks.set(id, settled);
    try {
      return await run;
    } finally {
      if (this.locks.get(id) === settled) this.locks.delete(id);
    }
  }
}
