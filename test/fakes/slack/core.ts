/**
 * The base of the FakeSlack facade: one HTTP server (node:http on 127.0.0.1, random port) that
 * routes to the parts of the fake (Web API, upload URL, file downloads, response_url, Socket
 * Mode upgrade), the setup a test does (channels, DMs, users, files, scopes, subscriptions,
 * limits) and what it reads back. What Slack sends to the app is in fake.ts.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { listenOnLoopback } from '../listen.ts';
import { agentMethods } from './agent.ts';
import { assistantMethods } from './assistant.ts';
import { chatMethods } from './chat.ts';
import { conversationMethods } from './conversations.ts';
import { addUserFile, handleFileDownload, handlePermalink, handleSignInPage, shareUserFile } from './downloads.ts';
import { fileMethods } from './files.ts';
import { homeMethods } from './home.ts';
import { identityMethods } from './identity.ts';
import type {
  EventDelivery,
  SocketModeClose,
  SocketModeConnection,
  SocketModeEnvelope,
  UserFileInput,
} from './inbound-types.ts';
import type { OAuthApp } from './oauth.ts';
import type { RateLimitScope } from './pressure.ts';
import { handleResponseUrl } from './response-url.ts';
import { SocketMode } from './socket-mode.ts';
import { streamingMethods } from './streaming.ts';
import type {
  FakeSlackChannel,
  FakeSlackEphemeral,
  FakeSlackFile,
  FakeSlackMessage,
  FakeSlackOptions,
  FakeSlackUser,
  FileDownload,
  PlatformFailure,
  RateLimitRules,
  ResponseUrl,
  ResponseUrlPost,
  SlackApiCall,
} from './types.ts';
import { handleUpload } from './upload.ts';
import { viewMethods, viewsOf } from './views.ts';
import { WebApi } from './web-api.ts';
import type { Json } from './wire.ts';
import { type UploadRecord, Workspace } from './workspace.ts';

export class FakeSlackCore {
  readonly botToken: string;
  /** The app-level token (`xapp-…`) that `apps.connections.open` accepts (SLACK_APP_TOKEN). */
  readonly appToken: string;
  readonly signingSecret: string;
  readonly verificationToken: string;
  readonly teamId: string;
  readonly teamDomain: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly appId: string;
  /** `http://127.0.0.1:PORT` */
  readonly baseUrl: string;
  /** `http://127.0.0.1:PORT/api/` (SLACK_API_URL). */
  readonly apiUrl: string;

  /** Every Web API call, oldest first. */
  readonly calls: SlackApiCall[];
  /** Every file the bot announced (`files.getUploadURLExternal`), by id. */
  readonly files: Map<string, FakeSlackFile>;
  /** Every user's file ({@link addUserFile}), by id. */
  readonly userFiles: Map<string, FakeSlackFile>;
  readonly ephemerals: FakeSlackEphemeral[];
  /** Every response_url issued, by id. */
  readonly responseUrls: Map<string, ResponseUrl>;
  /** What Slack would have shown users as app failures (slash commands and events not acked in time, or refused). */
  readonly platformFailures: PlatformFailure[];
  /** Every upload request to an upload URL, in order (also refused ones). */
  readonly uploads: UploadRecord[];
  /** Every request for a file's bytes (`url_private`, `url_private_download`), in order, also refused ones. */
  readonly downloads: FileDownload[];
  /** Every delivery of an event to the app (HTTP or Socket Mode), in order. */
  readonly eventDeliveries: EventDelivery[];
  /** Every Socket Mode connection ever accepted, oldest first (open ones have `closed: undefined`). */
  readonly socketConnections: SocketModeConnection[];
  /** Every Socket Mode envelope sent, oldest first, with its ack. */
  readonly envelopes: SocketModeEnvelope[];

  protected readonly ws: Workspace;
  protected readonly socketMode: SocketMode;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly webApi: WebApi;
  private closed = false;

  protected constructor(server: Server, port: number, o: FakeSlackOptions) {
    this.server = server;
    const ws = new Workspace(`http://127.0.0.1:${port}`, o);
    this.ws = ws;
    this.socketMode = new SocketMode(ws);
    const methods = {
      ...identityMethods(ws),
      ...ws.oauth.methods(),
      ...this.socketMode.methods(),
      ...chatMethods(ws),
      ...streamingMethods(ws),
      ...assistantMethods(ws),
      ...agentMethods(ws),
      ...fileMethods(ws),
      ...conversationMethods(ws),
      ...viewMethods(ws),
      ...homeMethods(ws),
    };
    this.webApi = new WebApi(ws, methods);
    ({
      botToken: this.botToken,
      appToken: this.appToken,
      signingSecret: this.signingSecret,
      verificationToken: this.verificationToken,
    } = ws);
    ({
      teamId: this.teamId,
      teamDomain: this.teamDomain,
      botUserId: this.botUserId,
      botId: this.botId,
      appId: this.appId,
    } = ws);
    ({ baseUrl: this.baseUrl, apiUrl: this.apiUrl } = ws);
    ({
      calls: this.calls,
      files: this.files,
      ephemerals: this.ephemerals,
      responseUrls: this.responseUrls,
      platformFailures: this.platformFailures,
    } = ws);
    ({
      uploads: this.uploads,
      downloads: this.downloads,
      eventDeliveries: this.eventDeliveries,
      userFiles: this.userFiles,
    } = ws);
    this.socketConnections = this.socketMode.connections;
    this.envelopes = this.socketMode.envelopes;
  }

  /** Binds a server on 127.0.0.1 with a random port (listen.ts). @throws when the port cannot be bound. */
  protected static listen(): Promise<{ server: Server; port: number }> {
    return listenOnLoopback();
  }

  /** Starts serving requests and Socket Mode upgrades. */
  protected attach(): void {
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('request', (req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`fake slack error: ${err instanceof Error ? err.message : String(err)}`);
      });
    });
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.socketMode.handleUpgrade(req, socket, head),
    );
  }

  /** Stops the server, drops Socket Mode connections (recorded as closed by the fake, code 1006) and destroys open sockets. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.socketMode.close();
    const done = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    for (const s of this.sockets) s.destroy();
    await done;
  }

  // ------------------------------------------------------------ workspace setup

  /**
   * The app's OAuth side (oauth.ts): its `clientId` / `clientSecret`, `approve(link, who)` (a
   * user approving the install page's link on Slack: a `code` for the redirect), `setRotation`,
   * `uninstall`, and the `installations` made through `oauth.v2.access`.
   */
  get oauth(): OAuthApp {
    return this.ws.oauth;
  }

  /**
   * Adds another workspace this fake serves (for the OAuth install): its channels and users
   * (each marked with `team`), and its Enterprise Grid organization when it has one. A token
   * issued for it (oauth.v2.access) sees only these.
   */
  addTeam(team: {
    id: string;
    enterpriseId?: string;
    channels?: Omit<FakeSlackChannel, 'team'>[];
    users?: Omit<FakeSlackUser, 'team'>[];
  }): void {
    if (team.enterpriseId) this.ws.enterprises.set(team.id, team.enterpriseId);
    for (const channel of team.channels ?? []) this.ws.channels.set(channel.id, { ...channel, team: team.id });
    for (const user of team.users ?? []) this.ws.users.set(user.id, { ...user, team: team.id });
  }

  /** Adds (or replaces) a channel. */
  addChannel(channel: FakeSlackChannel): void {
    this.ws.channels.set(channel.id, { ...channel });
  }

  /** Adds (or replaces) a user. */
  addUser(user: FakeSlackUser): void {
    this.ws.users.set(user.id, { ...user });
  }

  /**
   * The DM between `userId` and the bot (`D…`, `is_im`), created on first use, one per user as
   * on Slack. The bot posts and updates there like anywhere; users write with
   * {@link FakeSlack.imMessageEvent} or {@link postUserMessage}.
   * @throws Error for an unknown user.
   */
  openIm(userId: string): FakeSlackChannel {
    return this.ws.openIm(userId);
  }

  /**
   * A file a user shares, as Slack describes it (id `F…`, `url_private`, `url_private_download`
   * on this fake, …); attach it to a message with the `files` of an event builder. Its bytes
   * are served to the bot token with `files:read` (downloads.ts).
   * @throws Error without exactly one of `data` and `stream`, or for an unknown user.
   */
  addUserFile(input: UserFileInput): FakeSlackFile {
    return addUserFile(this.ws, input);
  }

  /** The bot token's scopes now. */
  get scopes(): readonly string[] {
    return this.ws.scopes;
  }

  /** Replaces the bot token's scopes from now on (as after reinstalling the app with other scopes). */
  setScopes(scopes: string[]): void {
    this.ws.scopes = [...scopes];
  }

  /** The app's bot event subscriptions now (`app_mention`, `message.im`, …). */
  get botEvents(): readonly string[] {
    return this.ws.botEvents;
  }

  /** Replaces the app's bot event subscriptions from now on. */
  setBotEvents(events: string[]): void {
    this.ws.botEvents = [...events];
  }

  /** Changes rate limits from now on (partial: the rest stays). */
  setRateLimits(rules: Partial<RateLimitRules>): void {
    this.ws.limits.setRules(rules);
  }

  /**
   * Scripts rate limits (pressure.ts): the next `count` calls of `method` (any channel, or those
   * `scope` names: a channel, a test of the parameters) are answered HTTP 429 with
   * `Retry-After: retryAfterSec`, whatever the windows say (Slack may limit any call).
   */
  rateLimitNext(method: string, count = 1, retryAfterSec = 1, scope?: RateLimitScope): void {
    this.ws.limits.script(method, count, retryAfterSec, scope);
  }

  /** Ends scripted rate limits ({@link rateLimitNext}) not used up yet. */
  stopRateLimiting(): void {
    this.ws.limits.clearScripts();
  }

  /**
   * Scripts silence: the next `count` calls of `method` (Infinity: every call until
   * {@link stopHanging}) are read and recorded (`status: 0`) but never answered and do nothing;
   * each response stays open until the client gives up (its own timeout) or the fake closes, as
   * when Slack or the network swallows a call.
   */
  hangNext(method: string, count = 1): void {
    this.webApi.hangNext(method, count);
  }

  /** Ends scripted silence: calls of `method` (of every method when undefined) are answered again. */
  stopHanging(method?: string): void {
    this.webApi.stopHanging(method);
  }

  /**
   * Scripts refusals: the next `count` calls of `method` (default 1; Infinity: every one until
   * {@link stopFailing}) whose parameters `when` accepts (as received: nested values such as
   * `blocks` are JSON strings) are answered `{ ok: false, error }` once their token and scope
   * pass, and do nothing, as when Slack refuses a call the fake would take (e.g.
   * `cant_update_message` for a message Slack no longer lets the bot edit).
   */
  failNext(method: string, error: string, options: { count?: number; when?: (params: Json) => boolean } = {}): void {
    this.webApi.failNext(method, error, options);
  }

  /** Ends scripted refusals of `method` (of every method when undefined). */
  stopFailing(method?: string): void {
    this.webApi.stopFailing(method);
  }

  /**
   * Posts a message as a user (not the bot), e.g. to check that the bot cannot edit it.
   * @throws Error for an unknown channel or user.
   */
  postUserMessage(channel: string, user: string, text: string, threadTs?: string): FakeSlackMessage {
    if (!this.ws.channels.has(channel)) throw new Error(`unknown channel ${channel}`);
    if (!this.ws.users.has(user)) throw new Error(`unknown user ${user}`);
    return this.ws.storeMessage({
      channel,
      user,
      botId: undefined,
      text,
      blocks: undefined,
      threadTs,
      files: [],
      via: 'user',
      method: 'user',
    });
  }

  /**
   * A user shares their file in a conversation: a message of the file's owner carrying it (as
   * people do in Slack's client), stored without an event to the app. files.info then lists the
   * conversation (file-shares.ts). For a file shared with a message to the bot, give it to an
   * event builder's `files` instead.
   * @throws Error for a file of another fake, an unknown channel, or an owner not in the channel.
   */
  shareUserFile(
    file: FakeSlackFile,
    channel: string,
    options: { text?: string; threadTs?: string } = {},
  ): FakeSlackMessage {
    return shareUserFile(this.ws, file, channel, options);
  }

  /**
   * Forgets messages (and their streams), files, calls, ephemerals, response URLs, failures,
   * uploads, downloads, event deliveries, loading statuses, button presses, envelopes, opened
   * modals, closed Socket Mode connections, rate-limit state and scripted hangs; keeps channels (DMs too),
   * users, scopes, subscriptions, settings (streaming ones too) and open connections.
   */
  reset(): void {
    this.socketMode.reset();
    this.webApi.reset();
    this.ws.reset();
    viewsOf(this.ws).length = 0;
  }

  // ------------------------------------------------------------ inspection

  /** Messages (not deleted) in ts order; of one channel when given, replies in threads included. */
  messages(channel?: string): FakeSlackMessage[] {
    return this.ws.messageList.filter((m) => !m.deleted && (channel === undefined || m.channel === channel));
  }

  /** One message, deleted or not. */
  message(channel: string, ts: string): FakeSlackMessage | undefined {
    return this.ws.message(channel, ts);
  }

  /** Replies in the thread of `ts` (not deleted), oldest first. */
  thread(channel: string, ts: string): FakeSlackMessage[] {
    return this.messages(channel).filter((m) => m.threadTs === ts);
  }

  /** Calls of one Web API method. */
  callsTo(method: string): SlackApiCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** Every response_url post, in order. */
  responsePosts(): Array<ResponseUrlPost & { command: string; channel: string; user: string }> {
    return [...this.responseUrls.values()].flatMap((r) =>
      r.posts.map((p) => ({ ...p, command: r.command, channel: r.channel, user: r.user })),
    );
  }

  /**
   * Everything users could have seen, as one string (for secret checks): message texts and every
   * revision, blocks, file names/titles/alt texts, ephemeral messages, response_url posts.
   */
  visibleText(): string {
    const parts: string[] = [];
    for (const m of this.ws.messageList)
      for (const r of m.revisions) parts.push(r.text, JSON.stringify(r.blocks ?? []));
    for (const f of this.files.values()) parts.push(f.filename, f.title ?? '', f.altText ?? '');
    for (const e of this.ephemerals) parts.push(e.text, JSON.stringify(e.blocks ?? []));
    for (const r of this.responseUrls.values()) for (const p of r.posts) parts.push(JSON.stringify(p.body));
    return parts.join('\n');
  }

  /** Socket Mode connections that are open now, oldest first. */
  openSocketConnections(): SocketModeConnection[] {
    return this.socketMode.openConnections();
  }

  /**
   * Resolves with how a Socket Mode connection ended, once it has.
   * @param timeoutMs real-time ms to wait (default 5,000).
   * @throws Error for an unknown connection id, or when it is still open after `timeoutMs`.
   */
  socketClosed(connectionId: number, timeoutMs = 5000): Promise<SocketModeClose> {
    return this.socketMode.closed(connectionId, timeoutMs);
  }

  // ------------------------------------------------------------ HTTP

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const raw = await readBody(req);
    const [, root, rest] = /^\/([^/]+)\/(.+)$/.exec(url.pathname) ?? [];
    const read = req.method === 'GET' || req.method === 'HEAD';
    if (root === 'api' && rest) return this.webApi.handle(decodeURIComponent(rest), req, url, raw, res);
    if (root === 'upload' && rest && req.method === 'POST') return handleUpload(this.ws, rest, req, raw, res);
    if (root === 'response' && rest && req.method === 'POST') return handleResponseUrl(this.ws, rest, req, raw, res);
    if (root === 'files-pri' && read) return handleFileDownload(this.ws, req, url, res);
    if (root === 'files' && read) return handlePermalink(res);
    if (url.pathname === '/' && read) return handleSignInPage(this.ws, res);
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}
