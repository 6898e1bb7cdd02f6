/**
 * The Discord adapter (discord.js): the client and its lifecycle. Each kind of inbound event
 * has a file of its own: slash-command interactions (interactions.ts), autocomplete and
 * button presses (components.ts), message commands and their modals (message-actions.ts), and
 * messages addressed to the bot (messages.ts); rest.ts holds what every write shares.
 */

import {
  Client,
  type ClientOptions,
  Events,
  GatewayCloseCodes,
  type GatewayDispatchPayload,
  GatewayIntentBits,
  type Interaction,
  type IShardingStrategy,
  type Message,
  type PartialMessage,
  Partials,
  RESTEvents,
  type RESTOptions,
  Status,
} from 'discord.js';
import { Agent } from 'undici';
import type { DiscordConfig } from '../../config.ts';
import type { Command } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import type { MessageAction } from '../../core/message-action.ts';
import { RunningCommands } from '../../core/running.ts';
import type { Sweep } from '../../core/sweep.ts';
import type { Logger } from '../../log.ts';
import { traceInvocation } from '../../ops/tracing.ts';
import { catchUpOnNewSessions } from './catch-up.ts';
import { handleAutocomplete, handleButton } from './components.ts';
import { handleEdit } from './edits.ts';
import { guardMalformedInteractions, refuseWhileStopping } from './guard.ts';
import { type GuildLeaveHandle, registerGuildLeave } from './guild-leave.ts';
import { handleChatInput } from './interactions.ts';
import { handleMessage } from './mentions.ts';
import { handleMessageCommand, handleModalSubmit, PendingTargets } from './message-actions.ts';
import { isAddressedToBot, mayContinueThread } from './messages.ts';
import { makeCache, onUncachedEdits, withoutOwnMessages } from './own-messages.ts';
import { DiscordRateLimits } from './rate-limits.ts';
import { makeDiscordRequest, NO_MENTIONS } from './rest.ts';
import { discordSweep, isDelivery } from './sweep.ts';
import { stillOpenedThread } from './thread-open.ts';
import { interactionAttributes } from './trace-names.ts';

/** What discord.js may send a second before it holds requests back itself (Discord's interaction routes are exempt from the global 50/s). */
const REST_GLOBAL_PER_SECOND = 1_000_000;

/**
 * Keep-alive connections discord.js keeps to Discord's API. Unbounded (discord.js's default),
 * a burst of commands opened as many connections at once, and their deferrals reached Discord
 * after its 3 s window; a bounded pool of reused connections acknowledges them in time, and 256
 * did better than 128 (bench/streams.bench.ts; the figures are in docs/benchmarks.md).
 */
const REST_CONNECTIONS = 256;

/**
 * The gateway intents the bot asks for: guilds, guild messages and DMs (none privileged), and
 * Message Content only when the operator enabled it (`DISCORD_MESSAGE_CONTENT=true`).
 */
export function intentsFor(config: Pick<DiscordConfig, 'messageContent'>): GatewayIntentBits[] {
  return [
    GatewayIntentBits.Guilds,
    GatewayIntentBits.GuildMessages,
    GatewayIntentBits.DirectMessages,
    ...(config.messageContent ? [GatewayIntentBits.MessageContent] : []),
  ];
}

/**
 * discord.js's shard options from DISCORD_SHARDS / DISCORD_SHARD_IDS: `auto`, every shard of a
 * count, or this process's share of them (each shard runs in the process that lists it).
 */
export function shardOptions(config: Pick<DiscordConfig, 'shards'>): {
  shards?: 'auto' | number[];
  shardCount?: number;
} {
  const shards = config.shards;
  if (!shards) return {};
  if (shards.count === 'auto') return { shards: 'auto' };
  return { shards: shards.ids ?? Array.from({ length: shards.count }, (_, i) => i), shardCount: shards.count };
}

