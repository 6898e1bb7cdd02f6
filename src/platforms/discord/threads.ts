/**
 * Threads the bot opens for a conversation on Discord (issue 19, item 6): where one may be
 * opened and why not, its name, the thread's start (Discord's "Start Thread from Message",
 * `POST /channels/{channel.id}/messages/{message.id}/threads`, one thread per message, the
 * thread's id being the message's), and {@link ThreadReply}, an answer streamed inside it.
 * The flows that use them: thread-open.ts (`/chat thread:true`, `/settings auto_thread`).
 *
 * Opening needs Create Public Threads and Send Messages in Threads in the channel, of the bot and
 * of the person it is opened for (the bot opens none for someone who could not), and a text
 * or announcement channel (a DM has no threads, a thread no threads of its own, a forum's
 * posts are threads already): elsewhere the answer comes in place, with one line saying why.
 */
import {
  type Channel,
  ChannelType,
  DiscordAPIError,
  type Message,
  type NewsChannel,
  type PermissionsBitField,
  type TextChannel,
  type ThreadChannel,
} from 'discord.js';
import type { WriteScheduler } from '../../core/delivery/scheduler.ts';
import { english, type Sentence, sentence, type Words } from '../../core/i18n/words.ts';
import { type BucketId, messageRef } from '../../core/keys.ts';
import type { MessageHandle, OutgoingMessage, ReplyChannel } from '../../core/platform.ts';
import { firstLineOf } from '../../core/text-scan.ts';
import type { Logger } from '../../log.ts';
import { withGalleryFallback } from './components-v2.ts';
import { explainDiscordError, isUnknownMessage } from './errors.ts';
import { mayOpenThread } from './members.ts';
import { Typing, tellPublicly } from './messages.ts';
import { channelBucket, GLOBAL_BUCKET } from './rate-limits.ts';
import { DISCORD_MESSAGE_LIMITS, editPayloadOf, payloadOf } from './rest.ts';

/** Discord's longest thread name, in characters ("Start Thread from Message": 1–100). */
export const THREAD_NAME_MAX = 100;

/** Why an answer that should have opened a thread came in place, one line each (rendered in the place's words). */
export const NO_THREAD = {
  dm: sentence('discord.threads.dm'),
  inThread: sentence('discord.threads.in_thread'),
  channelType: sentence('discord.threads.channel_type'),
  permission: sentence('discord.threads.permission'),
  yours: sentence('discord.threads.yours'),
  refused: sentence('discord.threads.refused'),
} as const satisfies Record<string, Sentence>;

/** Discord's 50013 inside a thread, in the words of errors.ts's refusals: posting there takes Send Messages in Threads. */
export const THREAD_PERMISSION_SENTENCE: Sentence = sentence('discord.threads.thread_permission');

/** Said under the first answer in a new thread when the bot cannot read messages that do not mention it. */
export const FOLLOW_UPS_NEED_MENTION: Sentence = sentence('discord.threads.follow_ups_need_mention');

/** A channel a thread can be started in from a message. */
export type ThreadParent = TextChannel | NewsChannel;

/**
 * The channel a thread can be opened in on a message of `channel`, or why none can (a line of
 * {@link NO_THREAD}): opening one and answering in it need Create Public Threads and Send
 * Messages in Threads, of the bot and of the person it opens the thread for (members.ts).
 * @param permissions the bot's permissions in the channel (an interaction's `app_permissions`,
 *   or computed from the cached roles); null when unknown (then Discord's answer decides).
 * @param invoker the asker's permissions there (an interaction's `member.permissions`, a message
 *   author's computed ones); null when unknown.
 */
export function threadParentOf(
  channel: Channel | null,
  permissions: Readonly<PermissionsBitField> | null,
  invoker: Readonly<PermissionsBitField> | null = null,
): { parent: ThreadParent } | { why: Sentence } {
  if (!channel || channel.isDMBased()) return { why: NO_THREAD.dm };
  if (channel.isThread()) return { why: NO_THREAD.inThread };
  if (!isThreadParent(channel)) return { why: NO_THREAD.channelType };
  if (!mayOpenThread(permissions)) return { why: NO_THREAD.permission };
  if (!mayOpenThread(invoker)) return { why: NO_THREAD.yours };
  return { parent: channel };
}

/** Whether threads can be started from the channel's messages (a text or announcement channel). */
export function isThreadParent(channel: Channel): channel is ThreadParent {
  return channel.type === ChannelType.GuildText || channel.type === ChannelType.GuildAnnouncement;
}

/**
 * A thread's name from the question: its first line, spaces collapsed, cut to
 * {@link THREAD_NAME_MAX} characters (code points, an ellipsis at the cut); `Conversation`
 * (in `words`, the place's: the name is public) when it has no text. Linear in the length of the text.
 */
