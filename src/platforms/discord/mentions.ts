/**
 * A Discord message addressed to the bot (messages.ts `isAddressedToBot`) as an invocation of
 * the core's mention feature: its context (the channel's conversation, or the reply chain:
 * reply-chain.ts), its reply (messages.ts `MessageReply`) and its request.
 */
import type { Message } from 'discord.js';
import { runInvocation } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { InputError } from '../../core/errors.ts';
import { answerMention } from '../../core/features/mention.ts';
import { conversationKey, messageRef } from '../../core/keys.ts';
import type { CommandContext } from '../../core/platform.ts';
import { type Logger, newReference } from '../../log.ts';
import { invocationUser } from './members.ts';
import { attachmentOf, channelKeyOf, HIDDEN_MESSAGE_REPLY, looksHidden, MessageReply, promptOf } from './messages.ts';
import type { DiscordRateLimits } from './rate-limits.ts';
import { aroundMessage } from './reply-chain.ts';

/**
 * Answers a message addressed to the bot (see {@link isAddressedToBot}; the caller checks).
 * @param options.messageContent whether the Message Content intent is on (DISCORD_MESSAGE_CONTENT).
 * @param signal the invocation's own signal (shutdown).
 */
export async function handleMessage(
  message: Message,
  deps: { core: Core; log: Logger; botId: string; messageContent: boolean; rateLimits?: DiscordRateLimits },
  signal: AbortSignal,
): Promise<void> {
  const { core, botId } = deps;
  const ref = newReference();
  const log = deps.log.child({
    platform: 'discord',
    ref,
    command: 'mention',
    message: message.id,
    channel: message.channelId,
  });
  const reply = new MessageReply(message, log);
  const ctx = messageContext(message, core, { signal, log, ref, reply });
  try {
    await runInvocation('mention', ctx, core, async () => {
      if (!deps.messageContent && looksHidden(message, botId)) throw new InputError(HIDDEN_MESSAGE_REPLY);
      const attachments = message.attachments.map((file) => attachmentOf(file, 'message', core.downloader));
      const around = await aroundMessage(message, deps, log, ref);
      await answerMention(ctx, core, {
        text: promptOf(message, botId),
        attachments: [...attachments, ...around.attachments],
        ...(around.context ? { context: around.context } : {}),
        ref: messageRef({ platform: 'discord', channel: message.channelId, message: message.id }),
      });
    });
  } finally {
    reply.dispose();
  }
}

/** The platform-neutral CommandContext of a message addressed to the bot (a mention, a DM, an edit of one). */
export function messageContext(
  message: Message,
  core: Core,
  invocation: Pick<CommandContext, 'signal' | 'log' | 'ref' | 'reply'>,
): CommandContext {
  return {
    platform: 'discord',
    conversationId: conversationKey({
      platform: 'discord',
      guild: message.guildId ?? undefined,
      channel: message.channelId,
    }),
    channelKey: channelKeyOf(message.guildId, message.channelId, message.channel),
    isDirectMessage: !message.inGuild(),
    user: invocationUser(
      message.author,
      message.member,
      message.inGuild() ? message.channel.permissionsFor(message.author) : null,
      core.admins,
    ),
    options: {},
    files: {},
    ...invocation,
  };
}
