/**
 * The Discord fake enforces what Discord enforces, answering the way Discord answers: checked
 * with plain fetch, a raw gateway client (ws), and discord.js's own REST client where its
 * reaction (waiting out a 429) is the point.
 */
import { afterEach, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { WebSocket } from 'ws';
import { REST, Routes } from 'discord.js';
import { FakeDiscord, type FakeDiscordOptions, type FakeInteraction, type Json } from './discord.ts';

const started: FakeDiscord[] = [];
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await Promise.all(started.splice(0).map((f) => f.close()));
});

async function startFake(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const fake = await FakeDiscord.start(options);
  started.push(fake);
  return fake;
}

/** A raw gateway client: frames received, a promise per close. */
function openGateway(fake: FakeDiscord, query = '?v=10&encoding=json') {
  const ws = new WebSocket(`${fake.gatewayUrl}${query}`);
  sockets.push(ws);
  const frames: Json[] = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (data) => {
    frames.push(JSON.parse(String(data)) as Json);
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  /** The first frame (from the start) matching `predicate`. */
  const frame = async (predicate: (f: Json) => boolean): Promise<Json> => {
    for (;;) {
      const found = frames.find(predicate);
      if (found) return found;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const opened = new Promise<void>((resolve) => ws.once('open', () => resolve()));
  const send = async (payload: Json) => {
    await opened;
    ws.send(JSON.stringify(payload));
  };
  return { ws, frames, frame, send, closed };
}

const identify = (token: string, intents = 1) => ({ op: 2, d: { token, intents, properties: { os: 'linux', browser: 'test', device: 'test' }, shard: [0, 1] } });

/** A gateway session that has identified (so the fake can dispatch interactions). */
async function connectBot(fake: FakeDiscord) {
  const gateway = openGateway(fake);
  await gateway.send(identify(fake.token));
  await gateway.frame((f) => f.t === 'GUILD_CREATE');
  return gateway;
}

/** fetch against the fake's REST API v10. */
function api(fake: FakeDiscord, path: string, init: { method?: string; body?: unknown; auth?: boolean; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.auth) headers.authorization = `Bot ${fake.token}`;
  let body: RequestInit['body'];
  if (init.body instanceof FormData) body = init.body;
  else if (init.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.body);
  }
  return fetch(`${fake.apiUrl}/v10${path}`, { method: init.method ?? 'GET', headers, ...(body !== undefined ? { body } : {}) });
}

async function json(response: Response): Promise<Json> {
  return (await response.json()) as Json;
}

/** A dispatched interaction that has been deferred (type 5). */
async function deferred(fake: FakeDiscord, flags = 0): Promise<FakeInteraction> {
  const interaction = fake.dispatchInteraction({ command: 'chat', options: { prompt: 'hi' } });
  const res = await api(fake, `/interactions/${interaction.id}/${interaction.token}/callback`, { method: 'POST', body: { type: 5, data: { flags } } });
  expect(res.status).toBe(204);
  return interaction;
}

const webhookPath = (fake: FakeDiscord, ix: FakeInteraction, rest = '') => `/webhooks/${fake.applicationId}/${ix.token}${rest}`;

describe('FakeDiscord REST basics', () => {
  it('answers /gateway/bot with the gateway URL and session_start_limit only with the bot token, else 401 code 0', async () => {
    const fake = await startFake();
    const anonymous = await api(fake, '/gateway/bot');
    expect(anonymous.status).toBe(401);
    expect(await json(anonymous)).toEqual({ message: '401: Unauthorized', code: 0 });
    const wrong = await api(fake, '/gateway/bot', { headers: { authorization: 'Bot nope' } });
    expect(wrong.status).toBe(401);

    const ok = await api(fake, '/gateway/bot', { auth: true });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toEqual({
      url: fake.gatewayUrl,
      shards: 1,
      session_start_limit: { total: 1000, remaining: 1000, reset_after: 86_400_000, max_concurrency: 1 },
    });
    const me = await json(await api(fake, '/users/@me', { auth: true }));
    expect(me).toMatchObject({ id: fake.applicationId, bot: true });
  });

  it('answers unknown routes with 404, a wrong method with 405 and another API version with 400 code 50041', async () => {
    const fake = await startFake();
    expect((await api(fake, '/nothing/here', { auth: true })).status).toBe(404);
    expect((await api(fake, '/gateway/bot', { method: 'POST', auth: true })).status).toBe(405);
    const v9 = await fetch(`${fake.apiUrl}/v9/gateway/bot`, { headers: { authorization: `Bot ${fake.token}` } });
    expect(v9.status).toBe(400);
    expect((await json(v9)).code).toBe(50041);
  });

  it('serves channel message routes with the bot token only, and hides ephemeral messages from them (10008)', async () => {
    const fake = await startFake();
    const channelId = fake.channelList[0]!.id;
    expect((await api(fake, `/channels/${channelId}/messages`, { method: 'POST', body: { content: 'hi' } })).status).toBe(401);
    const created = await api(fake, `/channels/${channelId}/messages`, { method: 'POST', auth: true, body: { content: 'hi', allowed_mentions: { parse: [] } } });
    expect(created.status).toBe(200);
    const message = await json(created);
    expect(message).toMatchObject({ channel_id: channelId, content: 'hi', type: 0, author: { id: fake.applicationId, bot: true } });
    expect((await api(fake, `/channels/${channelId}/messages/${String(message.id)}`, { method: 'PATCH', auth: true, body: { content: 'edited' } })).status).toBe(200);
    expect((await api(fake, `/channels/1/messages`, { method: 'POST', auth: true, body: { content: 'x' } })).status).toBe(404);

    await connectBot(fake);
    const ix = fake.dispatchInteraction({ command: 'chat' });
    await api(fake, `/interactions/${ix.id}/${ix.token}/callback`, { method: 'POST', body: { type: 4, data: { content: 'secret', flags: 64 } } });
    const hidden = await api(fake, `/channels/${channelId}/messages/${ix.original!.id}`, { method: 'PATCH', auth: true, body: { content: 'x' } });
    expect(hidden.status).toBe(404);
    expect((await json(hidden)).code).toBe(10008);
  });

  it('fails the scripted number of matching requests with failNext, then serves them again', async () => {
    const fake = await startFake();
    fake.failNext({ method: 'GET', path: /\/gateway\/bot$/, status: 503, times: 2 });
    expect((await api(fake, '/gateway/bot', { auth: true })).status).toBe(503);
    expect((await api(fake, '/gateway/bot', { auth: true })).status).toBe(503);
    expect((await api(fake, '/gateway/bot', { auth: true })).status).toBe(200);
  });
});

describe('FakeDiscord gateway', () => {
  it('says HELLO with heartbeat_interval and acknowledges heartbeats with op 11', async () => {
    const fake = await startFake({ heartbeatIntervalMs: 12_345 });
    const gateway = openGateway(fake);
    const hello = await gateway.frame((f) => f.op === 10);
    expect(hello.d).toMatchObject({ heartbeat_interval: 12_345 });
    await gateway.send({ op: 1, d: null });
    expect(await gateway.frame((f) => f.op === 11)).toMatchObject({ op: 11 });
  });

  it('closes with 4004 when IDENTIFY carries another token, 4014 for privileged intents not enabled, 4003 for other opcodes before IDENTIFY', async () => {
    const fake = await startFake();
    const badToken = openGateway(fake);
    await badToken.send(identify('not-the-token'));
    expect((await badToken.closed).code).toBe(4004);

    const privileged = openGateway(fake);
    await privileged.send(identify(fake.token, 1 | (1 << 15)));
    expect((await privileged.closed).code).toBe(4014);

    const early = openGateway(fake);
    await early.send({ op: 3, d: { status: 'online', since: null, activities: [], afk: false } });
    expect((await early.closed).code).toBe(4003);

    const zlib = openGateway(fake, '?v=10&encoding=json&compress=zlib-stream');
    expect((await zlib.closed).code).toBe(4000);
  });

  it('answers IDENTIFY with READY (user, application, session, resume URL, unavailable guild) then a full GUILD_CREATE with channels, roles and the bot as member', async () => {
    const fake = await startFake({ guild: { channels: ['general', 'random'] } });
    const gateway = openGateway(fake);
    await gateway.send(identify(fake.token));
    const ready = await gateway.frame((f) => f.t === 'READY');
    expect(ready).toMatchObject({ op: 0, s: 1 });
    expect(ready.d).toMatchObject({
      v: 10,
      user: { id: fake.applicationId, bot: true },
      application: { id: fake.applicationId, flags: 0 },
      resume_gateway_url: fake.gatewayUrl,
      shard: [0, 1],
      guilds: [{ id: fake.guildId, unavailable: true }],
    });
    expect(typeof (ready.d as Json).session_id).toBe('string');
    const guild = (await gateway.frame((f) => f.t === 'GUILD_CREATE')).d as Json;
    expect(guild).toMatchObject({ id: fake.guildId, unavailable: false });
    expect((guild.channels as Json[]).map((c) => c.name)).toEqual(['general', 'random']);
    expect((guild.roles as Json[]).map((r) => r.name)).toContain('@everyone');
    expect((guild.members as Json[])[0]).toMatchObject({ user: { id: fake.applicationId } });

    const added = fake.addChannel('later');
    const created = await gateway.frame((f) => f.t === 'CHANNEL_CREATE');
    expect(created.d).toMatchObject({ id: added.id, name: 'later', guild_id: fake.guildId, type: 0 });
  });

  it('dispatches INTERACTION_CREATE with the full payload Discord sends, admin or not', async () => {
    const fake = await startFake();
    const gateway = await connectBot(fake);
    const admin = fake.dispatchInteraction({ command: 'imagine', options: { prompt: 'a cat', aspect_ratio: 'landscape' }, admin: true });
    const frame = await gateway.frame((f) => f.t === 'INTERACTION_CREATE');
    const d = frame.d as Json;
    expect(d).toMatchObject({
      id: admin.id,
      application_id: fake.applicationId,
      type: 2,
      token: admin.token,
      version: 1,
      data: { name: 'imagine', type: 1, options: [{ name: 'prompt', type: 3, value: 'a cat' }, { name: 'aspect_ratio', type: 3, value: 'landscape' }] },
      guild_id: fake.guildId,
      channel_id: fake.channelList[0]!.id,
      channel: { id: fake.channelList[0]!.id, type: 0 },
      locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: { '0': fake.guildId },
      context: 0,
      attachment_size_limit: 10 * 1024 * 1024,
    });
    for (const key of ['id', 'token', 'app_permissions']) expect(typeof d[key]).toBe('string');
    const adminPermissions = BigInt((d.member as Json).permissions as string);
    expect(adminPermissions & 8n).toBe(8n);

    const member = fake.dispatchInteraction({ command: 'chat', options: { prompt: 'hi' } });
    const memberFrame = await gateway.frame((f) => f.t === 'INTERACTION_CREATE' && (f.d as Json).id === member.id);
    expect(BigInt(((memberFrame.d as Json).member as Json).permissions as string) & 8n).toBe(0n);
  });
});

describe('FakeDiscord interaction responses', () => {
  it('accepts one initial response without an Authorization header, then refuses another with 400 code 40060', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = await deferred(fake);
    expect(ix.response?.type).toBe(5);
    expect(ix.original?.loading).toBe(true);
    const again = await api(fake, `/interactions/${ix.id}/${ix.token}/callback`, { method: 'POST', body: { type: 4, data: { content: 'late' } } });
    expect(again.status).toBe(400);
    expect(await json(again)).toEqual({ message: 'Interaction has already been acknowledged.', code: 40060 });
    expect(ix.callbacks.map((c) => c.status)).toEqual([204, 400]);
  });

  it('refuses a first response after the response window with 404 code 10062, and one with a wrong token the same way', async () => {
    const fake = await startFake({ responseWindowMs: 50 });
    await connectBot(fake);
    const wrong = fake.dispatchInteraction({ command: 'chat' });
    const res = await api(fake, `/interactions/${wrong.id}/not-its-token/callback`, { method: 'POST', body: { type: 5 } });
    expect(res.status).toBe(404);
    const ix = fake.dispatchInteraction({ command: 'chat' });
    await new Promise((r) => setTimeout(r, 120));
    const late = await api(fake, `/interactions/${ix.id}/${ix.token}/callback`, { method: 'POST', body: { type: 5 } });
    expect(late.status).toBe(404);
    expect(await json(late)).toEqual({ message: 'Unknown interaction', code: 10062 });
    expect(ix.response).toBeUndefined();
  });

  it('answers ?with_response=true with the interaction and the message resource', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = fake.dispatchInteraction({ command: 'chat' });
    const res = await api(fake, `/interactions/${ix.id}/${ix.token}/callback?with_response=true`, { method: 'POST', body: { type: 4, data: { content: 'hello', flags: 64 } } });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({
      interaction: { id: ix.id, type: 2, response_message_id: ix.original!.id, response_message_loading: false, response_message_ephemeral: true },
      resource: { type: 4, message: { content: 'hello', flags: 64, type: 20 } },
    });
  });

  it('refuses webhook routes with 401 code 50027 once the interaction token has expired', async () => {
    const fake = await startFake({ tokenTtlMs: 150 });
    await connectBot(fake);
    const ix = await deferred(fake);
    expect((await api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'PATCH', body: { content: 'in time' } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    const stale = await api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'PATCH', body: { content: 'too late' } });
    expect(stale.status).toBe(401);
    expect(await json(stale)).toEqual({ message: 'Invalid Webhook Token', code: 50027 });
    expect(ix.original!.content).toBe('in time');
  });

  it('answers webhook routes of an unknown application with 10015, edits before any response with 10008, a follow-up before any response with 10015', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = fake.dispatchInteraction({ command: 'chat' });
    const otherApp = await api(fake, `/webhooks/1290000000000000999/${ix.token}/messages/@original`, { method: 'PATCH', body: { content: 'x' } });
    expect((await json(otherApp)).code).toBe(10015);
    const early = await api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'PATCH', body: { content: 'x' } });
    expect(early.status).toBe(404);
    expect((await json(early)).code).toBe(10008);
    const followUp = await api(fake, webhookPath(fake, ix, '?wait=true'), { method: 'POST', body: { content: 'x' } });
    expect((await json(followUp)).code).toBe(10015);
  });

  it('keeps every revision of the original, follow-ups with their flags, and deletions (GET then 10008)', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = await deferred(fake);
    await api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'PATCH', body: { content: 'one' } });
    const patched = await api(fake, webhookPath(fake, ix, '/messages/%40original'), { method: 'PATCH', body: { content: 'one two' } });
    expect(await json(patched)).toMatchObject({ content: 'one two', type: 20, webhook_id: fake.applicationId, interaction_metadata: { id: ix.id, name: 'chat' } });
    const follow = await json(await api(fake, webhookPath(fake, ix, '?wait=true'), { method: 'POST', body: { content: 'only you', flags: 64 } }));
    expect(follow).toMatchObject({ content: 'only you', flags: 64 });
    expect((await api(fake, webhookPath(fake, ix, `/messages/${String(follow.id)}`), { method: 'PATCH', body: { content: 'only you, edited' } })).status).toBe(200);

    expect(ix.original!.revisions.map((r) => [r.via, r.content])).toEqual([['defer', ''], ['edit', 'one'], ['edit', 'one two']]);
    expect(ix.original!.loading).toBe(false);
    expect(ix.followUps.map((m) => [m.content, m.ephemeral])).toEqual([['only you, edited', true]]);

    expect((await api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'DELETE' })).status).toBe(204);
    expect(ix.original!.deleted).toBe(true);
    expect((await json(await api(fake, webhookPath(fake, ix, '/messages/@original')))).code).toBe(10008);
  });
});

