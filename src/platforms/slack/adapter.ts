/**
 * The Slack adapter (@slack/bolt): the app, its receiver (HTTP or Socket Mode) and its
 * lifecycle. Each kind of inbound request has a file of its own: slash commands
 * (commands.ts), messages addressed to the bot (events.ts), the agent view and the Home tab
 * (agent.ts), presses of its buttons (actions.ts), its message shortcuts (shortcuts.ts) and
 * message actions (message-actions.ts); reply.ts answers them.
 */

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type App, ErrorCode, type HTTPReceiver, type RespondFn } from '@slack/bolt';
import type { InstallProvider } from '@slack/oauth';
import { WebClient } from '@slack/web-api';
import type { SlackConfig } from '../../config.ts';
import type { CatchUpRunner } from '../../core/catch-up.ts';
import type { Command } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { english, type Words } from '../../core/i18n/words.ts';
import type { MessageAction } from '../../core/message-action.ts';
import { RunningCommands } from '../../core/running.ts';
import type { Logger } from '../../log.ts';
import { inSpan, traceInvocation } from '../../ops/tracing.ts';
import { registerBlockActions } from './actions.ts';
import { registerAgentView } from './agent.ts';
import { boltApp, clientOptions } from './app-options.ts';
import { catchUpAfterConnecting, singleWorkspace } from './catch-up.ts';
import { handleSlashCommand, type SlashCommandDeps } from './commands.ts';
import { registerMessageEvents } from './events.ts';
import { createSlackServer } from './http.ts';
import { type AuthorizeWorkspace, installedWorkspaces, type SlackInstallationStore } from './installations.ts';
import { boltLogger } from './logger.ts';
import { registerActionForms, slackShortcutsOf } from './message-actions.ts';
import { UninstalledTeams } from './oauth.ts';
import { rateLimitWatcher, SLACK_BUDGETS, slackRateLimitWait } from './rate-limits.ts';
import { registerMessageShortcuts } from './shortcuts.ts';
import { refusalWhileStopping } from './stopping.ts';
import { SlackStreaming } from './stream.ts';
import { slackSweep } from './sweep.ts';
import { slackInvocation } from './trace-names.ts';
import { registerUninstall, type UninstallHandle } from './uninstall.ts';
import { userWords } from './user-words.ts';
import { SlackDirectory } from './users.ts';

/**
 * What a user reads after a slash command the bot does not serve, in their `words`: the right
 * spelling for a known one in the wrong case, else the list of its commands.
 */
