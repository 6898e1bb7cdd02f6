/**
 * The FakeDiscord facade: starts the HTTP server and the gateway, wires the modules together,
 * and offers tests their handles (scripting: channels, threads, DMs, users' messages,
 * interactions, budgets, faults; inspection: records, channels and messages). Everything
 * else lives in the protocol-area files.
 */
import type { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { listenOnLoopback } from '../listen.ts';
import type { CommandPermission } from './command-permissions.ts';
import { pressButton } from './components.ts';
import { DEFAULT_USER } from './constants.ts';
import type { Ctx } from './context.ts';
import {
  type DropGatewayOptions,
  Gateway,
  type GatewayIdentify,
  type GatewayResume,
  type GatewaySessionInfo,
} from './gateway.ts';
import { guildOutage, guildRestored } from './guild-events.ts';
import { handleRequest } from './http.ts';
import { dispatchAutocomplete, dispatchInteraction } from './interaction-payload.ts';
import { MessageBudgets } from './limits.ts';
import { type PermissionOverwrite, setOverwrites } from './member-permissions.ts';
import { dispatchMessageCommand, type MessageCommandOptions, type SubmitModalOptions, submitModal } from './modals.ts';
import type { FakeAutocomplete, FakeChannel, FakeInteraction, FakeMessage, FakeUser } from './model.ts';
import type { ChannelPressure, GlobalPressure } from './pressure.ts';
import { createRouter } from './routes/index.ts';
import { FakeState } from './state.ts';
import type {
  DispatchAutocompleteOptions,
  DispatchInteractionOptions,
  FakeCommand,
  FakeDiscordEvents,
  FakeDiscordOptions,
  FakeDownload,
  FakeRequestRecord,
  FakeTyping,
  FakeWrite,
  Fault,
  Json,
  MessageBudget,
  PostUserMessageOptions,
  PressButtonOptions,
  RateLimitMode,
  RateLimitRecord,
} from './types.ts';
import { addThread, editUserMessage, openDm, postUserMessage } from './user-actions.ts';
import { snowflake } from './util.ts';
import { botRoleJson, channelJson, messageJson } from './wire.ts';

/**
 * The fake itself: `await FakeDiscord.start(options)`, point discord.js at `apiUrl` with
 * `token`, wait for `waitForReady()`, then `dispatchInteraction(...)` or `postUserMessage(...)`
 * and read what the bot did from the returned {@link FakeInteraction}, `messagesIn(channel)`,
 * `writes`, `typing`, `downloads`, `requests` and `rateLimits`. `close()` when done. REST
 * answers follow Discord's status codes and error bodies (see discord.ts).
 */
export class FakeDiscord {
  readonly token: string;
  readonly applicationId: string;
  /** `http://127.0.0.1:PORT/api` (discord.js `rest.api`). */
  readonly apiUrl: string;
  /** `ws://127.0.0.1:PORT/gateway`. */
  readonly gatewayUrl: string;
  readonly guildId: string;
  readonly botUser: FakeUser;
  readonly events: EventEmitter<FakeDiscordEvents>;
  /** Every REST request, oldest first. */
  readonly requests: FakeRequestRecord[];
  /** Every accepted message create and edit, oldest first. */
  readonly writes: FakeWrite[];
  /** Every 429 served. */
  readonly rateLimits: RateLimitRecord[];
  /** Interactions by id. */
  readonly interactions: Map<string, FakeInteraction>;
  /** Every typing indicator the bot sent (`POST /channels/:id/typing`), oldest first. */
  readonly typing: FakeTyping[];
  /** Every CDN download (GET of an attachment URL), oldest first; each updated when it ends. */
  readonly downloads: FakeDownload[];

  private readonly ctx: Ctx;
  private readonly sockets = new Set<Socket>();
  private closed = false;

  private constructor(
    private readonly server: Server,
    port: number,
    options: FakeDiscordOptions,
  ) {
    const state = new FakeState(port, options);
    this.ctx = { state, gateway: new Gateway(state), budgets: new MessageBudgets(state) };
    this.token = state.token;
    this.applicationId = state.applicationId;
    this.apiUrl = state.apiUrl;
    this.gatewayUrl = state.gatewayUrl;
    this.guildId = state.guildId;
    this.botUser = state.botUser;
    this.events = state.events;
    this.requests = state.requests;
    this.writes = state.writes;
    this.rateLimits = state.rateLimits;
    this.interactions = state.interactions;
    this.typing = state.typing;
    this.downloads = state.downloads;
  }

  /**
   * Starts a fake on 127.0.0.1 with a random port.
   * @throws when the port cannot be bound.
   */
  static async start(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
    const { server, port } = await listenOnLoopback();
    const fake = new FakeDiscord(server, port, options);
    const route = createRouter(fake.ctx);
    server.on('connection', (socket) => {
      fake.sockets.add(socket);
      socket.once('close', () => fake.sockets.delete(socket));
    });
    server.on('request', (req, res) => void handleRequest(fake.ctx.state, req, res, route));
    server.on('upgrade', (req, socket, head) => fake.ctx.gateway.upgrade(req, socket, head));
    return fake;
  }

  // ------------------------------------------------------------ scripting and inspection

  /** Global commands as registered (last bulk overwrite). */
  get commands(): FakeCommand[] {
    return this.ctx.state.commands;
  }

  set commands(list: FakeCommand[]) {
    this.ctx.state.commands = list;
  }

  /** The guild's text channels (not threads, not DMs), oldest first. */
  get channelList(): FakeChannel[] {
    return this.ctx.state.channelList();
  }

  /** Any channel the fake holds (text channel, thread or DM) by id. */
  channel(id: string): FakeChannel | undefined {
    return this.ctx.state.channels.get(id);
  }

  /** Any message the fake holds by id (also deleted and ephemeral ones). */
  message(id: string): FakeMessage | undefined {
    return this.ctx.state.messages.get(id);
  }

  /** Number of gateway sessions that have identified (READY sent). */
  get readySessions(): number {
    return this.ctx.gateway.readySessions;
  }

  /**
   * Adds a text channel to the guild and announces it (CHANNEL_CREATE) to connected bots.
   * @returns the channel (id is a fresh snowflake).
   */
  addChannel(name: string): FakeChannel {
    const { state } = this.ctx;
    const channel = state.addChannel({ type: 0, guildId: state.guildId, name });
    this.dispatch('CHANNEL_CREATE', { ...channelJson(state, channel), guild_id: state.guildId });
    return channel;
  }

  /**
   * Adds a guild the bot is not a member of, with one text channel (user-install.ts): nothing of
   * it is announced to the bot, its bot-token routes answer 403 (50001 Missing Access), and an
   * interaction dispatched in its channel comes through the invoker's own install of the app
   * (`authorizing_integration_owners: { "1": <user id> }`), for commands registered for it.
   * Users' messages there ({@link postUserMessage}) reach the bot only as message commands' targets.
   * @returns the channel; its `guildId` is the new guild's.
   */
  addGuildWithoutBot(channelName = 'elsewhere'): FakeChannel {
    const { state } = this.ctx;
    const guildId = snowflake();
    state.absentGuilds.add(guildId);
    return state.addChannel({ type: 0, guildId, name: channelName });
  }

  /**
   * The bot is removed from the fake's guild (the server's admin took the app away): GUILD_DELETE
   * (without `unavailable`) to the bot, and from then on the guild is one the bot is not a member
   * of, as {@link addGuildWithoutBot}'s: its members' own installs of the app still answer there.
   */
  removeBotFromGuild(): void {
    this.dispatch('GUILD_DELETE', { id: this.guildId });
    this.ctx.state.absentGuilds.add(this.guildId);
  }

  /**
   * Starts a public thread (type 11, `parent_id`, `thread_metadata`) in a guild text channel
   * and announces it as THREAD_CREATE (`newly_created: true`) to sessions with GUILDS; started
   * from one of the channel's messages with `fromMessage` (the thread's id is then the message's).
   * @throws Error when the parent is not one of the guild's text channels, or the message is
   *   not one of its own or has a thread already.
   */
  addThread(parentChannelId: string, name: string, options: { fromMessage?: string } = {}): FakeChannel {
    return addThread(this.ctx, parentChannelId, name, options);
  }

  /**
   * The DM channel (type 1, `recipients`) between the bot and a user (default
   * {@link DEFAULT_USER}; a known `id` alone is that user, anything else a new or updated
   * user), opened if needed. Discord
   * sends bots nothing when a DM opens: the bot learns of it from its first message.
   */
  openDm(user?: Partial<FakeUser>): FakeChannel {
    const { state } = this.ctx;
    const recipient =
      user === undefined || Object.keys(user).length === 0 ? state.userOf(DEFAULT_USER.id) : state.userFrom(user);
    return openDm(this.ctx, recipient);
  }

  /**
   * Posts a message by a user (kind `user`), another bot or a webhook, and dispatches
   * MESSAGE_CREATE to sessions with GUILD_MESSAGES (guild channels, threads) or
   * DIRECT_MESSAGES (DMs); sessions without MESSAGE_CONTENT see it as Discord shows it to
   * them. Mentions come from the content (`<@id>`, `<@&id>`, `@everyone`) and a pinging reply.
   * @returns the message, also in `messagesIn(channelId)`.
   * @throws Error for what Discord's client would never send (see user-actions.ts).
   */
  postUserMessage(options: PostUserMessageOptions): FakeMessage {
    return postUserMessage(this.ctx, options);
  }

  /**
   * Its author edits a user's message: the new text, `edited_timestamp` (`options.at`, default
   * now), and MESSAGE_UPDATE to the sessions that got its MESSAGE_CREATE (user-actions.ts).
   * @throws Error for a message that is not a user's, or is deleted.
   */
  editUserMessage(messageId: string, content: string, options: { at?: number } = {}): FakeMessage {
    return editUserMessage(this.ctx, messageId, content, options);
  }

  /** Sets the message budget of one channel (or the default for all, when `channelId` is undefined). */
  setMessageBudget(channelId: string | undefined, budget: MessageBudget): void {
    this.ctx.budgets.set(channelId, budget);
  }

  /**
   * Switches the rate limits enforced from now on: `shared` (one budget per channel for every
   * write) or `documented` (per interaction token, and per channel for bot-token writes); every
   * window starts afresh.
   */
  setRateLimitMode(mode: RateLimitMode): void {
    this.ctx.budgets.setMode(mode);
  }

  /**
   * Scripts a long wait Discord names (pressure.ts): on a channel's next writes, a 429 whose
   * `retry_after` is `afterSec` (`refuse`) or an accepted write announcing a reset `afterSec`
   * away (`announce`); or, with `global`, a global 429 of the next bot-token requests.
   */
  pressRateLimits(pressure: ChannelPressure | ({ global: true } & GlobalPressure)): void {
    if ('global' in pressure) this.ctx.state.pressure.onGlobal(pressure);
    else this.ctx.state.pressure.onChannel(pressure);
  }

  /** The rate limits enforced now (see {@link setRateLimitMode}). */
  get rateLimitMode(): RateLimitMode {
    return this.ctx.state.options.rateLimitMode;
  }

  /**
   * Makes the next `times` requests that match fail with `status` before any other check
   * (nothing is applied): a Discord outage. Faults are used in the order they were added.
   */
  failNext(fault: Fault): void {
    this.ctx.state.faults.push({ ...fault, left: fault.times ?? 1 });
  }

  /**
   * Sets the overrides of a command's permissions in the guild, as a server admin does under
   * Server Settings → Integrations (Discord's `PUT …/commands/:id/permissions`, which takes a
   * user's Bearer token, never the bot's): users (type 2) or roles (type 1) allowed to see and
   * use it, or denied it, whatever its `default_member_permissions`.
   */
  setCommandPermissions(commandName: string, permissions: CommandPermission[]): void {
    this.ctx.state.commandPermissions.set(commandName, permissions);
  }

  /**
   * Sets the bot's permissions in every channel (its managed role's), as a server admin does by
   * editing the role: GUILD_ROLE_UPDATE goes to the gateway, and later interactions carry them as
   * `app_permissions`. Routes that need a permission refuse without it (403, 50013): Create
   * Public Threads to start a thread, Send Messages in Threads to post in one (routes/threads.ts).
   */
  setBotPermissions(permissions: bigint): void {
    const { state } = this.ctx;
    state.botPermissions = permissions;
    this.dispatch('GUILD_ROLE_UPDATE', { guild_id: state.guildId, role: botRoleJson(state) });
  }

  /**
   * Sets a guild text channel's permission overwrites (replacing its own), as a server admin does
   * in the channel's settings: CHANNEL_UPDATE goes to the gateway (discord.js computes
   * `permissionsFor` from them), later interactions there carry the invoker's permissions with
   * them applied (`member.permissions`, unless a test gives them), and a user's message there
   * needs Send Messages (in its threads, Send Messages in Threads) after them
   * (member-permissions.ts). An overwrite of the guild's id is @everyone's.
   * @throws Error for a thread, a DM or an unknown channel.
   */
  setPermissionOverwrites(channelId: string, overwrites: PermissionOverwrite[]): void {
    const { state } = this.ctx;
    const channel = setOverwrites(state, channelId, overwrites);
    this.dispatch('CHANNEL_UPDATE', { ...channelJson(state, channel), guild_id: state.guildId });
  }

  /** The bot's permissions now (see {@link setBotPermissions}). */
  get botPermissions(): bigint {
    return this.ctx.state.botPermissions;
  }

  /** Drops the faults of {@link failNext} and the pressure of {@link pressRateLimits} not used up yet (an earlier test's). */
  clearFaults(): void {
    this.ctx.state.faults.length = 0;
    this.ctx.state.pressure.clear();
  }

  /** Every message of a channel (also ephemeral and deleted ones), in creation order. */
  messagesIn(channelId: string): FakeMessage[] {
    return this.allMessages().filter((m) => m.channelId === channelId);
  }

  /** Every message the fake holds, in creation order. */
  allMessages(): FakeMessage[] {
    return [...this.ctx.state.messages.values()];
  }

  /** Commands registered in a guild (last bulk overwrite). */
  guildCommands(guildId: string): FakeCommand[] {
    return this.ctx.state.guildCommands(guildId);
  }

  /**
   * Resolves with the first `event` whose arguments satisfy `predicate`.
   * @throws Error after `timeoutMs` (default 10 s).
   */
  waitFor<K extends keyof FakeDiscordEvents>(
    event: K,
    predicate: (...args: FakeDiscordEvents[K]) => boolean = () => true,
    timeoutMs = 10_000,
  ): Promise<FakeDiscordEvents[K]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.events.off(event, listener as never);
        reject(new Error(`FakeDiscord: no ${String(event)} event within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (...args: FakeDiscordEvents[K]) => {
        if (!predicate(...args)) return;
        clearTimeout(timer);
        this.events.off(event, listener as never);
        resolve(args);
      };
      this.events.on(event, listener as never);
    });
  }

  // ------------------------------------------------------------ gateway faults and records

  /**
   * A gateway outage: every open connection is closed with `options.close` (default 4000
   * "Unknown error.", which discord.js resumes after) or cut without a close frame
   * (`'terminate'`: the client sees 1006); until {@link restoreGateway}, new connections are
   * refused with HTTP 503 (`whileDown: 'refuse'`, default) or accepted without HELLO
   * (`'hold'`). The dropped sessions stay resumable.
   * @returns the number of connections ended.
   */
  dropGateway(options: DropGatewayOptions = {}): number {
    return this.ctx.gateway.drop(options);
  }

  /**
   * Ends the outage: connections are accepted again, held ones get their HELLO now, and a
   * RESUME of a dropped session is answered RESUMED (an IDENTIFY, READY).
   */
  restoreGateway(): void {
    this.ctx.gateway.restore();
  }

  /** True between {@link dropGateway} and {@link restoreGateway}. */
  get gatewayDown(): boolean {
    return this.ctx.gateway.down;
  }

  /** Connection attempts refused (HTTP 503) during outages so far. */
  get refusedGatewayConnections(): number {
    return this.ctx.gateway.refusedConnections;
  }

  /**
   * Closes every open gateway connection with `code` and Discord's reason for it, as Discord
   * does mid-session (4004 "Authentication failed." when the bot's token was reset). After
   * 4004, 4007, 4009 or 4010–4014 the session cannot be resumed.
   * @returns the number of connections closed.
   */
  closeGatewaySessions(code: number, reason?: string): number {
    return this.ctx.gateway.closeSessions(code, reason);
  }

  /**
   * A deaf gateway (`true`) or a hearing one again (`false`): while deaf, no event is dispatched
   * on any session, new ones too (the events are lost, their messages stay in the channels),
   * while heartbeats are ACKed and IDENTIFY and RESUME answered — a connection that looks healthy.
   */
  deafenGateway(deaf = true): void {
    this.ctx.gateway.deaf = deaf;
  }

  /** Events swallowed by a deaf gateway ({@link deafenGateway}). */
  get swallowedGatewayEvents(): number {
    return this.ctx.gateway.swallowedDispatches;
  }

  /** Every gateway WebSocket connection accepted so far (a reconnection is a new one). */
  get gatewayConnections(): number {
    return this.ctx.gateway.connectionsAccepted;
  }

  /** Every accepted IDENTIFY (sessions started, with their `[shard, count]`), oldest first. */
  get gatewayIdentifies(): readonly GatewayIdentify[] {
    return this.ctx.gateway.identifies;
  }

  /** Every accepted RESUME, oldest first. */
  get gatewayResumes(): readonly GatewayResume[] {
    return this.ctx.gateway.resumes;
  }

  /** The open gateway connections now (identified or not), oldest first. */
  get gatewaySessions(): GatewaySessionInfo[] {
    return this.ctx.gateway.openSessions;
  }

  /** Resolves once a bot has identified on the gateway. @throws after `timeoutMs`. */
  async waitForReady(timeoutMs = 10_000): Promise<void> {
    if (this.readySessions > 0) return;
    await this.waitFor('identify', () => true, timeoutMs);
  }

  /**
   * Dispatches INTERACTION_CREATE (an application command, type 2, chat input) to every
   * identified gateway session, with the payload Discord sends (a file option becomes an
   * attachment option, type 11, in `data.resolved.attachments`).
   * @returns the interaction record; its callbacks and messages fill in as the bot answers.
   * @throws Error when no bot is connected, the channel is unknown, the invoker does not see
   *   the registered command (Discord shows a command only to members who hold every permission
   *   of its `default_member_permissions`, or whom {@link setCommandPermissions} allows), or the
   *   options do not fit it.
   */
  dispatchInteraction(options: DispatchInteractionOptions): FakeInteraction {
    return dispatchInteraction(this.ctx, options);
  }

  /**
   * Dispatches an autocomplete interaction (type 4) as Discord does while a user types in
   * `focused`: the options filled in so far, the focused one (`focused: true`) with the text
   * typed. The bot answers with callback type 8 (`data.choices`), checked like Discord (at
   * most 25 choices, names 1–100 characters, string values at most 100, within
   * `responseWindowMs`: later is 10062).
   * @returns the record; `await record.outcome` for the choices, or `expired` when no answer
   *   was accepted in time.
   * @throws Error as {@link dispatchInteraction}, or when the registered option does not autocomplete.
   */
  dispatchAutocomplete(options: DispatchAutocompleteOptions): FakeAutocomplete {
    return dispatchAutocomplete(this.ctx, options);
  }

  /**
   * Presses a button of one of the bot's messages: INTERACTION_CREATE type 3 (`component_type`
   * 2, `message` = the message object). The bot answers with 6 (deferred update), 7 (update:
   * the message's content, embeds and components are replaced), or 4/5 (a new reply); after
   * 6 or 7, `PATCH /webhooks/:app/:token/messages/@original` edits the message with the button.
   * @returns the interaction record (`type` 3, `customId`, `componentMessage`).
   * @throws Error when the message has no such button, it is disabled, or the user could not
   *   see it (Discord's client would not send the press).
   */
  pressButton(options: PressButtonOptions): FakeInteraction {
    return pressButton(this.ctx, options);
  }

  /**
   * A user picks one of the app's message commands on a message (Apps → <name>):
   * INTERACTION_CREATE type 2 with `data.type` 3, `target_id` and the message in
   * `resolved.messages`, its content included whatever the app's intents (modals.ts).
   * @returns the interaction record (`targetMessage`); answered with 4, 5 or 9 (a modal).
   * @throws Error for a message no user could use it on (unknown, deleted, ephemeral, loading).
   */
  dispatchMessageCommand(options: MessageCommandOptions): FakeInteraction {
    return dispatchMessageCommand(this.ctx, options);
  }

  /**
   * The user submits the modal that `interactionId` was answered with (callback type 9):
   * INTERACTION_CREATE type 5 (MODAL_SUBMIT), `data: { custom_id, components }` with the values
   * typed, by the same user in the same channel (modals.ts).
   * @returns the modal submit's interaction record (`modalOf`: the interaction that showed it).
   * @throws Error when no modal was shown, it was submitted already, or Discord's client would
   *   refuse the values (a required input empty, a value outside its lengths, an unknown input).
   */
  submitModal(options: SubmitModalOptions): FakeInteraction {
    return submitModal(this.ctx, options);
  }

  /** The guild goes down in an outage: GUILD_DELETE with `unavailable: true`; {@link guildRestored} brings it back. */
  guildOutage(): void {
    guildOutage(this.ctx);
  }

  /** The guild is available again after an outage: GUILD_CREATE with the whole guild. */
  guildRestored(): void {
    guildRestored(this.ctx);
  }

  /**
   * Sends a dispatch (op 0) to every identified session whose intents allow it and whose shard
   * holds the event's guild (`(guild_id >> 22) % count`; shard 0 for events without a guild).
   */
  dispatch(event: string, data: unknown): void {
    this.ctx.gateway.dispatch(event, data);
  }

  /** The message object Discord answers (what discord.js builds a Message from), with all its content. */
  messageJson(message: FakeMessage): Json {
    return messageJson(this.ctx.state, message);
  }

  /** Stops the server, closing gateway connections and every socket. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.ctx.gateway.close();
    const done = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    for (const s of this.sockets) s.destroy();
    await done;
    this.events.removeAllListeners();
  }
}
