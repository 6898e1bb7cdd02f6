/**
 * A Discord message addressed to the bot (messages.ts `isAddressedToBot`, or a follow-up in a
 * thread it opened) as an invocation of the core's mention feature: its context (the
 * channel's conversation, the reply chain: reply-chain.ts, or a thread's messages:
 * thread-read.ts), its reply (messages.ts `MessageReply`, or a new thread's: thread-open.ts)
 * and its request.
 */

import type { Message } from 'discord.js';
import { claimAnswer, LATE_NOTICE } from '../../core/catch-up.ts';
import { runInvocation } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { InputError } from '../../core/errors.ts';
import { answerMention } from '../../core/features/mention.ts';
import { type Sentence, sentence } from '../../core/i18n/words.ts';
import { conversationKey, discordClaims, messageRef } from '../../core/keys.ts';
import type { CommandContext } from '../../core/platform.ts';
import { type Logger, newReference } from '../../log.ts';
import { messageLocale } from './locale.ts';
import { authorPermissions, invocationUser, mayReadHistory } from './members.ts';
import { attachmentsOf, channelKeyOf, HIDDEN_MESSAGE_REPLY, looksHidden, MessageReply, promptOf } from './messages.ts';
import type { DiscordRateLimits } from './rate-limits.ts';
import { type AroundMessage, aroundMessage } from './reply-chain.ts';
import { mentionInThread } from './thread-open.ts';
import { readThread } from './thread-read.ts';

/** Said under an answer that did not read the messages before the mention, for an author who may not read them. */
export const NO_HISTORY_RIGHT: Sentence = sentence('discord.no_history_right');

/**
 * Answers a message addressed to the bot (see {@link isAddressedToBot}; the caller checks): in
 * a new thread on it when its channel's auto_thread is on (thread-open.ts), else as a reply.
 * Its context: the reply chain (reply-chain.ts), else, in a thread the bot keeps no history
 * for, the thread's recent messages (thread-read.ts): read for the author only where they may
 * read the history themselves (Read Message History, members.ts), else the answer says so
 * ({@link NO_HISTORY_RIGHT}); and a thread is opened for them only where they could open one.
 * A message is answered once, by whichever instance claims it first (keys.ts
 * `discordClaims.message`; catch-up after downtime claims the same: core/catch-up.ts), and its
 * conversation is remembered for catch-up (state/seen.ts).
 * @param options.messageContent whether the Message Content intent is on (DISCORD_MESSAGE_CONTENT).
 * @param signal the invocation's own signal (shutdown).
 * @param late a catch-up's answer: the message is claimed already, and the answer says it is late.
 */
export async function handleMessage(
  message: Message,
  deps: { core: Core; log: Logger; botId: string; messageContent: boolean; rateLimits?: DiscordRateLimits },
  signal: AbortSignal,
  late = false,
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
  if (!late && !(await claimAnswer(core, log, discordClaims.message(message.channelId, message.id)))) {
    log.info('message answered already (by another instance or by catch-up); ignored');
    return;
  }
  const channelKey = channelKeyOf(message.guildId, message.channelId, message.channel);
  const hidden = !deps.messageContent && looksHidden(message, botId);
  const author = await authorPermissions(message);
  const place = hidden
    ? { notices: [] }
    : await mentionInThread(
        message,
        promptOf(message, botId),
        { channelKey, ref, author, locale: messageLocale(message) },
        deps,
        log,
      );
  const reply = place.thread?.reply ?? new MessageReply(message, log, core.scheduler);
  const ctx = messageContext(message, core, {
    signal,
    log,
    ref,
    reply,
    notices: late ? [...place.notices, LATE_NOTICE] : place.notices,
    ...(place.thread ? { conversationId: place.thread.conversationId } : {}),
  });
  rememberSeen(core, message, place.thread?.conversationId);
  try {
    await runInvocation('mention', ctx, core, async () => {
      if (hidden) throw new InputError(HIDDEN_MESSAGE_REPLY);
      const attachments = attachmentsOf(message, 'message', core.downloader);
      const around = await earlierFor(
        message,
        mayReadHistory(author),
        { ...deps, conversationId: ctx.conversationId },
        log,
        ref,
      );
      await answerMention(ctx, core, {
        text: promptOf(message, botId),
        attachments: [...attachments, ...around.attachments],
        ...(around.context ? { context: around.context } : {}),
        ...(around.notices.length ? { notices: around.notices } : {}),
        ref: messageRef({ platform: 'discord', channel: message.channelId, message: message.id }),
      });
    });
  } finally {
    reply.dispose();
  }
}

/**
 * What the messages before a mention add to it, read for its author: the reply chain
 * (reply-chain.ts), else a thread's earlier messages (thread-read.ts). For an author who may not
 * read the channel's history (Read Message History), nothing is read, and the answer says so
 * ({@link NO_HISTORY_RIGHT}) where something would have been: a reply, or a thread the bot keeps
 * no history for.
 */
async function earlierFor(
  message: Message,
  readsHistory: boolean,
  deps: { core: Core; botId: string; messageContent: boolean; conversationId: string },
  log: Logger,
  ref: string,
): Promise<AroundMessage & { notices: Sentence[] }> {
  if (readsHistory) {
    const around = await aroundMessage(message, deps, log, ref);
    const context = around.context ?? (await readThread(message, deps, log, ref));
    return { attachments: around.attachments, ...(context ? { context } : {}), notices: [] };
  }
  const threadUnread =
    message.channel.isThread() &&
    (await deps.core.history.asChatMessages(deps.conversationId).catch(() => [])).length === 0;
  const reply = message.reference?.messageId !== undefined && message.reference.channelId === message.channelId;
  const skipped = reply || threadUnread;
  if (skipped) log.info('earlier messages not read: the author may not read the history here');
  if (!skipped) return { attachments: [], notices: [] };
  // A line under a public answer: rendered in the place's words with the answer.
  return { attachments: [], notices: [NO_HISTORY_RIGHT] };
}

/** Notes the message's channel (and the thread opened on it) as where the bot was addressed, for catch-up. */
function rememberSeen(core: Core, message: Message, thread: string | undefined): void {
  const dm = !message.inGuild();
  const guild = message.guildId ?? undefined;
  core.seen.see('discord', conversationKey({ platform: 'discord', guild, channel: message.channelId }), message.id, {
    dm,
  });
  if (thread) core.seen.see('discord', thread, message.id);
}

/**
 * The platform-neutral CommandContext of a message addressed to the bot (a mention, a DM, an
 * edit of one): its channel's conversation unless `invocation.conversationId` names another (a
 * thread the bot opened on it).
 */
export function messageContext(
  message: Message,
  core: Core,
  invocation: Pick<CommandContext, 'signal' | 'log' | 'ref' | 'reply'> &
    Partial<Pick<CommandContext, 'conversationId' | 'notices'>>,
): CommandContext {
  return {
    platform: 'discord',
    locale: messageLocale(message),
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
      message.channel.isThread(),
    ),
    options: {},
    files: {},
    startedAt: performance.now(),
    ...invocation,
  };
}
