/**
 * /forget: clears the conversation's history (the channel, thread or DM it is used in). In a
 * DM anyone may; in a channel, admins and members who may manage messages (on Slack, admins).
 *
 * Slack runs no slash command in a thread, so a Slack thread is forgotten by a mention saying
 * `forget` there or by the message shortcut “Forget this thread” (sentences.ts FORGET_THREAD_SHORTCUT_NAME)
 * (platforms/slack/events.ts, shortcuts.ts), with the same rights. sentences.ts
 * `howToForget` says which way applies where.
 */

import type { Core } from '../core.ts';
import { sendOnce } from '../delivery/one-off.ts';
import { ForbiddenError } from '../errors.ts';
import type { CommandContext } from '../platform.ts';
import { forgetRefused } from '../sentences.ts';
import { forgetAnswerStates } from './answer-index.ts';

/**
 * Whether a message addressed to the bot (its mention of the bot removed) asks it to forget the
 * conversation: the word `forget` alone, in any case, with a final `.` or `!` at most.
 */
export function asksToForget(text: string): boolean {
  return /^\s*forget\s*[.!]?\s*$/i.test(text);
}

/**
 * Clears the history (and the conversation's exchanges waiting for the store, and what its
 * answers keep for Regenerate and edited mentions: answer-index.ts `forgetAnswerStates`) and
 * says so in the conversation (so everyone knows the bot starts afresh), in the place's words.
 * @param how what the user did, named in a refusal (default `/forget`; e.g. `Forgetting a thread`).
 * @throws ForbiddenError for a member without the right, in a channel (sentences.ts
 *   `forgetRefused`: who may, on this platform); what `canManageMessages` rejects with when the
 *   rights could not be checked.
 */
export async function forget(ctx: CommandContext, core: Core, how = '/forget'): Promise<void> {
  if (!ctx.isDirectMessage && !(await ctx.user.canManageMessages())) {
    throw new ForbiddenError(forgetRefused(ctx.platform, how));
  }
  const count = (await core.history.get(ctx.conversationId)).length;
  await core.history.clear(ctx.conversationId);
  // Exchanges that wait for the store (it did not take them) are forgotten too, never stored later.
  core.pendingTurns.forget(ctx.conversationId);
  // Regenerate and an edited mention would send the forgotten turns again: their states go too.
  const states = await forgetAnswerStates(core, ctx.conversationId);
  ctx.log.info({ conversation: ctx.conversationId, messages: count, answerStates: states }, 'history cleared');
  const words = await core.languages.forPlace(ctx);
  await sendOnce(core.scheduler, ctx.reply, { content: words.t('commands.forget.cleared', { count }) });
}
