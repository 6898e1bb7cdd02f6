/**
 * Slash-command interactions on Discord: the platform-neutral CommandContext built from a
 * chat-input interaction, and the core's ReplyChannel implemented with the interaction's
 * (deferred) reply and its follow-ups.
 */
import {
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type Message,
  MessageFlags,
  Routes,
  type SendableChannels,
} from 'discord.js';
import { type Command, runCommand } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { type BucketId, conversationKey } from '../../core/keys.ts';
import type { Attachment, MessageHandle, OutgoingMessage, ReplyChannel, ReplyLimits } from '../../core/platform.ts';
import { type Logger, newReference } from '../../log.ts';
import { explainDiscordError, isExpiredToken } from './errors.ts';
import { invocationUser } from './members.ts';
import { attachmentOf, channelKeyOf } from './messages.ts';
import { channelBucket, type DiscordRateLimits } from './rate-limits.ts';
import { DISCORD_MESSAGE_LIMITS, editBodyOf, editPayloadOf, payloadOf } from './rest.ts';

/**
 * If an interaction (a command, a button press) has neither been answered nor deferred after
 * this many ms, it is deferred: Discord allows 3 s for the first response (docs/platform-limits.md).
 */
export const AUTO_DEFER_MS = 2_000;

/** Added to a message the bot finished with its own token after the interaction's 15 minutes. */
export const EXPIRED_NOTE =
  '_(Discord ends interactions after 15 minutes, so the bot finished this answer with its own messages.)_';

/**
 * The reply of one interaction: `defer` → deferReply; the first `send` fills the deferred
 * reply (editReply), later ones are follow-ups; `sendEphemeral` replies only to the user.
 *
 * When Discord says the interaction's token has expired (50027, after 15 minutes), the answer
 * goes on with the bot's own token: the (non-ephemeral) reply is edited in the channel and
 * follow-ups are channel messages, with a note saying why (docs/platform-limits.md).
 */
export class InteractionReply implements ReplyChannel {
  readonly limits: ReplyLimits;
  readonly editsFiles = true;
  /** Whether a public message has been shown (the deferred reply filled). */
  private filled = false;
  private deferring: Promise<unknown> | undefined;
  private readonly timer: NodeJS.Timeout;
  /**
   * The reply's message id, for edits with the bot token after the token expired: known from the
   * first write of the reply (Discord's answer to it), else looked up (findOriginal). The deferral
   * is sent without `?with_response` (a 204, nothing to parse: in a burst of commands the first
   * text comes sooner; bench:streams, figures in the README).
   */
  private originalId: string | undefined;
  /** Set once the token was refused: writes go through the channel. */
  private expired = false;

  constructor(
    /** A slash command, or a button press whose handler answers with new messages (Reroll). */
    private readonly interaction: ChatInputCommandInteraction | ButtonInteraction,
    private readonly log: Logger,
    private readonly rateLimits?: DiscordRateLimits,
  ) {
    // An interaction says how large an upload its channel takes (boosted servers take more).
    this.limits = {
      ...DISCORD_MESSAGE_LIMITS,
      maxFileBytes: interaction.attachmentSizeLimit ?? DISCORD_MESSAGE_LIMITS.maxFileBytes,
    };
    this.timer = setTimeout(() => void this.defer().catch(() => undefined), AUTO_DEFER_MS);
    this.timer.unref();
  }

  defer(): Promise<void> {
    clearTimeout(this.timer);
    if (this.interaction.deferred || this.interaction.replied) return Promise.resolve();
    this.deferring ??= this.interaction.deferReply();
    return this.deferring.then(() => undefined);
  }

  async send(message: OutgoingMessage): Promise<MessageHandle> {
    await this.defer();
    if (!this.filled) {
      const edit = (m: OutgoingMessage) =>
        this.withToken(
          () => this.editOriginal('@original', m),
          () => this.editInChannel(this.originalId, editPayloadOf(m)),
        );
      // The first send fills the deferred reply: all of the message (no embeds or buttons when it has none).
      // With the token gone before any text (an answer that waited 15 minutes for its first
      // word), the deferred reply is found in the channel and filled with the bot's token (or,
      // when it cannot be found, the answer is posted in the channel).
      const filled = (await this.withToken(
        () => this.editOriginal('@original', message, true),
        async () => {
          const id = await this.findOriginal();
          return id ? this.editInChannel(id, payloadOf(message)) : this.sendInChannel(payloadOf(message));
        },
      )) as { id?: string } | undefined;
      this.originalId = filled?.id;
      // Only once Discord took it: a failed first send is retried as the reply, not as a follow-up.
      this.filled = true;
      return { edit: async (m) => void (await edit(m)) };
    }
    const payload = payloadOf(message);
    const sent = await this.withToken(
      () => this.interaction.followUp(payload),
      () => this.sendInChannel(payload),
    );
    return {
      edit: async (m) =>
        void (await this.withToken(
          () => this.editOriginal(sent.id, m),
          () => this.editInChannel(sent.id, editPayloadOf(m)),
        )),
    };
  }

