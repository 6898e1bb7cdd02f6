/**
 * Slash-command interactions on Discord: the platform-neutral CommandContext built from a
 * chat-input interaction, and the core's ReplyChannel implemented with the interaction's
 * (deferred) reply and its follow-ups, written by the interaction's responder (responder.ts).
 */

import { type ChatInputCommandInteraction, PermissionFlagsBits } from 'discord.js';
import { type Command, optionsPass, runCommand } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import type { Sentence } from '../../core/i18n/words.ts';
import { type BucketId, conversationKey, messageRef, parseMessageRef } from '../../core/keys.ts';
import type {
  Attachment,
  CommandContext,
  MessageHandle,
  OutgoingMessage,
  ReplyChannel,
  ReplyLimits,
} from '../../core/platform.ts';
import { type Logger, newReference } from '../../log.ts';
import { interactionBudget } from './budget.ts';
import { botMessageHandle } from './channel-writes.ts';
import { withGalleryFallback } from './components-v2.ts';
import { explainDiscordError, isUnknownMessage } from './errors.ts';
import { interactionLocale } from './locale.ts';
import { interactionUser, userInstallUser } from './members.ts';
import { attachmentOf, channelKeyOf } from './messages.ts';
import { channelBucket, type DiscordRateLimits } from './rate-limits.ts';
import { type DeferralKind, InteractionResponder } from './responder.ts';
import { DISCORD_MESSAGE_LIMITS } from './rest.ts';
import { chatInThread } from './thread-open.ts';
import { ThreadReply } from './threads.ts';
import {
  beforeTokenEnds,
  isUserInstalledOnly,
  NO_THREAD_HERE,
  USER_INSTALL_ANSWER_CHARS,
  userInstallKeys,
} from './user-install.ts';

/** The note under a message finished with the bot's token; defined with the responder that writes it. */
export { EXPIRED_NOTE } from './responder.ts';

/**
 * The reply of one slash command (or of a button press whose handler posts new messages, as
 * Reroll does), the core's ReplyChannel over the interaction's {@link InteractionResponder}:
 * `defer` → deferReply; the first `send` fills the deferred reply (editReply), later ones are
 * follow-ups; `sendEphemeral` replies only to the user. After the interaction's 15 minutes the
 * responder goes on with the bot's token (docs/platform-limits.md). Where the bot is not a member
 * (user-install.ts), the interaction alone serves: an answer shows at most
 * `USER_INSTALL_ANSWER_CHARS` in messages (five follow-ups), and nothing goes with the bot's token.
 */
export class InteractionReply implements ReplyChannel {
  readonly limits: ReplyLimits;
  readonly editsFiles = true;
  /** Discord leaves a message's components as they are when an edit names none. */
  readonly editsKeepButtons = true;
  /** Whether the reply writes over earlier messages ({@link messageAt}): sends are then follow-ups. */
  private writesOver = false;
  /** Whether only a user install authorized the interaction: the bot is not a member where it answers. */
  private readonly userInstalled: boolean;

  /**
   * @param deferral `update` for a reply that replaces a pressed message (Regenerate: the press
   *   is deferred with deferUpdate, and the first send edits `@original`, the message that
   *   carries the button); `reply` (default) for a new reply.
   */
  constructor(
    private readonly responder: InteractionResponder,
    private readonly rateLimits?: DiscordRateLimits,
    private readonly deferral: DeferralKind = 'reply',
  ) {
    // An interaction says how large an upload its channel takes (boosted servers take more).
    const sizeLimit = responder.interaction.attachmentSizeLimit;
    this.userInstalled = isUserInstalledOnly(responder.interaction);
    this.limits = {
      ...DISCORD_MESSAGE_LIMITS,
      maxFileBytes: sizeLimit ?? DISCORD_MESSAGE_LIMITS.maxFileBytes,
      ...(this.userInstalled ? { maxAnswerChars: USER_INSTALL_ANSWER_CHARS } : {}),
    };
  }

