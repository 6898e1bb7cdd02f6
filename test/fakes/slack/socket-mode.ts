/**
 * Socket Mode: `apps.connections.open` (app-level token only) answers
 * `{ ok: true, url: 'ws://127.0.0.1:PORT/socket-mode?ticket=…&app_id=…' }`; that URL is a
 * WebSocket endpoint (the `ws` package) speaking what @slack/socket-mode expects: a `hello`
 * message on connect; envelopes `{ envelope_id, type, payload, accepts_response_payload }`
 * (`slash_commands` with the HTTP form fields as payload and `accepts_response_payload: true`;
 * `events_api` with the `event_callback` body as payload, `accepts_response_payload: false`,
 * `retry_attempt` and `retry_reason`; `interactive` with a `block_actions` payload and
 * `accepts_response_payload: false` (interactivity.ts) — as in the samples of slackapi/
 * node-slack-sdk packages/socket-mode/src/SocketModeClient.test.ts);
 * acks `{ envelope_id, payload? }` from the app; protocol-level pings every
 * `socketPingIntervalMs` (and a pong for every ping of the app); `disconnect` messages on
 * request. Each URL's ticket works once; an unknown or used ticket is refused at the upgrade
 * with HTTP 401 (the fake's choice: Slack documents no status for it).
 *
 * A deaf switch (`deaf`) loses every event on the way while the connection stays open and
 * answers pings (a socket that looks healthy and delivers nothing).
 *
 * Records every connection (pings, pongs, what the app sent, how it closed) and every
 * envelope with its ack (late when it came after Slack's deadline).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { checkDeliverable, eventCallback, newEventId, recordDelivery } from './events-api.ts';
import { slashCommandFields } from './inbound.ts';
import type {
  SlackEvent,
  SlashCommandInput,
  SocketEventOptions,
  SocketEventResult,
  SocketModeClose,
  SocketModeConnection,
  SocketModeEnvelope,
  SocketSlashCommandResult,
} from './inbound-types.ts';
import type { PlatformFailure } from './types.ts';
import type { MethodTable } from './web-api.ts';
import { isObject } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** An open connection with what the fake needs to drive it. */
export interface LiveSocket {
  ws: WebSocket;
  record: SocketModeConnection;
  closingByFake: boolean;
  pinger: NodeJS.Timeout | undefined;
  onClose: Array<() => void>;
}

/** The text of a WebSocket message as `ws` delivers it (a Buffer, an ArrayBuffer or fragments). */
function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data).toString('utf8');
}

export class SocketMode {
  /** Every connection ever accepted, oldest first (open ones have `closed: undefined`). */
  readonly connections: SocketModeConnection[] = [];
  /** Every envelope sent, oldest first, with its ack. */
  readonly envelopes: SocketModeEnvelope[] = [];

  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly live = new Map<number, LiveSocket>();
  /** Tickets handed out by apps.connections.open: ticket → used. */
  private readonly tickets = new Map<string, boolean>();
  /** Envelopes waiting for their ack: envelope id → resolver. */
  private readonly ackWaiters = new Map<string, () => void>();
  /** Real-time (performance.now) sending time of each envelope. */
  private readonly sentAtReal = new Map<string, number>();
  /** Envelopes whose ack deadline has passed. */
  private readonly lateAfter = new Set<string>();
  /**
   * While true, events are lost on the way over every connection, new ones too (see
   * {@link FakeSlack.deafenSockets}); pings, pongs, hello and slash commands go on.
   */
  deaf = false;
  /** Events lost while {@link deaf}. */
  swallowedEvents = 0;

  constructor(private readonly ws: Workspace) {}

  /** `apps.connections.open`: a fresh single-use URL. */
  methods(): MethodTable {
    return {
      'apps.connections.open': () => {
        const ticket = randomBytes(16).toString('hex');
        this.tickets.set(ticket, false);
        return {
          url: `${this.ws.baseUrl.replace(/^http/, 'ws')}/socket-mode?ticket=${ticket}&app_id=${this.ws.appId}`,
        };
      },
    };
  }

  /** Connections that are open now, oldest first. */
  openConnections(): SocketModeConnection[] {
    return [...this.live.values()].map((l) => l.record);
  }