  /**
   * Edits one of the interaction's messages (`@original`, or a follow-up's id) with its token.
   * A text edit (no files) is one PATCH through discord.js's REST client (Discord's "Edit
   * Original Interaction Response" / "Edit Followup Message"), without building a discord.js
   * Message from the answer: a streamed answer edits its message about once a second, and a
   * thousand answers at once spent a fifth of their CPU building Messages nobody read. With
   * files, discord.js's editReply (multipart upload).
   * @param whole the first write of a deferred reply: embeds are sent even when empty.
   * @throws DiscordAPIError as discord.js's REST client does (50027 once the token expired).
   */
  private async editOriginal(messageId: string, message: OutgoingMessage, whole = false): Promise<unknown> {
    if (message.files?.length) {
      const payload = whole ? payloadOf(message) : editPayloadOf(message);
      return this.interaction.editReply(messageId === '@original' ? payload : { message: messageId, ...payload });
    }
    const route = Routes.webhookMessage(this.interaction.applicationId, this.interaction.token, messageId);
    return this.interaction.client.rest.patch(route, { body: editBodyOf(message, whole), auth: false });
  }

  async sendEphemeral(message: string | OutgoingMessage): Promise<void> {
    clearTimeout(this.timer);
    const m = typeof message === 'string' ? { content: message } : message;
    const fitted = { ...m, content: m.content.slice(0, DISCORD_MESSAGE_LIMITS.maxChars) };
    const payload = { ...payloadOf(fitted), flags: MessageFlags.Ephemeral as const };
    try {
      if (this.deferring !== undefined) await this.deferring.catch(() => undefined);
      if (!this.interaction.deferred && !this.interaction.replied) {
        await this.interaction.reply(payload);
        return;
      }
      if (!this.filled) {
        // A deferred reply shows "is thinking…" to everyone: remove it, then tell the user alone.
        // If it cannot be removed, it becomes the sentence itself: never "thinking" forever.
        const removed = await this.interaction.deleteReply().then(
          () => true,
          (error: unknown) => {
            this.log.warn({ err: error }, 'could not remove the deferred reply; writing the sentence into it');
            return false;
          },
        );
        if (!removed) {
          await this.withToken(
            () => this.interaction.editReply(payloadOf(fitted)),
            async () => this.editInChannel(this.originalId ?? (await this.findOriginal()), payloadOf(fitted)),
          );
          this.filled = true;
          return;
        }
      }
      await this.withToken(
        () => this.interaction.followUp(payload),
        () => this.sendInChannel(payloadOf(fitted)),
      );
    } catch (error) {
      this.log.warn({ err: error }, 'could not send an ephemeral message on Discord');
    }
  }

  explain(error: unknown): string | undefined {
    return explainDiscordError(error);
  }

  /** Interaction writes spend the token's budget (and the channel's, where the channel shares one); after expiry, the channel's. */
  buckets(): BucketId[] {
    if (this.expired) return [channelBucket(this.interaction.channelId)];
    return this.rateLimits?.interactionBuckets(this.interaction.token, this.interaction.channelId) ?? [];
  }

  /** Stops the auto-defer timer (when the command is over). */
  dispose(): void {
    clearTimeout(this.timer);
  }

  /** Runs a write with the interaction's token; once Discord refuses the token (50027), with the bot's. */
  private async withToken<T>(write: () => Promise<T>, fallback: () => Promise<T>): Promise<T> {
    if (this.expired) return fallback();
    try {
      return await write();
    } catch (error) {
      if (!isExpiredToken(error)) throw error;
      this.expired = true;
      this.log.info('interaction token expired: continuing with the bot token');
      return fallback();
    }
  }

