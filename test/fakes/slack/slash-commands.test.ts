/**
 * Tests of the fake Slack's slash commands sent to an app over HTTP: the real form body, signed
 * so that Bolt's own verifier accepts it (or deliberately not), and Slack's 3 s ack deadline.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySlackRequest } from '@slack/bolt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack, signSlackRequest } from '../slack.ts';

let fake: FakeSlack;

beforeAll(async () => {
  fake = await FakeSlack.start({
    channels: [
      { id: 'C0ONE', name: 'one' },
      { id: 'C0TWO', name: 'two' },
    ],
  });
});
afterEach(() => fake.reset());
afterAll(async () => {
  await fake.close();
});

describe('slash commands sent to an app', () => {
  let app: Server;
  let appUrl: string;
  /** What the test app answers next: status and delay. */
  let behaviour = { status: 200, delayMs: 0 };
  let received: Array<{ headers: Record<string, string>; body: string; verified: string }> = [];

  beforeAll(async () => {
    app = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        let verified = 'ok';
        try {
          // Bolt's own verifier: the fake's signatures must pass it.
          verifySlackRequest({
            signingSecret: fake.signingSecret,
            body,
            headers: {
              'x-slack-signature': String(req.headers['x-slack-signature']),
              'x-slack-request-timestamp': Number(req.headers['x-slack-request-timestamp']),
            },
          });
        } catch (error) {
          verified = (error as Error).message;
        }
        received.push({ headers: req.headers as Record<string, string>, body, verified });
        setTimeout(() => {
          res.writeHead(behaviour.status);
          res.end();
        }, behaviour.delayMs);
      });
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', () => resolve()));
    appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    behaviour = { status: 200, delayMs: 0 };
    received = [];
  });
  afterAll(() => {
    app.closeAllConnections();
    app.close();
  });

  it('sends the real form body to /slack/events, signed so that Bolt verifies it', async () => {
    const result = await fake.sendSlashCommand(appUrl, {
      command: '/chat',
      text: 'a <b> & c',
      channel_id: 'C0TWO',
      user_id: 'U0BOB',
    });
    expect(result).toMatchObject({ status: 200, ackedInTime: true, failure: undefined });
    const [req] = received;
    expect(req?.verified).toBe('ok');
    expect(req?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = Object.fromEntries(new URLSearchParams(req!.body));
    expect(form).toMatchObject({
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
    expect(req?.headers['x-slack-signature']).toBe(
      signSlackRequest(fake.signingSecret, Number(req?.headers['x-slack-request-timestamp']), req!.body),
    );
  });

  it('can sign with a wrong secret or a stale timestamp, which Bolt rejects, without counting it as a platform failure', async () => {
    await fake.sendSlashCommand(
      appUrl,
      { command: '/chat', text: 'x', channel_id: 'C0ONE' },
      { signingSecret: 'not-the-secret' },
    );
    await fake.sendSlashCommand(
      appUrl,
      { command: '/chat', text: 'x', channel_id: 'C0ONE' },
      { timestampSec: Math.floor(Date.now() / 1000) - 6 * 60 },
    );
    expect(received.map((r) => r.verified)).toEqual([
      expect.stringContaining('signature mismatch'),
      expect.stringContaining('stale'),
    ]);
    expect(fake.platformFailures).toEqual([]);
  });

  it('records an ack later than Slack waits as operation_timeout, and a non-200 ack as http_error', async () => {
    const patient = await FakeSlack.start({ ackTimeoutMs: 100 });
    try {
      behaviour = { status: 200, delayMs: 400 };
      const late = await patient.sendSlashCommand(appUrl, { command: '/chat', text: 'x' });
      expect(late).toMatchObject({ status: undefined, ackedInTime: false, failure: { kind: 'operation_timeout' } });
      behaviour = { status: 500, delayMs: 0 };
      const failed = await patient.sendSlashCommand(appUrl, { command: '/chat', text: 'x' });
      expect(failed).toMatchObject({ status: 500, ackedInTime: false, failure: { kind: 'http_error' } });
      expect(patient.platformFailures.map((f) => f.kind)).toEqual(['operation_timeout', 'http_error']);
    } finally {
      await patient.close();
    }
  });
});
