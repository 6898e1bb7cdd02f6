/**
 * Where a Discord answer goes when it should open a thread (issue 19, item 6): a `/chat` with
 * `thread:true`, or a `/chat` or a mention in a channel whose `/settings auto_thread` is on.
 *
 * - `/chat`: the interaction's reply shows the question (who asked, what; within a message's
 *   2,000 characters, pinging nobody), a public thread is started on that reply (named after
 *   the question, threads.ts) and the answer streams inside it.
 * - A mention: the thread is started on the user's own message, and the answer streams in it.
 *
 * The thread is the conversation (`conversationId` the thread's key; `channelKey` the parent's,
 * whose settings apply), remembered in the store (state/threads.ts) so that a person's every
 * message there continues it without a mention, where the Message Content intent lets the bot
 * read such messages; without it, the first answer there says that follow-ups need a mention.
 * Where no thread can be opened (threads.ts `threadParentOf`, or Discord refused), the answer comes
 * in place with a line saying why (for auto_thread, a DM or a thread is simply answered in place).
 * None is opened for someone who could not open one themselves (their Create Public Threads and
 * Send Messages in Threads, as the interaction or the cached roles say).
 */
import {
  type Channel,
  type ChatInputCommandInteraction,
  escapeMarkdown,
  type Message,
  type PermissionsBitField,
  type ThreadChannel,
} from 'discord.js';
import type { Core } from '../../core/core.ts';
import type { InvocationLocale } from '../../core/i18n/languages.ts';
import { english, type Sentence, type Words } from '../../core/i18n/words.ts';
import { conversationKey } from '../../core/keys.ts';
import type { CommandContext, ReplyChannel } from '../../core/platform.ts';
import { isOpenedThread, rememberOpenedThread } from '../../core/state/threads.ts';
import type { Logger } from '../../log.ts';
import type { InteractionResponder } from './responder.ts';
import {
  FOLLOW_UPS_NEED_MENTION,
  NO_THREAD,
  startThread,
  ThreadReply,
  threadNameOf,
  threadParentOf,
  threadRefusedLine,
} from './threads.ts';

/** The longest question shown in a /chat's reply, in characters (the rest of 2,000 is the header and the file line). */
const QUESTION_SHOWN_MAX = 1800;

/** What opening a thread needs from the adapter. */
export interface ThreadDeps {
  core: Core;
  /** Whether the Message Content intent is on (DISCORD_MESSAGE_CONTENT): follow-ups need no mention. */
  messageContent: boolean;
}

/** Whether a channel's auto_thread is on (a store that does not answer counts as off). */
async function autoThreadOn(core: Core, channelKey: string, log: Logger): Promise<boolean> {
  try {
    return (await core.settings.get(channelKey)).autoThread === true;
  } catch (error) {
    log.warn({ err: error instanceof Error ? error.message : String(error) }, 'channel settings unreadable: no thread');
    return false;
  }
}

/** A /chat's question as its (public) reply shows it, in the place's `words`: `**Ada** asked:` and the prompt quoted, cut to fit. */
export function questionMessage(
  asker: string,
  prompt: string,
  file: string | undefined,
  words: Words = english,
): string {
  const points = Array.from(prompt.trim());
  const shown = points.length > QUESTION_SHOWN_MAX ? `${points.slice(0, QUESTION_SHOWN_MAX).join('')}…` : prompt.trim();
  const quoted = shown
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
  const attached = file ? `\n📎 ${escapeMarkdown(file.slice(0, 100))}` : '';
  return `${words.t('discord.threads.asked', { asker: escapeMarkdown(asker.slice(0, 80)) })}\n${quoted}${attached}`;
}

/** The thread's conversation: its key, its reply, the lines under its first answer; the thread remembered. */
async function inThread(
  thread: ThreadChannel,
  reply: ReplyChannel,
  deps: ThreadDeps,
  log: Logger,
): Promise<Pick<CommandContext, 'conversationId' | 'reply' | 'notices'>> {
  const conversationId = conversationKey({ platform: 'discord', guild: thread.guildId, channel: thread.id });
  await rememberOpenedThread(deps.core.store, conversationId).catch((error: unknown) =>
    log.warn({ err: error instanceof Error ? error.message : String(error) }, 'opened thread not remembered'),
  );
  log.info({ thread: thread.id }, 'answering in a new thread');
  return { conversationId, reply, notices: deps.messageContent ? [] : [FOLLOW_UPS_NEED_MENTION] };
}

/**
 * The context of a /chat that should open a thread (`thread:true`, or the channel's auto_thread
 * with no `thread:false`): the question shown in the interaction's reply, a thread started on
 * it, and the answer's reply and conversation moved into it; `ctx` as it is when none is wanted,
 * with a line saying why where one was wanted and cannot be opened. Call once the command's
 * options passed their checks. Never throws: a failure before the question was shown leaves the
 * answer to the command as before (its own failure says why).
 */
