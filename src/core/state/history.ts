/**
 * Per-conversation history (a channel, or a thread) in keyv.
 *
 * Key: `history:<conversationId>`; value: `{ version: 1, messages: StoredMessage[] }`.
 * Appends to one conversation are serialised in-process; several instances sharing one
 * Redis store will need a lock or a Redis list (a later issue).
 */
import Keyv from 'keyv';
import KeyvSqlite from '@keyv/sqlite';
import KeyvRedis from '@keyv/redis';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ChatMessage } from '../service/schemas.ts';

/** A stored turn: what was said, when (ms since epoch) and by whom (platform user id). */
export interface StoredMessage {
  role: 'user' | 'assistant' | 'system';
  /** Text; images a user sent are not stored (only a note that they were there). */
  content: string;
  at: number;
  userId?: string;
}

interface StoredConversation {
  version: 1;
  messages: StoredMessage[];
}

/**
 * Opens the keyv store named by a URL.
 * @param url `sqlite://<path>` (relative paths from the working directory; the folder is
 *   created) or `redis://host:port` / `rediss://…`.
 * @throws Error for another scheme.
 */
export function openStore(url: string): Keyv<StoredConversation> {
  if (url.startsWith('sqlite://')) {
    const path = url.slice('sqlite://'.length);
    if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
    return new Keyv<StoredConversation>({ store: new KeyvSqlite({ uri: `sqlite://${path}` }), namespace: 'genbot' });
  }
  if (url.startsWith('redis://') || url.startsWith('rediss://')) {
    return new Keyv<StoredConversation>({ store: new KeyvRedis(url), namespace: 'genbot' });
  }
  throw new Error(`unsupported STORE_URL scheme: ${url.split(':')[0]}`);
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
    private readonly keyv: Keyv<StoredConversation>,
    options: ConversationStoreOptions = {},
  ) {
    this.maxMessages = options.maxMessages ?? 50;
  }

  /** The stored turns of a conversation, oldest first (empty when none). */
  async get(conversationId: string): Promise<StoredMessage[]> {
    const value = await this.keyv.get(this.key(conversationId));
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
      const current = (await this.keyv.get(key))?.messages ?? [];
      const next = [...current, ...messages].slice(-this.maxMessages);
      await this.keyv.set(key, { version: 1, messages: next });
    });
  }

  /** Forgets a conversation. */
  async clear(conversationId: string): Promise<void> {
    await this.keyv.delete(this.key(conversationId));
  }

  /** Closes the underlying store. */
  async close(): Promise<void> {
    await this.keyv.disconnect();
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
