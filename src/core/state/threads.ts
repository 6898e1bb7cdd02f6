/**
 * The threads the bot opened for a conversation (Discord: `/chat thread:true`, or a channel's
 * `/settings auto_thread`), in the store under `thread:<conversation key>` for
 * {@link OPENED_THREAD_TTL_MS} after the bot last answered there. Inside such a thread every
 * message from a person continues the conversation without a mention (where the platform shows
 * the bot the text of messages that do not mention it: Discord's Message Content intent).
 */
import { storeKeys } from '../keys.ts';
import type { StateStore } from './store.ts';

/** How long a thread the bot opened stays a conversation after its last answer there: 30 days, in ms. */
export const OPENED_THREAD_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Marks (or marks again, restarting its {@link OPENED_THREAD_TTL_MS}) a thread as opened by the bot.
 * @param conversationId the thread's conversation key (keys.ts `conversationKey`).
 * @throws what the store throws.
 */
export async function rememberOpenedThread(store: StateStore, conversationId: string): Promise<void> {
  await store.keyv.set(storeKeys.openedThread(conversationId), true, OPENED_THREAD_TTL_MS);
}

/**
 * Whether the bot opened this thread (within {@link OPENED_THREAD_TTL_MS} of its last answer there).
 * @throws what the store throws.
 */
export async function isOpenedThread(store: StateStore, conversationId: string): Promise<boolean> {
  return (await store.keyv.get<boolean>(storeKeys.openedThread(conversationId))) === true;
}
