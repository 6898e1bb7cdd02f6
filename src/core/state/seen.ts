/**
 * Where messages to the bot were seen, for catch-up after downtime (core/catch-up.ts): per
 * platform, each conversation (a Discord channel, thread or DM; a Slack channel, DM or thread)
 * where the bot was mentioned or written to, with the newest message id seen there (a Discord
 * snowflake, a Slack `ts`) and when. After a restart, catch-up reads each conversation's
 * messages since then.
 *
 * Seeing costs nothing a user waits for: {@link SeenConversations.see} notes it in memory, and
 * the notes are written together every {@link SEEN_FLUSH_MS} (and when the bot stops) as one
 * JSON map per platform (`seen:<platform>`, keys.ts), merged under the store's lock with what
 * other instances wrote (the newest id wins), entries older than the TTL dropped, at most
 * {@link MAX_SEEN} kept (the most recently seen).
 */
import type { Logger } from '../../log.ts';
import { storeKeys } from '../keys.ts';
import type { StateStore } from './store.ts';

/** How often the notes are written to the store, in ms. */
export const SEEN_FLUSH_MS = 5_000;

/** The most conversations kept per platform (the most recently seen). */
export const MAX_SEEN = 2_000;

/**
 * How long a conversation is remembered after its last message to the bot, in ms: a bit over
 * catch-up's age bound (`CATCH_UP_MAX_AGE_MINUTES`), 0 when catch-up is off.
 */
export function seenTtlMs(maxAgeMinutes: number): number {
  return maxAgeMinutes > 0 ? (maxAgeMinutes + 5) * 60_000 : 0;
}

/** One conversation where messages to the bot were seen. */
export interface SeenConversation {
  /** Its conversation key (keys.ts `conversationKey`). */
  conversation: string;
  /** The newest message id seen there: a Discord snowflake or a Slack `ts`. */
  last: string;
  /** When it was last seen, ms since 1970. */
  at: number;
  /** A direct message with the bot (every message of a person there is addressed to it). */
  dm?: boolean;
}

/** The stored map of one platform. */
interface StoredSeen {
  version: 1;
  conversations: Record<string, { last: string; at: number; dm?: boolean }>;
}

type Platform = 'discord' | 'slack';

/**
 * Whether message id `a` is newer than `b`: both Discord snowflakes (decimal integers) or both
 * Slack `ts` (`<seconds>.<6 digits>`), compared as numbers written without leading zeros.
 */
export function newerId(a: string, b: string): boolean {
  return a.length !== b.length ? a.length > b.length : a > b;
}

/** The conversations where messages to the bot were seen, per platform (see the file's comment). */
export class SeenConversations {
  private readonly pending = new Map<Platform, Map<string, SeenConversation>>();
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param options.ttlMs how long a conversation is remembered after its last message to the
   *   bot, in ms (a bit over the catch-up age bound); 0 turns remembering off.
   */
  constructor(
    private readonly state: StateStore,
    private readonly options: { ttlMs: number; log: Logger; now?: () => number },
  ) {}

  /** Whether conversations are remembered (catch-up is on). */
  get enabled(): boolean {
    return this.options.ttlMs > 0;
  }

  /** Notes a message to the bot in a conversation (written with the next flush). Never throws, never waits. */
  see(platform: Platform, conversation: string, id: string, options: { dm?: boolean } = {}): void {
    if (!this.enabled) return;
    const notes = this.pending.get(platform) ?? new Map<string, SeenConversation>();
    this.pending.set(platform, notes);
    const before = notes.get(conversation);
    if (before && !newerId(id, before.last)) return;
    notes.set(conversation, { conversation, last: id, at: this.now(), ...(options.dm ? { dm: true } : {}) });
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), SEEN_FLUSH_MS);
      this.timer.unref();
    }
  }

  /**
   * The conversations of a platform remembered now (the store's, with this process's notes not
   * written yet), most recently seen first.
   * @throws the store's error when it cannot be read.
   */
  async list(platform: Platform): Promise<SeenConversation[]> {
    const stored = await this.state.keyv.get<StoredSeen>(storeKeys.seenConversations(platform));
    const merged = this.merge(stored, [...(this.pending.get(platform)?.values() ?? [])]);
    return Object.entries(merged.conversations)
      .map(([conversation, entry]) => ({ conversation, ...entry }))
      .sort((a, b) => b.at - a.at);
  }

  /** Writes the notes not written yet, each platform's under its lock. Never throws: a failure is logged at debug. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batches = [...this.pending];
    this.pending.clear();
    await Promise.all(
      batches.map(async ([platform, notes]) => {
        const key = storeKeys.seenConversations(platform);
        try {
          await this.state.withLock(key, async () => {
            const merged = this.merge(await this.state.keyv.get<StoredSeen>(key), [...notes.values()]);
            await this.state.keyv.set(key, merged, this.options.ttlMs);
          });
        } catch (error) {
          this.options.log.debug({ err: error instanceof Error ? error.message : String(error) }, 'seen not written');
        }
      }),
    );
  }

  /** Drops this process's notes not written yet of the conversations whose keys start with `prefix` (an uninstalled workspace's). */
  dropNotes(platform: Platform, prefix: string): void {
    const notes = this.pending.get(platform);
    for (const conversation of [...(notes?.keys() ?? [])])
      if (conversation.startsWith(prefix)) notes!.delete(conversation);
  }

  /** `stored` with `notes` merged in (the newest id of each wins), expired entries dropped, at most {@link MAX_SEEN}. */
  private merge(stored: StoredSeen | undefined, notes: SeenConversation[]): StoredSeen {
    const oldest = this.now() - this.options.ttlMs;
    const all = new Map(Object.entries(stored?.conversations ?? {}));
    for (const { conversation, ...note } of notes) {
      const before = all.get(conversation);
      if (!before || newerId(note.last, before.last))
        all.set(conversation, { ...note, at: Math.max(note.at, before?.at ?? 0) });
      else all.set(conversation, { ...before, at: Math.max(note.at, before.at) });
    }
    const kept = [...all].filter(([, e]) => e.at >= oldest).sort(([, a], [, b]) => b.at - a.at);
    return { version: 1, conversations: Object.fromEntries(kept.slice(0, MAX_SEEN)) };
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/**
 * Removes from a platform's stored map (`seen:<platform>`, under its lock, as flushes write it)
 * the conversations whose keys start with `prefix`: an uninstalled workspace's
 * (`slack:<team>:`; state/purge.ts). The map's other conversations, and its expiry, stay.
 * @returns how many were removed.
 * @throws the store's error.
 */
export async function dropSeen(state: StateStore, platform: Platform, prefix: string): Promise<number> {
  const key = storeKeys.seenConversations(platform);
  return state.withLock(key, async () => {
    // Raw: the map keeps the expiry its last flush gave it.
    const raw = (await state.keyv.get(key, { raw: true })) as { value?: StoredSeen; expires?: number } | undefined;
    const stored = raw?.value;
    if (stored?.version !== 1 || !stored.conversations) return 0;
    const kept = Object.entries(stored.conversations).filter(([conversation]) => !conversation.startsWith(prefix));
    const removed = Object.keys(stored.conversations).length - kept.length;
    if (removed === 0) return 0;
    const ttlMs = raw?.expires === undefined ? undefined : raw.expires - Date.now();
    if (kept.length === 0 || (ttlMs !== undefined && ttlMs <= 0)) await state.keyv.delete(key);
    else await state.keyv.set(key, { version: 1, conversations: Object.fromEntries(kept) } satisfies StoredSeen, ttlMs);
    return removed;
  });
}
