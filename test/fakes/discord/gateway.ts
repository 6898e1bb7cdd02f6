/**
 * The gateway (`ws` at `/gateway`): HELLO with `heartbeat_interval`, heartbeat ACKs, IDENTIFY
 * (token, intents: 4013 for invalid ones, 4014 for privileged ones the app is not approved
 * for, `shard: [id, count]` with id < count (else 4010), one `session_start_limit` unit each)
 * answered by READY and a full GUILD_CREATE, RESUME of a closed session, and dispatches (op 0)
 * with per-session `s`. zlib-stream compression is refused (4000): leave `zlib-sync` uninstalled.
 *
 * Sharding as Discord does it: a guild belongs to shard `(guild_id >> 22) % count`; only that
 * shard's sessions get the guild (READY `guilds`, GUILD_CREATE) and its events; events without
 * a guild (DMs) go to shard 0 only.
 *
 * Faults a test can script: an outage (`drop`: open sessions are closed with a resumable code
 * or cut at the TCP level, and while down new connections are refused with HTTP 503 or held
 * without HELLO; `restore` ends it, and a held or retried connection can RESUME or IDENTIFY
 * again), and closing every session with a given code (`closeSessions`, e.g. 4004 when the
 * token was reset: such a session cannot be resumed), and a deaf gateway (`deaf = true`: every
 * dispatch is swallowed, on every session, new ones too, while heartbeats are still ACKed and
 * IDENTIFY and RESUME still answered — a connection that looks healthy and delivers nothing).
 *
 * Dispatches honour each session's intents: guild and channel events need GUILDS; message
 * events need GUILD_MESSAGES in a guild (channels and threads) and DIRECT_MESSAGES in a DM,
 * typing events GUILD_MESSAGE_TYPING / DIRECT_MESSAGE_TYPING. A session without
 * MESSAGE_CONTENT gets messages as such an app sees them (wire.ts, `withoutContent`).
 */

import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { API_VERSION, Intent, PRIVILEGED_INTENTS } from './constants.ts';
import type { FakeState } from './state.ts';
import type { Json } from './types.ts';
import { isObject } from './util.ts';
import { guildCreatePayload, userJson, withoutContent } from './wire.ts';

/** Events delivered only with GUILDS (events/gateway.mdx, "List of Intents"). */
const GUILDS_EVENTS = new Set([
  'GUILD_CREATE',
  'GUILD_UPDATE',
  'GUILD_DELETE',
  'GUILD_ROLE_UPDATE',
  'CHANNEL_CREATE',
  'CHANNEL_UPDATE',
  'CHANNEL_DELETE',
  'THREAD_CREATE',
  'THREAD_UPDATE',
  'THREAD_DELETE',
]);
const MESSAGE_EVENTS = new Set(['MESSAGE_CREATE', 'MESSAGE_UPDATE', 'MESSAGE_DELETE']);

/** The intent a session needs to receive `event` with `data` (0: none). */
function intentFor(event: string, data: unknown): number {
  const inGuild = isObject(data) && typeof data.guild_id === 'string';
  if (GUILDS_EVENTS.has(event)) return Intent.Guilds;
  if (MESSAGE_EVENTS.has(event)) return inGuild ? Intent.GuildMessages : Intent.DirectMessages;
  if (event === 'TYPING_START') return inGuild ? Intent.GuildMessageTyping : Intent.DirectMessageTyping;
  return 0;
}

/** Close codes after which Discord does not let the session be resumed (events/gateway.mdx, "Gateway Close Event Codes"). */
const NOT_RESUMABLE = new Set([4004, 4007, 4009, 4010, 4011, 4012, 4013, 4014]);

/** Discord's close reasons, by code. */
const CLOSE_REASONS: Record<number, string> = {
  4000: 'Unknown error.',
  4004: 'Authentication failed.',
  4007: 'Invalid seq.',
  4009: 'Session timed out.',
  4010: 'Invalid shard.',
  4011: 'Sharding required.',
  4013: 'Invalid intent(s).',
  4014: 'Disallowed intent(s).',
};

