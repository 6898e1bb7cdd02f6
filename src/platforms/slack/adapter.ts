/**
 * The Slack adapter (@slack/bolt): the app, its receiver (HTTP or Socket Mode) and its
 * lifecycle. Each kind of inbound request has a file of its own: slash commands
 * (commands.ts), messages addressed to the bot (events.ts), the agent view and the Home tab
 * (agent.ts), presses of its buttons (actions.ts), its message shortcuts (shortcuts.ts) and
 * message actions (message-actions.ts); reply.ts answers them.
 */
// A named import: Node's ESM gives `import bolt from` the whole CommonJS exports object, but
// bundler-style interop (vitest/vite) gives it `exports.default` (the App class), so `bolt.App`
// is undefined there. `exports.App` is found by both.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, type AppOptions, HTTPReceiver, type RespondFn } from '@slack/bolt';
import type { Logger as SlackLogger } from '@slack/logger';
import { WebClient } from '@slack/web-api';
import type { SlackConfig } from '../../config.ts';
import type { CatchUpRunner } from '../../core/catch-up.ts';
import type { Command } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import type { MessageAction } from '../../core/message-action.ts';
import { RESTARTING, RunningCommands } from '../../core/running.ts';
import type { Logger } from '../../log.ts';
import { registerBlockActions } from './actions.ts';
import { registerAgentView } from './agent.ts';
import { catchUpAfterConnecting } from './catch-up.ts';
import { handleSlashCommand, type SlashCommandDeps } from './commands.ts';
import { registerMessageEvents } from './events.ts';
import { createSlackServer } from './http.ts';
import { boltLogger } from './logger.ts';
import { registerActionForms, slackShortcutsOf } from './message-actions.ts';
import { rateLimitWatcher, SLACK_BUDGETS, slackRateLimitWait } from './rate-limits.ts';
import { registerMessageShortcuts } from './shortcuts.ts';
import { SlackStreaming } from './stream.ts';
import { registerUninstall, type UninstallHandle } from './uninstall.ts';
import { SlackDirectory } from './users.ts';

/**
 * What a user reads after a slash command the bot does not serve: the right spelling for a
 * known one in the wrong case, else the list of its commands.
 */
export function unknownCommandText(command: string, known: readonly string[]): string {
  const lower = command.toLowerCase();
  if (known.includes(lower)) return `Slack commands are lowercase here: try ${lower}.`;
  return `${command} is not a command of this bot. Its commands: ${known.join(', ')}.`;
}

/**
 * Bolt's App options: the receiver (Socket Mode with the app token, else our HTTP receiver),
 * the Web API base (SLACK_API_URL) for every client, and retries fit for a chat answer.
 */
function appOptions(config: SlackConfig, logger: SlackLogger, receiver: HTTPReceiver | undefined): AppOptions {
  const slackApiUrl = config.apiUrl ? { slackApiUrl: config.apiUrl } : {};
  return {
    token: config.botToken,
    ...(receiver ? { receiver } : { signingSecret: config.signingSecret }),
    ...(config.appToken !== undefined
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
          installerOptions: {
            clientOptions: {
              ...slackApiUrl,
              retryConfig: { retries: 8, factor: 2, minTimeout: 1000, maxTimeout: 30_000 },
            },
          },
        }
      : {}),
    logger,
    clientOptions: {
      ...slackApiUrl,
      // Bolt's default retries for ~30 minutes; a chat answer is worth a few seconds at most.
      // A call Slack does not answer ends after 6 s (twice, with the retry): the user is told.
      retryConfig: { retries: 1, factor: 2, minTimeout: 500, maxTimeout: 4000 },
      timeout: 6_000,
      // A 429 is not waited out by the client: web-api pauses every call of the workspace's
      // client for the whole Retry-After, so one channel's 429 naming an hour held every channel
      // for the hour. It rejects at once instead; the write scheduler holds the bucket hit (at
      // most a minute) and submits the write again (rate-limits.ts slackRateLimitWait).
      rejectRateLimitedCalls: true,
    },
    // Bolt otherwise calls auth.test in this constructor and keeps the promise: a wrong token
    // or an unreachable Slack becomes an unhandled rejection (which ends a Node 20 process)
    // while start() reports success. start() runs it instead (App#init) and fails clearly.
    deferInitialization: true,
  };
}

