/**
 * Tests of the fake Slack's Socket Mode with the real @slack/socket-mode client that Bolt builds
 * (and bare `ws`): apps.connections.open and its single-use tickets, hello, slash_commands
 * envelopes and their acks, pings both ways, disconnect and reconnect.
 */
import { SocketModeReceiver } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { FakeSlack } from '../slack.ts';
import { quiet, rawCall as rawCallTo, slackError, webClient } from './test-helpers.ts';

let fake: FakeSlack;
let client: WebClient;
const rawCall = (method: string, form: Record<string, string>, headers?: Record<string, string>) =>
  rawCallTo(fake, method, form, headers);

beforeAll(async () => {
  fake = await FakeSlack.start({
    channels: [
      { id: 'C0ONE', name: 'one' },
      { id: 'C0TWO', name: 'two' },
    ],
  });
  client = webClient(fake);
});
afterEach(() => fake.reset());
afterAll(async () => {
  await fake.close();
});

describe('Socket Mode', () => {
  /** Clients started by a test; disconnected after it. */
  let started: Array<SocketModeReceiver['client']> = [];

  /**
   * The SocketModeClient that Bolt builds for Socket Mode (`receiver.client`, @slack/socket-mode
   * unmodified), pointed at `target` with the app token; it logs nothing.
   */
  function socketClient(target: FakeSlack, options: { clientPingTimeout?: number } = {}) {
    const receiver = new SocketModeReceiver({
      appToken: target.appToken,
      logger: quiet,
      ...options,
      installerOptions: { clientOptions: { slackApiUrl: target.apiUrl, retryConfig: { retries: 0 } } },
    });
    started.push(receiver.client);
    return receiver.client;
  }

  /** Connects a bare `ws` client: 101 when the upgrade was accepted (then closes it), else the HTTP status of the refusal. */
  function upgradeStatus(url: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.on('open', () => {
        ws.close(1000);
        resolve(101);
      });
      ws.on('unexpected-response', (req, res) => {
        req.destroy();
        resolve(res.statusCode ?? 0);
      });
      ws.on('error', reject);
    });
  }

  afterEach(async () => {
    await Promise.all(started.map((c) => c.disconnect()));
    started = [];
  });

  it('apps.connections.open takes only the app token (bot token: not_allowed_token_type, wrong token: invalid_auth, none: not_authed), and the app token is refused elsewhere', async () => {
    const app = webClient(fake, fake.appToken);
    const opened = await app.apps.connections.open();
    expect(opened.url).toMatch(
      new RegExp(`^ws://127\\.0\\.0\\.1:\\d+/socket-mode\\?ticket=[0-9a-f]{32}&app_id=${fake.appId}$`),
    );

    expect(await slackError(client.apps.connections.open())).toBe('not_allowed_token_type');
    const wrong = webClient(fake, 'xapp-1-A0FAKEAPP-1-wrong');
    expect(await slackError(wrong.apps.connections.open())).toBe('invalid_auth');
    expect((await rawCall('apps.connections.open', {}, {})).json).toEqual({ ok: false, error: 'not_authed' });
    expect(await slackError(app.chat.postMessage({ channel: 'C0ONE', text: 'hi' }))).toBe('not_allowed_token_type');

    expect(fake.calls.map((c) => [c.method, c.tokenType, c.error])).toEqual([
      ['apps.connections.open', 'app', undefined],
      ['apps.connections.open', 'bot', 'not_allowed_token_type'],
      ['apps.connections.open', 'unknown', 'invalid_auth'],
      ['apps.connections.open', 'none', 'not_authed'],
      ['chat.postMessage', 'app', 'not_allowed_token_type'],
    ]);
    expect(fake.messages()).toEqual([]);
  });

  it('a URL from apps.connections.open opens one connection: the same ticket again, or an unknown one, is refused with HTTP 401', async () => {
    const app = webClient(fake, fake.appToken);
    const { url } = await app.apps.connections.open();
    expect(await upgradeStatus(url!)).toBe(101);
    expect(await upgradeStatus(url!)).toBe(401);
    expect(await upgradeStatus(url!.replace(/ticket=[0-9a-f]+/, 'ticket=0123'))).toBe(401);
    expect(fake.socketConnections).toHaveLength(1);
  });

  it('@slack/socket-mode connects (hello), receives a slash_commands envelope with the HTTP form fields as payload, and its ack is matched by envelope_id', async () => {
    const socket = socketClient(fake);
    const received: Array<{ body: unknown; envelope_id: string; accepts_response_payload: boolean }> = [];
    socket.on('slash_commands', async ({ ack, body, envelope_id, accepts_response_payload }) => {
      received.push({ body, envelope_id, accepts_response_payload });
      await ack({ text: 'on it' });
    });
    await socket.start(); // resolves on the fake's `hello`
    const [connection, ...others] = fake.openSocketConnections();
    expect(others).toEqual([]);
    expect(fake.callsTo('apps.connections.open').map((c) => [c.tokenType, c.ok])).toEqual([['app', true]]);

    const result = await fake.sendSocketSlashCommand({
      command: '/chat',
      text: 'a <b> & c',
      channel_id: 'C0TWO',
      user_id: 'U0BOB',
    });
    expect(result).toMatchObject({
      connectionId: connection!.id,
      ackedInTime: true,
      ackPayload: { text: 'on it' },
      failure: undefined,
    });
    expect(result.ackMs).toBeLessThan(3000);
    expect(received).toEqual([
      { body: result.payload, envelope_id: result.envelopeId, accepts_response_payload: true },
    ]);
    expect(result.payload).toEqual({
      token: fake.verificationToken,
      team_id: fake.teamId,
      team_domain: fake.teamDomain,
      channel_id: 'C0TWO',
      channel_name: 'two',
      user_id: 'U0BOB',
      user_name: 'bob',
      command: '/chat',
      text: 'a &lt;b&gt; &amp; c',
      api_app_id: fake.appId,
      is_enterprise_install: 'false',
      response_url: result.responseUrl,
      trigger_id: result.triggerId,
    });
    // The client's ack as it came over the wire, and the envelope's record of it.
    expect(connection!.received).toEqual([{ envelope_id: result.envelopeId, payload: { text: 'on it' } }]);
    expect(fake.envelopes).toMatchObject([
      {
        envelopeId: result.envelopeId,
        type: 'slash_commands',
        connectionId: connection!.id,
        ack: { late: false, payload: { text: 'on it' } },
      },
    ]);
    expect(fake.platformFailures).toEqual([]);

    await socket.disconnect();
    expect(await fake.socketClosed(connection!.id)).toMatchObject({ code: 1000, initiatedBy: 'app' });
  });

  it('an envelope not acked within the deadline is operation_timeout (a late ack is still stored, marked late); with no open connection a command is dispatch_failed', async () => {
    const patient = await FakeSlack.start({ ackTimeoutMs: 100 });
    try {
      const socket = socketClient(patient);
      let lateAckSent!: () => void;
      const lateAck = new Promise<void>((resolve) => (lateAckSent = resolve));
      socket.on('slash_commands', ({ ack }) => {
        setTimeout(() => void ack().then(lateAckSent), 400);
      });
      await socket.start();
      const late = await patient.sendSocketSlashCommand({ command: '/chat', text: 'x' });
      expect(late).toMatchObject({
        ackedInTime: false,
        ackMs: undefined,
        failure: { kind: 'operation_timeout', command: '/chat' },
      });
      await lateAck;
      await vi.waitFor(() => expect(patient.envelopes[0]!.ack).toMatchObject({ late: true, payload: {} }));

      await socket.disconnect();
      await patient.socketClosed(late.connectionId!);
      const nobody = await patient.sendSocketSlashCommand({ command: '/chat', text: 'y' });
      expect(nobody).toMatchObject({
        connectionId: undefined,
        ackedInTime: false,
        failure: { kind: 'dispatch_failed' },
      });
      expect(patient.platformFailures.map((f) => f.kind)).toEqual(['operation_timeout', 'dispatch_failed']);
    } finally {
      await patient.close();
    }
  });

  it("pings go both ways: the client answers the fake's pings with pongs, the fake answers the client's, and the connection stays up", async () => {
    const pinging = await FakeSlack.start({ socketPingIntervalMs: 50 });
    try {
      // The client pings every clientPingTimeout / 3 ms and drops the connection when pongs stop coming.
      const socket = socketClient(pinging, { clientPingTimeout: 300 });
      await socket.start();
      const [connection] = pinging.openSocketConnections();
      await vi.waitFor(
        () => {
          expect(connection!.pongsReceived).toBeGreaterThanOrEqual(3);
          expect(connection!.pingsReceived).toBeGreaterThanOrEqual(5);
        },
        { timeout: 5000, interval: 50 },
      );
      expect(connection!.pongsReceived).toBeLessThanOrEqual(connection!.pingsSent);
      expect(connection!.closed).toBeUndefined();
      expect(pinging.callsTo('apps.connections.open')).toHaveLength(1);
    } finally {
      await pinging.close();
    }
  });

  it('a disconnect message makes the client close its socket (1000) and reconnect through a new apps.connections.open and a new ticket', async () => {
    // The client waits clientPingTimeout ms before it reconnects.
    const socket = socketClient(fake, { clientPingTimeout: 200 });
    await socket.start();
    const [first] = fake.openSocketConnections();
    const reconnected = new Promise<void>((resolve) => socket.once('connected', () => resolve()));
    expect(fake.sendSocketDisconnect('refresh_requested')).toBe(first!.id);
    expect(await fake.socketClosed(first!.id)).toMatchObject({ code: 1000, initiatedBy: 'app' });
    await reconnected;

    const [second, ...others] = fake.openSocketConnections();
    expect(others).toEqual([]);
    expect(second!.id).toBeGreaterThan(first!.id);
    expect(second!.ticket).not.toBe(first!.ticket);
    expect(first!.disconnectsSent).toEqual(['refresh_requested']);
    expect(fake.callsTo('apps.connections.open').map((c) => c.ok)).toEqual([true, true]);
    // Envelopes now go over the new connection.
    socket.on('slash_commands', ({ ack }) => void ack());
    expect(await fake.sendSocketSlashCommand({ command: '/chat', text: 'still there?' })).toMatchObject({
      connectionId: second!.id,
      ackedInTime: true,
    });
  });

  it('a deaf Socket Mode loses every event on the way (operation_timeout; the message stays in the channel) while pings are answered, on a new connection too; hearing again, it delivers', async () => {
    const pinging = await FakeSlack.start({ socketPingIntervalMs: 50, channels: [{ id: 'C0DEAF', name: 'deaf' }] });
    try {
      const socket = socketClient(pinging, { clientPingTimeout: 300 });
      const events: unknown[] = [];
      socket.on('slack_event', ({ ack, body }) => {
        events.push(body);
        void ack();
      });
      await socket.start();
      pinging.deafenSockets();
      const lost = pinging.mentionEvent({ channel: 'C0DEAF', user: 'U0ALICE', text: 'never delivered' });
      const result = await pinging.sendSocketEvent(lost);
      expect(result).toMatchObject({ ackedInTime: false, failure: { kind: 'operation_timeout' } });
      expect(pinging.swallowedSocketEvents).toBe(1);
      expect(pinging.messages('C0DEAF').map((m) => m.ts)).toContain(String(lost.ts));
      // The socket stays up: the client gets pings and answers them.
      const [connection] = pinging.openSocketConnections();
      await vi.waitFor(() => expect(connection!.pongsReceived).toBeGreaterThanOrEqual(3), { timeout: 5000 });
      expect(connection!.closed).toBeUndefined();
      // A new connection is as deaf.
      await socket.disconnect();
      await socket.start();
      expect(pinging.socketConnections).toHaveLength(2);
      await pinging.sendSocketEvent(pinging.mentionEvent({ channel: 'C0DEAF', user: 'U0ALICE', text: 'lost too' }));
      expect(pinging.swallowedSocketEvents).toBe(2);
      expect(events).toEqual([]);
      pinging.deafenSockets(false);
      const heard = await pinging.sendSocketEvent(
        pinging.mentionEvent({ channel: 'C0DEAF', user: 'U0ALICE', text: 'heard' }),
      );
      expect(heard.ackedInTime).toBe(true);
      expect(events).toHaveLength(1);
    } finally {
      await pinging.close();
    }
  });
});
