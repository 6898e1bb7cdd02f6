/**
 * The Slack adapter (@slack/bolt): slash commands → platform-neutral CommandContext, acked
 * at once; the core's ReplyChannel implemented with chat.postMessage / chat.update (native
 * `chat.startStream` streaming comes in a later issue) and filesUploadV2 for images.
 */
// A named import: Node's ESM gives `import bolt from` the whole CommonJS exports object, but
// bundler-style interop (vitest/vite) gives it `exports.default` (the App class), so `bolt.App`
// is undefined there. `exports.App` is found by both.
import { App } from '@slack/bolt';
import type { RespondFn, SlashCommand } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LogLevel, type Logger as SlackLogger } from '@slack/logger';
import type { Command } from '../../core/command.ts';
import { runCommand } from '../../core/command.ts';
import { RunningCommands } from '../../core/running.ts';
import type { Core } from '../../core/core.ts';
import type { MessageHandle, OutgoingMessage, ReplyChannel } from '../../core/platform.ts';
import type { SlackConfig } from '../../config.ts';
import type { Logger } from '../../log.ts';
import { parseSlashText } from './options.ts';

/**
 * Escapes the three characters Slack's `text` reserves (`&`, `<`, `>`), which also stops
 * model output from forming `<!channel>` or `<@U…>` mentions.
 */
export function escapeSlackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Length of `text` after {@link escapeSlackText}. */
export function slackLength(text: string): number {
  let extra = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 38) extra += 4;
    else if (c === 60 || c === 62) extra += 3;
  }
  return text.length + extra;
}

/** Slack's limits as the streaming reply needs them (PLATFORM-LIMITS.md). */
export const SLACK_LIMITS = {
  /** `msg_too_long` appears near 4,000 characters in practice; keep a margin. */
  maxChars: 3900,
  /** chat.update is tier 3 (~50/min per workspace): about one edit a second per stream. */
  minEditIntervalMs: 1000,
  measure: slackLength,
};

/**
 * The reply of one slash command: messages posted in the command's channel (follow-ups of a
 * long answer in the first message's thread); ephemeral notes through `response_url`.
 */
export class SlashCommandReply implements ReplyChannel {
  readonly limits = SLACK_LIMITS;
  private threadTs: string | undefined;

  constructor(
    private readonly client: WebClient,
    private readonly command: SlashCommand,
    private readonly respond: RespondFn,
    private readonly log: Logger,
  ) {}

  /** Slack was acked when the command arrived; nothing more is needed before slow work. */
  async defer(): Promise<void> {}

  async send(message: OutgoingMessage): Promise<MessageHandle> {
    const channel = this.command.channel_id;
    if (message.files?.length) {
      await this.client.filesUploadV2({
        channel_id: channel,
        initial_comment: escapeSlackText(message.content),
        ...(this.threadTs ? { thread_ts: this.threadTs } : {}),
        file_uploads: message.files.map((f) => ({ file: f.data, filename: f.name, ...(f.description ? { alt_text: f.description } : {}) })),
      });
      return { edit: async () => this.log.debug('files cannot be edited on Slack; edit ignored') };
    }
    const images = (message.imageLinks ?? []).slice(0, 10);
    const posted = await this.client.chat.postMessage({
      channel,
      text: escapeSlackText(message.content || (images.length ? 'Image results' : '')),
      ...(images.length
        ? { blocks: images.map((link) => ({ type: 'image' as const, image_url: link.url, alt_text: link.alt || 'image result' })) }
        : {}),
      unfurl_links: false,
      unfurl_media: false,
      ...(this.threadTs ? { thread_ts: this.threadTs } : {}),
    });
    const ts = posted.ts;
    if (!ts) throw new Error('chat.postMessage returned no ts');
    this.threadTs ??= ts;
    const postedChannel = posted.channel ?? channel;
    return {
      edit: async (m) => {
        await this.client.chat.update({ channel: postedChannel, ts, text: escapeSlackText(m.content) });
      },
    };
  }

  async sendEphemeral(text: string): Promise<void> {
    try {
      await this.respond({ response_type: 'ephemeral', text: escapeSlackText(text) });
    } catch (error) {
      this.log.warn({ err: error }, 'response_url failed; trying chat.postEphemeral');
      await this.client.chat
        .postEphemeral({ channel: this.command.channel_id, user: this.command.user_id, text: escapeSlackText(text) })
        .catch((e: unknown) => this.log.warn({ err: e }, 'could not send an ephemeral message on Slack'));
    }
  }
}

/** Bolt's logger interface on top of pino. */
function boltLogger(log: Logger): SlackLogger {
  let level = LogLevel.INFO;
  return {
    debug: (...m: unknown[]) => log.debug(m.map(String).join(' ')),
    info: (...m: unknown[]) => log.info(m.map(String).join(' ')),
    warn: (...m: unknown[]) => log.warn(m.map(String).join(' ')),
    error: (...m: unknown[]) => log.error(m.map(String).join(' ')),
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => undefined,
  };
}

