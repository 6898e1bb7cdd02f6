/**
 * Tests of event delivery to a real Bolt app: signed `event_callback` POSTs that Bolt's
 * HTTPReceiver verifies and routes, Slack's retry headers, the 3 s ack deadline, the
 * url_verification handshake, and `events_api` envelopes over Socket Mode.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SocketModeReceiver } from '@slack/bolt';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeSlack, type SlackEvent } from '../slack.ts';
import { boltHttpApp, boltSocketApp, quiet } from './test-helpers.ts';

let fake: FakeSlack;

beforeAll(async () => {
  fake = await FakeSlack.start({ channels: [{ id: 'C0ONE', name: 'one' }] });
});
afterEach(() => fake.reset());
afterAll(async () => {
  await fake.close();
});

/** What a Bolt listener saw. */
interface Seen {
  event: unknown;
  body: Record<string, unknown>;
  retryNum: number | undefined;
  retryReason: string | undefined;
}

describe('Events API over HTTP, to a Bolt app', () => {
  let bolt: Awaited<ReturnType<typeof boltHttpApp>>;
  let mentions: Seen[] = [];
  let messages: unknown[] = [];

  beforeAll(async () => {
    bolt = await boltHttpApp(fake, (app) => {
      app.event('app_mention', async ({ event, body, context }) => {
        mentions.push({
          event,
          body: body as unknown as Record<string, unknown>,
          retryNum: context.retryNum,
          retryReason: context.retryReason,
        });
      });
      app.message(async ({ message }) => void messages.push(message));
    });
  });
  afterEach(() => {
    mentions = [];
    messages = [];
  });
  afterAll(() => bolt.stop());

  it('POSTs a signed event_callback that Bolt verifies and routes to app_mention, with the wrapper fields Slack sends', async () => {
    const event = fake.mentionEvent({ channel: 'C0ONE', user: 'U0ALICE', text: 'hello' });
    const result = await fake.sendEvent(bolt.url, event);
    expect(result).toMatchObject({ status: 200, ackedInTime: true, failure: undefined });
    expect(result.eventId).toMatch(/^Ev[0-9A-F]{10}$/);
    await vi.waitFor(() => expect(mentions).toHaveLength(1));
    expect(mentions[0]!.event).toEqual(event);
    expect(mentions[0]!.body).toEqual({
      token: fake.verificationToken,
      team_id: fake.teamId,
      api_app_id: fake.appId,
      event,
      type: 'event_callback',
      event_id: result.eventId,
      event_time: Math.floor(Number(event.event_ts)),
      authorizations: [
        {
          enterprise_id: null,
          team_id: fake.teamId,
          user_id: fake.botUserId,
          is_bot: true,
          is_enterprise_install: false,
        },
      ],
      is_ext_shared_channel: false,
      event_context: `1-app_mention-${fake.teamId}-C0ONE`,
    });
    expect(mentions[0]!.retryNum).toBeUndefined();
    expect(JSON.parse(result.rawBody)).toEqual(mentions[0]!.body);
    expect(fake.eventDeliveries).toMatchObject([
      {
        eventId: result.eventId,
        type: 'app_mention',
        subscription: 'app_mention',
        via: 'http',
        retryNum: undefined,
        ackedInTime: true,
      },
    ]);
  });

  it('a retry carries X-Slack-Retry-Num / X-Slack-Retry-Reason and the same event_id: Bolt shows them as context.retryNum / retryReason', async () => {
    const event = fake.mentionEvent({ channel: 'C0ONE', user: 'U0BOB', text: 'again?' });
    const first = await fake.sendEvent(bolt.url, event);
    await fake.sendEvent(bolt.url, event, { eventId: first.eventId, retryNum: 1 });
    await fake.sendEvent(bolt.url, event, { eventId: first.eventId, retryNum: 2, retryReason: 'http_error' });
    await vi.waitFor(() => expect(mentions).toHaveLength(3));
    expect(mentions.map((m) => [m.body.event_id, m.retryNum, m.retryReason])).toEqual([
      [first.eventId, undefined, undefined],
      [first.eventId, 1, 'http_timeout'],
      [first.eventId, 2, 'http_error'],
    ]);
  });

  it("a DM message reaches app.message(); Bolt itself drops the bot's own echoed message (its user is the bot)", async () => {
    const dm = fake.openIm('U0ALICE');
    const hello = fake.imMessageEvent({ channel: dm.id, user: 'U0ALICE', text: 'hi bot' });
    await fake.sendEvent(bolt.url, hello);
    const reply = await bolt.app.client.chat.postMessage({ channel: dm.id, text: 'hi human' });
    const echo = await fake.sendEvent(bolt.url, fake.ownMessageEvent({ channel: dm.id, ts: reply.ts! }));
    expect(echo.ackedInTime).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(messages).toEqual([hello]);
    expect(fake.eventDeliveries.map((d) => d.subscription)).toEqual(['message.im', 'message.im']);
  });

  it('a wrong signature is refused by Bolt (401) and counts as no platform failure', async () => {
    const event = fake.mentionEvent({ channel: 'C0ONE', user: 'U0ALICE', text: 'forged' });
    const result = await fake.sendEvent(bolt.url, event, { sign: { signingSecret: 'not-the-secret' } });
    expect(result).toMatchObject({ status: 401, ackedInTime: false, failure: undefined });
    expect(mentions).toEqual([]);
    expect(fake.platformFailures).toEqual([]);
  });

  it('url_verification: Bolt answers the challenge', async () => {
    const result = await fake.verifyUrl(bolt.url);
    expect(result).toMatchObject({ status: 200, verified: true });
    expect(JSON.parse(result.body)).toEqual({ challenge: result.challenge });
  });
});

