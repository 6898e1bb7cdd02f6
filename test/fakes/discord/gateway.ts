/**
 * The gateway (`ws` at `/gateway`): HELLO with `heartbeat_interval`, heartbeat ACKs, IDENTIFY
 * (token, intents: 4013 for invalid ones, 4014 for privileged ones the app is not approved
 * for, shard [0, 1] only, one `session_start_limit` unit each) answered by READY and a full
 * GUILD_CREATE, RESUME of a closed session, and dispatches (op 0) with per-session `s`.
 * zlib-stream compression is refused (4000): leave `zlib-sync` uninstalled.
 *
 * Dispatches honour each session's intents: guild and channel events need GUILDS; message
 * events need GUILD_MESSAGES in a guild (channels and threads) and DIRECT_MESSAGES in a DM,
 * typing events GUILD_MESSAGE_TYPING / DIRECT_MESSAGE_TYPING. A session without
 * MESSAGE_CONTENT gets messages as such an app sees them (wire.ts, `withoutContent`).
 */
import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { API_VERSION, Intent, PRIVILEGED_INTENTS } from './constants.ts';
import type { FakeState } from './state.ts';
import type { Json } from './types.ts';
import { isObject } from './util.ts';
import { guildCreatePayload, userJson, withoutContent } from './wire.ts';

/** Events delivered only with GUILDS (events/gateway.mdx, "List of Intents"). */
const GUILDS_EVENTS = new Set(['GUILD_CREATE', 'GUILD_UPDATE', 'GUILD_DELETE', 'CHANNEL_CREATE', 'CHANNEL_UPDATE', 'CHANNEL_DELETE', 'THREAD_CREATE', 'THREAD_UPDATE', 'THREAD_DELETE']);
const MESSAGE_EVENTS = new Set(['MESSAGE_CREATE', 'MESSAGE_UPDATE', 'MESSAGE_DELETE']);

/** The intent a session needs to receive `event` with `data` (0: none). */
function intentFor(event: string, data: unknown): number {
  const inGuild = isObject(data) && typeof data.guild_id === 'string';
  if (GUILDS_EVENTS.has(event)) return Intent.Guilds;
  if (MESSAGE_EVENTS.has(event)) return inGuild ? Intent.GuildMessages : Intent.DirectMessages;
  if (event === 'TYPING_START') return inGuild ? Intent.GuildMessageTyping : Intent.DirectMessageTyping;
  return 0;
}

interface GatewaySession {
  ws: WebSocket;
  identified: boolean;
  sessionId: string | undefined;
  seq: number;
  intents: number;
}

export class Gateway {
  private readonly sessions = new Set<GatewaySession>();
  /** Last `s` of closed sessions, by session id (what RESUME continues from). */
  private readonly pastSessions = new Map<string, number>();
  private readonly wss = new WebSocketServer({ noServer: true });
  private closed = false;

  constructor(private readonly state: FakeState) {}

  /** Number of gateway sessions that have identified (READY sent). */
  get readySessions(): number {
    return [...this.sessions].filter((s) => s.identified).length;
  }

  /**
   * Sends a dispatch (op 0) to every identified session whose intents include the event's;
   * message events without MESSAGE_CONTENT lose what such a session may not see.
   */
  dispatch(event: string, data: unknown): void {
    const needed = intentFor(event, data);
    const isMessage = MESSAGE_EVENTS.has(event) && isObject(data) && event !== 'MESSAGE_DELETE';
    for (const session of this.sessions) {
      if (!session.identified || (session.intents & needed) !== needed) continue;
      let d = data;
      if (isMessage && (session.intents & Intent.MessageContent) === 0) d = withoutContent(data as Json, this.state.botUser.id, !('guild_id' in (data as Json)));
      session.seq += 1;
      this.sendFrame(session, { op: 0, t: event, s: session.seq, d });
    }
  }

  /** Closes every connection and refuses new ones. */
  close(): void {
    this.closed = true;
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
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onGatewayConnection(ws, url));
  }

  private sendFrame(session: GatewaySession, frame: Json): void {
    if (session.ws.readyState === session.ws.OPEN) session.ws.send(JSON.stringify(frame));
  }

  private onGatewayConnection(ws: WebSocket, url: URL): void {
    const session: GatewaySession = { ws, identified: false, sessionId: undefined, seq: 0, intents: 0 };
    this.sessions.add(session);
    ws.on('close', () => {
      this.sessions.delete(session);
      if (session.sessionId) this.pastSessions.set(session.sessionId, session.seq);
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
    this.sendFrame(session, { op: 10, s: null, t: null, d: { heartbeat_interval: this.state.options.heartbeatIntervalMs, _trace: ['["fake-gateway",{"micros":0}]'] } });
    ws.on('message', (data: RawData, isBinary: boolean) => this.onGatewayMessage(session, data, isBinary));
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
    if (shard !== undefined && !(Array.isArray(shard) && shard.length === 2 && Number(shard[0]) >= 0 && Number(shard[0]) < Number(shard[1]) && Number(shard[1]) === 1)) {
      session.ws.close(4010, 'Invalid shard.');
      return;
    }
    if (this.state.options.sessionStartRemaining <= 0) {
      session.ws.close(4004, 'Authentication failed.');
      return;
    }
    this.state.options.sessionStartRemaining -= 1;
    session.identified = true;
    session.intents = intents;
    session.sessionId = randomBytes(16).toString('hex');
    session.seq += 1;
    this.sendFrame(session, {
      op: 0,
      t: 'READY',
      s: session.seq,
      d: {
        v: Number(API_VERSION),
        user: { ...userJson(this.state.botUser), verified: true, mfa_enabled: false, flags: 0, email: null },
        guilds: [{ id: this.state.guildId, unavailable: true }],
        session_id: session.sessionId,
        session_type: 'normal',
        resume_gateway_url: this.state.gatewayUrl,
        shard: [0, 1],
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
    if ((intents & 1) !== 0) {
      session.seq += 1;
      this.sendFrame(session, { op: 0, t: 'GUILD_CREATE', s: session.seq, d: guildCreatePayload(this.state) });
    }
    this.state.events.emit('identify', { sessionId: session.sessionId, intents });
  }

  private resume(session: GatewaySession, d: unknown): void {
    const ok = isObject(d) && d.token === this.state.token && typeof d.session_id === 'string' && this.pastSessions.has(d.session_id);
    if (!ok) {
      this.sendFrame(session, { op: 9, s: null, t: null, d: false });
      return;
    }
    const id = (d as Json).session_id as string;
    session.identified = true;
    session.sessionId = id;
    session.seq = this.pastSessions.get(id) ?? 0;
    this.pastSessions.delete(id);
    session.seq += 1;
    this.sendFrame(session, { op: 0, t: 'RESUMED', s: session.seq, d: {} });
  }

}