describe('FakeDiscord message limits', () => {
  it('refuses content over 2000 code points with 400 code 50035 (BASE_TYPE_MAX_LENGTH) and keeps the message as it was; 2000 emoji pass', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = await deferred(fake);
    const path = webhookPath(fake, ix, '/messages/@original');
    expect((await api(fake, path, { method: 'PATCH', body: { content: 'x'.repeat(2000) } })).status).toBe(200);
    const tooLong = await api(fake, path, { method: 'PATCH', body: { content: 'x'.repeat(2001) } });
    expect(tooLong.status).toBe(400);
    expect(await json(tooLong)).toEqual({
      message: 'Invalid Form Body',
      code: 50035,
      errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] } },
    });
    expect(ix.original!.content).toBe('x'.repeat(2000));
    // Discord counts code points: 2000 emoji are 4000 UTF-16 units and still fit.
    expect((await api(fake, path, { method: 'PATCH', body: { content: '😀'.repeat(2000) } })).status).toBe(200);
  });

  it('refuses more than 10 embeds, a description over 4096, embeds over 6000 characters in all, and a bad image URL', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = await deferred(fake);
    const path = webhookPath(fake, ix, '/messages/@original');
    const errorsOf = async (embeds: unknown) => {
      const res = await api(fake, path, { method: 'PATCH', body: { content: 'x', embeds } });
      expect(res.status).toBe(400);
      return (await json(res)).errors as Json;
    };
    expect(await errorsOf(Array.from({ length: 11 }, () => ({ title: 't' })))).toMatchObject({ embeds: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } });
    expect(await errorsOf([{ description: 'd'.repeat(4097) }])).toMatchObject({ embeds: { 0: { description: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } } });
    expect(await errorsOf([{ description: 'd'.repeat(4000) }, { description: 'd'.repeat(2001) }])).toMatchObject({ embeds: { _errors: [{ code: 'MAX_EMBED_SIZE_EXCEEDED' }] } });
    expect(await errorsOf([{ image: { url: 'not a url' } }])).toMatchObject({ embeds: { 0: { image: { url: { _errors: [{ code: 'URL_TYPE_INVALID_URL' }] } } } } });
    const ok = await api(fake, path, { method: 'PATCH', body: { content: '', embeds: [{ title: 'A picture', image: { url: 'https://example.com/a.png' } }] } });
    expect(ok.status).toBe(200);
    expect((await json(ok)).embeds).toEqual([{ type: 'rich', title: 'A picture', image: { url: 'https://example.com/a.png', proxy_url: 'https://example.com/a.png' } }]);
  });

  it('refuses an empty message with 400 code 50006', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = await deferred(fake);
    const res = await api(fake, webhookPath(fake, ix, '?wait=true'), { method: 'POST', body: { content: '' } });
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ message: 'Cannot send an empty message', code: 50006 });
  });

  it('stores multipart uploads byte for byte with image sizes, serves them at their URL, and refuses 11 files (50035) or a file over the size limit (413, 40005)', async () => {
    const fake = await startFake({ maxFileBytes: 64 * 1024 });
    await connectBot(fake);
    const ix = await deferred(fake);
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 200, g: 10, b: 10 } } }).png().toBuffer();
    const form = new FormData();
    form.append('payload_json', JSON.stringify({ content: 'a picture', attachments: [{ id: 0, description: 'red' }], allowed_mentions: { parse: [] } }));
    form.append('files[0]', new Blob([png], { type: 'image/png' }), 'red.png');
    const res = await api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'PATCH', body: form });
    expect(res.status).toBe(200);
    const attachment = ((await json(res)).attachments as Json[])[0]!;
    expect(attachment).toMatchObject({ filename: 'red.png', size: png.length, content_type: 'image/png', width: 40, height: 30, description: 'red' });
    expect(Buffer.compare(ix.original!.attachments[0]!.data, png)).toBe(0);
    const served = await fetch(attachment.url as string);
    expect(Buffer.compare(Buffer.from(await served.arrayBuffer()), png)).toBe(0);

    const eleven = new FormData();
    eleven.append('payload_json', JSON.stringify({ content: 'many' }));
    for (let i = 0; i < 11; i++) eleven.append(`files[${i}]`, new Blob(['x']), `f${i}.txt`);
    const many = await api(fake, webhookPath(fake, ix, '?wait=true'), { method: 'POST', body: eleven });
    expect(many.status).toBe(400);
    expect(await json(many)).toMatchObject({ code: 50035, errors: { files: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } });

    const big = new FormData();
    big.append('payload_json', JSON.stringify({ content: 'big' }));
    big.append('files[0]', new Blob([Buffer.alloc(64 * 1024 + 1)]), 'big.bin');
    const tooBig = await api(fake, webhookPath(fake, ix, '?wait=true'), { method: 'POST', body: big });
    expect(tooBig.status).toBe(413);
    expect(await json(tooBig)).toEqual({ message: 'Request entity too large', code: 40005 });
  });

  it('records allowed_mentions of every write and whom it pings: an edit without them pings @everyone, as Discord re-parses it', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = await deferred(fake);
    const path = webhookPath(fake, ix, '/messages/@original');
    const content = 'hey @everyone and <@123456789012345678>';
    await api(fake, path, { method: 'PATCH', body: { content, allowed_mentions: { parse: [] } } });
    await api(fake, path, { method: 'PATCH', body: { content } });
    expect(fake.writes.map((w) => [w.allowedMentions, w.pinged])).toEqual([
      [{ parse: [] }, { everyone: false, users: [], roles: [] }],
      [undefined, { everyone: true, users: ['123456789012345678'], roles: [] }],
    ]);
    const exclusive = await api(fake, path, { method: 'PATCH', body: { content, allowed_mentions: { parse: ['users'], users: ['123456789012345678'] } } });
    expect(exclusive.status).toBe(400);
    expect(await json(exclusive)).toMatchObject({ errors: { allowed_mentions: { _errors: [{ code: 'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE' }] } } });
  });
});