describe("Slack's ack deadline for events", () => {
  let app: Server;
  let appUrl: string;
  let behaviour = { status: 200, delayMs: 0 };
  let requests: Array<Record<string, string | string[] | undefined>> = [];

  beforeAll(async () => {
    app = createServer((req, res) => {
      requests.push(req.headers);
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          res.writeHead(behaviour.status);
          res.end('not the challenge');
        }, behaviour.delayMs),
      );
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    app.closeAllConnections();
    app.close();
  });

  it('a retry sent at once still goes out later than the first delivery: a later timestamp, so a new signature, and the retry headers', async () => {
    behaviour = { status: 200, delayMs: 0 };
    requests = [];
    const event = fake.mentionEvent({ channel: 'C0ONE', user: 'U0ALICE', text: 'x' });
    const first = await fake.sendEvent(appUrl, event);
    await fake.sendEvent(appUrl, event, { eventId: first.eventId, retryNum: 1 });
    const [a, b] = requests;
    expect(Number(b!['x-slack-request-timestamp'])).toBeGreaterThan(Number(a!['x-slack-request-timestamp']));
    expect(b!['x-slack-signature']).not.toBe(a!['x-slack-signature']);
    expect([a!['x-slack-retry-num'], b!['x-slack-retry-num'], b!['x-slack-retry-reason']]).toEqual([
      undefined,
      '1',
      'http_timeout',
    ]);
    expect(a!['content-type']).toBe('application/json');
  });

  it('no HTTP 200 within the deadline is operation_timeout, a 500 http_error, no app dispatch_failed: each with the event id', async () => {
    const patient = await FakeSlack.start({ ackTimeoutMs: 100 });
    try {
      const event = patient.mentionEvent({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'x' });
      behaviour = { status: 200, delayMs: 400 };
      const late = await patient.sendEvent(appUrl, event);
      expect(late).toMatchObject({
        status: undefined,
        ackedInTime: false,
        failure: { kind: 'operation_timeout', command: 'app_mention', eventId: late.eventId },
      });
      behaviour = { status: 500, delayMs: 0 };
      const failed = await patient.sendEvent(appUrl, event, { eventId: late.eventId, retryNum: 1 });
      expect(failed.failure).toMatchObject({ kind: 'http_error', eventId: late.eventId });
      const nobody = await patient.sendEvent('http://127.0.0.1:9', event);
      expect(nobody.failure?.kind).toBe('dispatch_failed');
      expect(patient.platformFailures.map((f) => f.kind)).toEqual([
        'operation_timeout',
        'http_error',
        'dispatch_failed',
      ]);
      expect(patient.eventDeliveries.map((d) => [d.retryNum, d.ackedInTime])).toEqual([
        [undefined, false],
        [1, false],
        [undefined, false],
      ]);
      behaviour = { status: 200, delayMs: 0 };
      expect(await patient.verifyUrl(appUrl)).toMatchObject({ status: 200, verified: false });
    } finally {
      await patient.close();
    }
  });
});