/** The Slack side of the bot. */
export class SlackAdapter {
  readonly app: App;
  private readonly running = new RunningCommands();
  /** The HTTP receiver's port once started (HTTP mode). */
  port: number | undefined;
  private server: Server | undefined;
  private readonly receiver: HTTPReceiver | undefined;
  private started = false;
  private readonly catchUp: CatchUpRunner;
  private readonly commands: readonly Command[];
  /** The uninstall listeners (uninstall.ts): a reinstalled team is served again; tests wait for a purge. */
  readonly uninstall: UninstallHandle;

  /** @param definitions the slash commands and message actions (commands/index.ts). */
  constructor(
    private readonly config: SlackConfig,
    private readonly core: Core,
    definitions: { commands: readonly Command[]; messageActions: readonly MessageAction[] },
    private readonly log: Logger,
  ) {
    const { commands, messageActions } = definitions;
    this.commands = commands;
    const logger = boltLogger(log.child({ lib: 'bolt' }));
    // HTTP mode: Bolt's receiver, served by our own server (http.ts) that guards it.
    this.receiver =
      config.appToken !== undefined
        ? undefined
        : new HTTPReceiver({ signingSecret: config.signingSecret, logger, endpoints: '/slack/events' });
    this.app = new App(appOptions(config, logger, this.receiver));
    // The scheduler paces streamed writes within Slack's budgets; a 429 holds the bucket it hit,
    // and the write refused goes again after it.
    core.scheduler.define({ platform: 'slack', kind: 'post' }, SLACK_BUDGETS.post);
    core.scheduler.define({ platform: 'slack', kind: 'update' }, SLACK_BUDGETS.update);
    core.scheduler.define({ platform: 'slack', kind: 'appendStream' }, SLACK_BUDGETS.appendStream);
    core.scheduler.retryRateLimited(slackRateLimitWait);
    /** Where Slack refused native streaming or the thinking status, for every answer of this adapter. */
    const streaming = new SlackStreaming(
      core.store,
      core.scheduler.clock,
      new WebClient(config.botToken, {
        ...(config.apiUrl ? { slackApiUrl: config.apiUrl } : {}),
        logger,
        rejectRateLimitedCalls: true,
        retryConfig: { retries: 0 },
        timeout: 6_000,
      }),
    );
    // Only an origin the operator configured joins Slack's file hosts in getting the bot token (files.ts).
    const files = { botToken: config.botToken, apiOrigin: config.apiUrl && new URL(config.apiUrl).origin };
    this.registerMiddleware();
    const directory = new SlackDirectory(core.admins, log);
    const deps = { core, log, running: this.running, directory, ...files, streaming, commands };
    this.registerCommands(deps);
    registerMessageEvents(this.app, deps);
    registerAgentView(this.app, { ...deps, prompts: config.assistantPrompts, messageActions });
    this.catchUp = catchUpAfterConnecting(this.app, deps);
    registerBlockActions(this.app, deps);
    registerMessageShortcuts(this.app, deps, slackShortcutsOf(messageActions));
    registerActionForms(this.app, deps, messageActions);
    // Single-token mode: no installation to forget (the token is dead anyway); the OAuth mode passes its store's.
    this.uninstall = registerUninstall(this.app, { core, log, forgetInstallation: async () => undefined });
    this.app.error(async (error) => this.log.error({ err: error }, 'bolt error'));
  }

