/**
 * Slash-command interactions on Discord: the platform-neutral CommandContext built from a
 * chat-input interaction, and the core's ReplyChannel implemented with the interaction's
 * (deferred) reply and its follow-ups.
 */
import { MessageFlags, type ChatInputCommandInteraction } from 'discord.js';
import { runCommand, type Command } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import type { Attachment, MessageHandle, OutgoingMessage, ReplyChannel } from '../../core/platform.ts';
import { newReference, type Logger } from '../../log.ts';
import { DISCORD_LIMITS, editPayloadOf, payloadOf } from './rest.ts';
import { invocationUser } from './members.ts';
import { explainDiscordError } from './errors.ts';
import { attachmentOf, channelKeyOf } from './messages.ts';

/** If a command has neither replied nor deferred after this many ms, it is deferred (the limit is 3 s). */
const AUTO_DEFER_MS = 2000;

/**
 * The reply of one interaction: `defer` → deferReply; the first `send` fills the deferred
 * reply (editReply), later ones are follow-ups; `sendEphemeral` replies only to the user.
 */
export class InteractionReply implements ReplyChannel {
  readonly limits = DISCORD_LIMITS;
  /** Whether a public message has been shown (the deferred reply filled). */
  private filled = false;
  private deferring: Promise<unknown> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly interaction: ChatInputCommandInteraction, private readonly log: Logger) {
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
    const payload = payloadOf(message);
    if (!this.filled) {
      await this.interaction.editReply(payload);
      // Only once Discord took it: a failed first send is retried as the reply, not as a follow-up.
      this.filled = true;
      return { edit: (m) => this.interaction.editReply(editPayloadOf(m)).then(() => undefined) };
    }
    const sent = await this.interaction.followUp(payload);
    return { edit: (m) => this.interaction.editReply({ message: sent.id, ...editPayloadOf(m) }).then(() => undefined) };
  }

  async sendEphemeral(message: string | OutgoingMessage): Promise<void> {
    clearTimeout(this.timer);
    const m = typeof message === 'string' ? { content: message } : message;
    const payload = { ...payloadOf({ ...m, content: m.content.slice(0, DISCORD_LIMITS.maxChars) }), flags: MessageFlags.Ephemeral as const };
    try {
      if (this.deferring) await this.deferring.catch(() => undefined);
      if (!this.interaction.deferred && !this.interaction.replied) {
        await this.interaction.reply(payload);
        return;
      }
      // A deferred reply shows "is thinking…" to everyone: remove it if nothing was posted in it.
      if (!this.filled) await this.interaction.deleteReply().catch(() => undefined);
      await this.interaction.followUp(payload);
    } catch (error) {
      this.log.warn({ err: error }, 'could not send an ephemeral message on Discord');
    }
  }

  explain(error: unknown): string | undefined {
    return explainDiscordError(error);
  }

  /** Stops the auto-defer timer (when the command is over). */
  dispose(): void {
    clearTimeout(this.timer);
  }
}

/**
 * Option values of a chat-input interaction, by name; attachment options (type 11) as files
 * (their value is the upload's id; the file itself comes from `resolved.attachments`).
 */
function optionsOf(interaction: ChatInputCommandInteraction, core: Core): { options: Record<string, string | number | boolean | undefined>; files: Record<string, Attachment> } {
  const options: Record<string, string | number | boolean | undefined> = {};
  const files: Record<string, Attachment> = {};
  for (const option of interaction.options.data) {
    if (option.attachment) {
      files[option.name] = attachmentOf(option.attachment, 'message', core.downloader);
      options[option.name] = option.attachment.name;
    } else if (typeof option.value === 'string' || typeof option.value === 'number' || typeof option.value === 'boolean') {
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
  deps: { core: Core; commands: readonly Command[]; log: Logger },
  signal: AbortSignal,
): Promise<void> {
  const command = deps.commands.find((c) => c.name === interaction.commandName);
  const ref = newReference();
  const log = deps.log.child({ platform: 'discord', ref, interaction: interaction.id, command: interaction.commandName });
  if (!command) {
    log.warn('unknown command');
    await interaction.reply({ content: 'This command is not known to the bot (yet).', flags: MessageFlags.Ephemeral }).catch(() => undefined);
    return;
  }
  const reply = new InteractionReply(interaction, log);
  const { options, files } = optionsOf(interaction, deps.core);
  try {
    await runCommand(command, {
      platform: 'discord',
      conversationId: `discord:${interaction.guildId ?? 'dm'}:${interaction.channelId}`,
      channelKey: channelKeyOf(interaction.guildId, interaction.channelId, interaction.channel),
      isDirectMessage: !interaction.inGuild(),
      user: invocationUser(interaction.user, interaction.member, interaction.memberPermissions, deps.core.admins),
      options,
      files,
      signal,
      log,
      ref,
      reply,
    }, deps.core);
  } finally {
    reply.dispose();
  }
}
