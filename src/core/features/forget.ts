/**
 * /forget: clears the conversation's history (the channel, thread or DM it is used in). In a
 * DM anyone may; in a channel, admins and members who may manage messages.
 */

import type { Core } from '../core.ts';
import { ForbiddenError } from '../errors.ts';
import type { CommandContext } from '../platform.ts';

/**
 * Clears the history and says so in the conversation (so everyone knows the bot starts afresh).
 * @throws ForbiddenError for a member without the right, in a channel.
 */
export async function forget(ctx: CommandContext, core: Core): Promise<void> {
  if (!ctx.isDirectMessage && !(await ctx.user.canManageMessages())) {
    throw new ForbiddenError(
      '/forget in a channel is for admins and members who may manage messages. In a DM with the bot anyone may use it.',
    );
  }
  const count = (await core.history.get(ctx.conversationId)).length;
  await core.history.clear(ctx.conversationId);
  ctx.log.info({ conversation: ctx.conversationId, messages: count }, 'history cleared');
  await ctx.reply.send({
    content: `🧹 History cleared (${count} message${count === 1 ? '' : 's'} forgotten): the next message starts a new conversation.`,
  });
}