  defer(): Promise<void> {
    return this.responder.defer(this.deferral);
  }

  /** A gallery Discord refuses in its Components V2 form goes as attachments (components-v2.ts `withGalleryFallback`), as do its edits. */
  async send(message: OutgoingMessage): Promise<MessageHandle> {
    await this.defer();
    const channel = this.responder.interaction.channelId ?? '';
    const { log } = this.responder;
    const editing = (id: string) => (m: OutgoingMessage) =>
      withGalleryFallback(m, (shown) => this.responder.edit(id, shown), log);
    if (!this.responder.filled && !this.writesOver) {
      // Only once Discord took it: a failed first send is retried as the reply, not as a follow-up.
      const id = await withGalleryFallback(message, (shown) => this.responder.fill(shown), log);
      return { edit: editing('@original'), ...refOf(channel, id) };
    }
    const id = await withGalleryFallback(message, (shown) => this.responder.followUp(shown), log);
    return { edit: editing(id), ...refOf(channel, id) };
  }

  /**
   * A message of the bot's in the pressed message's channel, for a press's reply in place
   * (Regenerate): the pressed message itself through the interaction (after deferUpdate, its
   * `@original`), any other with the bot token (channel-writes.ts `botMessageHandle`, the
   * channel's budget), where the interaction says the bot can see the channel
   * (`app_permissions`: View Channel), never where the bot is not a member (a user install's).
   * Once it handed one out, sends are follow-ups.
   * @returns undefined for a reply that is not in place, another channel, or a channel hidden from the bot.
   */
  messageAt(ref: string): MessageHandle | undefined {
    const { interaction } = this.responder;
    const at = parseMessageRef(ref);
    if (this.deferral !== 'update' || !interaction.isButton() || at?.platform !== 'discord') return undefined;
    if (at.channel !== interaction.channelId) return undefined;
    if (at.message === interaction.message.id) {
      this.writesOver = true;
      return { edit: (m) => this.defer().then(() => this.responder.edit('@original', m)), ref };
    }
    if (this.userInstalled) return undefined;
    if (interaction.inGuild() && !interaction.appPermissions.has(PermissionFlagsBits.ViewChannel)) return undefined;
    this.writesOver = true;
    return botMessageHandle(interaction.client.rest, at, [channelBucket(at.channel)]);
  }

  sendEphemeral(message: string | OutgoingMessage): Promise<void> {
    return this.responder.sendEphemeral(message);
  }

  explain(error: unknown): Sentence | undefined {
    return explainDiscordError(error);
  }

  /** Discord's 10008 Unknown Message: the message written to was deleted. */
  isDeleted(error: unknown): boolean {
    return isUnknownMessage(error);
  }

  /** Interaction writes spend the token's budget (and the channel's, where the channel shares one); after expiry, the channel's. */
  buckets(): BucketId[] {
    const { token } = this.responder.interaction;
    // Every interaction this reply serves (a command, a button press) names its channel.
    const channelId = this.responder.interaction.channelId ?? '';
    if (this.responder.expired) return [channelBucket(channelId)];
    return this.rateLimits?.interactionBuckets(token, channelId) ?? [];
  }
}