/**
 * discord.js's client options: intents, the DM channel partial, no pings, shards, and REST
 * tuned for interaction bursts. discord.js counts every request against Discord's global 50 a
 * second, interaction callbacks and webhooks included, which Discord exempts ("Interaction
 * endpoints are not bound to the bot's Global Rate Limit"): a burst of commands then had its
 * deferrals queued past the 3 s window. The global budget of bot-token writes is kept by the
 * write scheduler instead (rate-limits.ts, docs/platform-limits.md), a global 429 included:
 * discord.js sees it as its route's own, and no wait longer than the bot holds (rest-waits.ts).
 */
function clientOptions(config: DiscordConfig, keep: (strategy: IShardingStrategy) => IShardingStrategy): ClientOptions {
  return {
    intents: intentsFor(config),
    // DM channels are not cached before their first message: without this partial discord.js drops DMs.
    // No Partials.Message: the bot's own messages are not cached (own-messages.ts), so their
    // updates are dropped at once; an edit of another message not cached comes from the raw event.
    partials: [Partials.Channel],
    makeCache,
    // The gateway's events of the bot's own messages never reach discord.js (own-messages.ts).
    // The strategy is kept: the sweep re-establishes its shards' connections (sweep.ts).
    ws: { buildStrategy: (manager) => keep(withoutOwnMessages(manager)) },
    allowedMentions: NO_MENTIONS,
    ...shardOptions(config),
    // discord.js's own undici sends through this agent: dispatchers keep one interface across undici versions.
    rest: {
      makeRequest: makeDiscordRequest,
      agent: new Agent({
        connections: REST_CONNECTIONS,
        keepAliveTimeout: 30_000,
      }) as unknown as RESTOptions['agent'],
      globalRequestsPerSecond: REST_GLOBAL_PER_SECOND,
      ...(config.apiUrl ? { api: config.apiUrl } : {}),
    },
  };
}

/** The Discord side of the bot. */
export class DiscordAdapter {
  readonly client: Client;
  private readonly running = new RunningCommands();
  /** Set when Discord closed the gateway for good (e.g. 4004, authentication failed). */
  private fatal: string | undefined;
  /** Budgets and what Discord said about them, for the write scheduler. */
  private readonly rateLimits: DiscordRateLimits;
  /** When the gateway last delivered a dispatch (any event; not a heartbeat), in ms since the epoch; the adapter's creation before the first (/metrics). */
  lastEventAt = Date.now();
  /** When the gateway last dispatched an event of users (sweep.ts `isDelivery`), in ms since the epoch. */
  private lastDeliveryAt = Date.now();
  /** The strategy that runs the shards, once discord.js built it. */
  private strategy: IShardingStrategy | undefined;
  /** The periodic sweep for what the gateway never dispatched (sweep.ts). */
  private readonly sweep: Sweep<Message>;
  /** Told when Discord closed the gateway for good (the bot may have no platform left). */
  onFatal: ((reason: string) => void) | undefined;
  private readonly commands: readonly Command[];
  private readonly actions: readonly MessageAction[];
  /** Messages chosen for an action whose modal is open (message-actions.ts). */
  private readonly pending = new PendingTargets();
  /** The bot leaving a server purges its data (guild-leave.ts); tests wait for a purge. */
  readonly guildLeave: GuildLeaveHandle;
  /** What the interaction handlers need: one object for every interaction (an answer keeps it while it streams). */
  private readonly interactionDeps: {
    core: Core;
    commands: readonly Command[];
    log: Logger;
    rateLimits: DiscordRateLimits;
    messageContent: boolean | undefined;
  };