describe('FakeDiscord rate limits', () => {
  it('answers writes over the channel budget with 429, retry-after and x-ratelimit headers, and accepts them again after the reset', async () => {
    const fake = await startFake({ messageBudget: { limit: 2, windowMs: 300 } });
    await connectBot(fake);
    const ix = await deferred(fake);
    const path = webhookPath(fake, ix, '/messages/@original');
    const first = await api(fake, path, { method: 'PATCH', body: { content: '1' } });
    expect(first.headers.get('x-ratelimit-limit')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(Number(first.headers.get('x-ratelimit-reset-after'))).toBeGreaterThan(0);
    expect(first.headers.get('x-ratelimit-bucket')).toMatch(/^[0-9a-f]+$/);
    await api(fake, path, { method: 'PATCH', body: { content: '2' } });
    const limited = await api(fake, path, { method: 'PATCH', body: { content: '3' } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-scope')).toBe('user');
    expect(Number(limited.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
    const body = await json(limited);
    expect(body).toMatchObject({ message: 'You are being rate limited.', global: false });
    expect(body.retry_after as number).toBeLessThanOrEqual(0.3);
    expect(ix.original!.content).toBe('2');

    await new Promise((r) => setTimeout(r, Number(limited.headers.get('x-ratelimit-reset-after')) * 1000 + 20));
    expect((await api(fake, path, { method: 'PATCH', body: { content: '3' } })).status).toBe(200);
  });

  it('lets discord.js REST wait out a 429 and retry: the write lands after the window reset', async () => {
    const fake = await startFake({ messageBudget: { limit: 1, windowMs: 400 } });
    await connectBot(fake);
    const ix = await deferred(fake);
    // Someone spends the budget behind discord.js's back.
    await api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'PATCH', body: { content: 'first' } });
    const rest = new REST({ api: fake.apiUrl });
    await rest.patch(Routes.webhookMessage(fake.applicationId, ix.token, '@original'), { auth: false, body: { content: 'second' } });
    expect(fake.rateLimits).toHaveLength(1);
    const limited = fake.rateLimits[0]!;
    const landed = fake.writes.find((w) => w.content === 'second')!;
    expect(landed.at).toBeGreaterThanOrEqual(limited.at + limited.retryAfterMs);
    expect(ix.original!.content).toBe('second');
  });
});

describe('FakeDiscord application commands', () => {
  const valid = {
    name: 'chat',
    description: 'Ask',
    type: 1,
    options: [
      { name: 'prompt', description: 'What', type: 3, required: true },
      { name: 'style', description: 'How', type: 3, choices: [{ name: 'vivid', value: 'vivid' }] },
    ],
  };

  async function put(fake: FakeDiscord, commands: unknown, auth = true) {
    return api(fake, `/applications/${fake.applicationId}/commands`, { method: 'PUT', body: commands, auth });
  }

  it('registers valid commands (bot token required) and answers them with ids; GET lists them; dispatched interactions use their ids and option types', async () => {
    const fake = await startFake();
    expect((await put(fake, [valid], false)).status).toBe(401);
    const res = await put(fake, [valid]);
    expect(res.status).toBe(200);
    const [registered] = (await res.json()) as Json[];
    expect(registered).toMatchObject({ name: 'chat', type: 1, application_id: fake.applicationId, options: valid.options });
    expect(registered!.id).toMatch(/^\d{17,20}$/);
    expect(await json(await api(fake, `/applications/${fake.applicationId}/commands`, { auth: true }))).toEqual([registered]);

    const gateway = await connectBot(fake);
    const ix = fake.dispatchInteraction({ command: 'chat', options: { prompt: 'hi' } });
    const frame = await gateway.frame((f) => f.t === 'INTERACTION_CREATE');
    expect((frame.d as Json).data).toMatchObject({ id: registered!.id, options: [{ name: 'prompt', type: 3, value: 'hi' }] });
    expect(ix.commandName).toBe('chat');
    expect(() => fake.dispatchInteraction({ command: 'chat', options: { nope: 'x', prompt: 'y' } })).toThrow(/no option nope/);
    expect(() => fake.dispatchInteraction({ command: 'chat', options: {} })).toThrow(/needs option prompt/);
  });

  it.each([
    ['an uppercase name', [{ ...valid, name: 'Chat' }], { 0: { name: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] } } }],
    ['a name with a space', [{ ...valid, name: 'my chat' }], { 0: { name: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] } } }],
    ['a 33-character name', [{ ...valid, name: 'c'.repeat(33) }], { 0: { name: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] } } }],
    ['an empty description', [{ ...valid, description: '' }], { 0: { description: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } }],
    ['a 101-character description', [{ ...valid, description: 'd'.repeat(101) }], { 0: { description: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } }],
    ['26 options', [{ ...valid, options: Array.from({ length: 26 }, (_, i) => ({ name: `o${i}`, description: 'd', type: 3 })) }], { 0: { options: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } }],
    ['a required option after an optional one', [{ ...valid, options: [...valid.options].reverse() }], { 0: { options: { _errors: [{ code: 'APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID' }] } } }],
    ['26 choices', [{ ...valid, options: [{ name: 'pick', description: 'd', type: 3, choices: Array.from({ length: 26 }, (_, i) => ({ name: `c${i}`, value: `c${i}` })) }] }], { 0: { options: { 0: { choices: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } } } }],
    ['a choice value of 101 characters', [{ ...valid, options: [{ name: 'pick', description: 'd', type: 3, choices: [{ name: 'long', value: 'v'.repeat(101) }] }] }], { 0: { options: { 0: { choices: { 0: { value: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } } } } } }],
    ['a choice name of 101 characters', [{ ...valid, options: [{ name: 'pick', description: 'd', type: 3, choices: [{ name: 'n'.repeat(101), value: 'v' }] }] }], { 0: { options: { 0: { choices: { 0: { name: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } } } } } }],
    ['a string choice on an integer option', [{ ...valid, options: [{ name: 'n', description: 'd', type: 4, choices: [{ name: 'one', value: 'one' }] }] }], { 0: { options: { 0: { choices: { 0: { value: { _errors: [{ code: 'NUMBER_TYPE_COERCE' }] } } } } } } }],
    ['two commands with one name', [valid, valid], { 1: { name: { _errors: [{ code: 'APPLICATION_COMMANDS_DUPLICATE_NAME' }] } } }],
    ['a non-numeric default_member_permissions', [{ ...valid, default_member_permissions: 'admins' }], { 0: { default_member_permissions: { _errors: [{ code: 'NUMBER_TYPE_COERCE' }] } } }],
  ])('refuses %s with 400 code 50035 naming the field, and keeps what was registered', async (_, commands, errors) => {
    const fake = await startFake();
    await put(fake, [valid]);
    const before = fake.commands;
    const res = await put(fake, commands);
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ message: 'Invalid Form Body', code: 50035, errors });
    expect(fake.commands).toBe(before);
  });

  it('registers guild commands in the fake guild only (10004 elsewhere), and refuses another application (50001)', async () => {
    const fake = await startFake();
    const inGuild = await api(fake, `/applications/${fake.applicationId}/guilds/${fake.guildId}/commands`, { method: 'PUT', body: [valid], auth: true });
    expect(inGuild.status).toBe(200);
    expect(fake.guildCommands(fake.guildId).map((c) => c.guild_id)).toEqual([fake.guildId]);
    const elsewhere = await api(fake, `/applications/${fake.applicationId}/guilds/1290000000000000555/commands`, { method: 'PUT', body: [valid], auth: true });
    expect((await json(elsewhere)).code).toBe(10004);
    const otherApp = await api(fake, `/applications/1290000000000000777/commands`, { method: 'PUT', body: [valid], auth: true });
    expect(otherApp.status).toBe(403);
    expect((await json(otherApp)).code).toBe(50001);
  });
});
