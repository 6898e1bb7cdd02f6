/**
 * /forget: clears the conversation's history (the channel, thread or DM it is used in). In a
 * DM anyone may; in a channel, admins and members who may manage messages (on Slack, admins).
 *
 * Slack runs no slash command in a thread, so a Slack thread is forgotten by a mention saying
 * `forget` there or by the message shortcut {@link FORGET_THREAD_SHORTCUT_NAME}
 * (platforms/slack/events.ts, shortcuts.ts), with the same rights. {@link howToForget} says
 * which way applies where.
 */

import type { Core } from '../core.ts';
import { ForbiddenError } from '../errors.ts';
import { parseConversationKey } from '../keys.ts';
import type { CommandContext } from '../platform.ts';

/** The name of Slack's message shortcut that forgets a thread, as the Slack manifest declares it (≤ 24 characters). */
export const FORGET_THREAD_SHORTCUT_NAME = 'Forget this thread';

/**
 * Whether a message addressed to the bot (its mention of the bot removed) asks it to forget the
 * conversation: the word `forget` alone, in any case, with a final `.` or `!` at most.
 */
export function asksToForget(text: string): boolean {
  return /^\s*forget\s*[.!]?\s*$/i.test(text);
}

/**
 * How a user clears the history of the conversation they are in, as the end of a sentence
 * (after `; `), per place:
 * - a DM (Discord, or Slack outside a thread): `/forget starts afresh`;
 * - a Discord channel or thread: /forget, by an admin or a member who may manage messages;
 * - a Slack channel: /forget, by an admin;
 * - a Slack thread, where no slash command runs (/forget would clear the channel's
 *   conversation, not the thread's): `@bot forget` in the thread (in a DM, `forget` alone) or
 *   the message shortcut {@link FORGET_THREAD_SHORTCUT_NAME}, by an admin in a channel.
 * @param where the conversation key (keys.ts; an unreadable one gets the Discord wording) and
 *   whether it is a DM.
 */
export function howToForget(where: Pick<CommandContext, 'conversationId' | 'isDirectMessage'>): string {
  const ref = parseConversationKey(where.conversationId);
  const shortcut = `the message shortcut “${FORGET_THREAD_SHORTCUT_NAME}”`;
  if (ref?.platform === 'slack' && ref.thread) {
    return where.isDirectMessage
      ? `to start afresh in this thread, say \`forget\` in it, or use ${shortcut}`
      : `an admin can start afresh in this thread: mention me with \`forget\` in it, or use ${shortcut}`;
  }
  if (where.isDirectMessage) return '/forget starts afresh';
  return ref?.platform === 'slack'
    ? 'an admin can start afresh with /forget'
    : 'an admin or a member who may manage messages can start afresh with /forget';
}

/**
 * Clears the history and says so in the conversation (so everyone knows the bot starts afresh).
 * @param how what the user did, named in a refusal (default `/forget`; e.g. `Forgetting a thread`).
 * @throws ForbiddenError for a member without the right, in a channel.
 */
export async function forget(ctx: CommandContext, core: Core, how = '/forget'): Promise<void> {
  if (!ctx.isDirectMessage && !(await ctx.user.canManageMessages())) {
    throw new ForbiddenError(
      `${how} in a channel is for admins and members who may manage messages. In a DM with the bot anyone may use it.`,
    );
  }
  const count = (await core.history.get(ctx.conversationId)).length;
  await core.history.clear(ctx.conversationId);
  ctx.log.info({ conversation: ctx.conversationId, messages: count }, 'history cleared');
  await ctx.reply.send({
    content: `🧹 History cleared (${count} message${count === 1 ? '' : 's'} forgotten): the next message starts a new conversation.`,
  });
}