export async function chatInThread(
  interaction: ChatInputCommandInteraction,
  responder: InteractionResponder,
  ctx: CommandContext,
  deps: ThreadDeps,
): Promise<CommandContext> {
  const asked = ctx.options.thread;
  // The answer's history is likely this channel's (no thread): read beside the channel's settings, not after them.
  if (asked !== true) deps.core.history.prefetch(ctx.conversationId);
  const wanted = asked === true || (asked === undefined && (await autoThreadOn(deps.core, ctx.channelKey, ctx.log)));
  if (!wanted) return ctx;
  const channel: Channel | null =
    interaction.channel ?? (await interaction.client.channels.fetch(interaction.channelId).catch(() => null));
  const where = threadParentOf(
    interaction.inGuild() ? channel : null,
    interaction.inGuild() ? interaction.appPermissions : null,
    interaction.memberPermissions,
  );
  // The lines under the answer and the question shown are public: in the place's words.
  const words = await deps.core.languages.forPlace(ctx);
  if ('why' in where) return asked === true || saidForAutoThread(where.why) ? { ...ctx, notices: [where.why] } : ctx;
  const prompt = String(ctx.options.prompt ?? '');
  let messageId: string | undefined;
  try {
    await responder.defer();
    const file = typeof ctx.options.image === 'string' ? ctx.options.image : undefined;
    messageId = await responder.fill({ content: questionMessage(interaction.user.displayName, prompt, file, words) });
  } catch (error) {
    ctx.log.warn({ err: error }, 'the question could not be shown: answering in place');
    return ctx;
  }
  try {
    if (!messageId) throw new Error('Discord named no message for the question');
    const thread = await startThread(
      where.parent,
      messageId,
      threadNameOf(prompt, words),
      deps.core.scheduler,
      ctx.ref,
    );
    const reply = new ThreadReply(thread, ctx.log, (m) => responder.sendEphemeral(m), deps.core.scheduler);
    return { ...ctx, ...(await inThread(thread, reply, deps, ctx.log)) };
  } catch (error) {
    ctx.log.warn({ err: error }, 'no thread opened: answering in place');
    return { ...ctx, notices: [threadRefusedLine(error)] };
  }
}

/** Whether an auto_thread answer in place says why no thread was opened: for a missing permission (the bot's or the asker's). */
function saidForAutoThread(why: Sentence): boolean {
  return why === NO_THREAD.permission || why === NO_THREAD.yours;
}

/** Where a mention's answer goes: the thread it opened, or in place (with a line saying why none was). */
export interface MentionPlace {
  thread?: { reply: ThreadReply; conversationId: string };
  notices: Sentence[];
}

/**
 * Opens a thread on a mention's message when its channel's auto_thread is on (in a server's
 * text or announcement channel, not in a thread): the answer then streams inside it. Never
 * throws: where none can be opened, the line saying why is in `notices`.
 */
export async function mentionInThread(
  message: Message,
  prompt: string,
  where: {
    channelKey: string;
    ref: string;
    author: Readonly<PermissionsBitField> | null;
    /** The message's language tags (locale.ts `messageLocale`): the lines said are the place's. */
    locale?: InvocationLocale | undefined;
  },
  deps: ThreadDeps,
  log: Logger,
): Promise<MentionPlace> {
  if (!message.inGuild() || message.channel.isThread() || !(await autoThreadOn(deps.core, where.channelKey, log)))
    return { notices: [] };
  const me = message.guild.members.me;
  const place = threadParentOf(message.channel, me ? message.channel.permissionsFor(me) : null, where.author);
  if ('why' in place) return { notices: [place.why] };
  const words = await deps.core.languages.forPlace(where);
  try {
    const thread = await startThread(
      place.parent,
      message.id,
      threadNameOf(prompt, words),
      deps.core.scheduler,
      where.ref,
    );
    const reply = new ThreadReply(thread, log, undefined, deps.core.scheduler);
    const opened = await inThread(thread, reply, deps, log);
    return { thread: { reply, conversationId: opened.conversationId }, notices: [...(opened.notices ?? [])] };
  } catch (error) {
    log.warn({ err: error }, 'no thread opened: answering in place');
    return { notices: [threadRefusedLine(error)] };
  }
}

/**
 * Whether a message's thread is one the bot opened for a conversation (state/threads.ts), in
 * which case it stays remembered for 30 more days (OPENED_THREAD_TTL_MS) from this message.
 * @throws the store's error.
 */
export async function stillOpenedThread(core: Core, message: Message): Promise<boolean> {
  const conversationId = conversationKey({
    platform: 'discord',
    guild: message.guildId ?? undefined,
    channel: message.channelId,
  });
  if (!(await isOpenedThread(core.store, conversationId))) return false;
  await rememberOpenedThread(core.store, conversationId);
  return true;
}