  /** @param definitions the slash commands and message actions (commands/index.ts). */
  constructor(
    private readonly config: DiscordConfig,
    private readonly core: Core,
    definitions: { commands: readonly Command[]; messageActions: readonly MessageAction[] },
    private readonly log: Logger,
  ) {
    this.commands = definitions.commands;
    this.actions = definitions.messageActions;
    this.client = new Client(clientOptions(config, (strategy) => (this.strategy = strategy)));
    // An interaction discord.js cannot build (no member, no user) is answered and logged before it throws inside discord.js.
    guardMalformedInteractions(this.client, log, this.core.languages.defaultLocale);
    this.client.on(Events.Raw, (packet: GatewayDispatchPayload) => {
      this.lastEventAt = Date.now();
      if (isDelivery(packet)) this.lastDeliveryAt = this.lastEventAt;
    });
    this.client.on(Events.InteractionCreate, (interaction) =>
      traceInvocation('discord.interaction', interactionAttributes(interaction), () => this.onInteraction(interaction)),
    );
    this.client.on(Events.MessageCreate, (message) => this.onMessage(message));
    this.client.on(Events.MessageUpdate, (_old, message) => this.onEdit(message));
    this.guildLeave = registerGuildLeave(this.client, { core, log });
    onUncachedEdits(this.client, { core, log }, (message) => this.onEdit(message));
    // Every response's rate-limit headers and 429s go to the write scheduler (rate-limits.ts).
    this.rateLimits = new DiscordRateLimits(core.scheduler, core.events, log);
    this.interactionDeps = {
      core,
      commands: this.commands,
      log,
      rateLimits: this.rateLimits,
      messageContent: config.messageContent,
    };
    this.client.rest.on(RESTEvents.Response, (request, response) =>
      this.rateLimits.response(request.method, String(request.path), response.status, response.headers as Headers),
    );
    this.client.on(Events.ShardDisconnect, (event, shardId) => this.onShardClosed(event.code, shardId));
    const stopping = () => this.running.draining;
    const late = { core, log, stopping, answer: (m: Message, botId: string) => this.answer(m, botId, true) };
    catchUpOnNewSessions(this.client, late);
    this.sweep = discordSweep(this.client, {
      ...late,
      lastEventAt: () => this.lastEventAt,
      lastDeliveryAt: () => this.lastDeliveryAt,
      strategy: () => this.strategy,
    });
    this.client.on(Events.Error, (error) => this.log.error({ err: error }, 'discord client error'));
    this.client.on(Events.Warn, (message) => this.log.warn({ message }, 'discord client warning'));
  }

  /** Logs a handler's failure (handlers never throw into discord.js's event emitter). */
  private readonly onError = (error: unknown): void => this.log.error({ err: error }, 'discord handler failed');

  /**
   * Dispatches an interaction to its handler: a slash command (interactions.ts), an
   * autocomplete or a button press (components.ts), a message command or a modal's submit
   * (message-actions.ts; a feedback reason's: feedback.ts). While stopping, new work is refused in a sentence (an empty list for
   * autocomplete) and running answers finish.
   */
  private onInteraction(interaction: Interaction): void {
    const deps = this.interactionDeps;
    if (this.running.draining) {
      void refuseWhileStopping(interaction, this.core.languages).catch(this.onError);
      return;
    }
    if (interaction.isChatInputCommand())
      void this.running.run((signal) => handleChatInput(interaction, deps, signal), this.onError);
    else if (interaction.isAutocomplete()) void handleAutocomplete(interaction, deps).catch(this.onError);
    else if (interaction.isButton())
      void this.running.run((signal) => handleButton(interaction, deps, signal), this.onError);
    else if (interaction.isMessageContextMenuCommand())
      void this.running.run((signal) => handleMessageCommand(interaction, this.actionDeps(), signal), this.onError);
    else if (interaction.isModalSubmit())
      void this.running.run((signal) => handleModalSubmit(interaction, this.actionDeps(), signal), this.onError);
  }

  /** What message actions need (message-actions.ts). */
  private actionDeps() {
    return {
      core: this.core,
      log: this.log,
      actions: this.actions,
      pending: this.pending,
      botId: this.client.user?.id ?? '',
      messageContent: this.config.messageContent,
      rateLimits: this.rateLimits,
    };
  }

  /**
   * Answers a message addressed to the bot (a mention or a DM: messages.ts), and, with the
   * Message Content intent, a person's message in a thread the bot opened (state/threads.ts:
   * a follow-up needs no mention there); refused in a sentence while stopping.
   */
  private onMessage(message: Message): void {
    const botId = this.client.user?.id;
    if (!botId) return;
    const addressed = isAddressedToBot(message, botId);
    const inBotThread = mayContinueThread(message, botId);
    if (!inBotThread) {
      if (addressed) void this.answer(message, botId);
      return;
    }
    if (addressed || this.config.messageContent) void this.inBotThread(message, botId, addressed).catch(this.onError);
  }

