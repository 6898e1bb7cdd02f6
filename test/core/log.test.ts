import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import pretty from 'pino-pretty';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import {
  createLogger,
  logUnhandledRejections,
  MAX_FIELD_CHARS,
  newReference,
  REDACTED,
  redactUrlCredentials,
  scrubSecrets,
  serializeError,
} from '../../src/log.ts';
import { withoutBodies } from '../../src/platforms/slack/logger.ts';

/** A logger writing parsed lines into `lines`. */
function collecting(secrets: string[]) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger({ level: 'info', secrets, destination }), lines };
}

describe('log', () => {
  it('scrubs Slack tokens by their prefixes, listed as secrets or not (each workspace’s tokens in the OAuth mode)', () => {
    const line =
      '{"msg":"token xoxb-123-456-abcDEF and xoxe.xoxb-1-MTIz-abc, refresh xoxe-1-abc, user xoxp-9-x, app xapp-1-A1-2-ff"}';
    const scrubbed = scrubSecrets(line, []);
    expect(scrubbed).toBe(
      '{"msg":"token [redacted] and [redacted], refresh [redacted], user [redacted], app [redacted]"}',
    );
    expect(scrubSecrets('no token here: xoxo and box-b', [])).toBe('no token here: xoxo and box-b');
  });

  it('scrubs a secret and its JSON-escaped form, and leaves short values alone', () => {
    expect(scrubSecrets('key sk-abc"def in "sk-abc\\"def"', ['sk-abc"def', 'abc'])).toBe(
      `key ${REDACTED} in "${REDACTED}"`,
    );
  });

  it("writes no authorization, token or apiKey one level into a field (nor headers.authorization), a child's lines included, and leaves the caller's objects and other fields alone", () => {
    const { log, lines } = collecting([]);
    const request = { method: 'PATCH', headers: { authorization: 'Bot abc.def', accept: 'json' }, token: 'aW50ZXJh' };
    const client = { apiKey: 'k-123', name: 'service' };
    log.info({ request, client, interaction: '1290', count: 2 }, 'sent');
    log
      .child({ platform: 'discord', ref: 'K7M2QX' })
      .warn({ webhook: { id: '7', token: 'd2ViaG9vaw' }, err: new Error('boom') }, 'failed');
    expect(lines[0]).toMatchObject({
      request: { method: 'PATCH', headers: { authorization: REDACTED, accept: 'json' }, token: REDACTED },
      client: { apiKey: REDACTED, name: 'service' },
      interaction: '1290',
      count: 2,
      msg: 'sent',
    });
    expect(lines[1]).toMatchObject({
      platform: 'discord',
      ref: 'K7M2QX',
      webhook: { id: '7', token: REDACTED },
      err: { type: 'Error', message: 'boom' },
    });
    for (const secret of ['Bot abc.def', 'aW50ZXJh', 'k-123', 'd2ViaG9vaw'])
      expect(JSON.stringify(lines)).not.toContain(secret);
    // The caller's objects are as they were.
    expect(request.headers.authorization).toBe('Bot abc.def');
    expect(request.token).toBe('aW50ZXJh');
    expect(client.apiKey).toBe('k-123');
  });

  it('logs an unhandled rejection once, as an error with the secret scrubbed, and the handler can be removed', () => {
    const secret = 'xapp-1-A0-secret-app-token';
    const { log, lines } = collecting([secret]);
    const fakeProcess = new EventEmitter();
    const remove = logUnhandledRejections(log, fakeProcess);
    fakeProcess.emit('unhandledRejection', new Error(`apps.connections.open failed for ${secret}`), Promise.resolve());
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: expect.stringMatching(/^unhandled promise rejection/) });
    expect(JSON.stringify(lines[0])).toContain('apps.connections.open failed');
    expect(JSON.stringify(lines[0])).not.toContain(secret);
    remove();
    expect(fakeProcess.listenerCount('unhandledRejection')).toBe(0);
  });
});