describe('events over Socket Mode', () => {
  it("an events_api envelope reaches Bolt's app_mention listener and is acked; retry_attempt shows as context.retryNum", async () => {
    const seen: Seen[] = [];
    const bolt = await boltSocketApp(fake, (app) => {
      app.event('app_mention', async ({ event, body, context }) => {
        seen.push({
          event,
          body: body as unknown as Record<string, unknown>,
          retryNum: context.retryNum,
          retryReason: context.retryReason,
        });
      });
    });
    try {
      const event = fake.mentionEvent({ channel: 'C0ONE', user: 'U0ALICE', text: 'over the socket' });
      const result = await fake.sendSocketEvent(event);
      const [connection] = fake.openSocketConnections();
      expect(result).toMatchObject({ connectionId: connection!.id, ackedInTime: true, failure: undefined });
      const retry = await fake.sendSocketEvent(event, { eventId: result.eventId, retryNum: 2 });
      expect(retry.ackedInTime).toBe(true);
      await vi.waitFor(() => expect(seen).toHaveLength(2));
      expect(seen[0]!.event).toEqual(event);
      expect(seen[0]!.body).toEqual(result.payload);
      expect(result.payload).toMatchObject({
        type: 'event_callback',
        event_id: result.eventId,
        api_app_id: fake.appId,
      });
      expect(seen.map((s) => [s.retryNum, s.retryReason])).toEqual([
        [0, ''],
        [2, 'timeout'],
      ]);
      expect(fake.envelopes.map((e) => [e.type, e.connectionId, e.ack?.late])).toEqual([
        ['events_api', connection!.id, false],
        ['events_api', connection!.id, false],
      ]);
      expect(fake.eventDeliveries.map((d) => [d.via, d.retryNum, d.ackedInTime])).toEqual([
        ['socket', undefined, true],
        ['socket', 2, true],
      ]);
    } finally {
      await bolt.stop();
    }
  });

  it('an envelope nobody acks is operation_timeout; with no connection the event is dispatch_failed', async () => {
    const patient = await FakeSlack.start({ ackTimeoutMs: 100 });
    const socket = new SocketModeReceiver({
      appToken: patient.appToken,
      logger: quiet,
      installerOptions: { clientOptions: { slackApiUrl: patient.apiUrl, retryConfig: { retries: 0 } } },
    }).client;
    const onTheWire: unknown[] = [];
    socket.on('slack_event', ({ type, envelope_id, body, retry_num, retry_reason, accepts_response_payload }) => {
      onTheWire.push({ type, envelope_id, body, retry_num, retry_reason, accepts_response_payload });
    });
    try {
      await socket.start();
      const event: SlackEvent = patient.mentionEvent({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'x' });
      const late = await patient.sendSocketEvent(event);
      expect(late).toMatchObject({
        ackedInTime: false,
        failure: { kind: 'operation_timeout', command: 'app_mention', eventId: late.eventId },
      });
      expect(patient.envelopes[0]).toMatchObject({ type: 'events_api', ack: undefined });
      // The envelope as @slack/socket-mode read it off the wire.
      expect(onTheWire).toEqual([
        {
          type: 'events_api',
          envelope_id: late.envelopeId,
          body: late.payload,
          retry_num: 0,
          retry_reason: '',
          accepts_response_payload: false,
        },
      ]);
      await socket.disconnect();
      await patient.socketClosed(late.connectionId!);
      const nobody = await patient.sendSocketEvent(event);
      expect(nobody).toMatchObject({ connectionId: undefined, failure: { kind: 'dispatch_failed' } });
      expect(patient.platformFailures.map((f) => f.kind)).toEqual(['operation_timeout', 'dispatch_failed']);
    } finally {
      await socket.disconnect();
      await patient.close();
    }
  });
});