/** The `ref` of a message of the interaction's, when Discord named its id. */
function refOf(channel: string, id: string | undefined): { ref?: string } {
  return id && channel ? { ref: messageRef({ platform: 'discord', channel, message: id }) } : {};
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
 * Runs the command a chat-input interaction names (an unknown one gets an ephemeral sentence);
 * a command that `opensThread` may answer in a new thread (thread-open.ts `chatInThread`).
 * The interaction's {@link InteractionResponder} is made first, before any store, settings or
 * quota work: a command that `defersAtOnce` (/chat, /complete, /imagine) is deferred there and
 * then (deferReply, not awaited: the feature awaits it where it writes) unless its options
 * will be refused (then the refusal is the reply itself, as before any deferral). Any other
 * command is deferred when it first writes publicly, or by the responder's timer
 * (`AUTO_DEFER_MS`), so that an answer only the user sees shows no public "thinking…".
 * @param signal the invocation's own signal (shutdown).
 */
export async function handleChatInput(
  interaction: ChatInputCommandInteraction,
  deps: {
    core: Core;
    commands: readonly Command[];
    log: Logger;
    rateLimits?: DiscordRateLimits;
    /** Whether the Message Content intent is on (a thread's follow-ups then need no mention). */
    messageContent?: boolean;
  },
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
  // An answer for the invoker alone (/export) is deferred ephemerally: nothing of it shows to others.
  const deferral = command?.answersPrivately ? 'ephemeral' : 'reply';
  const responder = new InteractionResponder(interaction, log, deferral, interactionBudget(interaction, deps));
  // Where the bot is not a member, the answer ends while the interaction's token still serves it.
  const userInstalled = isUserInstalledOnly(interaction);
  const invocation = userInstalled ? beforeTokenEnds(signal, interaction.createdTimestamp) : undefined;
  let inThread: ThreadReply | undefined;
  try {
    if (!command) {
      log.warn('unknown command');
      const words = await deps.core.languages.forUser({ locale: interactionLocale(interaction) });
      await responder.sendEphemeral(words.t('discord.unknown_command'));
      return;
    }
    const reply = new InteractionReply(responder, deps.rateLimits);
    const ctx = commandContext(interaction, deps.core, { signal: invocation?.signal ?? signal, log, ref, reply });
    // Past Discord's 15 minutes the answer's note is public: in the place's words (/settings locale).
    responder.inChannel.useWords(deps.core.languages.forPlace(ctx));
    const passes = optionsPass(command, ctx.options);
    if (command.defersAtOnce && passes) responder.start();
    // A /chat with thread:true (or in an auto_thread channel) answers in a new thread on its question
    // (thread-open.ts); where the bot is not a member none can be opened: the answer says so under it.
    const answered =
      command.opensThread && passes && userInstalled
        ? {
            ...ctx,
            notices: ctx.options.thread === true ? [NO_THREAD_HERE] : [],
          }
        : command.opensThread && passes
          ? await chatInThread(interaction, responder, ctx, {
              core: deps.core,
              messageContent: deps.messageContent === true,
            })
          : ctx;
    if (answered.reply instanceof ThreadReply) inThread = answered.reply;
    await runCommand(command, answered, deps.core);
  } finally {
    responder.dispose();
    invocation?.dispose();
    // The thread's typing indicator, when the command ended before any answer.
    inThread?.dispose();
  }
}

/**
 * The platform-neutral CommandContext of a chat-input interaction: where, who, the options and
 * files; where the bot is not a member, the user install's own conversation and user (user-install.ts).
 */
function commandContext(
  interaction: ChatInputCommandInteraction,
  core: Core,
  invocation: Pick<CommandContext, 'signal' | 'log' | 'ref' | 'reply'>,
): CommandContext {
  const userInstall = userInstallKeys(interaction);
  if (userInstall)
    return {
      platform: 'discord',
      locale: interactionLocale(interaction),
      ...userInstall,
      isDirectMessage: false,
      user: userInstallUser(interaction.user, core.admins),
      ...optionsOf(interaction, core),
      ...invocation,
    };
  return {
    platform: 'discord',
    locale: interactionLocale(interaction),
    conversationId: conversationKey({
      platform: 'discord',
      guild: interaction.guildId ?? undefined,
      channel: interaction.channelId,
    }),
    channelKey: channelKeyOf(interaction.guildId, interaction.channelId, interaction.channel),
    isDirectMessage: !interaction.inGuild(),
    user: interactionUser(interaction, core.admins),
    ...optionsOf(interaction, core),
    ...invocation,
  };
}