  /** See {@link FakeSlack.sendSocketSlashCommand}. */
  async sendSlashCommand(
    input: SlashCommandInput,
    options: { connectionId?: number } = {},
  ): Promise<SocketSlashCommandResult> {
    const live = this.liveSocket('sendSocketSlashCommand', options.connectionId);
    const { fields, responseUrl, triggerId } = slashCommandFields(this.ws, 'sendSocketSlashCommand', input);
    const envelopeId = randomUUID();
    const base = { envelopeId, responseUrl, triggerId, payload: fields };
    if (!live) {
      const failure: PlatformFailure = {
        kind: 'dispatch_failed',
        command: input.command,
        detail: 'no open Socket Mode connection',
      };
      this.ws.platformFailures.push(failure);
      return { ...base, connectionId: undefined, ackedInTime: false, ackMs: undefined, ackPayload: undefined, failure };
    }
    const envelope = await this.sendEnvelope(live, envelopeId, 'slash_commands', fields, {
      accepts_response_payload: true,
    });
    const ack = envelope.ack;
    if (ack && !ack.late) {
      return {
        ...base,
        connectionId: live.record.id,
        ackedInTime: true,
        ackMs: ack.ms,
        ackPayload: ack.payload,
        failure: undefined,
      };
    }
    const failure: PlatformFailure = {
      kind: 'operation_timeout',
      command: input.command,
      detail: `no ack of envelope ${envelopeId} within ${this.ws.ackTimeoutMs} ms`,
    };
    this.ws.platformFailures.push(failure);
    return {
      ...base,
      connectionId: live.record.id,
      ackedInTime: false,
      ackMs: undefined,
      ackPayload: undefined,
      failure,
    };
  }

  /** See {@link FakeSlack.sendSocketEvent}. */
  async sendEvent(event: SlackEvent, options: SocketEventOptions = {}): Promise<SocketEventResult> {
    const subscription = checkDeliverable(this.ws, event, 'sendSocketEvent');
    const live = this.liveSocket('sendSocketEvent', options.connectionId);
    const eventId = options.eventId ?? newEventId();
    const payload = eventCallback(this.ws, event, eventId, options.eventTime);
    const envelopeId = randomUUID();
    const base = { envelopeId, eventId, payload };
    const delivery = { eventId, type: event.type, subscription, via: 'socket' as const, retryNum: options.retryNum };
    const fail = (failure: PlatformFailure): PlatformFailure => {
      this.ws.platformFailures.push(failure);
      recordDelivery(this.ws, { ...delivery, ackedInTime: false });
      return failure;
    };
    if (!live) {
      const failure = fail({
        kind: 'dispatch_failed',
        command: event.type,
        detail: 'no open Socket Mode connection',
        eventId,
      });
      return { ...base, connectionId: undefined, ackedInTime: false, ackMs: undefined, ackPayload: undefined, failure };
    }
    if (this.deaf) {
      this.swallowedEvents += 1;
      const failure = fail({
        kind: 'operation_timeout',
        command: event.type,
        detail: 'the connection is deaf (a test fault): the envelope never reached the app',
        eventId,
      });
      return {
        ...base,
        connectionId: live.record.id,
        ackedInTime: false,
        ackMs: undefined,
        ackPayload: undefined,
        failure,
      };
    }
    const retry = {
      retry_attempt: options.retryNum ?? 0,
      retry_reason: options.retryReason ?? (options.retryNum ? 'timeout' : ''),
    };
    const envelope = await this.sendEnvelope(live, envelopeId, 'events_api', payload, {
      accepts_response_payload: false,
      ...retry,
    });
    const ack = envelope.ack;
    if (ack && !ack.late) {
      recordDelivery(this.ws, { ...delivery, ackedInTime: true });
      return {
        ...base,
        connectionId: live.record.id,
        ackedInTime: true,
        ackMs: ack.ms,
        ackPayload: ack.payload,
        failure: undefined,
      };
    }
    const failure = fail({
      kind: 'operation_timeout',
      command: event.type,
      detail: `no ack of envelope ${envelopeId} within ${this.ws.ackTimeoutMs} ms`,
      eventId,
    });
    return {
      ...base,
      connectionId: live.record.id,
      ackedInTime: false,
      ackMs: undefined,
      ackPayload: undefined,
      failure,
    };
  }

