/**
 * Messages addressed to the bot on Discord: a guild message that mentions it (`<@bot id>`, or
 * a reply that pings it), a reply to one of its own messages, and any message in a DM with
 * it. Each becomes a platform-neutral mention (core/features/mention.ts; mentions.ts hands it
 * over, reply-chain.ts reads what it replies to) answered as a reply to the user's message,
 * streamed by editing the bot's own channel message (MessageReply, here).
 *
 * Intents (no privileged one needed): Discord delivers the content and attachments of
 * messages that mention the app, of DMs and of the app's own messages; those of the message a
 * mention replies to arrive empty unless `MessageContent` is enabled (docs/platform-limits.md,
 * gateway docs "Message Content Intent").
 */
import { randomUUID } from 'node:crypto';
import {
  type Channel,
  cleanContent,
  type Attachment as DiscordAttachment,
  type Message,
  MessageType,
} from 'discord.js';
import { writeOnce } from '../../core/delivery/one-off.ts';
import type { WriteScheduler } from '../../core/delivery/scheduler.ts';
import { type Sentence, sentence } from '../../core/i18n/words.ts';
import { type BucketId, channelKey, messageRef, parseMessageRef, postedImageRef } from '../../core/keys.ts';
import type { Downloader } from '../../core/media/download.ts';
import type { Attachment, MessageHandle, OutgoingMessage, ReplyChannel } from '../../core/platform.ts';
import { replaceSpacedTags } from '../../core/text-scan.ts';
import type { Logger } from '../../log.ts';
import { botMessageHandle } from './channel-writes.ts';
import { explainDiscordError, isUnknownMessage } from './errors.ts';
import { channelBucket, GLOBAL_BUCKET } from './rate-limits.ts';
import { DISCORD_MESSAGE_LIMITS, editPayloadOf, payloadOf } from './rest.ts';

/** The typing indicator lasts 10 s; it is sent again this often while the answer is awaited. */
export const TYPING_REFRESH_MS = 8_000;

/** Said when a reply to the bot did not ping it, so Discord hid its text and files. */
export const HIDDEN_MESSAGE_REPLY: Sentence = sentence('discord.hidden_message_reply');

/**
 * Discord's typing indicator in one channel while an answer is awaited: sent at once, then
 * every {@link TYPING_REFRESH_MS} (it lasts 10 s) until stopped. A failure is logged at debug.
 */
export class Typing {
  private timer: NodeJS.Timeout | undefined;
  /** The scheduler key of this indicator's requests (a pending one is replaced, never doubled). */
  private readonly key = `typing:${randomUUID()}`;

  /** @param scheduler where each request waits for the bot token's global budget, as a cosmetic (intermediate) write. */
  constructor(
    private readonly channel: unknown,
    private readonly log: Logger,
    private readonly scheduler?: WriteScheduler,
  ) {}

  /** Starts the indicator (once: later calls do nothing while it runs). */
  start(): void {
    if (this.timer) return;
    this.send();
    this.timer = setInterval(() => this.send(), TYPING_REFRESH_MS);
    this.timer.unref();
  }

  /** Stops it (idempotent). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private send(): void {
    const channel = this.channel as { sendTyping?: () => Promise<void> } | null;
    if (typeof channel?.sendTyping !== 'function') return;
    const run = () => channel.sendTyping!();
    const { key } = this;
    (this.scheduler?.submit({ key, stream: key, buckets: [GLOBAL_BUCKET], final: false, run }) ?? run()).catch(
      (error: unknown) => this.log.debug({ err: error }, 'typing indicator failed'),
    );
  }
}

/**
 * The reply to one user message: a typing indicator while the answer is awaited (`defer`),
 * then the first `send` replies to the message (`message_reference`, without pinging its
 * author), later sends continue in the channel; each is edited in place as tokens arrive.
 * Discord has no ephemeral messages outside interactions: `sendEphemeral` replies publicly.
 */
export class MessageReply implements ReplyChannel {
  readonly limits = DISCORD_MESSAGE_LIMITS;
  /** Discord leaves a message's components as they are when an edit names none. */
  readonly editsKeepButtons = true;
  private sent = 0;
  private readonly typing: Typing;
  /** The address of the answer's first message, once posted. */
  private firstAt: string | undefined;
  /** Whether the answer is written over earlier messages ({@link messageAt}): sends then continue in the channel. */
  private writesOver = false;