/** How the fake gateway treats new connections during an outage (see {@link Gateway.drop}). */
export type GatewayOutageMode = 'refuse' | 'hold';

/** Options of {@link Gateway.drop}. */
export interface DropGatewayOptions {
  /**
   * How the open sessions end: a close frame with this code (default 4000 "Unknown error.",
   * after which Discord's clients reconnect and resume), or `'terminate'`: the TCP connection
   * is cut without a close frame (the client sees 1006, as on a network failure).
   */
  close?: number | 'terminate';
  /**
   * New connections until {@link Gateway.restore}: `'refuse'` (default) answers the upgrade
   * with HTTP 503, as Discord's edge does in an outage (discord.js retries every 500 ms);
   * `'hold'` accepts the WebSocket but sends no HELLO until the gateway is restored.
   */
  whileDown?: GatewayOutageMode;
  /**
   * `false`: the closed sessions cannot be resumed (Discord invalidated them, as after a long
   * outage): a RESUME is answered with op 9 (Invalid Session, `d: false`) and the client
   * identifies anew (a new READY). Default true.
   */
  resumable?: boolean;
}

/** One accepted IDENTIFY (a new session), oldest first in {@link Gateway.identifies}. */
export interface GatewayIdentify {
  sessionId: string;
  intents: number;
  /** `[shard id, shard count]` as identified (`[0, 1]` when the client sent none). */
  shard: [number, number];
  /** `Date.now()` when READY was sent. */
  at: number;
}

/** One accepted RESUME, oldest first in {@link Gateway.resumes}. */
export interface GatewayResume {
  sessionId: string;
  shard: [number, number];
  /** The `seq` the client said it had seen. */
  clientSeq: number | undefined;
  /** `Date.now()` when RESUMED was sent. */
  at: number;
}

/** What a test can see of one open gateway connection. */
export interface GatewaySessionInfo {
  /** Undefined until the connection has identified or resumed. */
  sessionId: string | undefined;
  identified: boolean;
  shard: [number, number];
  intents: number;
  /** Last `s` sent on this session (READY, GUILD_CREATE and dispatches count). */
  seq: number;
}

interface GatewaySession {
  ws: WebSocket;
  identified: boolean;
  sessionId: string | undefined;
  seq: number;
  intents: number;
  shard: [number, number];
  /** False once the fake closed it with a code that ends the session (no RESUME then). */
  resumable: boolean;
}

/** The events `spreadEvents` hands to one session in turn. */
const SPREAD_EVENTS = new Set(['INTERACTION_CREATE', 'MESSAGE_CREATE']);

/** The shard `[id, count]` that receives events of `guildId` (Discord: `(guild_id >> 22) % count`). */
export function shardOfGuild(guildId: string, count: number): number {
  return Number((BigInt(guildId) >> 22n) % BigInt(count));
}

/** The guild an event concerns: `guild_id`, or `id` for the guild events themselves; undefined for DMs. */
function guildOf(event: string, data: unknown): string | undefined {
  if (!isObject(data)) return undefined;
  if (typeof data.guild_id === 'string') return data.guild_id;
  if (event.startsWith('GUILD_') && typeof data.id === 'string') return data.id;
  return undefined;
}

