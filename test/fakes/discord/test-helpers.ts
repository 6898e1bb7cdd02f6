/**
 * Shared by the Discord fake's own tests: start fakes, a raw gateway client (ws), a real
 * discord.js Client, fetch against the REST API, and cleanup after each test
 * (`afterEach(cleanup)`). Raw clients check wire shapes; discord.js checks what a bot sees.
 */
import { Client, Events, type GatewayIntentBits, type Message, Partials } from 'discord.js';
import { expect } from 'vitest';
import { WebSocket } from 'ws';
import { FakeDiscord, type FakeDiscordOptions, type FakeInteraction, type Json } from '../discord.ts';

const started: FakeDiscord[] = [];
const sockets: WebSocket[] = [];
const clients: Client[] = [];

/** Destroys clients and sockets, then closes the fakes of the test. */
export async function cleanup(): Promise<void> {
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
  for (const ws of sockets.splice(0)) ws.terminate();
  await Promise.all(started.splice(0).map((f) => f.close()));
}

export async function startFake(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const fake = await FakeDiscord.start(options);
  started.push(fake);
  return fake;
}

/** A raw gateway client: frames received, a promise per close. */
export function openGateway(fake: FakeDiscord, query = '?v=10&encoding=json') {
  const ws = new WebSocket(`${fake.gatewayUrl}${query}`);
  sockets.push(ws);
  const frames: Json[] = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (data) => {
    frames.push(JSON.parse(String(data)) as Json);
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
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

export type RawGateway = ReturnType<typeof openGateway>;

export const identify = (token: string, intents = 1) => ({
  op: 2,
  d: { token, intents, properties: { os: 'linux', browser: 'test', device: 'test' }, shard: [0, 1] },
});

/** A raw gateway session that has identified with `intents` (default GUILDS only). */
export async function connectBot(fake: FakeDiscord, intents = 1): Promise<RawGateway> {
  const gateway = openGateway(fake);
  await gateway.send(identify(fake.token, intents));
  await gateway.frame((f) => f.t === (intents & 1 ? 'GUILD_CREATE' : 'READY'));
  return gateway;
}

/** Registers a client created by a test so that {@link cleanup} destroys it. */
export function track<C extends Client>(client: C): C {
  clients.push(client);
  return client;
}

/** Gateway intent bits for raw IDENTIFYs. */
export const GUILDS = 1 << 0;
export const GUILD_MESSAGES = 1 << 9;
export const DIRECT_MESSAGES = 1 << 12;
export const MESSAGE_CONTENT = 1 << 15;

/**
 * A real discord.js client logged in to the fake, ready (guild cached). `Partials.Channel` as
 * the bot uses it: without it discord.js drops DMs.
 */
export async function startClient(fake: FakeDiscord, intents: GatewayIntentBits[]): Promise<Client<true>> {
  const client = new Client({ intents, partials: [Partials.Channel], rest: { api: fake.apiUrl } });
  clients.push(client);
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(fake.token);
  await ready;
  return client as Client<true>;
}

/** The next `messageCreate` of the client that satisfies `predicate`. */
export function nextMessage(
  client: Client,
  predicate: (m: Message) => boolean = () => true,
  timeoutMs = 5_000,
): Promise<Message> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off(Events.MessageCreate, listener);
      reject(new Error(`no matching messageCreate within ${timeoutMs} ms`));
    }, timeoutMs);
    const listener = (m: Message) => {
      if (!predicate(m)) return;
      clearTimeout(timer);
      client.off(Events.MessageCreate, listener);
      resolve(m);
    };
    client.on(Events.MessageCreate, listener);
  });
}

/** fetch against the fake's REST API v10. */
export function api(
  fake: FakeDiscord,
  path: string,
  init: { method?: string; body?: unknown; auth?: boolean; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.auth) headers.authorization = `Bot ${fake.token}`;
  let body: RequestInit['body'];
  if (init.body instanceof FormData) body = init.body;
  else if (init.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.body);
  }
  return fetch(`${fake.apiUrl}/v10${path}`, {
    method: init.method ?? 'GET',
    headers,
    ...(body !== undefined ? { body } : {}),
  });
}

export async function json(response: Response): Promise<Json> {
  return (await response.json()) as Json;
}

/** A dispatched interaction that has been deferred (type 5). */
export async function deferred(fake: FakeDiscord, flags = 0): Promise<FakeInteraction> {
  const interaction = fake.dispatchInteraction({ command: 'chat', options: { prompt: 'hi' } });
  const res = await api(fake, `/interactions/${interaction.id}/${interaction.token}/callback`, {
    method: 'POST',
    body: { type: 5, data: { flags } },
  });
  expect(res.status).toBe(204);
  return interaction;
}

export const webhookPath = (fake: FakeDiscord, ix: FakeInteraction, rest = '') =>
  `/webhooks/${fake.applicationId}/${ix.token}${rest}`;