  constructor(
    private readonly message: Message,
    private readonly log: Logger,
    /** Where its one-off writes (a refusal, the typing indicator) wait for the channel's budgets. */
    private readonly scheduler?: WriteScheduler,
  ) {
    this.typing = new Typing(message.channel, log, scheduler);
  }

  /** Starts the typing indicator, re-sent every {@link TYPING_REFRESH_MS} until the first send. */
  async defer(): Promise<void> {
    if (this.sent === 0) this.typing.start();
  }

  /** Sends: the first send replies to the message (unless written over earlier ones), later ones continue in the channel. */
  async send(message: OutgoingMessage): Promise<MessageHandle> {
    this.typing.stop();
    const payload = payloadOf(message);
    const channel = this.message.channel;
    let posted: Message;
    if (this.sent === 0 && !this.writesOver) posted = await this.message.reply({ ...payload, failIfNotExists: false });
    else if (channel.isSendable()) posted = await channel.send(payload);
    else throw new Error('the channel does not take messages');
    if (this.sent === 0) this.firstAt = posted.url;
    this.sent += 1;
    return {
      edit: (m) => posted.edit(editPayloadOf(m)).then(() => undefined),
      ref: messageRef({ platform: 'discord', channel: posted.channelId, message: posted.id }),
    };
  }

  /**
   * A message of the bot's in this channel (an edited mention's earlier answer), edited with the
   * bot token (channel-writes.ts `botMessageHandle`); undefined for another channel. Sends
   * after it continue in the channel.
   */
  messageAt(ref: string): MessageHandle | undefined {
    const at = parseMessageRef(ref);
    if (at?.platform !== 'discord' || at.channel !== this.message.channelId) return undefined;
    this.writesOver = true;
    return botMessageHandle(this.message.client.rest, at);
  }

  /** The address (`https://discord.com/channels/…`) of the answer's first message, once it is posted. */
  get firstUrl(): string | undefined {
    return this.firstAt;
  }

  async sendEphemeral(message: string | OutgoingMessage): Promise<void> {
    await tellPublicly(message, {
      scheduler: this.scheduler,
      buckets: this.buckets(),
      post: (m) => this.send(m),
      log: this.log,
      failed: 'could not reply on Discord',
    });
  }

  explain(error: unknown): Sentence | undefined {
    return explainDiscordError(error);
  }

  /** Discord's 10008 Unknown Message: the message written to was deleted. */
  isDeleted(error: unknown): boolean {
    return isUnknownMessage(error);
  }

  /** Bot-token writes spend the channel's budget. */
  buckets(): BucketId[] {
    return [channelBucket(this.message.channelId)];
  }