export class Gateway {
  private readonly sessions = new Set<GatewaySession>();
  /** Closed sessions that may be resumed, by session id: last `s` (what RESUME continues from), intents and shard. */
  private readonly pastSessions = new Map<string, { seq: number; intents: number; shard: [number, number] }>();
  private readonly wss = new WebSocketServer({ noServer: true });
  private closed = false;
  /** The next session's turn when events are spread (`spreadEvents`). */
  private spreadTurn = 0;
  /** Set during an outage ({@link drop}): how new connections are treated. */
  private outage: GatewayOutageMode | undefined;
  /** Connections accepted during a `hold` outage, waiting for their HELLO. */
  private readonly held: GatewaySession[] = [];
  /** Every accepted IDENTIFY, oldest first. */
  readonly identifies: GatewayIdentify[] = [];
  /** Every accepted RESUME, oldest first. */
  readonly resumes: GatewayResume[] = [];
  /** Upgrades answered 503 during outages (each is one reconnect attempt refused). */
  refusedConnections = 0;
  /**
   * While true, {@link dispatch} sends nothing (the events are lost, as on a deaf connection);
   * heartbeats, IDENTIFY (READY, GUILD_CREATE) and RESUME (RESUMED) are answered as usual.
   */
  deaf = false;
  /** Dispatches swallowed while {@link deaf}. */
  swallowedDispatches = 0;
  /** Every WebSocket connection accepted (a reconnection is a new one). */
  connectionsAccepted = 0;

  constructor(private readonly state: FakeState) {}

  /** Number of gateway sessions that have identified (READY sent). */
  get readySessions(): number {
    return [...this.sessions].filter((s) => s.identified).length;
  }

  /** True between {@link drop} and {@link restore}. */
  get down(): boolean {
    return this.outage !== undefined;
  }

  /** The open connections, in the order they were opened. */
  get openSessions(): GatewaySessionInfo[] {
    return [...this.sessions].map((s) => ({
      sessionId: s.sessionId,
      identified: s.identified,
      shard: [...s.shard],
      intents: s.intents,
      seq: s.seq,
    }));
  }

  /**
   * Starts an outage: every open connection is closed (`options.close`, default 4000) or cut,
   * and until {@link restore} new connections are refused (503) or held without HELLO. The
   * closed sessions stay resumable unless `options.resumable` is false.
   * @returns the number of connections ended.
   */
  drop(options: DropGatewayOptions = {}): number {
    this.outage = options.whileDown ?? 'refuse';
    const close = options.close ?? 4000;
    const open = [...this.sessions];
    for (const session of open) {
      if (options.resumable === false) session.resumable = false;
      if (close === 'terminate') session.ws.terminate();
      else session.ws.close(close, CLOSE_REASONS[close] ?? 'Gateway unavailable.');
    }
    return open.length;
  }

  /**
   * Ends an outage: connections are accepted again, and those held since the drop get their
   * HELLO now (then RESUME answers RESUMED for a session closed by the drop, IDENTIFY READY).
   */
  restore(): void {
    this.outage = undefined;
    for (const session of this.held.splice(0)) this.hello(session);
  }

  /**
   * Closes every open connection with `code` (and Discord's reason for it unless `reason` is
   * given), as Discord does when it ends sessions: after 4004 (the token was reset), 4007,
   * 4009 or 4010–4014 the session cannot be resumed; after other codes it can.
   * @returns the number of connections closed.
   */
  closeSessions(code: number, reason = CLOSE_REASONS[code] ?? ''): number {
    const open = [...this.sessions];
    for (const session of open) {
      if (NOT_RESUMABLE.has(code)) session.resumable = false;
      session.ws.close(code, reason);
    }
    return open.length;
  }

  /**
   * Sends a dispatch (op 0) to every identified session whose intents include the event's and
   * whose shard holds the event's guild (shard 0 for events without one); message events
   * without MESSAGE_CONTENT lose what such a session may not see. With `spreadEvents`, an
   * interaction or a new message goes to one of those sessions, each in turn.
   */
  dispatch(event: string, data: unknown): void {
    if (this.deaf) {
      this.swallowedDispatches += 1;
      return;
    }
    const needed = intentFor(event, data);
    const isMessage = MESSAGE_EVENTS.has(event) && isObject(data) && event !== 'MESSAGE_DELETE';
    const guildId = guildOf(event, data);
    // A guild the bot is not a member of sends it nothing but the interactions of a user's install.
    if (guildId !== undefined && this.state.absentGuilds.has(guildId) && event !== 'INTERACTION_CREATE') return;
    let receivers = [...this.sessions].filter((session) => {
      if (!session.identified || (session.intents & needed) !== needed) return false;
      const [shardId, shardCount] = session.shard;
      return (guildId === undefined ? 0 : shardOfGuild(guildId, shardCount)) === shardId;
    });
    if (this.state.options.spreadEvents && SPREAD_EVENTS.has(event) && receivers.length > 1)
      receivers = [receivers[this.spreadTurn++ % receivers.length]!];
    for (const session of receivers) {
      let d = data;
      if (isMessage && (session.intents & Intent.MessageContent) === 0)
        d = withoutContent(data as Json, this.state.botUser.id, !('guild_id' in (data as Json)));
      session.seq += 1;
      this.sendFrame(session, { op: 0, t: event, s: session.seq, d });
    }
  }