  /**
   * Sends one envelope and waits at most `ackTimeoutMs` for a message with its `envelope_id`.
   * After the deadline an ack is still stored, marked late.
   * @param extra the envelope's other fields (`accepts_response_payload`, `retry_attempt`, …).
   */
  async sendEnvelope(
    live: LiveSocket,
    envelopeId: string,
    type: SocketModeEnvelope['type'],
    payload: Record<string, unknown>,
    extra: Record<string, unknown>,
  ): Promise<SocketModeEnvelope> {
    const envelope: SocketModeEnvelope = {
      envelopeId,
      type,
      connectionId: live.record.id,
      payload,
      sentAt: this.ws.now(),
      ack: undefined,
    };
    this.envelopes.push(envelope);
    const acked = new Promise<void>((resolve) => this.ackWaiters.set(envelopeId, resolve));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.ws.ackTimeoutMs);
    });
    this.sentAtReal.set(envelopeId, performance.now());
    live.ws.send(JSON.stringify({ envelope_id: envelopeId, type, payload, ...extra }));
    await Promise.race([acked, deadline]);
    clearTimeout(timer);
    // From now on an ack is late (stored, but Slack has already given up on it).
    if (!envelope.ack || envelope.ack.late) this.lateAfter.add(envelopeId);
    return envelope;
  }

  /** See {@link FakeSlack.sendSocketDisconnect}. */
  sendDisconnect(reason: 'warning' | 'refresh_requested' | 'link_disabled', connectionId: number | undefined): number {
    const live = this.liveSocket('sendSocketDisconnect', connectionId);
    if (!live) throw new Error('sendSocketDisconnect: no open Socket Mode connection');
    live.record.disconnectsSent.push(reason);
    live.ws.send(
      JSON.stringify({ type: 'disconnect', reason, debug_info: { host: `fake-applink-${live.record.id}` } }),
    );
    return live.record.id;
  }

  /** See {@link FakeSlack.socketClosed}. */
  async closed(connectionId: number, timeoutMs: number): Promise<SocketModeClose> {
    const record = this.connections.find((c) => c.id === connectionId);
    if (!record) throw new Error(`socketClosed: unknown connection ${connectionId}`);
    if (record.closed) return record.closed;
    const live = this.live.get(connectionId);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`socket connection ${connectionId} still open after ${timeoutMs} ms`)),
        timeoutMs,
      );
      live?.onClose.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    return record.closed!;
  }

  /** The open connection `id`, or the newest open one when `id` is undefined (undefined when none is open). @throws Error for an unknown or closed `id`. */
  liveSocket(caller: string, id: number | undefined): LiveSocket | undefined {
    if (id === undefined) return [...this.live.values()].at(-1);
    const live = this.live.get(id);
    if (!live) throw new Error(`${caller}: Socket Mode connection ${id} is unknown or closed`);
    return live;
  }

  /** Accepts a WebSocket upgrade at `/socket-mode?ticket=…` for a ticket from apps.connections.open (once); anything else gets HTTP 401 or 404. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', this.ws.baseUrl);
    const refuse = (status: string) => {
      socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    };
    if (url.pathname !== '/socket-mode') {
      refuse('404 Not Found');
      return;
    }
    const ticket = url.searchParams.get('ticket') ?? '';
    if (this.tickets.get(ticket) !== false) {
      refuse('401 Unauthorized');
      return;
    }
    this.tickets.set(ticket, true);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws, ticket));
  }

  /** A new connection: record it, say `hello`, ping it, and collect acks. */
  private onSocket(ws: WebSocket, ticket: string): void {
    const record: SocketModeConnection = {
      id: this.connections.length === 0 ? 1 : this.connections.at(-1)!.id + 1,
      ticket,
      openedAt: this.ws.now(),
      pingsSent: 0,
      pongsReceived: 0,
      pingsReceived: 0,
      received: [],
      disconnectsSent: [],
      closed: undefined,
    };
    this.connections.push(record);
    const live: LiveSocket = { ws, record, closingByFake: false, pinger: undefined, onClose: [] };
    this.live.set(record.id, live);
    ws.on('ping', () => void record.pingsReceived++);
    ws.on('pong', () => void record.pongsReceived++);
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) return;
      const text = rawText(data);
      let message: unknown = text;
      try {
        message = JSON.parse(text);
      } catch {
        // kept as the raw string
      }
      record.received.push(message);
      if (isObject(message) && typeof message.envelope_id === 'string')
        this.onAck(message.envelope_id, message.payload);
    });
    ws.on('close', (code: number, reason: Buffer) => {
      clearInterval(live.pinger);
      this.live.delete(record.id);
      const initiatedBy = live.closingByFake ? 'fake' : code === 1006 ? 'network' : 'app';
      record.closed = { code, reason: reason.toString('utf8'), initiatedBy, at: this.ws.now() };
      for (const notify of live.onClose) notify();
    });
    ws.on('error', () => undefined); // a broken connection ends in 'close' (code 1006)
    if (this.ws.socketPingIntervalMs > 0) {
      live.pinger = setInterval(() => {
        record.pingsSent++;
        ws.ping(`fake-slack ping ${record.pingsSent}`);
      }, this.ws.socketPingIntervalMs);
      live.pinger.unref();
    }
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.live.size,
        debug_info: { host: `fake-applink-${record.id}`, build_number: 1, approximate_connection_time: 18_060 },
        connection_info: { app_id: this.ws.appId },
      }),
    );
  }

  /** Stores the first ack of an envelope (late when Slack's deadline had passed) and wakes its sender. */
  private onAck(envelopeId: string, payload: unknown): void {
    const envelope = this.envelopes.find((e) => e.envelopeId === envelopeId);
    const sentAt = this.sentAtReal.get(envelopeId);
    if (!envelope || envelope.ack || sentAt === undefined) return;
    envelope.ack = {
      payload: isObject(payload) ? payload : undefined,
      ms: performance.now() - sentAt,
      late: this.lateAfter.has(envelopeId),
      at: this.ws.now(),
    };
    this.ackWaiters.get(envelopeId)?.();
    this.ackWaiters.delete(envelopeId);
  }

  /** Forgets envelopes and closed connections; open connections stay. */
  reset(): void {
    this.envelopes.length = 0;
    const open = this.connections.filter((c) => c.closed === undefined);
    this.connections.splice(0, this.connections.length, ...open);
  }

  /** Drops every connection (recorded as closed by the fake, code 1006). */
  close(): void {
    for (const live of this.live.values()) {
      live.closingByFake = true;
      live.ws.terminate();
    }
    this.wss.close();
  }
}