  /** Stops the typing indicator (when the answer is over). */
  dispose(): void {
    this.typing.stop();
  }
}

/**
 * Tells a user in public, as a reply channel outside an interaction must (Discord has no
 * ephemeral message there): the text cut to 2,000 characters, posted by `post` as a one-off
 * write in `buckets` (delivery/one-off.ts); a failure is logged as `failed`. Never throws.
 */
export async function tellPublicly(
  message: string | OutgoingMessage,
  deps: {
    scheduler: WriteScheduler | undefined;
    buckets: BucketId[];
    post: (message: OutgoingMessage) => Promise<unknown>;
    log: Logger;
    failed: string;
  },
): Promise<void> {
  const m = typeof message === 'string' ? { content: message } : message;
  try {
    const fitted = { ...m, content: m.content.slice(0, DISCORD_MESSAGE_LIMITS.maxChars) };
    await writeOnce(deps.scheduler, { buckets: deps.buckets, run: () => deps.post(fitted) });
  } catch (error) {
    deps.log.warn({ err: error }, deps.failed);
  }
}

/** Message types a person writes (everything else is a system message). */
const USER_MESSAGE_TYPES: ReadonlySet<MessageType> = new Set([MessageType.Default, MessageType.Reply]);

/**
 * Whether a message is addressed to the bot: not from a bot, a webhook or the system; and in
 * a DM, or mentioning the bot directly or by a reply ping, or replying to the bot's message.
 * `@everyone`, `@here` and role mentions do not count.
 */
export function isAddressedToBot(message: Message, botId: string): boolean {
  if (!fromPerson(message)) return false;
  if (!message.inGuild()) return true;
  return message.mentions.users.has(botId) || message.mentions.repliedUser?.id === botId;
}

/** Whether a person wrote the message: not a bot (the bot itself included), a webhook or the system. */
function fromPerson(message: Message): boolean {
  return !message.author.bot && !message.webhookId && !message.system && USER_MESSAGE_TYPES.has(message.type);
}

/**
 * Whether a message may continue a conversation in a thread without a mention (what the store
 * then decides: state/threads.ts): a person's message, not addressed to the bot otherwise, in
 * a thread the bot created (its `owner_id`). Discord shows the bot the text of such a message
 * only with the Message Content intent: the caller checks that.
 */
export function mayContinueThread(message: Message, botId: string): boolean {
  return fromPerson(message) && message.channel.isThread() && message.channel.ownerId === botId;
}

/**
 * The message text as the prompt: the bot's own mention (`<@id>`, `<@!id>`) removed with the
 * whitespace around it, other mentions as names. Linear in the length of the text.
 */
export function promptOf(message: Message, botId: string): string {
  const withoutBot = replaceSpacedTags(message.content, '<@', (at) => {
    const from = message.content.charCodeAt(at + 2) === 0x21 /* ! */ ? at + 3 : at + 2;
    return message.content.startsWith(`${botId}>`, from) ? from + botId.length + 1 : -1;
  });
  return cleanContent(withoutBot, message.channel).trim();
}

/** Whether Discord hid a message's content from the bot (no Message Content intent): another person's guild message, empty, that does not mention it. */
export function looksHidden(message: Message, botId: string): boolean {
  return (
    message.inGuild() &&
    message.author.id !== botId &&
    !message.mentions.users.has(botId) &&
    message.content === '' &&
    message.attachments.size === 0 &&
    message.embeds.length === 0 &&
    message.stickers.size === 0
  );
}

/**
 * The key of the channel whose settings apply: `discord:<guild|dm>:<channel>`, where a thread
 * uses its parent channel (a thread inherits its channel's /settings).
 */
export function channelKeyOf(guildId: string | null, channelId: string, channel: Channel | null | undefined): string {
  const parent = channel?.isThread() ? channel.parentId : null;
  return channelKey({ platform: 'discord', guild: guildId ?? undefined, channel: parent ?? channelId });
}

/**
 * A Discord attachment as a core Attachment, downloaded from the CDN with the byte cap.
 * @param message the message that carries it, when it has one (a slash command's upload has
 *   none): its reference then names the attachment there (keys.ts `postedImageRef`), found again
 *   by components.ts `postedDiscordImage`.
 */
export function attachmentOf(
  file: Pick<DiscordAttachment, 'id' | 'name' | 'url' | 'contentType' | 'size'>,
  origin: Attachment['origin'],
  downloader: Downloader,
  message?: Pick<Message, 'channelId' | 'id'>,
): Attachment {
  return {
    name: file.name,
    mimeType: file.contentType ?? undefined,
    size: file.size,
    origin,
    ...(message
      ? {
          ref: postedImageRef({
            platform: 'discord',
            channel: message.channelId,
            message: message.id,
            attachment: file.id,
          }),
        }
      : {}),
    fetch: async (options) => (await downloader.download(file.url, { ...options, name: file.name })).data,
  };
}

/** A message's attachments as core Attachments, each with its reference ({@link attachmentOf}). */
export function attachmentsOf(message: Message, origin: Attachment['origin'], downloader: Downloader): Attachment[] {
  return message.attachments.map((file) => attachmentOf(file, origin, downloader, message));
}