  /** Closes every connection and refuses new ones. */
  close(): void {
    this.closed = true;
    this.held.length = 0;
    for (const session of this.sessions) session.ws.terminate();
    this.sessions.clear();
    this.wss.close();
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    if (this.closed || (url.pathname !== '/gateway' && url.pathname !== '/gateway/')) {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (this.outage === 'refuse') {
      this.refusedConnections += 1;
      socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onGatewayConnection(ws, url));
  }

  private sendFrame(session: GatewaySession, frame: Json): void {
    if (session.ws.readyState === session.ws.OPEN) session.ws.send(JSON.stringify(frame));
  }

  private onGatewayConnection(ws: WebSocket, url: URL): void {
    const session: GatewaySession = {
      ws,
      identified: false,
      sessionId: undefined,
      seq: 0,
      intents: 0,
      shard: [0, 1],
      resumable: true,
    };
    this.sessions.add(session);
    this.connectionsAccepted += 1;
    ws.on('close', () => {
      this.sessions.delete(session);
      if (session.sessionId && session.resumable)
        this.pastSessions.set(session.sessionId, { seq: session.seq, intents: session.intents, shard: session.shard });
    });
    ws.on('error', () => undefined);
    const version = url.searchParams.get('v');
    if (version !== null && version !== API_VERSION) {
      ws.close(4012, 'Invalid API version.');
      return;
    }
    if ((url.searchParams.get('encoding') ?? 'json') !== 'json') {
      ws.close(4002, 'Error while decoding payload.');
      return;
    }
    if (url.searchParams.has('compress')) {
      ws.close(4000, 'The fake gateway does not speak zlib-stream: uninstall zlib-sync.');
      return;
    }
    if (this.outage === 'hold') {
      this.held.push(session);
      return;
    }
    this.hello(session);
  }

  /** Sends HELLO and starts listening to the client. */
  private hello(session: GatewaySession): void {
    this.sendFrame(session, {
      op: 10,
      s: null,
      t: null,
      d: { heartbeat_interval: this.state.options.heartbeatIntervalMs, _trace: ['["fake-gateway",{"micros":0}]'] },
    });
    session.ws.on('message', (data: RawData, isBinary: boolean) => this.onGatewayMessage(session, data, isBinary));
  }

  private onGatewayMessage(session: GatewaySession, data: RawData, isBinary: boolean): void {
    let frame: unknown;
    try {
      frame = isBinary ? undefined : JSON.parse(String(data));
    } catch {
      frame = undefined;
    }
    if (!isObject(frame) || typeof frame.op !== 'number') {
      session.ws.close(4002, 'Error while decoding payload.');
      return;
    }
    const d = frame.d;
    switch (frame.op) {
      case 1:
        this.sendFrame(session, { op: 11, s: null, t: null, d: null });
        return;
      case 2:
        this.identify(session, d);
        return;
      case 6:
        this.resume(session, d);
        return;
      case 3:
      case 4:
      case 8:
      case 31:
        if (!session.identified) session.ws.close(4003, 'Not authenticated.');
        return;
      default:
        session.ws.close(4001, 'Unknown opcode.');
    }
  }

  private identify(session: GatewaySession, d: unknown): void {
    if (session.identified) {
      session.ws.close(4005, 'Already authenticated.');
      return;
    }
    if (!isObject(d) || d.token !== this.state.token) {
      session.ws.close(4004, 'Authentication failed.');
      return;
    }
    const intents = d.intents;
    if (typeof intents !== 'number' || !Number.isInteger(intents) || intents < 0 || intents >= 2 ** 26) {
      session.ws.close(4013, 'Invalid intent(s).');
      return;
    }
    if ((intents & PRIVILEGED_INTENTS & ~this.state.options.privilegedIntents) !== 0) {
      session.ws.close(4014, 'Disallowed intent(s).');
      return;
    }
    const shard = d.shard;
    const validShard = (s: unknown): s is [number, number] =>
      Array.isArray(s) &&
      s.length === 2 &&
      Number.isInteger(s[0]) &&
      Number.isInteger(s[1]) &&
      s[0] >= 0 &&
      s[1] >= 1 &&
      s[0] < s[1];
    if (shard !== undefined && !validShard(shard)) {
      session.ws.close(4010, 'Invalid shard.');
      return;
    }
    const [shardId, shardCount] = shard ?? [0, 1];
    if (this.state.options.sessionStartRemaining <= 0) {
      session.ws.close(4004, 'Authentication failed.');
      return;
    }
    this.state.options.sessionStartRemaining -= 1;
    session.identified = true;
    session.intents = intents;
    session.shard = [shardId, shardCount];
    session.sessionId = randomBytes(16).toString('hex');
    const ownsGuild = shardOfGuild(this.state.guildId, shardCount) === shardId;
    session.seq += 1;
    this.sendFrame(session, {
      op: 0,
      t: 'READY',
      s: session.seq,
      d: {
        v: Number(API_VERSION),
        user: { ...userJson(this.state.botUser), verified: true, mfa_enabled: false, flags: 0, email: null },
        guilds: ownsGuild ? [{ id: this.state.guildId, unavailable: true }] : [],
        session_id: session.sessionId,
        session_type: 'normal',
        resume_gateway_url: this.state.gatewayUrl,
        shard: [shardId, shardCount],
        application: { id: this.state.applicationId, flags: 0 },
        private_channels: [],
        relationships: [],
        presences: [],
        guild_join_requests: [],
        geo_ordered_rtc_regions: ['fake'],
        user_settings: {},
        auth: {},
        _trace: ['["fake-gateway",{"micros":0}]'],
      },
    });
    if ((intents & 1) !== 0 && ownsGuild) {
      session.seq += 1;
      this.sendFrame(session, { op: 0, t: 'GUILD_CREATE', s: session.seq, d: guildCreatePayload(this.state) });
    }
    this.identifies.push({ sessionId: session.sessionId, intents, shard: [shardId, shardCount], at: Date.now() });
    this.state.events.emit('identify', { sessionId: session.sessionId, intents, shard: [shardId, shardCount] });
  }

  private resume(session: GatewaySession, d: unknown): void {
    const ok =
      isObject(d) &&
      d.token === this.state.token &&
      typeof d.session_id === 'string' &&
      this.pastSessions.has(d.session_id);
    if (!ok) {
      this.sendFrame(session, { op: 9, s: null, t: null, d: false });
      return;
    }
    const id = (d as Json).session_id as string;
    const past = this.pastSessions.get(id)!;
    session.identified = true;
    session.sessionId = id;
    session.intents = past.intents;
    session.shard = past.shard;
    session.seq = past.seq;
    this.pastSessions.delete(id);
    session.seq += 1;
    this.sendFrame(session, { op: 0, t: 'RESUMED', s: session.seq, d: {} });
    const clientSeq = typeof (d as Json).seq === 'number' ? ((d as Json).seq as number) : undefined;
    this.resumes.push({ sessionId: id, shard: [...session.shard], clientSeq, at: Date.now() });
    this.state.events.emit('resume', { sessionId: id, shard: [...session.shard] });
  }
}
