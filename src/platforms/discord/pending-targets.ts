/**
 * The messages chosen for a Discord message action whose question's modal is open
 * (message-actions.ts): kept in the process until the modal's submit, since a message fetched
 * again may come without its content (no Message Content intent), and where the bot is not a
 * member it cannot be fetched at all.
 */
import type { Message } from 'discord.js';

/** How long a chosen message is kept for its modal, in ms. */
export const PENDING_TARGET_TTL_MS = 15 * 60_000;

/** Most chosen messages kept at once (the oldest is dropped first). */
const MAX_PENDING_TARGETS = 1_000;

/**
 * The messages chosen for an action whose modal is open, by user and message, for
 * {@link PENDING_TARGET_TTL_MS} and at most 1,000 at once. In memory: a guild's interactions
 * reach the process that runs its shard, so its modal's submit comes back to the same one; after
 * a restart the message is fetched again (readable with the Message Content intent, or when it is
 * the bot's own, mentions it, or is in a DM), else the user is asked to use the action again.
 */
export class PendingTargets {
  private readonly kept = new Map<string, { message: Message; until: number }>();

  /** Keeps `message` for `userId`'s modal. */
  keep(userId: string, message: Message): void {
    const key = `${userId}/${message.id}`;
    this.kept.delete(key);
    this.kept.set(key, { message, until: Date.now() + PENDING_TARGET_TTL_MS });
    for (const [old, entry] of this.kept) {
      if (this.kept.size <= MAX_PENDING_TARGETS && entry.until > Date.now()) break;
      this.kept.delete(old);
    }
  }

  /** The message `userId` chose, taken out; undefined when it is not kept or has expired. */
  take(userId: string, messageId: string): Message | undefined {
    const key = `${userId}/${messageId}`;
    const entry = this.kept.get(key);
    this.kept.delete(key);
    return entry && entry.until > Date.now() ? entry.message : undefined;
  }
}
