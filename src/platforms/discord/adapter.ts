/**
 * The Discord adapter (discord.js): slash-command interactions → platform-neutral
 * CommandContext; the core's ReplyChannel implemented with the interaction's reply and
 * follow-ups. Every send and edit carries `allowed_mentions: { parse: [] }`, so model output
 * never pings anyone.
 */
import {
  AttachmentBuilder,
  Client,
  DefaultRestOptions,
  Events,
  GatewayIntentBits,
  MessageFlags,
  PermissionFlagsBits,
  type ChatInputCommandInteraction,
  type Interaction,
  type RESTOptions,
  type ResponseLike,
} from 'discord.js';
import type { Command } from '../../core/command.ts';
import { runCommand } from '../../core/command.ts';
import { RunningCommands } from '../../core/running.ts';
import type { Core } from '../../core/core.ts';
import type { MessageHandle, OutgoingMessage, ReplyChannel } from '../../core/platform.ts';
import type { DiscordConfig } from '../../config.ts';
import type { Logger } from '../../log.ts';

/** No pings from anything the bot posts: sent on every create and edit. */
export const NO_MENTIONS = { parse: [] as [] };

/** Discord's limits as the streaming reply needs them (PLATFORM-LIMITS.md). */
export const DISCORD_LIMITS = {
  /** `content` characters. */
  maxChars: 2000,
  /** ms between edits of one reply: the per-channel budget is about 5 edits per 5 s. */
  minEditIntervalMs: 1000,
};

/** If a command has neither replied nor deferred after this many ms, it is deferred (the limit is 3 s). */
const AUTO_DEFER_MS = 2000;

/**
 * discord.js's `rest.makeRequest`, safe for uploads. discord.js sends files as a `FormData`
 * through its own undici 6, whose `request()` dispatches on the process-wide undici dispatcher;
 * the service client's undici 7 installs itself as that dispatcher when it is imported, and
 * undici 7 cannot read a FormData it did not make (it throws "action is not a function"), so
 * every upload failed. Multipart bodies are therefore encoded to bytes first, by Node's own
 * `Response` (which knows Node's FormData), with their `content-type` (boundary included);
 * every other request goes to discord.js's default strategy unchanged.
 * @param url the full request URL.
 * @param init discord.js's request options (`headers` is a plain object).
 * @returns discord.js's response shape.
 */
export async function makeDiscordRequest(url: string, init: Parameters<RESTOptions['makeRequest']>[1]): Promise<ResponseLike> {
  if (init.body instanceof FormData) {
    const encoded = new Response(init.body);
    const headers = { ...(init.headers as Record<string, string> | undefined), 'content-type': encoded.headers.get('content-type')! };
    return DefaultRestOptions.makeRequest(url, { ...init, headers, body: Buffer.from(await encoded.arrayBuffer()) });
  }
  return DefaultRestOptions.makeRequest(url, init);
}

function filesOf(message: OutgoingMessage): AttachmentBuilder[] {
  return (message.files ?? []).map((f) => new AttachmentBuilder(f.data, { name: f.name, ...(f.description ? { description: f.description } : {}) }));
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
    const payload = {
      content: message.content,
      files: filesOf(message),
      embeds: (message.imageLinks ?? []).slice(0, 10).map((link) => ({ image: { url: link.url }, ...(link.alt ? { title: link.alt.slice(0, 256) } : {}) })),
      allowedMentions: NO_MENTIONS,
    };
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

/** The Discord side of the bot. */
export class DiscordAdapter {
  readonly client: Client;
  private readonly running = new RunningCommands();

  constructor(
    private readonly config: DiscordConfig,
    private readonly core: Core,
    private readonly commands: readonly Command[],
    private readonly log: Logger,
  ) {
    this.client = new Client({
      intents: [GatewayIntentBits.Guilds],
      allowedMentions: NO_MENTIONS,
      rest: { makeRequest: makeDiscordRequest, ...(config.apiUrl ? { api: config.apiUrl } : {}) },
    });
    this.client.on(Events.InteractionCreate, (interaction) => {
      void this.running.run((signal) => this.onInteraction(interaction, signal), (error) => this.log.error({ err: error }, 'interaction handler failed'));
    });
    this.client.on(Events.Error, (error) => this.log.error({ err: error }, 'discord client error'));
    this.client.on(Events.Warn, (message) => this.log.warn({ message }, 'discord client warning'));
  }

  /** Logs in and resolves once the gateway session is ready. @throws on a bad token. */
  async start(): Promise<void> {
    const ready = new Promise<void>((resolve) => this.client.once(Events.ClientReady, () => resolve()));
    await this.client.login(this.config.token);
    await ready;
    this.log.info({ user: this.client.user?.tag, guilds: this.client.guilds.cache.size }, 'discord ready');
  }

  /** Cancels running commands, waits for them to settle, and disconnects. */
  async stop(): Promise<void> {
    await this.running.stopAll();
    await this.client.destroy();
  }

  private async onInteraction(interaction: Interaction, signal: AbortSignal): Promise<void> {
    if (!interaction.isChatInputCommand()) return;
    const command = this.commands.find((c) => c.name === interaction.commandName);
    const log = this.log.child({ platform: 'discord', interaction: interaction.id, command: interaction.commandName });
    if (!command) {
      log.warn('unknown command');
      await interaction.reply({ content: 'This command is not known to the bot (yet).', flags: MessageFlags.Ephemeral }).catch(() => undefined);
      return;
    }
    const reply = new InteractionReply(interaction, log);
    const permissions = interaction.memberPermissions;
    try {
      await runCommand(command, {
        platform: 'discord',
        conversationId: `discord:${interaction.guildId ?? 'dm'}:${interaction.channelId}`,
        user: {
          id: interaction.user.id,
          name: interaction.user.username,
          isAdmin: permissions?.has(PermissionFlagsBits.Administrator) === true || permissions?.has(PermissionFlagsBits.ManageGuild) === true,
        },
        options: optionsOf(interaction),
        attachments: [],
        signal,
        log,
        reply,
      }, this.core);
    } finally {
      reply.dispose();
    }
  }
}
