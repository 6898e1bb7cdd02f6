/**
 * What one user left in one workspace (keys.ts `userIndex`, by `workspaceOf`: a Slack workspace, a
 * Discord server or the DMs): the conversations whose history holds a turn of theirs, and the
 * records kept for them under random ids (/imagine button states, their votes). `/forget me`
 * (features/forget-me.ts) reads it to find what to erase without listing the store: one read of
 * one small key, whatever the store's size.
 *
 * Written when a user's turn is stored (history.ts `append`) and when such a record is kept
 * (owned.ts `keepOwned` with an owner). A conversation is noted at most once a day per process
 * ({@link NOTE_AGAIN_MS}: an in-memory note of what was written, {@link NOTES_KEPT} at most), so
 * that the index costs one locked read-modify-write per user, conversation and day, not one per
 * turn. Entries older than the retention (a conversation's turns go with it: state/retention.ts)
 * or past their record's expiry leave it at its next write; {@link MAX_CONVERSATIONS} and
 * {@link MAX_RECORDS} bound it (the oldest leave first: a conversation dropped from it is not
 * erased by `/forget me`, docs/data.md). The key itself expires a retention after its last write.
 */
import { storeKeys, workspaceOf } from '../keys.ts';
import type { StateStore } from './store.ts';

/** A conversation is noted again in the index after this long, in ms (its time refreshed). */
export const NOTE_AGAIN_MS = 24 * 3_600_000;

/** Notes of what was written kept in memory, at most (the oldest forgotten first). */
export const NOTES_KEPT = 20_000;

/** Conversations one index keeps, at most. */
export const MAX_CONVERSATIONS = 1_000;

/** Records one index keeps, at most. */
export const MAX_RECORDS = 2_000;

/** An index as stored. */
export interface StoredUserIndex {
  version: 1;
  /** Conversation keys, each with when the user last spoke there as noted (ms since the epoch). */
  conversations: Record<string, number>;
  /** Store keys of records kept for the user, each with when it expires (ms since the epoch). */
  records: Record<string, number>;
}

/** Reads and writes users' indexes. */
export class UserIndex {
  /** What this process wrote lately: `<index key>\0<conversation>` → when (ms). */
  private readonly noted = new Map<string, number>();

  /**
   * @param store the store.
   * @param retentionMs how long a conversation stays in an index after the user last spoke there (HISTORY_RETENTION_DAYS).
   */
  constructor(
    private readonly store: StateStore,
    private readonly retentionMs: number,
  ) {}

  /**
   * Notes the conversation in the index of each user with a turn among `turns` (their `userId`),
   * unless this process noted it within {@link NOTE_AGAIN_MS}.
   * @throws the store's error.
   */
  async noteTurns(
    conversationId: string,
    turns: ReadonlyArray<{ role: string; userId?: string | undefined }>,
  ): Promise<void> {
    const workspace = workspaceOf(conversationId);
    if (!workspace) return;
    const users = new Set(turns.flatMap((t) => (t.role === 'user' && t.userId ? [t.userId] : [])));
    const now = Date.now();
    await Promise.all(
      [...users].map(async (user) => {
        const key = storeKeys.userIndex(workspace, user);
        const note = `${key}\0${conversationId}`;
        const last = this.noted.get(note);
        if (last !== undefined && now - last < NOTE_AGAIN_MS) return;
        await this.edit(key, (index) => {
          index.conversations[conversationId] = now;
        });
        this.noted.delete(note);
        if (this.noted.size >= NOTES_KEPT) this.noted.delete(this.noted.keys().next().value!);
        this.noted.set(note, now);
      }),
    );
  }

  /**
   * Notes a record kept for `user` in `workspace` until `untilMs` (ms since the epoch).
   * @throws the store's error.
   */
  async noteRecord(workspace: string, user: string, recordKey: string, untilMs: number): Promise<void> {
    await this.edit(storeKeys.userIndex(workspace, user), (index) => {
      index.records[recordKey] = untilMs;
    });
  }

  /**
   * What the index of `user` in `workspace` names, entries past their time left out.
   * @throws the store's error.
   */
  async read(workspace: string, user: string): Promise<{ conversations: string[]; records: string[] }> {
    const index = prune(await this.load(storeKeys.userIndex(workspace, user)), Date.now(), this.retentionMs);
    return { conversations: Object.keys(index.conversations), records: Object.keys(index.records) };
  }

  /**
   * The conversations of `user` in `workspace`, the one they spoke in last first (as noted: a day
   * apart at the finest, {@link NOTE_AGAIN_MS}), entries past their time left out: at most
   * {@link MAX_CONVERSATIONS}.
   * @returns each conversation key with when it was noted (ms since the epoch).
   * @throws the store's error.
   */
  async recent(workspace: string, user: string): Promise<Array<{ conversationId: string; at: number }>> {
    const index = prune(await this.load(storeKeys.userIndex(workspace, user)), Date.now(), this.retentionMs);
    return Object.entries(index.conversations)
      .map(([conversationId, at]) => ({ conversationId, at }))
      .sort((a, b) => b.at - a.at);
  }

  /**
   * Deletes the index of `user` in `workspace` (what it named was erased), and this process's notes of it.
   * @throws the store's error.
   */
  async drop(workspace: string, user: string): Promise<void> {
    const key = storeKeys.userIndex(workspace, user);
    for (const note of this.noted.keys()) if (note.startsWith(`${key}\0`)) this.noted.delete(note);
    await this.store.keyv.delete(key);
  }

  /** Forgets this process's notes of a workspace's indexes (it was purged: state/purge.ts). */
  forgetWorkspace(workspace: string): void {
    const prefix = storeKeys.userIndex(workspace, '');
    for (const note of this.noted.keys()) if (note.startsWith(prefix)) this.noted.delete(note);
  }

  private async load(key: string): Promise<StoredUserIndex> {
    const stored = (await this.store.keyv.get(key)) as StoredUserIndex | undefined;
    return stored?.version === 1 && stored.conversations && stored.records
      ? stored
      : { version: 1, conversations: {}, records: {} };
  }

  /** Reads, changes, prunes and writes an index under the store's lock on its key, for a retention. */
  private async edit(key: string, change: (index: StoredUserIndex) => void): Promise<void> {
    await this.store.withLock(key, async () => {
      const index = await this.load(key);
      change(index);
      await this.store.keyv.set(key, prune(index, Date.now(), this.retentionMs), this.retentionMs);
    });
  }
}

/** The index without entries past their time, each part within its bound (the oldest leave first). */
function prune(index: StoredUserIndex, now: number, retentionMs: number): StoredUserIndex {
  const newest = (entries: Record<string, number>, keep: (at: number) => boolean, max: number) =>
    Object.fromEntries(
      Object.entries(entries)
        .filter(([, at]) => typeof at === 'number' && keep(at))
        .sort((a, b) => a[1] - b[1])
        .slice(-max),
    );
  return {
    version: 1,
    conversations: newest(index.conversations, (at) => at + retentionMs > now, MAX_CONVERSATIONS),
    records: newest(index.records, (until) => until > now, MAX_RECORDS),
  };
}