  /**
   * Bolt middleware run for every request: reports the 429s of each per-team WebClient Bolt
   * hands its listeners (once it is seen), and answers a slash command no listener serves (an
   * old one, /CHAT typed by hand, another app's) instead of leaving Slack waiting into a 404.
   */
  private registerMiddleware(): void {
    const watch = rateLimitWatcher(this.core);
    watch(this.app.client, undefined);
    const names = new Set(this.commands.map((c) => `/${c.name}`));
    this.app.use(async (args) => {
      watch(args.client, args.context.teamId);
      const { command, ack, respond } = args as unknown as {
        command?: { command?: string };
        ack?: () => Promise<void>;
        respond?: RespondFn;
      };
      if (command?.command && !names.has(command.command)) {
        await ack?.();
        this.log.info({ command: command.command }, 'unknown slash command');
        await respond?.({ response_type: 'ephemeral', text: unknownCommandText(command.command, [...names]) }).catch(
          (error: unknown) => this.log.warn({ err: error }, 'could not answer an unknown command'),
        );
        return;
      }
      await args.next();
    });
  }

  /** One listener per command: acked at once, then run among the running commands (refused while stopping). */
  private registerCommands(deps: SlashCommandDeps): void {
    for (const command of this.commands) {
      this.app.command(`/${command.name}`, async ({ command: slash, ack, client, respond }) => {
        await ack();
        if (this.running.draining) {
          await respond({ response_type: 'ephemeral', text: RESTARTING }).catch((error: unknown) =>
            this.log.warn({ err: error }, 'could not answer while stopping'),
          );
          return;
        }
        void this.running.run(
          (signal) => handleSlashCommand(command, slash, client, respond, deps, signal),
          (error) => this.log.error({ err: error }, 'command handler failed'),
        );
      });
    }
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
      throw new Error(
        `Slack refused the bot token or could not be reached (auth.test: ${detail}); check SLACK_BOT_TOKEN and SLACK_API_URL`,
        { cause: error },
      );
    }
    if (this.config.appToken !== undefined) {
      await this.app.start();
      this.started = true;
      this.log.info('slack ready (socket mode)');
      return;
    }
    const server = createSlackServer(this.receiver!, {
      signingSecret: this.config.signingSecret,
      claims: this.core.claims,
      log: this.log,
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.port, () => resolve());
    });
    this.server = server;
    this.started = true;
    this.port = (server.address() as AddressInfo).port;
    this.log.info({ port: this.port }, 'slack ready (http)');
    this.catchUp.request(); // Slack retries what it could not deliver meanwhile; catch-up.ts reads the rest.
  }

  /**
   * Why Slack cannot reach the bot now, or undefined when it can: HTTP mode, the receiver
   * listens; Socket Mode, the socket is open (Bolt's SocketModeReceiver keeps its client as
   * `receiver.client`; Bolt 5.1 has no public accessor for it).
   */
  health(): string | undefined {
    if (!this.started) return 'slack not started';
    if (this.config.appToken === undefined)
      return this.server?.listening ? undefined : 'slack HTTP receiver not listening';
    const socket = (this.app as unknown as { receiver?: { client?: { websocket?: { isActive(): boolean } } } }).receiver
      ?.client?.websocket;
    return socket?.isActive() ? undefined : 'slack socket not connected';
  }

  /**
   * Stops: new work is refused with a sentence, running answers get `graceMs` to finish, the
   * rest are stopped with their partial text kept and noted (their writes get 10 s more:
   * RunningCommands.drain); then the receiver is closed.
   * @param graceMs time allowed to finish, in ms (default 0: stop at once).
   */
  async stop(graceMs = 0): Promise<void> {
    const unfinished = await this.running.drain(graceMs);
    if (unfinished > 0)
      this.log.warn({ unfinished }, 'stopping with answers still being written (their last writes took too long)');
    this.started = false;
    if (this.config.appToken !== undefined) {
      await this.app.stop();
      return;
    }
    const server = this.server;
    this.server = undefined;
    if (server) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
  }
}