export function unknownCommandText(command: string, known: readonly string[], words: Words = english): string {
  const lower = command.toLowerCase();
  if (known.includes(lower)) return words.t('slack.commands.lowercase', { command: lower });
  return words.t('slack.commands.unknown', { command, known: known.join(', ') });
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
  /** When Slack last delivered an event (a verified request or Socket Mode envelope), in ms since the epoch; the adapter's creation before the first (/metrics). */
  lastEventAt = Date.now();
  private readonly catchUp: CatchUpRunner;
  /** The periodic sweep for what Slack never delivered (sweep.ts). */
  private readonly sweep: ReturnType<typeof slackSweep>;
  private readonly commands: readonly Command[];
  /**
   * The installations (OAuth mode; undefined with SLACK_BOT_TOKEN). Its `deleteInstallation`
   * is the seam for an uninstall: it deletes a workspace's (or org-wide enterprise's) tokens.
   */
  readonly installations: SlackInstallationStore | undefined;
  /** The port of Socket Mode's installer server (OAuth mode), once listening. */
  installerPort: number | undefined;
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
    ({
      installations: this.installations,
      receiver: this.receiver,
      app: this.app,
    } = boltApp(config, core, logger, log));
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
      (token) =>
        new WebClient(token, {
          ...(config.apiUrl ? { slackApiUrl: config.apiUrl } : {}),
          logger,
          rejectRateLimitedCalls: true,
          retryConfig: { retries: 0 },
          timeout: 6_000,
        }),
    );
    // Only an origin the operator configured joins Slack's file hosts in getting the bot token (files.ts).
    const files = { apiOrigin: config.apiUrl && new URL(config.apiUrl).origin };
    const directory = new SlackDirectory(core.admins, log);
    this.registerMiddleware(directory);
    const deps = { core, log, running: this.running, directory, ...files, streaming, commands };
    this.registerCommands(deps);
    registerMessageEvents(this.app, deps);
    registerAgentView(this.app, { ...deps, prompts: () => config.assistantPrompts, messageActions });
    const workspaces = this.installations
      ? installedWorkspaces(this.installations, clientOptions(config, logger), this.installerAuthorize())
      : singleWorkspace(this.app);
    this.catchUp = catchUpAfterConnecting(this.app, workspaces, deps);
    this.sweep = slackSweep(this.app, workspaces, { ...deps, lastEventAt: () => this.lastEventAt });
    registerBlockActions(this.app, { ...deps, messageActions });
    registerMessageShortcuts(this.app, deps, slackShortcutsOf(messageActions));
    registerActionForms(this.app, deps, messageActions);
    // The uninstall listeners (uninstall.ts): the OAuth mode forgets the workspace's installation
    // (its InstallationStore's deleteInstallation); the single-token mode has none to forget.
    const installations = this.installations;
    this.uninstall = registerUninstall(this.app, {
      core,
      log,
      forgetInstallation: async (teamId, enterpriseId) =>
        installations?.deleteInstallation({ teamId, enterpriseId, isEnterpriseInstall: false }),
    });
    // A workspace installing the app (again): its requests are served again.
    if (installations) installations.onStored = (teamId) => this.uninstall.reinstalled(teamId);
    const uninstalled = new UninstalledTeams(log);
    this.app.error(async (error) => {
      // A workspace with no installation: acknowledged (Bolt acks once this returns) and dropped.
      if (uninstalled.handled(error)) return;
      this.log.error({ err: error }, 'bolt error');
      // Any other failed authorization (the store down): Bolt answers 401, and Slack retries later.
      if (error.code === ErrorCode.AuthorizationError) throw error;
    });
  }

  /**
   * Bolt middleware run for every request: reports the 429s of each per-team WebClient Bolt
   * hands its listeners (once it is seen), and answers a slash command no listener serves (an
   * old one, /CHAT typed by hand, another app's) instead of leaving Slack waiting into a 404.
   */
  /**
   * Bolt's installer's authorize (OAuth mode), for catch-up's tokens outside a request: it
   * refreshes a rotating token as a request's authorization does. The installer is the
   * receiver's (HTTPReceiver's, which we build; in Socket Mode the SocketModeReceiver Bolt builds,
   * its `installer` public but the App's `receiver` field not). undefined without one: catch-up
   * then uses the stored token as it is.
   */
  private installerAuthorize(): AuthorizeWorkspace | undefined {
    const receiver = this.receiver ?? (this.app as unknown as { receiver?: { installer?: InstallProvider } }).receiver;
    const installer = receiver?.installer;
    return installer ? (query) => installer.authorize(query) : undefined;
  }

  private registerMiddleware(directory: SlackDirectory): void {
    const watch = rateLimitWatcher(this.core);
    watch(this.app.client, undefined);
    const names = new Set(this.commands.map((c) => `/${c.name}`));
    this.app.use((args) =>
      traceInvocation(...slackInvocation(args.body), async () => {
        this.lastEventAt = Date.now();
        watch(args.client, args.context.teamId);
        const { command, ack, respond } = args as unknown as {
          command?: { command?: string; team_id?: string; user_id?: string };
          ack?: () => Promise<void>;
          respond?: RespondFn;
        };
        if (command?.command && !names.has(command.command)) {
          await ack?.();
          this.log.info({ command: command.command }, 'unknown slash command');
          // Only its user sees it: in their words (users.info's locale, kept by the directory).
          const words = await userWords(
            args.client,
            { core: this.core, directory },
            command.team_id ?? '',
            command.user_id ?? '',
          );
          const text = unknownCommandText(command.command, [...names], words);
          await respond?.({ response_type: 'ephemeral', text }).catch((error: unknown) =>
            this.log.warn({ err: error }, 'could not answer an unknown command'),
          );
          return;
        }
        await args.next();
      }),
    );
  }

  /** One listener per command: acked at once, then run among the running commands (refused while stopping). */
  private registerCommands(deps: SlashCommandDeps): void {
    for (const command of this.commands) {
      this.app.command(`/${command.name}`, async ({ command: slash, ack, client, respond }) => {
        await inSpan('slack.ack', {}, () => ack());
        if (this.running.draining) {
          const text = await refusalWhileStopping(client, deps, slash.team_id, slash.user_id);
          await respond({ response_type: 'ephemeral', text }).catch((error: unknown) =>
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
   * Checks the bot token (auth.test; the OAuth mode has none to check: each installation's is
   * read per request), then starts Socket Mode (with the OAuth installer on `config.port`) or
   * the HTTP receiver (on `config.port`; 0 = any free port).
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
      const installer = this.socketInstallerServer();
      const listening = installer && this.installerListening(installer);
      listening?.catch(() => undefined); // awaited below: a failed app.start() first must not leave it unhandled
      await this.app.start();
      if (listening) this.installerPort = await listening;
      this.started = true;
      this.sweep.start();
      this.log.info(
        this.installerPort === undefined ? {} : { installerPort: this.installerPort },
        'slack ready (socket mode)',
      );
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
    this.sweep.start();
    this.catchUp.request(); // Slack retries what it could not deliver meanwhile; catch-up.ts reads the rest.
  }

  /** Socket Mode's installer server (OAuth mode), which Bolt 5.1 keeps as `receiver.httpServer`. */
  private socketInstallerServer(): Server | undefined {
    if (!this.installations) return undefined;
    return (this.app as unknown as { receiver?: { httpServer?: Server } }).receiver?.httpServer;
  }

  /**
   * Resolves with the installer server's port once it listens; rejects when it cannot bind
   * (Bolt starts it without waiting, and leaves its errors unhandled).
   */
  private installerListening(server: Server): Promise<number> {
    return new Promise((resolve, reject) => {
      server.once('listening', () => resolve((server.address() as AddressInfo).port));
      server.once('error', (error) =>
        reject(new Error(`the Slack installer could not listen on SLACK_PORT ${this.config.port}`, { cause: error })),
      );
    });
  }

  /**
   * Why Slack cannot reach the bot now, or undefined when it can: not deaf (sweep.ts: missed
   * mentions found while Slack delivered nothing, until it delivers again); HTTP mode, the receiver
   * listens; Socket Mode, the socket is open (Bolt's SocketModeReceiver keeps its client as
   * `receiver.client`; Bolt 5.1 has no public accessor for it).
   */
  health(): string | undefined {
    if (!this.started) return 'slack not started';
    const deaf = this.sweep.deafness();
    if (deaf) return deaf;
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
    this.sweep.stop();
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
