/**
 * Slash-command interactions on Discord: the platform-neutral CommandContext built from a
 * chat-input interaction, and the core's ReplyChannel implemented with the interaction's
 * (deferred) reply and its follow-ups.
 */
import { MessageFlags, PermissionFlagsBits, type ChatInputCommandInteraction, type PermissionsBitField } from 'discord.js';
import { runCommand, type Command } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import type { MessageHandle, OutgoingMessage, ReplyChannel } from '../../core/platform.ts';
import type { Logger } from '../../log.ts';
import { DISCORD_LIMITS, NO_MENTIONS, embedsOf, filesOf } from './rest.ts';

/** If a command has neither replied nor deferred after this many ms, it is deferred (the limit is 3 s). */
const AUTO_DEFER_MS = 2000;

/** Whether a member's permissions make them a bot admin here: Administrator or Manage Server. */
export function isAdminPermissions(permissions: Readonly<PermissionsBitField> | null | undefined): boolean {
  return permissions?.has(PermissionFlagsBits.Administrator) === true || permissions?.has(PermissionFlagsBits.ManageGuild) === true;
}

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
    const payload = { content: message.content, files: filesOf(message), embeds: embedsOf(message), allowedMentions: NO_MENTIONS };
    if (!this.filled) {
      await this.interaction.editReply(payload);
      // Only once Discord took it: a failed first send is retried as the reply, not as a follow-up.
      this.filled = true;
      return { edit: (m) => this.interaction.editReply({ content: m.content, allowedMentions: NO_MENTIONS }).then(() => undefined) };
    }
    const sent = await this.interaction.followUp(payload);
    return {
      edit: (m) => this.interaction.editReply({ message: sent.id, content: m.content, allowedMentions: NO_MENTIONS }).then(() => undefined),
    };
  }

  async sendEphemeral(text: string): Promise<void> {
    clearTimeout(this.timer);
    const payload = { content: text.slice(0, DISCORD_LIMITS.maxChars), flags: MessageFlags.Ephemeral as const, allowedMentions: NO_MENTIONS };
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

  /** Stops the auto-defer timer (when the command is over). */
  dispose(): void {
    clearTimeout(this.timer);
  }
}

/** Options values of a chat-input interaction, by name. */
function optionsOf(interaction: ChatInputCommandInteraction): Record<string, string | number | boolean | undefined> {
  const out: Record<string, string | number | boolean | undefined> = {};
  for (const option of interaction.options.data) {
    if (typeof option.value === 'string' || typeof option.value === 'number' || typeof option.value === 'boolean') {
      out[option.name] = option.value;
    }
  }
  return out;
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
  const log = deps.log.child({ platform: 'discord', interaction: interaction.id, command: interaction.commandName });
  if (!command) {
    log.warn('unknown command');
    await interaction.reply({ content: 'This command is not known to the bot (yet).', flags: MessageFlags.Ephemeral }).catch(() => undefined);
    return;
  }
  const reply = new InteractionReply(interaction, log);
  try {
    await runCommand(command, {
      platform: 'discord',
      conversationId: `discord:${interaction.guildId ?? 'dm'}:${interaction.channelId}`,
      user: { id: interaction.user.id, name: interaction.user.username, isAdmin: isAdminPermissions(interaction.memberPermissions) },
      options: optionsOf(interaction),
      attachments: [],
      signal,
      log,
      reply,
    }, deps.core);
  } finally {
    reply.dispose();
  }
}