export function threadNameOf(question: string, words: Words = english): string {
  const line = firstLineOf(question);
  const points = Array.from(line);
  if (points.length === 0) return words.t('discord.threads.untitled');
  return points.length <= THREAD_NAME_MAX ? line : `${points.slice(0, THREAD_NAME_MAX - 1).join('')}…`;
}

/** The line under an answer in place when Discord refused to open the thread (not yet in words: the place's). */
export function threadRefusedLine(error: unknown): Sentence {
  if (isMissingPermission(error)) return NO_THREAD.permission;
  const why = explainDiscordError(error);
  return why ? sentence('discord.threads.refused_because', { reason: why }) : NO_THREAD.refused;
}

/** Whether a discord.js error is Discord's "Missing Permissions" (50013). */
function isMissingPermission(error: unknown): boolean {
  return error instanceof DiscordAPIError && Number(error.code) === 50013;
}

/**
 * Starts a public thread on a message of `channel` (discord.js `threads.create` with
 * `startMessage`: "Start Thread from Message"; Discord announces it with THREAD_CREATE), as one
 * bot-token write in the write scheduler (the global budget).
 * @param stream a name for the write in the scheduler (the invocation's reference).
 * @throws DiscordAPIError as Discord refuses it (50013 a missing permission, 160004 a thread
 *   already opened on the message, 50024 a channel without threads).
 */
export async function startThread(
  channel: ThreadParent,
  messageId: string,
  name: string,
  scheduler: WriteScheduler,
  stream: string,
): Promise<ThreadChannel> {
  let thread: ThreadChannel | undefined;
  await scheduler.submit({
    key: `thread:${stream}:${messageId}`,
    stream,
    buckets: [GLOBAL_BUCKET],
    final: true,
    run: async () => {
      thread = await channel.threads.create({ startMessage: messageId, name });
    },
  });
  if (!thread) throw new Error('the thread was not started');
  return thread;
}

/**
 * An answer inside a thread the bot opened: a typing indicator in the thread while it is
 * awaited, then messages posted in the thread with the bot's token (the first one is the
 * answer's start: no reply reference), each edited in place as tokens arrive.
 * `sendEphemeral` tells the asker alone through `tell` (a /chat's interaction), else posts in
 * the thread (a mention: Discord has no ephemeral messages outside interactions).
 */
export class ThreadReply implements ReplyChannel {
  readonly limits = DISCORD_MESSAGE_LIMITS;
  /** Discord leaves a message's components as they are when an edit names none. */
  readonly editsKeepButtons = true;
  private readonly typing: Typing;
  private sent = 0;

  constructor(
    readonly thread: ThreadChannel,
    private readonly log: Logger,
    private readonly tell?: (message: string | OutgoingMessage) => Promise<void>,
    /** Where its one-off writes (a sentence in the thread, the typing indicator) wait for the thread's budgets. */
    private readonly scheduler?: WriteScheduler,
  ) {
    this.typing = new Typing(thread, log, scheduler);
  }

  async defer(): Promise<void> {
    if (this.sent === 0) this.typing.start();
  }

  /** A gallery Discord refuses in its Components V2 form goes as attachments (components-v2.ts `withGalleryFallback`), as do its edits. */
  async send(message: OutgoingMessage): Promise<MessageHandle> {
    this.typing.stop();
    const posted: Message = await withGalleryFallback(message, (m) => this.thread.send(payloadOf(m)), this.log);
    this.sent += 1;
    return {
      edit: (m) => withGalleryFallback(m, (shown) => posted.edit(editPayloadOf(shown)), this.log).then(() => undefined),
      ref: messageRef({ platform: 'discord', channel: posted.channelId, message: posted.id }),
    };
  }

  async sendEphemeral(message: string | OutgoingMessage): Promise<void> {
    if (this.tell) return this.tell(message);
    await tellPublicly(message, {
      scheduler: this.scheduler,
      buckets: this.buckets(),
      post: (m) => this.send(m),
      log: this.log,
      failed: 'could not write in the thread on Discord',
    });
  }

  /** Discord's refusal in a sentence; a missing permission names the thread's (Send Messages in Threads). */
  explain(error: unknown): Sentence | undefined {
    if (isMissingPermission(error)) return THREAD_PERMISSION_SENTENCE;
    return explainDiscordError(error);
  }

  /** Discord's 10008 Unknown Message: the message written to was deleted. */
  isDeleted(error: unknown): boolean {
    return isUnknownMessage(error);
  }

  /** Bot-token writes spend the thread's own channel budget. */
  buckets(): BucketId[] {
    return [channelBucket(this.thread.id)];
  }

  /** Stops the typing indicator (when the answer is over). */
  dispose(): void {
    this.typing.stop();
  }
}
