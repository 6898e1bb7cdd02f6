/**
 * The guard in front of Bolt's HTTPReceiver (src/platforms/slack/http.ts) on its own: the strict
 * signature check ("Verifying requests from Slack") case by case, and the server with a real Bolt
 * App behind it and a recording stand-in for the claims: no claim before a signature verified,
 * Bolt still reading the body the guard read, Slack's unsigned ssl_check, the store being down,
 * and refusals logged a line per 10 s, not a line each.
 */
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { App, HTTPReceiver } from '@slack/bolt';
import { pino } from 'pino';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { Claims } from '../../src/core/state/claims.ts';
import {
  createSlackServer,
  MAX_CLOCK_SKEW_SEC,
  REFUSAL_LOG_EVERY_MS,
  verifySlackSignature,
} from '../../src/platforms/slack/http.ts';
import { postWholeBody } from '../helpers/whole-body-post.ts';

const SECRET = 'test-signing-secret-0123456789abcdef';
const sign = (ts: string | number, body: string, secret = SECRET) =>
  `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;
const body = new URLSearchParams({
  command: '/chat',
  text: 'hi',
  team_id: 'T1',
  user_id: 'U1',
  channel_id: 'C1',
  response_url: 'http://127.0.0.1:9/x',
  trigger_id: '1.2.3',
}).toString();

describe('verifySlackSignature', () => {
  const nowMs = 1_700_000_000_000;
  const ts = String(nowMs / 1000);
  const verify = (headers: Record<string, string | undefined>, raw = body, at = nowMs) =>
    verifySlackSignature(headers, Buffer.from(raw), SECRET, at);

  it('accepts v0= and the lowercase hex HMAC-SHA256 of v0:<timestamp>:<body>, giving back the digest and timestamp', () => {
    const signature = sign(ts, body);
    expect(verify({ 'x-slack-request-timestamp': ts, 'x-slack-signature': signature })).toEqual({
      ok: true,
      digest: signature.slice(3),
      timestampSec: ts,
    });
    // Bytes as received, not as decoded: a body with non-ASCII text.
    const unicode = 'text=caf%C3%A9+%E2%98%95&raw=café ☕';
    expect(verify({ 'x-slack-request-timestamp': ts, 'x-slack-signature': sign(ts, unicode) }, unicode).ok).toBe(true);
  });

  it('refuses a signature with anything before or after it, in another case or version, or of another body or secret', () => {
    const good = sign(ts, body);
    const refused = [
      undefined,
      '',
      good.slice(3),
      `${good}=x`,
      `${good}x`,
      `${good}=`,
      `${good},${good}`,
      `${good}, v0=${'0'.repeat(64)}`,
      ` ${good}`,
      `v0=${good.slice(3).toUpperCase()}`,
      `v1=${good.slice(3)}`,
      `V0=${good.slice(3)}`,
      good.slice(0, -1),
      sign(ts, `${body}&x=1`),
      sign(ts, body, 'another-secret'),
      `v0=${'0'.repeat(64)}`,
    ];
    for (const signature of refused)
      expect(
        verify({ 'x-slack-request-timestamp': ts, 'x-slack-signature': signature }),
        String(signature),
      ).toMatchObject({ ok: false });
  });

  it('refuses a timestamp that is not plain decimal seconds, even when the signature covers it as written', () => {
    for (const written of [`0${ts}`, `${ts}.0`, `+${ts}`, `${ts}e0`, '', 'abc', `${ts}0000`]) {
      expect(
        verify({ 'x-slack-request-timestamp': written, 'x-slack-signature': sign(written, body) }),
        written,
      ).toMatchObject({ ok: false });
    }
    expect(verify({ 'x-slack-signature': sign(ts, body) })).toMatchObject({
      ok: false,
      reason: 'missing or malformed x-slack-request-timestamp',
    });
  });

  it('accepts a timestamp up to 5 minutes off either way, and refuses one a second more', () => {
    for (const offset of [-MAX_CLOCK_SKEW_SEC, MAX_CLOCK_SKEW_SEC]) {
      const at = String(nowMs / 1000 + offset);
      expect(verify({ 'x-slack-request-timestamp': at, 'x-slack-signature': sign(at, body) }).ok).toBe(true);
    }
    for (const offset of [-MAX_CLOCK_SKEW_SEC - 1, MAX_CLOCK_SKEW_SEC + 1]) {
      const at = String(nowMs / 1000 + offset);
      expect(verify({ 'x-slack-request-timestamp': at, 'x-slack-signature': sign(at, body) })).toEqual({
        ok: false,
        reason: 'timestamp more than 5 minutes off',
        skewSec: offset,
      });
    }
  });
});

describe('the guarded server', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  /** The guard with a Bolt App behind it whose /chat acks and counts; claims recorded (or failing). */
  async function start(options: { claimFails?: boolean; now?: () => number } = {}) {
    const lines: Array<Record<string, unknown>> = [];
    const log = pino(
      { level: 'info' },
      new Writable({
        write: (chunk: Buffer, _e, done) => {
          lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
          done();
        },
      }),
    );
    const receiver = new HTTPReceiver({
      signingSecret: SECRET,
      endpoints: '/slack/events',
      logger: {
        debug() {},
        info() {},
        warn() {},
        error() {},
        setLevel() {},
        getLevel: () => 'error' as never,
        setName() {},
      },
    });
    const app = new App({
      receiver,
      authorize: async () => ({ botToken: 'xoxb-test', botId: 'B1', botUserId: 'U0BOT' }),
    });
    const ran: string[] = [];
    app.command('/chat', async ({ command, ack }) => {
      await ack();
      ran.push(command.text);
    });
    const claimed: string[] = [];
    const seen = new Set<string>();
    const claims = {
      claim: async (key: string) => {
        claimed.push(key);
        if (options.claimFails) throw new Error('store down');
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      },
    } as unknown as Claims;
    const server = createSlackServer(receiver, { signingSecret: SECRET, claims, log, now: options.now });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
    const post = async (raw: string, headers: Record<string, string> = {}) => {
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: raw,
      });
      return { status: res.statusCode, text: await res.body.text() };
    };
    const signed = (raw: string, ts = Math.floor(Date.now() / 1000)) => ({
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': sign(ts, raw),
    });
    return { url, post, signed, ran, claimed, lines };
  }

  it('hands Bolt the body it read: a verified command runs once, claimed by its digest and timestamp; its replay is acked and not run', async () => {
    const { post, signed, ran, claimed } = await start();
    const headers = signed(body);
    expect(await post(body, headers)).toMatchObject({ status: 200 });
    expect(await post(body, headers)).toEqual({ status: 200, text: '' });
    await expect.poll(() => ran).toEqual(['hi']);
    expect(claimed).toEqual([
      `slack:request:${headers['x-slack-signature'].slice(3)}:${headers['x-slack-request-timestamp']}`,
      expect.any(String),
    ]);
    expect(claimed[1]).toBe(claimed[0]);
  });

  it('claims nothing for a refused request, and answers 401', async () => {
    const { post, signed, claimed, ran } = await start();
    const good = signed(body);
    expect(await post(body)).toMatchObject({ status: 401 });
    expect(await post(body, { ...good, 'x-slack-signature': `${good['x-slack-signature']}=x` })).toMatchObject({
      status: 401,
    });
    expect(await post(`${body}&x=1`, good)).toMatchObject({ status: 401, text: 'signature mismatch' });
    expect(await post(body, signed(body, Math.floor(Date.now() / 1000) + 600))).toMatchObject({
      status: 401,
      text: 'timestamp more than 5 minutes off',
    });
    expect(claimed).toEqual([]);
    expect(ran).toEqual([]);
  });

  it("answers 413 to a 10 MB signed request, announced or chunked, also to Node's http client (which fails on a connection closed under its upload)", async () => {
    const { url, signed, claimed, ran, lines } = await start();
    const big = `text=${'x'.repeat(10 * 1024 * 1024)}`;
    const headers = { 'content-type': 'application/x-www-form-urlencoded', ...signed(big) };
    for (const chunked of [false, true])
      expect(await postWholeBody(url, Buffer.from(big), headers, chunked), chunked ? 'chunked' : 'announced').toEqual({
        status: 413,
        text: 'body too large',
      });
    expect(claimed).toEqual([]);
    expect(ran).toEqual([]);
    expect(lines.map((l) => [l.msg, l.status])).toEqual([['slack request refused: body over 1048576 bytes', 413]]);
  });

  it("lets Slack's unsigned ssl_check through to Bolt (200) without a claim", async () => {
    const { post, claimed } = await start();
    expect(await post('ssl_check=1&token=x')).toMatchObject({ status: 200 });
    expect(claimed).toEqual([]);
  });

  it('runs a verified request when the store is down (a replay then cannot be told apart)', async () => {
    const { post, signed, ran } = await start({ claimFails: true });
    expect(await post(body, signed(body))).toMatchObject({ status: 200 });
    await expect.poll(() => ran).toEqual(['hi']);
  });

  it('logs refusals at most once per 10 s, with how many went unlogged, and never a header or the body', async () => {
    let now = Date.now();
    const { post, signed, lines } = await start({ now: () => now });
    const forged = { ...signed(body), 'x-slack-signature': `v0=${'1'.repeat(64)}` };
    for (let i = 0; i < 5; i++) expect((await post(body, forged)).status).toBe(401);
    now += REFUSAL_LOG_EVERY_MS;
    expect((await post(body)).status).toBe(401);
    expect(
      lines.map(({ msg, status, unloggedSincePrevious, level }) => ({ msg, status, unloggedSincePrevious, level })),
    ).toEqual([
      { msg: 'slack request refused: signature mismatch', status: 401, unloggedSincePrevious: 0, level: 30 },
      {
        msg: 'slack request refused: missing or malformed x-slack-request-timestamp',
        status: 401,
        unloggedSincePrevious: 4,
        level: 30,
      },
    ]);
    const raw = JSON.stringify(lines);
    expect(raw).not.toContain('1111111111');
    expect(raw).not.toContain('chat');
    expect(raw).not.toContain(SECRET);
  });
});