/** The Slack side of the bot. */
export class SlackAdapter {
  readonly app: App;
  private readonly running = new RunningCommands();
  /** The HTTP receiver's port once started (HTTP mode). */
  port: number | undefined;

  constructor(
    private readonly config: SlackConfig,
    private readonly core: Core,
    private readonly commands: readonly Command[],
    private readonly log: Logger,
  ) {
    const socketMode = config.appToken !== undefined;
    const slackApiUrl = config.apiUrl ? { slackApiUrl: config.apiUrl } : {};
    this.app = new App({
      token: config.botToken,
      signingSecret: config.signingSecret,
      ...(socketMode
        ? {
            socketMode: true,
            appToken: config.appToken,
            // Socket Mode's own WebClient (apps.connections.open, with the app token) is built by
            // SocketModeReceiver from `installerOptions.clientOptions`, not from `clientOptions`.
            // Bolt 5.1 happens to default the former to the latter (the very same object, into which
            // SocketModeClient writes a `retryConfig` of its own when it has none); set it explicitly
            // so that SLACK_API_URL holds for every Web API call whatever Bolt's default (checked by
            // test/e2e/slack-socket-mode.test.ts). Its retries are patient on purpose: this call
            // also runs on every reconnect, where @slack/socket-mode lets a final network error
            // escape as an unhandled rejection (fatal on Node 20): ~2 minutes of retries (1 s
            // doubling up to 30 s) instead of the few seconds a chat answer is worth. Slack's
            // refusals (invalid_auth) are not retried.
            installerOptions: { clientOptions: { ...slackApiUrl, retryConfig: { retries: 8, factor: 2, minTimeout: 1000, maxTimeout: 30_000 } } },
          }
        : {}),
      logger: boltLogger(log.child({ lib: 'bolt' })),
      clientOptions: {
        ...slackApiUrl,
        // Bolt's default retries for ~30 minutes; a chat answer is worth a few seconds at most.
        retryConfig: { retries: 2, factor: 2, minTimeout: 500, maxTimeout: 4000 },
      },
      // Bolt otherwise calls auth.test in this constructor and keeps the promise: a wrong token
      // or an unreachable Slack becomes an unhandled rejection (which ends a Node 20 process)
      // while start() reports success. start() runs it instead (App#init) and fails clearly.
      deferInitialization: true,
    });
    for (const command of commands) {
      this.app.command(`/${command.name}`, async ({ command: slash, ack, client, respond }) => {
        await ack();
        void this.running.run((signal) => this.onCommand(command, slash, client, respond, signal), (error) => this.log.error({ err: error }, 'command handler failed'));
      });
    }
    this.app.error(async (error) => {
      this.log.error({ err: error }, 'bolt error');
    });
  }

  /**
   * Checks the bot token (auth.test), then starts Socket Mode or the HTTP receiver (on
   * `config.port`; 0 = any free port).
   * @throws Error naming the Slack error (e.g. `invalid_auth`) when the token is refused or
   *   Slack cannot be reached; the receiver's error when the port cannot be bound.
   */
  async start(): Promise<void> {
    try {
      await this.app.init();
    } catch (error) {
      const code = (error as { data?: { error?: unknown } }).data?.error;
      const detail = typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
      throw new Error(`Slack refused the bot token or could not be reached (auth.test: ${detail}); check SLACK_BOT_TOKEN and SLACK_API_URL`, { cause: error });
    }
    if (this.config.appToken !== undefined) {
      await this.app.start();
      this.log.info('slack ready (socket mode)');
      return;
    }
    const server = (await this.app.start(this.config.port)) as Server;
    this.port = (server.address() as AddressInfo).port;
    this.log.info({ port: this.port }, 'slack ready (http)');
  }

  /** Cancels running commands, waits for them, and stops the receiver. */
  async stop(): Promise<void> {
    await this.running.stopAll();
    await this.app.stop();
  }

  private async onCommand(command: Command, slash: SlashCommand, client: WebClient, respond: RespondFn, signal: AbortSignal): Promise<void> {
    const log = this.log.child({ platform: 'slack', command: command.name, channel: slash.channel_id, trigger: slash.trigger_id });
    const reply = new SlashCommandReply(client, slash, respond, log);
    await runCommand(command, {
      platform: 'slack',
      conversationId: `slack:${slash.team_id}:${slash.channel_id}`,
      // Admin status needs users.info; no Slack command is admin-only yet.
      user: { id: slash.user_id, name: slash.user_name, isAdmin: false },
      options: parseSlashText(command, slash.text),
      attachments: [],
      signal,
      log,
      reply,
    }, this.core);
  }
}