  /**
   * A person's message in a thread the bot started: answered when it is addressed to the bot,
   * or when the store says the bot opened the thread for a conversation (a follow-up without a
   * mention); each answer there keeps the thread remembered for 30 more days.
   */
  private async inBotThread(message: Message, botId: string, addressed: boolean): Promise<void> {
    if (addressed) void this.answer(message, botId);
    if ((await stillOpenedThread(this.core, message)) && !addressed) void this.answer(message, botId);
  }

  /** Runs the mention feature for a message (messages.ts, mentions.ts; `late`: catch-up.ts's); resolves when it is over. */
  private answer(message: Message, botId: string, late = false): Promise<void> {
    if (this.running.draining) {
      if (!late) void refuseWhileStopping(message, this.core.languages).catch(this.onError);
      return Promise.resolve();
    }
    const deps = { core: this.core, log: this.log, botId, messageContent: this.config.messageContent };
    return traceInvocation('discord.message', { 'genbot.platform': 'discord', 'genbot.late': late }, () =>
      this.running.run((signal) => handleMessage(message, deps, signal, late), this.onError),
    );
  }

  /** Re-answers an edited mention in place when the edit calls for it (edits.ts); nothing while stopping. */
  private onEdit(message: Message | PartialMessage): void {
    const botId = this.client.user?.id;
    if (!botId || this.running.draining || message.author?.bot) return;
    const deps = { core: this.core, log: this.log, botId };
    void traceInvocation('discord.edit', { 'genbot.platform': 'discord' }, () =>
      this.running.run((signal) => handleEdit(message, deps, signal), this.onError),
    );
  }

  /**
   * Records that Discord closed a shard's gateway for good and tells `onFatal`. discord.js
   * emits ShardDisconnect only for close codes it will not reconnect after (4004 authentication
   * failed, 4010–4014 shard and intent errors).
   */
  private onShardClosed(code: number, shardId: number): void {
    this.fatal = `discord gateway closed for good: ${code} ${GatewayCloseCodes[code] ?? ''}`.trim();
    this.log.error(
      { code, shard: shardId },
      `${this.fatal} (check DISCORD_TOKEN and the intents in the Developer Portal)`,
    );
    this.onFatal?.(this.fatal);
  }

  /**
   * Why Discord cannot reach the bot now, or undefined when every shard's gateway session is
   * ready (a dropped connection shows here until discord.js has resumed it) and the gateway is
   * not deaf (sweep.ts: missed mentions found while it dispatched nothing, until it dispatches again).
   */
  health(): string | undefined {
    if (this.fatal) return this.fatal;
    const deaf = this.sweep.deafness();
    if (deaf) return deaf;
    const shards = [...this.client.ws.shards.values()];
    if (!this.client.isReady() || shards.length === 0) return 'discord gateway not connected';
    const down = shards.filter((shard) => shard.status !== Status.Ready);
    return down.length
      ? `discord gateway not connected (shard ${down.map((s) => `${s.id}: ${Status[s.status]}`).join(', ')})`
      : undefined;
  }

  /** Logs in and resolves once the gateway session is ready. @throws on a bad token. */
  async start(): Promise<void> {
    const ready = new Promise<void>((resolve) => this.client.once(Events.ClientReady, () => resolve()));
    await this.client.login(this.config.token);
    await ready;
    this.sweep.start();
    this.log.info({ user: this.client.user?.tag, guilds: this.client.guilds.cache.size }, 'discord ready');
  }

  /**
   * Stops: new work is refused with a sentence, running answers get `graceMs` to finish, the
   * rest are stopped with their partial text kept and noted (their writes get 10 s more:
   * RunningCommands.drain); then the gateway is closed.
   * @param graceMs time allowed to finish, in ms (default 0: stop at once).
   */
  async stop(graceMs = 0): Promise<void> {
    this.sweep.stop();
    const unfinished = await this.running.drain(graceMs);
    if (unfinished > 0)
      this.log.warn({ unfinished }, 'stopping with answers still being written (their last writes took too long)');
    await this.client.destroy();
  }
}