describe('secrets in URLs and library debug lines', () => {
  it("scrubs STORE_URL's credentials from every line: the URL's user information wherever a URL is written, and the password and user alone", () => {
    const password = 'p@ss:w0rd/long';
    const storeUrl = `redis://cache-admin:${encodeURIComponent(password)}@redis.internal:6379/0`;
    const config = loadConfig({
      SERVICE_BASE_URL: 'https://api.example.com/v1',
      SERVICE_API_KEY: 'sk-test-key-123',
      SLACK_BOT_TOKEN: 'xoxb-1-2-3',
      SLACK_SIGNING_SECRET: 'signing-secret',
      STORE_URL: storeUrl,
    });
    expect(config.secrets).toEqual(expect.arrayContaining([encodeURIComponent(password), password, 'cache-admin']));
    const { log, lines } = collecting(config.secrets);
    log.warn({ err: new Error(`connect ECONNREFUSED ${storeUrl}`) }, 'state store error');
    log.warn({ url: `rediss://other:${password}@10.0.0.1` }, `AUTH failed for cache-admin with ${password}`);
    const text = JSON.stringify(lines);
    expect(text).not.toContain(password);
    expect(text).not.toContain(encodeURIComponent(password));
    expect(text).not.toContain('cache-admin');
    expect(text).toContain(`redis://${REDACTED}@redis.internal:6379/0`);
  });

  it('redacts URL credentials in one pass (1 MB of "://" in 100 ms), and leaves URLs without them alone', () => {
    expect(redactUrlCredentials('see https://example.com/a@b and mailto:x@y.z')).toBe(
      'see https://example.com/a@b and mailto:x@y.z',
    );
    expect(redactUrlCredentials('redis://:pw@h:1 and amqp://u:p@q/vhost')).toBe(
      `redis://${REDACTED}@h:1 and amqp://${REDACTED}@q/vhost`,
    );
    const started = performance.now();
    redactUrlCredentials(`${'://'.repeat(350_000)}@`);
    expect(performance.now() - started).toBeLessThan(100);
  });

  it("keeps a Slack library's debug line without its request or response body", () => {
    expect(withoutBodies("apiCall('chat.postMessage') start")).toBe("apiCall('chat.postMessage') start");
    expect(withoutBodies('http request body: {"channel":"C1","text":"the secret plan"}')).toBe(
      'http request (details not logged)',
    );
    expect(withoutBodies('http request result: {"ok":true,"message":{"text":"the secret plan"}}')).toBe(
      'http request (details not logged)',
    );
    expect(withoutBodies('ack() response sent (body: {"text":"the secret plan"})')).toBe(
      'ack() response sent (details not logged)',
    );
    expect(withoutBodies(`Received a message: ${'x'.repeat(300)}`)).toBe('Received a (details not logged)');
  });
});

describe('error serializer', () => {
  it('keeps type, code, status, method, path and message of a discord.js API error, bounded, without its body or the interaction token', () => {
    const { log, lines } = collecting([]);
    const huge = Buffer.alloc(45 * 1024 * 1024, 1).toString('base64');
    const error = Object.assign(new Error('Request entity too large'), {
      name: 'DiscordAPIError[40005]',
      code: 40005,
      status: 413,
      method: 'PATCH',
      url: 'https://discord.com/api/v10/webhooks/1290000000000000001/aW50ZXJhY3Rpb246MTIzOnNlY3JldA/messages/@original',
      rawError: { message: 'Request entity too large', code: 40005 },
      requestBody: { files: [{ name: 'imagine.png', data: huge }], json: { content: 'x'.repeat(10_000) } },
    });
    log.warn({ err: error }, 'upload refused');
    const line = JSON.stringify(lines[0]);
    expect(line.length).toBeLessThan(2_000);
    expect(lines[0]!.err).toEqual({
      type: 'DiscordAPIError[40005]',
      message: 'Request entity too large',
      code: '40005',
      status: 413,
      method: 'PATCH',
      path: '/api/v10/webhooks/1290000000000000001/:token/messages/@original',
    });
  });

  it("keeps Slack's error code and the cause, and cuts long messages", () => {
    const slack = Object.assign(new Error(`An API error occurred: invalid_auth ${'x'.repeat(2_000)}`), {
      code: 'slack_webapi_platform_error',
      data: { ok: false, error: 'invalid_auth', response_metadata: { big: 'y'.repeat(5_000) } },
    });
    const serialized = serializeError(new Error('could not post', { cause: slack }));
    expect(serialized.cause).toMatchObject({ code: 'slack_webapi_platform_error', detail: 'invalid_auth' });
    expect(serialized.cause!.message!.length).toBeLessThan(MAX_FIELD_CHARS + 40);
    expect(JSON.stringify(serialized)).not.toContain('yyyy');
    expect(serializeError('plain text')).toEqual({ type: 'string', message: 'plain text' });
  });

  it('writes readable lines with LOG_FORMAT=pretty, secrets still scrubbed', () => {
    let out = '';
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        out += String(chunk);
        done();
      },
    });
    // pino-pretty formats the JSON line the logger hands it; here the collecting stream stands in for stdout.
    const log = createLogger({
      level: 'info',
      secrets: ['sk-secret-123456'],
      format: 'pretty',
      destination: pretty({ destination, sync: true, colorize: false }),
    });
    log.info({ key: 'sk-secret-123456' }, 'hello there');
    expect(out).toMatch(/INFO.*: hello there\n\s+key: "\[redacted\]"/);
  });

  it('makes short reference ids people can read out', () => {
    const refs = new Set(Array.from({ length: 200 }, () => newReference()));
    expect(refs.size).toBeGreaterThan(195);
    for (const ref of refs) expect(ref).toMatch(/^[2-9A-HJKMNP-Z]{6}$/);
  });
});