  /** The interaction's channel, fetched when not cached. @throws when it cannot be had. */
  private async channel(): Promise<SendableChannels> {
    const channel =
      this.interaction.channel ?? (await this.interaction.client.channels.fetch(this.interaction.channelId));
    if (!channel?.isSendable()) throw new Error("the interaction's channel takes no messages");
    return channel;
  }

  /**
   * The deferred reply's message id, looked up with the bot token among the channel's latest 50
   * messages by the interaction it answers (`interaction_metadata.id`), for when the token
   * expired before any write told it. Undefined when it is not there or cannot be read.
   */
  private async findOriginal(): Promise<string | undefined> {
    try {
      const recent = await (await this.channel()).messages.fetch({ limit: 50 });
      return recent.find((m) => m.interactionMetadata?.id === this.interaction.id)?.id;
    } catch (error) {
      this.log.debug({ err: error }, 'could not look for the deferred reply in the channel');
      return undefined;
    }
  }

  /** Edits a message with the bot token, adding the expiry note when it fits. */
  private async editInChannel(id: string | undefined, payload: ReturnType<typeof editPayloadOf>): Promise<Message> {
    if (!id) throw new Error("the reply's message id is unknown: it cannot be edited without the interaction");
    const channel = await this.channel();
    return channel.messages.edit(id, withExpiryNote(payload));
  }

  private async sendInChannel(payload: ReturnType<typeof payloadOf>): Promise<Message> {
    return (await this.channel()).send(withExpiryNote(payload));
  }
}

/** The payload with {@link EXPIRED_NOTE} under its content, when that stays within 2,000 characters. */
function withExpiryNote<P extends { content?: string }>(payload: P): P {
  const content = payload.content ?? '';
  if (content.includes(EXPIRED_NOTE) || content.length + EXPIRED_NOTE.length + 2 > DISCORD_MESSAGE_LIMITS.maxChars)
    return payload;
  return { ...payload, content: content ? `${content}\n\n${EXPIRED_NOTE}` : EXPIRED_NOTE };
}

/**
 * Option values of a chat-input interaction, by name; attachment options (type 11) as files
 * (their value is the upload's id; the file itself comes from `resolved.attachments`).
 */
function optionsOf(
  interaction: ChatInputCommandInteraction,
  core: Core,
): { options: Record<string, string | number | boolean | undefined>; files: Record<string, Attachment> } {
  const options: Record<string, string | number | boolean | undefined> = {};
  const files: Record<string, Attachment> = {};
  for (const option of interaction.options.data) {
    if (option.attachment) {
      files[option.name] = attachmentOf(option.attachment, 'message', core.downloader);
      options[option.name] = option.attachment.name;
    } else if (
      typeof option.value === 'string' ||
      typeof option.value === 'number' ||
      typeof option.value === 'boolean'
    ) {
      options[option.name] = option.value;
    }
  }
  return { options, files };
}

/**
 * Runs the command a chat-input interaction names (an unknown one gets an ephemeral sentence).
 * @param signal the invocation's own signal (shutdown).
 */
export async function handleChatInput(
  interaction: ChatInputCommandInteraction,
  deps: { core: Core; commands: readonly Command[]; log: Logger; rateLimits?: DiscordRateLimits },
  signal: AbortSignal,
): Promise<void> {
  const command = deps.commands.find((c) => c.name === interaction.commandName);
  const ref = newReference();
  const log = deps.log.child({
    platform: 'discord',
    ref,
    interaction: interaction.id,
    command: interaction.commandName,
  });
  if (!command) {
    log.warn('unknown command');
    await interaction
      .reply({ content: 'This command is not known to the bot (yet).', flags: MessageFlags.Ephemeral })
      .catch(() => undefined);
    return;
  }
  const reply = new InteractionReply(interaction, log, deps.rateLimits);
  const { options, files } = optionsOf(interaction, deps.core);
  try {
    await runCommand(
      command,
      {
        platform: 'discord',
        conversationId: conversationKey({
          platform: 'discord',
          guild: interaction.guildId ?? undefined,
          channel: interaction.channelId,
        }),
        channelKey: channelKeyOf(interaction.guildId, interaction.channelId, interaction.channel),
        isDirectMessage: !interaction.inGuild(),
        user: invocationUser(interaction.user, interaction.member, interaction.memberPermissions, deps.core.admins),
        options,
        files,
        signal,
        log,
        ref,
        reply,
      },
      deps.core,
    );
  } finally {
    reply.dispose();
  }
}
