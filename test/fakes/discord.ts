/**
 * A local fake of Discord (REST API v10 + gateway), for tests. discord.js runs unmodified
 * against it: give the client `rest: { api: fake.apiUrl }` and log in with `fake.token`.
 *
 * It is a real HTTP server (node:http on 127.0.0.1, random port) with a WebSocket gateway
 * (`ws`) at `/gateway`, and it enforces what Discord enforces, answering with Discord's
 * status codes and error shapes (`{ message, code, errors? }`):
 *
 * - bot routes need `Authorization: Bot <token>` (401, code 0); interaction callbacks and
 *   interaction webhooks are authenticated by the interaction token in the path instead;
 * - the first interaction response must come within `responseWindowMs` (3 s) of the dispatch
 *   (else 404, code 10062 Unknown interaction), only once (400, code 40060); the interaction
 *   token works on webhook routes for `tokenTtlMs` (15 min), then 401 code 50027;
 * - message bodies: `content` ≤ 2000 code points, ≤ 10 embeds within Discord's embed limits,
 *   ≤ 10 files of at most `maxFileBytes` each (413, code 40005), no empty messages (50006);
 *   form errors are 400 code 50035 "Invalid Form Body" with the nested `errors` tree;
 * - every create and edit of a message counts against a per-channel budget (default 5 per 5 s):
 *   over it, 429 with `retry-after` and `x-ratelimit-*` headers (the headers of accepted writes
 *   report the same budget), which discord.js waits out and retries;
 * - application command JSON (`PUT /applications/:app[/guilds/:guild]/commands`) is validated
 *   like Discord does (names, lengths, option counts and order, choices).
 *
 * It records what a test needs: every REST request (`requests`), every accepted create/edit
 * with its `allowed_mentions` and whom it would have pinged (`writes`), every message with
 * its revisions and attachment bytes, and every interaction with its callbacks, its original
 * response and its follow-ups. `events` announces requests, callbacks, writes and 429s.
 */
import { EventEmitter } from 'node:events';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import sharp from 'sharp';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';

// ---------------------------------------------------------------- public types

/** A JSON object as it travels on the wire. */
export type Json = Record<string, unknown>;

/** Options of {@link FakeDiscord.start}; every one has Discord's real value as its default. */
export interface FakeDiscordOptions {
  /** The bot token accepted (REST `Bot <token>` and gateway IDENTIFY). Default {@link DEFAULT_TOKEN}. */
  token?: string;
  /** The application id (= the bot user's id), a snowflake. Default {@link DEFAULT_APPLICATION_ID}. */
  applicationId?: string;
  /** The bot's username. Default `genbot`. */
  botUsername?: string;
  /** The guild the bot is in: id and the names of its text channels (default `general`). */
  guild?: { id?: string; name?: string; channels?: string[] };
  /** HELLO's `heartbeat_interval`, in ms. Default 41,250 (Discord's). */
  heartbeatIntervalMs?: number;
  /** Time from dispatch to the first interaction response, in ms. Default 3,000. */
  responseWindowMs?: number;
  /** Lifetime of an interaction token on webhook routes, in ms. Default 15 minutes. */
  tokenTtlMs?: number;
  /** Creates + edits allowed per channel per window. Default 5 per 5,000 ms. */
  messageBudget?: MessageBudget;
  /** Largest file accepted, in bytes (also the interaction's `attachment_size_limit`). Default 10 MiB. */
  maxFileBytes?: number;
  /** Privileged intents the application may use (bitfield: 1<<1 members, 1<<8 presences, 1<<15 message content). Default 0. */
  privilegedIntents?: number;
  /** `session_start_limit.remaining` of `/gateway/bot`; each IDENTIFY uses one. Default 1000. */
  sessionStartRemaining?: number;
}

/** A per-channel rate limit on message creates and edits. */
export interface MessageBudget {
  /** Writes per window. */
  limit: number;
  /** Window length in ms; the window starts with its first write. */
  windowMs: number;
}

/** A guild text channel. */
export interface FakeChannel {
  id: string;
  guildId: string;
  name: string;
}

/** A user as the fake knows it (wire shape of a Discord user). */
export interface FakeUser {
  id: string;
  username: string;
  global_name: string | null;
  discriminator: string;
  avatar: string | null;
  bot?: boolean;
}

/** Whom a message revision pings, as Discord resolves `allowed_mentions` against the content. */
export interface Pings {
  everyone: boolean;
  users: string[];
  roles: string[];
}

/** One stored file of a message. */
export interface FakeAttachment {
  id: string;
  filename: string;
  /** Bytes. */
  size: number;
  contentType: string | undefined;
  /** Pixel size for images (read with sharp). */
  width: number | undefined;
  height: number | undefined;
  description: string | undefined;
  /** The exact bytes uploaded. */
  data: Buffer;
  /** Where the fake serves the bytes (`http://127.0.0.1:PORT/attachments/...`). */
  url: string;
}

/** One state of a message: after its creation, or after an edit. */
export interface MessageRevision {
  /** Order among everything the fake recorded. */
  seq: number;
  /** `Date.now()` when accepted. */
  at: number;
  /** `defer`: the loading message of a type-5 callback; `create`; `edit`. */
  via: 'defer' | 'create' | 'edit';
  content: string;
  embeds: Json[];
  attachmentIds: string[];
  flags: number;
  /** `allowed_mentions` of the request exactly as sent; `undefined` when absent. */
  allowedMentions: unknown;
  pinged: Pings;
}

/** Message flags the fake knows. */
export const MessageFlag = { SuppressEmbeds: 4, Ephemeral: 64, Loading: 128, SuppressNotifications: 4096, IsComponentsV2: 32768 } as const;

/** A message with its whole history. */
export class FakeMessage {
  content = '';
  embeds: Json[] = [];
  attachments: FakeAttachment[] = [];
  flags = 0;
  deleted = false;
  editedAt: number | undefined;
  readonly revisions: MessageRevision[] = [];

  constructor(
    readonly id: string,
    readonly channelId: string,
    readonly guildId: string | undefined,
    /** `original`: an interaction's response; `followup`; `channel`: posted with the bot token. */
    readonly kind: 'original' | 'followup' | 'channel',
    /** `Date.now()` at creation. */
    readonly createdAt: number,
    readonly interaction: FakeInteraction | undefined,
  ) {}

  get ephemeral(): boolean {
    return (this.flags & MessageFlag.Ephemeral) !== 0;
  }

  /** True while a deferred response still shows "is thinking…". */
  get loading(): boolean {
    return (this.flags & MessageFlag.Loading) !== 0;
  }

  /** Whom the current revision pings. */
  get pinged(): Pings {
    return this.revisions.at(-1)?.pinged ?? { everyone: false, users: [], roles: [] };
  }
}

/** One interaction callback attempt (also refused ones). */
export interface CallbackRecord {
  seq: number;
  at: number;
  /** The response type sent (4 reply, 5 deferred, …); `undefined` if the body had none. */
  type: number | undefined;
  flags: number;
  /** HTTP status the fake answered. */
  status: number;
  /** Discord error code when refused. */
  code: number | undefined;
}

/** An application command interaction dispatched by the fake, with everything the bot did with it. */
export class FakeInteraction {
  /** Every callback attempt, oldest first. */
  readonly callbacks: CallbackRecord[] = [];
  /** The accepted initial response. */
  response: CallbackRecord | undefined;
  /** The message of the initial response (a loading message after a deferral). */
  original: FakeMessage | undefined;
  readonly followUps: FakeMessage[] = [];

  constructor(
    readonly id: string,
    readonly token: string,
    readonly commandName: string,
    readonly guildId: string,
    readonly channelId: string,
    readonly user: FakeUser,
    /** The INTERACTION_CREATE payload as dispatched. */
    readonly payload: Json,
    /** `Date.now()` when dispatched. */
    readonly dispatchedAt: number,
    /** `Date.now()` after which the token is refused. */
    readonly tokenExpiresAt: number,
  ) {}

  /** The original and the follow-ups, in the order they were created. */
  get messages(): FakeMessage[] {
    return [...(this.original ? [this.original] : []), ...this.followUps];
  }
}

/** An accepted create or edit of a message (the deferral's loading message is not one). */
export interface FakeWrite {
  seq: number;
  at: number;
  kind: 'create' | 'edit';
  /** `callback` (type 4), `webhook` (interaction token), `channel` (bot token). */
  via: 'callback' | 'webhook' | 'channel';
  channelId: string;
  messageId: string;
  interactionId: string | undefined;
  allowedMentions: unknown;
  content: string;
  pinged: Pings;
}

/** One REST request and the status it got. */
export interface FakeRequestRecord {
  seq: number;
  at: number;
  method: string;
  /** Path with `%40original` decoded, without the query. */
  path: string;
  query: string;
  headers: IncomingMessage['headers'];
  /** JSON body (`payload_json` for multipart). */
  body: unknown;
  /** Names and sizes of uploaded files. */
  files: Array<{ field: string; filename: string; size: number }>;
  status: number;
  /** Discord error code of a refusal. */
  code: number | undefined;
}

/** A 429 the fake served. */
export interface RateLimitRecord {
  at: number;
  channelId: string;
  method: string;
  path: string;
  /** What `retry-after` said, in ms (before rounding up to whole seconds). */
  retryAfterMs: number;
}

/** A scripted failure of matching REST requests (see {@link FakeDiscord.failNext}). */
export interface Fault {
  /** HTTP method to match; any when absent. */
  method?: string;
  /** Matched against the decoded path, e.g. `/messages\/@original$/`. */
  path: RegExp;
  status: number;
  /** Answer body; default `{ message: '<status>: …', code: 0 }`. */
  body?: Json;
  /** How many matching requests fail. Default 1. */
  times?: number;
}

/** A registered application command, as Discord answers it. */
export type FakeCommand = Json & { id: string; name: string; type: number };

/** Events of {@link FakeDiscord.events}, emitted after the fake has decided its answer. */
export interface FakeDiscordEvents {
  request: [FakeRequestRecord];
  callback: [FakeInteraction, CallbackRecord];
  write: [FakeWrite];
  rateLimited: [RateLimitRecord];
  identify: [{ sessionId: string; intents: number }];
}

/** Options of {@link FakeDiscord.dispatchInteraction}. */
export interface DispatchInteractionOptions {
  /** The slash command's name, e.g. `chat`. */
  command: string;
  /**
   * Option values by name. Types come from the registered command when there is one
   * (unknown or missing required options then throw, as Discord's client would not send
   * them); otherwise string → 3, boolean → 5, integer → 4, other number → 10.
   */
  options?: Record<string, string | number | boolean>;
  /** Default: the guild's first channel. */
  channelId?: string;
  /** The invoking user; default a fixed non-bot user. */
  user?: { id?: string; username?: string; globalName?: string };
  /** Member with the Administrator permission. Default false. */
  admin?: boolean;
  /** The member's permission bitfield (decimal string); wins over `admin`. */
  permissions?: string;
  locale?: string;
}

// ---------------------------------------------------------------- constants

/** Default application id, also the bot user's id (19 digits, as discord.js's route parser expects). */
export const DEFAULT_APPLICATION_ID = '1290000000000000001';
/** Default id of the one guild the bot is in. */
export const DEFAULT_GUILD_ID = '1290000000000000100';
/** Shaped like a real bot token: base64(app id) . timestamp part . HMAC part. */
export const DEFAULT_TOKEN = `${Buffer.from(DEFAULT_APPLICATION_ID).toString('base64url')}.GfAkE1.fake-discord-bot-token-DO-NOT-LEAK-0123456789`;
/** The user who invokes interactions unless a test names another. */
export const DEFAULT_USER: FakeUser = { id: '1290000000000000900', username: 'ada', global_name: 'Ada', discriminator: '0', avatar: null };

const API_VERSION = '10';
const DISCORD_EPOCH = 1_420_070_400_000n;
const MAX_CONTENT = 2000;
const MAX_EMBEDS = 10;
const MAX_FILES = 10;
const MAX_REQUEST_BYTES = 120 * 1024 * 1024;

/** Permission bits used here. */
const P = {
  CreateInstantInvite: 1n << 0n,
  Administrator: 1n << 3n,
  ManageGuild: 1n << 5n,
  AddReactions: 1n << 6n,
  ViewChannel: 1n << 10n,
  SendMessages: 1n << 11n,
  EmbedLinks: 1n << 14n,
  AttachFiles: 1n << 15n,
  ReadMessageHistory: 1n << 16n,
  MentionEveryone: 1n << 17n,
  UseExternalEmojis: 1n << 18n,
  Connect: 1n << 20n,
  Speak: 1n << 21n,
  ChangeNickname: 1n << 26n,
  UseApplicationCommands: 1n << 31n,
  SendMessagesInThreads: 1n << 38n,
} as const;
const ALL_PERMISSIONS = (1n << 51n) - 1n;
const MEMBER_PERMISSIONS =
  P.CreateInstantInvite | P.AddReactions | P.ViewChannel | P.SendMessages | P.EmbedLinks | P.AttachFiles | P.ReadMessageHistory |
  P.UseExternalEmojis | P.Connect | P.Speak | P.ChangeNickname | P.UseApplicationCommands | P.SendMessagesInThreads;
const BOT_PERMISSIONS = MEMBER_PERMISSIONS | P.MentionEveryone;

// ---------------------------------------------------------------- errors

/** A refusal: status, Discord error body, extra headers. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Json,
    readonly headers: Record<string, string> = {},
  ) {
    super(String(body.message));
  }
}

const discordError = (status: number, code: number, message: string) => new HttpError(status, { message, code });
const unauthorized = () => discordError(401, 0, '401: Unauthorized');
const notFound = () => discordError(404, 0, '404: Not Found');
const unknownInteraction = () => discordError(404, 10062, 'Unknown interaction');
const unknownMessage = () => discordError(404, 10008, 'Unknown Message');
const unknownWebhook = () => discordError(404, 10015, 'Unknown Webhook');
const invalidWebhookToken = () => discordError(401, 50027, 'Invalid Webhook Token');

/** The nested `errors` tree of an Invalid Form Body answer. */
type ErrorTree = { [key: string]: unknown };

/** Adds `{ code, message }` under `path` (e.g. `['embeds', 0, 'description']`). */
function addError(tree: ErrorTree, path: Array<string | number>, code: string, message: string): void {
  let node = tree;
  for (const key of path) {
    const k = String(key);
    node[k] ??= {};
    node = node[k] as ErrorTree;
  }
  const list = (node._errors ??= []) as Array<{ code: string; message: string }>;
  list.push({ code, message });
}

function formError(errors: ErrorTree): HttpError {
  return new HttpError(400, { message: 'Invalid Form Body', code: 50035, errors });
}

const hasErrors = (tree: ErrorTree) => Object.keys(tree).length > 0;

// ---------------------------------------------------------------- helpers

let snowflakeIncrement = 0n;
/** A snowflake for `at` (ms since 1970), unique within the process. */
export function snowflake(at = Date.now()): string {
  snowflakeIncrement = (snowflakeIncrement + 1n) & 0xfffn;
  return (((BigInt(at) - DISCORD_EPOCH) << 22n) | (1n << 17n) | snowflakeIncrement).toString();
}

/** Length as Discord counts it: Unicode code points. */
const codePoints = (s: string) => [...s].length;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');

/** A file uploaded in a multipart body. */
interface IncomingFile {
  field: string;
  /** `N` of `files[N]` (the attachment id it binds to). */
  index: string;
  filename: string;
  contentType: string | undefined;
  data: Buffer;
}

/** A parsed request body. */
interface Body {
  json: unknown;
  files: IncomingFile[];
}

const EXTENSION_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  txt: 'text/plain; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/** What Discord would say the file is: the uploaded type, else from the extension. */
function contentTypeOf(file: IncomingFile): string | undefined {
  if (file.contentType && file.contentType !== 'application/octet-stream') return file.contentType;
  const ext = file.filename.split('.').pop()?.toLowerCase() ?? '';
  return EXTENSION_TYPES[ext] ?? file.contentType;
}

/** Whom `content` pings given `allowed_mentions` (absent = Discord's default: parse everything). */
function resolvePings(content: string, allowed: unknown): Pings {
  const a = isObject(allowed) ? allowed : undefined;
  const parse = a ? (Array.isArray(a.parse) ? (a.parse as unknown[]) : []) : ['everyone', 'users', 'roles'];
  const listed = (key: string) => (a && Array.isArray(a[key]) ? (a[key] as unknown[]).map(String) : []);
  const users = [...content.matchAll(/<@!?(\d{15,21})>/g)].map((m) => m[1]!).filter((id) => parse.includes('users') || listed('users').includes(id));
  const roles = [...content.matchAll(/<@&(\d{15,21})>/g)].map((m) => m[1]!).filter((id) => parse.includes('roles') || listed('roles').includes(id));
  return { everyone: parse.includes('everyone') && /@(everyone|here)\b/.test(content), users: [...new Set(users)], roles: [...new Set(roles)] };
}

// ---------------------------------------------------------------- validation of message bodies

/** Checks `allowed_mentions` (shape and the parse/list exclusivity). */
function checkAllowedMentions(value: unknown, errors: ErrorTree): void {
  if (value === undefined || value === null) return;
  if (!isObject(value)) {
    addError(errors, ['allowed_mentions'], 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
    return;
  }
  const parse = value.parse;
  if (parse !== undefined) {
    if (!Array.isArray(parse)) addError(errors, ['allowed_mentions', 'parse'], 'BASE_TYPE_LIST', 'Must be a list.');
    else {
      parse.forEach((p, i) => {
        if (!['everyone', 'users', 'roles'].includes(p as string)) {
          addError(errors, ['allowed_mentions', 'parse', i], 'BASE_TYPE_CHOICES', "Value must be one of {'everyone', 'roles', 'users'}.");
        }
      });
    }
  }
  for (const key of ['users', 'roles'] as const) {
    const list = value[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.length > 100) {
      addError(errors, ['allowed_mentions', key], 'BASE_TYPE_MAX_LENGTH', 'Must be 100 or fewer in length.');
      continue;
    }
    if (Array.isArray(parse) && parse.includes(key) && list.length > 0) {
      addError(errors, ['allowed_mentions'], 'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE', `parse:["${key}"] and ${key}: [ids...] are mutually exclusive.`);
    }
  }
}

const EMBED_LIMITS: Array<[string[], number]> = [
  [['title'], 256],
  [['description'], 4096],
  [['footer', 'text'], 2048],
  [['author', 'name'], 256],
];

/** Checks `embeds` against Discord's embed limits; returns the normalised embeds. */
function checkEmbeds(value: unknown, errors: ErrorTree): Json[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    addError(errors, ['embeds'], 'BASE_TYPE_LIST', 'Must be a list.');
    return [];
  }
  if (value.length > MAX_EMBEDS) addError(errors, ['embeds'], 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_EMBEDS} or fewer in length.`);
  let total = 0;
  const out: Json[] = [];
  value.forEach((embed, i) => {
    if (!isObject(embed)) {
      addError(errors, ['embeds', i], 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
      return;
    }
    for (const [path, max] of EMBED_LIMITS) {
      let v: unknown = embed;
      for (const k of path) v = isObject(v) ? v[k] : undefined;
      if (v === undefined || v === null) continue;
      if (typeof v !== 'string') {
        addError(errors, ['embeds', i, ...path], 'BASE_TYPE_STRING', 'Must be a string.');
        continue;
      }
      total += codePoints(v);
      if (codePoints(v) > max) addError(errors, ['embeds', i, ...path], 'BASE_TYPE_MAX_LENGTH', `Must be ${max} or fewer in length.`);
    }
    const fields = embed.fields;
    if (fields !== undefined) {
      if (!Array.isArray(fields)) addError(errors, ['embeds', i, 'fields'], 'BASE_TYPE_LIST', 'Must be a list.');
      else {
        if (fields.length > 25) addError(errors, ['embeds', i, 'fields'], 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
        fields.forEach((f, j) => {
          const name = isObject(f) ? f.name : undefined;
          const v = isObject(f) ? f.value : undefined;
          if (typeof name !== 'string' || name.length === 0) addError(errors, ['embeds', i, 'fields', j, 'name'], 'BASE_TYPE_REQUIRED', 'This field is required');
          else if (codePoints(name) > 256) addError(errors, ['embeds', i, 'fields', j, 'name'], 'BASE_TYPE_MAX_LENGTH', 'Must be 256 or fewer in length.');
          if (typeof v !== 'string' || v.length === 0) addError(errors, ['embeds', i, 'fields', j, 'value'], 'BASE_TYPE_REQUIRED', 'This field is required');
          else if (codePoints(v) > 1024) addError(errors, ['embeds', i, 'fields', j, 'value'], 'BASE_TYPE_MAX_LENGTH', 'Must be 1024 or fewer in length.');
          total += (typeof name === 'string' ? codePoints(name) : 0) + (typeof v === 'string' ? codePoints(v) : 0);
        });
      }
    }
    const normalised: Json = { type: 'rich', ...embed };
    for (const key of ['image', 'thumbnail'] as const) {
      const media = embed[key];
      if (media === undefined) continue;
      const url = isObject(media) ? media.url : undefined;
      if (typeof url !== 'string' || !/^(https?|attachment):\/\/\S+$/.test(url)) {
        addError(errors, ['embeds', i, key, 'url'], 'URL_TYPE_INVALID_URL', 'Not a well formed URL.');
        continue;
      }
      normalised[key] = { url, proxy_url: url };
    }
    if (embed.url !== undefined && (typeof embed.url !== 'string' || !/^https?:\/\/\S+$/.test(embed.url))) {
      addError(errors, ['embeds', i, 'url'], 'URL_TYPE_INVALID_URL', 'Not a well formed URL.');
    }
    out.push(normalised);
  });
  if (total > 6000) addError(errors, ['embeds'], 'MAX_EMBED_SIZE_EXCEEDED', 'Embed size exceeds maximum size of 6000');
  return out;
}

// ---------------------------------------------------------------- validation of application commands

const COMMAND_NAME = /^[-_\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;
const OPTION_TYPES_WITH_CHOICES = new Set([3, 4, 10]);

/** Checks a name as Discord does for chat-input commands and options (regex, lowercase). */
function checkName(name: unknown, path: Array<string | number>, errors: ErrorTree, lowercase: boolean): void {
  if (typeof name !== 'string' || !COMMAND_NAME.test(name) || (lowercase && name !== name.toLowerCase())) {
    addError(errors, [...path, 'name'], 'APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid');
  }
}

function checkDescription(description: unknown, path: Array<string | number>, errors: ErrorTree): void {
  if (typeof description !== 'string' || codePoints(description) < 1 || codePoints(description) > 100) {
    addError(errors, [...path, 'description'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
  }
}

/** Characters that count toward the 8,000-character command size. */
function commandSize(command: Json): number {
  let size = 0;
  const text = (v: unknown) => (typeof v === 'string' ? codePoints(v) : 0);
  size += text(command.name) + text(command.description);
  const walk = (options: unknown) => {
    if (!Array.isArray(options)) return;
    for (const o of options) {
      if (!isObject(o)) continue;
      size += text(o.name) + text(o.description);
      if (Array.isArray(o.choices)) for (const c of o.choices) if (isObject(c)) size += text(c.name) + (typeof c.value === 'string' ? text(c.value) : String(c.value).length);
      walk(o.options);
    }
  };
  walk(command.options);
  return size;
}

function checkOptions(options: unknown, path: Array<string | number>, errors: ErrorTree, depth: number): void {
  if (options === undefined || options === null) return;
  if (!Array.isArray(options)) {
    addError(errors, [...path, 'options'], 'BASE_TYPE_LIST', 'Must be a list.');
    return;
  }
  if (options.length > 25) addError(errors, [...path, 'options'], 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
  const names = new Set<string>();
  let sawOptional = false;
  options.forEach((option, i) => {
    const at = [...path, 'options', i];
    if (!isObject(option)) {
      addError(errors, at, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
      return;
    }
    const type = option.type;
    if (typeof type !== 'number' || !Number.isInteger(type) || type < 1 || type > 11) {
      addError(errors, [...at, 'type'], 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}.');
      return;
    }
    checkName(option.name, at, errors, true);
    checkDescription(option.description, at, errors);
    if (typeof option.name === 'string') {
      if (names.has(option.name)) addError(errors, [...at, 'name'], 'APPLICATION_COMMAND_OPTIONS_DUPLICATE_NAME', 'Option names must be unique');
      names.add(option.name);
    }
    const isSub = type === 1 || type === 2;
    if (isSub) {
      if (depth >= 2 || (type === 2 && depth >= 1)) addError(errors, [...at, 'type'], 'APPLICATION_COMMAND_OPTION_TYPE_INVALID', 'Subcommands cannot be nested this deep');
      if (option.required !== undefined && option.required !== false) addError(errors, [...at, 'required'], 'APPLICATION_COMMAND_OPTION_REQUIRED_INVALID', 'Subcommands cannot be required');
      if (type === 2 && Array.isArray(option.options) && option.options.some((o) => !isObject(o) || o.type !== 1)) {
        addError(errors, [...at, 'options'], 'APPLICATION_COMMAND_OPTION_TYPE_INVALID', 'Subcommand groups may only contain subcommands');
      }
      checkOptions(option.options, at, errors, depth + 1);
      return;
    }
    if (option.required !== undefined && typeof option.required !== 'boolean') addError(errors, [...at, 'required'], 'BASE_TYPE_BOOLEAN', 'Must be either true or false.');
    if (option.required === true && sawOptional) {
      addError(errors, [...path, 'options'], 'APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID', 'Required options must be placed before non-required options');
    }
    if (option.required !== true) sawOptional = true;
    if (option.options !== undefined) addError(errors, [...at, 'options'], 'APPLICATION_COMMAND_OPTION_TYPE_INVALID', 'Only subcommands may have options');
    const choices = option.choices;
    if (choices !== undefined) {
      if (!OPTION_TYPES_WITH_CHOICES.has(type)) addError(errors, [...at, 'choices'], 'APPLICATION_COMMAND_OPTION_CHOICES_INVALID', 'Choices are only allowed on string, integer and number options');
      else if (!Array.isArray(choices)) addError(errors, [...at, 'choices'], 'BASE_TYPE_LIST', 'Must be a list.');
      else {
        if (choices.length > 25) addError(errors, [...at, 'choices'], 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
        if (option.autocomplete === true && choices.length > 0) addError(errors, [...at, 'autocomplete'], 'APPLICATION_COMMAND_AUTOCOMPLETE_INVALID', 'Autocomplete cannot be used with choices');
        choices.forEach((choice, j) => {
          const c = isObject(choice) ? choice : {};
          if (typeof c.name !== 'string' || codePoints(c.name) < 1 || codePoints(c.name) > 100) {
            addError(errors, [...at, 'choices', j, 'name'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
          }
          const v = c.value;
          if (type === 3) {
            if (typeof v !== 'string') addError(errors, [...at, 'choices', j, 'value'], 'BASE_TYPE_STRING', 'Must be a string.');
            else if (codePoints(v) < 1 || codePoints(v) > 100) addError(errors, [...at, 'choices', j, 'value'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
          } else if (type === 4) {
            if (typeof v !== 'number' || !Number.isSafeInteger(v)) addError(errors, [...at, 'choices', j, 'value'], 'NUMBER_TYPE_COERCE', `Value "${String(v)}" is not int.`);
          } else if (typeof v !== 'number' || !Number.isFinite(v)) {
            addError(errors, [...at, 'choices', j, 'value'], 'NUMBER_TYPE_COERCE', `Value "${String(v)}" is not a number.`);
          }
        });
      }
    }
    for (const key of ['min_value', 'max_value'] as const) {
      if (option[key] === undefined) continue;
      if (type !== 4 && type !== 10) addError(errors, [...at, key], 'APPLICATION_COMMAND_OPTION_TYPE_INVALID', `${key} is only allowed on integer and number options`);
      else if (typeof option[key] !== 'number') addError(errors, [...at, key], 'NUMBER_TYPE_COERCE', 'Must be a number.');
    }
    if (typeof option.min_value === 'number' && typeof option.max_value === 'number' && option.min_value > option.max_value) {
      addError(errors, [...at, 'min_value'], 'NUMBER_TYPE_MAX', 'min_value must be less than or equal to max_value');
    }
    for (const [key, min] of [['min_length', 0], ['max_length', 1]] as const) {
      const v = option[key];
      if (v === undefined) continue;
      if (type !== 3) addError(errors, [...at, key], 'APPLICATION_COMMAND_OPTION_TYPE_INVALID', `${key} is only allowed on string options`);
      else if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 6000) addError(errors, [...at, key], 'NUMBER_TYPE_MAX', `Must be between ${min} and 6000.`);
    }
  });
}

/** Validates one command of a bulk overwrite; errors go under its index. */
function checkCommand(command: unknown, index: number, errors: ErrorTree): void {
  if (!isObject(command)) {
    addError(errors, [index], 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
    return;
  }
  const type = command.type ?? 1;
  if (type !== 1 && type !== 2 && type !== 3 && type !== 4) {
    addError(errors, [index, 'type'], 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2, 3, 4}.');
    return;
  }
  checkName(command.name, [index], errors, type === 1);
  if (type === 1) checkDescription(command.description, [index], errors);
  else if (command.description !== undefined && command.description !== '') {
    addError(errors, [index, 'description'], 'APPLICATION_COMMAND_CONTEXT_MENU_DESCRIPTION_INVALID', 'Context menu commands cannot have description');
  }
  if (type !== 1 && command.options !== undefined) addError(errors, [index, 'options'], 'APPLICATION_COMMAND_OPTION_TYPE_INVALID', 'Only chat input commands may have options');
  checkOptions(command.options, [index], errors, 0);
  const dmp = command.default_member_permissions;
  if (dmp !== undefined && dmp !== null && !(typeof dmp === 'string' && /^\d+$/.test(dmp))) {
    addError(errors, [index, 'default_member_permissions'], 'NUMBER_TYPE_COERCE', `Value "${String(dmp)}" is not snowflake.`);
  }
  for (const [key, allowed] of [['contexts', [0, 1, 2]], ['integration_types', [0, 1]]] as const) {
    const v = command[key];
    if (v === undefined || v === null) continue;
    if (!Array.isArray(v)) addError(errors, [index, key], 'BASE_TYPE_LIST', 'Must be a list.');
    else v.forEach((x, i) => (allowed as readonly number[]).includes(x as number) || addError(errors, [index, key, i], 'BASE_TYPE_CHOICES', `Value must be one of {${allowed.join(', ')}}.`));
  }
  if (commandSize(command) > 8000) addError(errors, [index], 'APPLICATION_COMMAND_TOO_LARGE', 'Command exceeds maximum size (8000)');
}

// ---------------------------------------------------------------- gateway session

interface GatewaySession {
  ws: WebSocket;
  identified: boolean;
  sessionId: string | undefined;
  seq: number;
  intents: number;
}

// ---------------------------------------------------------------- the fake

/** A REST answer. */
interface Reply {
  status: number;
  body?: unknown;
  raw?: { data: Buffer; contentType: string };
  headers?: Record<string, string>;
}

/** The guild the fake serves. */
interface GuildState {
  id: string;
  name: string;
  ownerId: string;
  adminRoleId: string;
  botRoleId: string;
  joinedAt: number;
}

/**
 * The fake itself: `await FakeDiscord.start(options)`, point discord.js at `apiUrl` with
 * `token`, wait for `waitForReady()`, then `dispatchInteraction(...)` and read what the bot did
 * from the returned {@link FakeInteraction}, `writes`, `requests` and `rateLimits`. `close()`
 * when done. REST answers follow Discord's status codes and error bodies (see the file header).
 */
export class FakeDiscord {
  readonly token: string;
  readonly applicationId: string;
  /** `http://127.0.0.1:PORT/api` (discord.js `rest.api`). */
  readonly apiUrl: string;
  /** `ws://127.0.0.1:PORT/gateway`. */
  readonly gatewayUrl: string;
  readonly guildId: string;
  readonly botUser: FakeUser;
  readonly events = new EventEmitter<FakeDiscordEvents>();
  /** Every REST request, oldest first. */
  readonly requests: FakeRequestRecord[] = [];
  /** Every accepted message create and edit, oldest first. */
  readonly writes: FakeWrite[] = [];
  /** Every 429 served. */
  readonly rateLimits: RateLimitRecord[] = [];
  /** Interactions by id. */
  readonly interactions = new Map<string, FakeInteraction>();
  /** Global commands as registered (last bulk overwrite). */
  commands: FakeCommand[] = [];

  private readonly origin: string;
  private readonly guild: GuildState;
  private readonly channels = new Map<string, FakeChannel>();
  private readonly users = new Map<string, FakeUser>();
  private readonly messages = new Map<string, FakeMessage>();
  private readonly byToken = new Map<string, FakeInteraction>();
  private readonly guildCommandLists = new Map<string, FakeCommand[]>();
  private readonly commandIds = new Map<string, string>();
  private readonly sessions = new Set<GatewaySession>();
  private readonly pastSessions = new Map<string, number>();
  private readonly windows = new Map<string, { resetAt: number; used: number }>();
  private readonly budgets = new Map<string, MessageBudget>();
  private readonly sockets = new Set<Socket>();
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly faults: Array<Fault & { left: number }> = [];
  private readonly options: Required<Omit<FakeDiscordOptions, 'token' | 'applicationId' | 'botUsername' | 'guild'>>;
  private seqCounter = 0;
  private closed = false;

  private constructor(
    private readonly server: Server,
    port: number,
    options: FakeDiscordOptions,
  ) {
    this.origin = `http://127.0.0.1:${port}`;
    this.apiUrl = `${this.origin}/api`;
    this.gatewayUrl = `ws://127.0.0.1:${port}/gateway`;
    this.token = options.token ?? DEFAULT_TOKEN;
    this.applicationId = options.applicationId ?? DEFAULT_APPLICATION_ID;
    this.options = {
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 41_250,
      responseWindowMs: options.responseWindowMs ?? 3_000,
      tokenTtlMs: options.tokenTtlMs ?? 15 * 60_000,
      messageBudget: options.messageBudget ?? { limit: 5, windowMs: 5_000 },
      maxFileBytes: options.maxFileBytes ?? 10 * 1024 * 1024,
      privilegedIntents: options.privilegedIntents ?? 0,
      sessionStartRemaining: options.sessionStartRemaining ?? 1000,
    };
    this.botUser = { id: this.applicationId, username: options.botUsername ?? 'genbot', global_name: null, discriminator: '4242', avatar: null, bot: true };
    this.users.set(this.botUser.id, this.botUser);
    this.users.set(DEFAULT_USER.id, DEFAULT_USER);
    this.guildId = options.guild?.id ?? DEFAULT_GUILD_ID;
    this.guild = {
      id: this.guildId,
      name: options.guild?.name ?? 'Fake Guild',
      ownerId: DEFAULT_USER.id,
      adminRoleId: snowflake(),
      botRoleId: snowflake(),
      joinedAt: Date.now(),
    };
    for (const name of options.guild?.channels ?? ['general']) {
      const id = snowflake();
      this.channels.set(id, { id, guildId: this.guildId, name });
    }
  }

  /**
   * Starts a fake on 127.0.0.1 with a random port.
   * @throws when the port cannot be bound.
   */
  static async start(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
    const server = createServer({ keepAliveTimeout: 5_000 });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const fake = new FakeDiscord(server, port, options);
    server.on('connection', (socket) => {
      fake.sockets.add(socket);
      socket.once('close', () => fake.sockets.delete(socket));
    });
    server.on('request', (req, res) => void fake.handle(req, res));
    server.on('upgrade', (req, socket, head) => fake.upgrade(req, socket, head));
    return fake;
  }

  // ------------------------------------------------------------ scripting and inspection

  /** The guild's text channels, oldest first. */
  get channelList(): FakeChannel[] {
    return [...this.channels.values()];
  }

  /** Number of gateway sessions that have identified (READY sent). */
  get readySessions(): number {
    return [...this.sessions].filter((s) => s.identified).length;
  }

  /**
   * Adds a text channel to the guild and announces it (CHANNEL_CREATE) to connected bots.
   * @returns the channel (id is a fresh snowflake).
   */
  addChannel(name: string): FakeChannel {
    const channel: FakeChannel = { id: snowflake(), guildId: this.guildId, name };
    this.channels.set(channel.id, channel);
    this.dispatch('CHANNEL_CREATE', { ...this.channelJson(channel), guild_id: this.guildId });
    return channel;
  }

  /** Sets the message budget of one channel (or the default for all, when `channelId` is undefined). */
  setMessageBudget(channelId: string | undefined, budget: MessageBudget): void {
    if (channelId === undefined) this.options.messageBudget = budget;
    else this.budgets.set(channelId, budget);
    if (channelId !== undefined) this.windows.delete(channelId);
    else this.windows.clear();
  }

  /**
   * Makes the next `times` requests that match fail with `status` before any other check
   * (nothing is applied): a Discord outage. Faults are used in the order they were added.
   */
  failNext(fault: Fault): void {
    this.faults.push({ ...fault, left: fault.times ?? 1 });
  }

  /** Every message of a channel (also ephemeral and deleted ones), in creation order. */
  messagesIn(channelId: string): FakeMessage[] {
    return [...this.messages.values()].filter((m) => m.channelId === channelId);
  }

  /** Every message the fake holds, in creation order. */
  allMessages(): FakeMessage[] {
    return [...this.messages.values()];
  }

  /** Commands registered in a guild (last bulk overwrite). */
  guildCommands(guildId: string): FakeCommand[] {
    return this.guildCommandLists.get(guildId) ?? [];
  }

  /**
   * Resolves with the first `event` whose arguments satisfy `predicate`.
   * @throws Error after `timeoutMs` (default 10 s).
   */
  waitFor<K extends keyof FakeDiscordEvents>(event: K, predicate: (...args: FakeDiscordEvents[K]) => boolean = () => true, timeoutMs = 10_000): Promise<FakeDiscordEvents[K]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.events.off(event, listener as never);
        reject(new Error(`FakeDiscord: no ${String(event)} event within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (...args: FakeDiscordEvents[K]) => {
        if (!predicate(...args)) return;
        clearTimeout(timer);
        this.events.off(event, listener as never);
        resolve(args);
      };
      this.events.on(event, listener as never);
    });
  }

  /** Resolves once a bot has identified on the gateway. @throws after `timeoutMs`. */
  async waitForReady(timeoutMs = 10_000): Promise<void> {
    if (this.readySessions > 0) return;
    await this.waitFor('identify', () => true, timeoutMs);
  }

  /**
   * Dispatches INTERACTION_CREATE (an application command, type 2, chat input) to every
   * identified gateway session, with the payload Discord sends.
   * @returns the interaction record; its callbacks and messages fill in as the bot answers.
   * @throws Error when no bot is connected, the channel is unknown, or the options do not fit
   *   the registered command.
   */
  dispatchInteraction(options: DispatchInteractionOptions): FakeInteraction {
    if (this.readySessions === 0) throw new Error('FakeDiscord: no gateway session is ready to receive an interaction');
    const channel = this.channels.get(options.channelId ?? this.channelList[0]!.id);
    if (!channel) throw new Error(`FakeDiscord: unknown channel ${options.channelId}`);
    const user: FakeUser = options.user
      ? { id: options.user.id ?? snowflake(), username: options.user.username ?? 'user', global_name: options.user.globalName ?? null, discriminator: '0', avatar: null }
      : DEFAULT_USER;
    this.users.set(user.id, user);
    const registered = [...this.guildCommands(channel.guildId), ...this.commands].find((c) => c.name === options.command && c.type === 1);
    const commandId = registered?.id ?? this.commandIdFor(options.command);
    const wireOptions = this.optionsPayload(options, registered);
    const permissions = options.permissions ?? String(options.admin ? ALL_PERMISSIONS : MEMBER_PERMISSIONS);
    const id = snowflake();
    const token = Buffer.from(`interaction:${id}:${randomBytes(48).toString('base64url')}`).toString('base64url');
    const now = Date.now();
    const userJson = { ...this.userJson(user), public_flags: 0, flags: 0, primary_guild: null, avatar_decoration_data: null, collectibles: null, clan: null };
    const payload: Json = {
      id,
      application_id: this.applicationId,
      type: 2,
      token,
      version: 1,
      data: {
        id: commandId,
        name: options.command,
        type: 1,
        ...(wireOptions.length ? { options: wireOptions } : {}),
        ...(registered?.guild_id ? { guild_id: registered.guild_id } : {}),
      },
      guild_id: channel.guildId,
      guild: { id: channel.guildId, locale: 'en-US', features: [] },
      channel_id: channel.id,
      channel: { ...this.channelJson(channel), guild_id: channel.guildId, permissions },
      member: {
        user: userJson,
        roles: options.admin ? [this.guild.adminRoleId] : [],
        permissions,
        nick: null,
        avatar: null,
        banner: null,
        premium_since: null,
        joined_at: iso(this.guild.joinedAt),
        pending: false,
        deaf: false,
        mute: false,
        flags: 0,
        communication_disabled_until: null,
        unusual_dm_activity_until: null,
      },
      app_permissions: String(BOT_PERMISSIONS),
      locale: options.locale ?? 'en-US',
      guild_locale: 'en-US',
      entitlements: [],
      entitlement_sku_ids: [],
      authorizing_integration_owners: { '0': channel.guildId },
      context: 0,
      attachment_size_limit: this.options.maxFileBytes,
    };
    const interaction = new FakeInteraction(id, token, options.command, channel.guildId, channel.id, user, payload, now, now + this.options.tokenTtlMs);
    this.interactions.set(id, interaction);
    this.byToken.set(token, interaction);
    this.dispatch('INTERACTION_CREATE', payload);
    return interaction;
  }

  /** Sends a dispatch (op 0) to every identified session. */
  dispatch(event: string, data: unknown): void {
    for (const session of this.sessions) {
      if (!session.identified) continue;
      session.seq += 1;
      this.sendFrame(session, { op: 0, t: event, s: session.seq, d: data });
    }
  }

  /** Stops the server, closing gateway connections and every socket. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const session of this.sessions) session.ws.terminate();
    this.sessions.clear();
    this.wss.close();
    const done = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    for (const s of this.sockets) s.destroy();
    await done;
    this.events.removeAllListeners();
  }

  // ------------------------------------------------------------ wire shapes

  private userJson(user: FakeUser): Json {
    return { id: user.id, username: user.username, global_name: user.global_name, discriminator: user.discriminator, avatar: user.avatar, ...(user.bot ? { bot: true } : {}) };
  }

  private channelJson(channel: FakeChannel): Json {
    const position = [...this.channels.keys()].indexOf(channel.id);
    return {
      id: channel.id,
      type: 0,
      name: channel.name,
      position,
      flags: 0,
      parent_id: null,
      topic: null,
      nsfw: false,
      last_message_id: null,
      rate_limit_per_user: 0,
      permission_overwrites: [],
    };
  }

  private guildCreatePayload(): Json {
    const g = this.guild;
    const role = (id: string, name: string, permissions: bigint, position: number, extra: Json = {}) => ({
      id, name, permissions: String(permissions), position, color: 0, colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
      hoist: false, managed: false, mentionable: false, icon: null, unicode_emoji: null, flags: 0, description: null, ...extra,
    });
    return {
      id: g.id,
      name: g.name,
      icon: null,
      splash: null,
      discovery_splash: null,
      banner: null,
      description: null,
      owner_id: g.ownerId,
      afk_channel_id: null,
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      mfa_level: 0,
      nsfw_level: 0,
      premium_tier: 0,
      premium_subscription_count: 0,
      premium_progress_bar_enabled: false,
      preferred_locale: 'en-US',
      features: [],
      system_channel_id: this.channelList[0]?.id ?? null,
      system_channel_flags: 0,
      rules_channel_id: null,
      public_updates_channel_id: null,
      safety_alerts_channel_id: null,
      vanity_url_code: null,
      application_id: null,
      max_members: 500_000,
      max_video_channel_users: 25,
      max_stage_video_channel_users: 50,
      joined_at: iso(g.joinedAt),
      large: false,
      lazy: true,
      unavailable: false,
      member_count: 3,
      roles: [
        role(g.id, '@everyone', MEMBER_PERMISSIONS, 0),
        role(g.adminRoleId, 'Admin', P.Administrator | MEMBER_PERMISSIONS, 2),
        role(g.botRoleId, this.botUser.username, BOT_PERMISSIONS, 1, { managed: true, tags: { bot_id: this.botUser.id } }),
      ],
      emojis: [],
      stickers: [],
      soundboard_sounds: [],
      members: [
        {
          user: this.userJson(this.botUser),
          roles: [g.botRoleId],
          nick: null,
          avatar: null,
          banner: null,
          premium_since: null,
          joined_at: iso(g.joinedAt),
          pending: false,
          deaf: false,
          mute: false,
          flags: 0,
          communication_disabled_until: null,
        },
      ],
      channels: this.channelList.map((c) => this.channelJson(c)),
      threads: [],
      presences: [],
      voice_states: [],
      stage_instances: [],
      guild_scheduled_events: [],
      embedded_activities: [],
      activity_instances: [],
      incidents_data: null,
      hub_type: null,
      latest_onboarding_question_id: null,
      home_header: null,
    };
  }

  private attachmentJson(a: FakeAttachment): Json {
    return {
      id: a.id,
      filename: a.filename,
      size: a.size,
      url: a.url,
      proxy_url: a.url,
      ...(a.contentType ? { content_type: a.contentType } : {}),
      ...(a.width !== undefined ? { width: a.width, height: a.height, placeholder: 'fakeplaceholder', placeholder_version: 1 } : {}),
      ...(a.description !== undefined ? { description: a.description } : {}),
      flags: 0,
    };
  }

  /** The message object Discord answers (what discord.js builds a Message from). */
  messageJson(message: FakeMessage): Json {
    const ix = message.interaction;
    const pinged = message.pinged;
    const interactionUser = ix ? this.userJson(ix.user) : undefined;
    return {
      type: message.kind === 'original' ? 20 : 0,
      id: message.id,
      channel_id: message.channelId,
      author: this.userJson(this.botUser),
      content: message.content,
      timestamp: iso(message.createdAt),
      edited_timestamp: message.editedAt === undefined ? null : iso(message.editedAt),
      tts: false,
      mention_everyone: pinged.everyone,
      mentions: pinged.users.map((id) => this.userJson(this.users.get(id) ?? { id, username: `user${id.slice(-4)}`, global_name: null, discriminator: '0', avatar: null })),
      mention_roles: pinged.roles,
      attachments: message.attachments.map((a) => this.attachmentJson(a)),
      embeds: message.embeds,
      pinned: false,
      flags: message.flags,
      components: [],
      ...(ix
        ? {
            webhook_id: this.applicationId,
            application_id: this.applicationId,
            interaction_metadata: {
              id: ix.id,
              type: 2,
              name: ix.commandName,
              command_type: 1,
              user: interactionUser,
              authorizing_integration_owners: { '0': ix.guildId },
              ...(message.kind === 'followup' && ix.original ? { original_response_message_id: ix.original.id } : {}),
            },
            ...(message.kind === 'original' ? { interaction: { id: ix.id, type: 2, name: ix.commandName, user: interactionUser } } : {}),
          }
        : {}),
    };
  }

  // ------------------------------------------------------------ gateway

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
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
    this.sendFrame(session, { op: 10, s: null, t: null, d: { heartbeat_interval: this.options.heartbeatIntervalMs, _trace: ['["fake-gateway",{"micros":0}]'] } });
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
    if (!isObject(d) || d.token !== this.token) {
      session.ws.close(4004, 'Authentication failed.');
      return;
    }
    const intents = d.intents;
    if (typeof intents !== 'number' || !Number.isInteger(intents) || intents < 0 || intents >= 2 ** 26) {
      session.ws.close(4013, 'Invalid intent(s).');
      return;
    }
    const privileged = (1 << 1) | (1 << 8) | (1 << 15);
    if ((intents & privileged & ~this.options.privilegedIntents) !== 0) {
      session.ws.close(4014, 'Disallowed intent(s).');
      return;
    }
    const shard = d.shard;
    if (shard !== undefined && !(Array.isArray(shard) && shard.length === 2 && Number(shard[0]) >= 0 && Number(shard[0]) < Number(shard[1]) && Number(shard[1]) === 1)) {
      session.ws.close(4010, 'Invalid shard.');
      return;
    }
    if (this.options.sessionStartRemaining <= 0) {
      session.ws.close(4004, 'Authentication failed.');
      return;
    }
    this.options.sessionStartRemaining -= 1;
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
        user: { ...this.userJson(this.botUser), verified: true, mfa_enabled: false, flags: 0, email: null },
        guilds: [{ id: this.guildId, unavailable: true }],
        session_id: session.sessionId,
        session_type: 'normal',
        resume_gateway_url: this.gatewayUrl,
        shard: [0, 1],
        application: { id: this.applicationId, flags: 0 },
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
      this.sendFrame(session, { op: 0, t: 'GUILD_CREATE', s: session.seq, d: this.guildCreatePayload() });
    }
    this.events.emit('identify', { sessionId: session.sessionId, intents });
  }

  private resume(session: GatewaySession, d: unknown): void {
    const ok = isObject(d) && d.token === this.token && typeof d.session_id === 'string' && this.pastSessions.has(d.session_id);
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

  // ------------------------------------------------------------ REST plumbing

  private nextSeq(): number {
    this.seqCounter += 1;
    return this.seqCounter;
  }

  private async readBody(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) throw discordError(413, 40005, 'Request entity too large');
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  }

  private async parseBody(req: IncomingMessage, raw: Buffer): Promise<Body> {
    if (raw.length === 0) return { json: undefined, files: [] };
    const type = (req.headers['content-type'] ?? '').toLowerCase();
    if (type.startsWith('application/json')) {
      try {
        return { json: JSON.parse(raw.toString('utf8')), files: [] };
      } catch {
        throw discordError(400, 50109, 'The request body contains invalid JSON.');
      }
    }
    if (type.startsWith('multipart/form-data')) {
      let form: FormData;
      try {
        form = await new Request('http://fake.invalid/', { method: 'POST', headers: { 'content-type': req.headers['content-type']! }, body: raw }).formData();
      } catch {
        throw formError({ _errors: [{ code: 'FORM_BODY_INVALID', message: 'The multipart body could not be parsed.' }] });
      }
      let json: Json = {};
      const files: IncomingFile[] = [];
      for (const [field, value] of form.entries()) {
        if (typeof value === 'string') {
          if (field === 'payload_json') {
            try {
              const parsed: unknown = JSON.parse(value);
              json = isObject(parsed) ? { ...json, ...parsed } : json;
            } catch {
              throw discordError(400, 50109, 'The request body contains invalid JSON.');
            }
          } else json[field] = value;
          continue;
        }
        const index = /^files\[(\d+)\]$/.exec(field)?.[1] ?? /^file(\d*)$/.exec(field)?.[1] ?? String(files.length);
        files.push({ field, index: index === '' ? '0' : index, filename: value.name, contentType: value.type || undefined, data: Buffer.from(await value.arrayBuffer()) });
      }
      return { json, files };
    }
    throw formError({
      _errors: [{ code: 'CONTENT_TYPE_INVALID', message: "Expected \"Content-Type\" header to be one of {'application/json', 'multipart/form-data', 'application/x-www-form-urlencoded'}." }],
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    const record: FakeRequestRecord = {
      seq: this.nextSeq(),
      at: Date.now(),
      method: req.method ?? 'GET',
      path: url.pathname.split('/').map((s) => safeDecode(s)).join('/'),
      query: url.search,
      headers: { ...req.headers },
      body: undefined,
      files: [],
      status: 0,
      code: undefined,
    };
    let reply: Reply;
    try {
      const raw = await this.readBody(req);
      const fault = this.faults.find((f) => f.left > 0 && (f.method === undefined || f.method === record.method) && f.path.test(record.path));
      if (fault) {
        fault.left -= 1;
        throw new HttpError(fault.status, fault.body ?? { message: `${fault.status}: Injected failure`, code: 0 });
      }
      reply = await this.route(req, url, raw, record);
    } catch (error) {
      if (error instanceof HttpError) reply = { status: error.status, body: error.body, headers: error.headers };
      else reply = { status: 500, body: { message: `500: Internal Server Error (${error instanceof Error ? error.message : String(error)})`, code: 0 } };
    }
    record.status = reply.status;
    record.code = isObject(reply.body) && typeof reply.body.code === 'number' && reply.status >= 400 ? reply.body.code : undefined;
    this.requests.push(record);
    this.events.emit('request', record);
    if (res.destroyed) return;
    const headers: Record<string, string> = { via: '1.1 fake-discord', 'x-request-id': randomUUID(), ...(reply.headers ?? {}) };
    if (reply.raw) {
      res.writeHead(reply.status, { ...headers, 'content-type': reply.raw.contentType, 'content-length': String(reply.raw.data.length) });
      res.end(reply.raw.data);
    } else if (reply.body === undefined) {
      res.writeHead(reply.status, headers);
      res.end();
    } else {
      const data = Buffer.from(JSON.stringify(reply.body));
      res.writeHead(reply.status, { ...headers, 'content-type': 'application/json', 'content-length': String(data.length) });
      res.end(data);
    }
  }

  private requireBot(req: IncomingMessage): void {
    if (req.headers.authorization !== `Bot ${this.token}`) throw unauthorized();
  }

  private async route(req: IncomingMessage, url: URL, raw: Buffer, record: FakeRequestRecord): Promise<Reply> {
    const method = req.method ?? 'GET';
    const segments = url.pathname.split('/').slice(1).map((s) => safeDecode(s));
    if (segments[0] === 'attachments' && method === 'GET') return this.serveAttachment(segments);
    if (segments[0] !== 'api') throw notFound();
    const version = /^v(\d+)$/.exec(segments[1] ?? '')?.[1];
    if (version !== API_VERSION) throw discordError(400, 50041, 'Invalid API version provided.');
    const p = segments.slice(2);
    const body = async () => {
      const parsed = await this.parseBody(req, raw);
      record.body = parsed.json;
      record.files = parsed.files.map((f) => ({ field: f.field, filename: f.filename, size: f.data.length }));
      return parsed;
    };
    const is = (...pattern: string[]) => pattern.length === p.length && pattern.every((s, i) => s === '*' || s === p[i]);
    const allow = (...methods: string[]) => {
      if (!methods.includes(method)) throw discordError(405, 0, '405: Method Not Allowed');
    };

    if (is('gateway')) {
      allow('GET');
      return { status: 200, body: { url: this.gatewayUrl } };
    }
    if (is('gateway', 'bot')) {
      allow('GET');
      this.requireBot(req);
      return {
        status: 200,
        body: {
          url: this.gatewayUrl,
          shards: 1,
          session_start_limit: { total: 1000, remaining: this.options.sessionStartRemaining, reset_after: 86_400_000, max_concurrency: 1 },
        },
      };
    }
    if (is('users', '@me')) {
      allow('GET');
      this.requireBot(req);
      return { status: 200, body: { ...this.userJson(this.botUser), verified: true, mfa_enabled: false, flags: 0, locale: 'en-US' } };
    }
    if (is('oauth2', 'applications', '@me') || is('applications', '@me')) {
      allow('GET');
      this.requireBot(req);
      return { status: 200, body: { id: this.applicationId, name: this.botUser.username, icon: null, description: '', bot_public: true, bot_require_code_grant: false, flags: 0, bot: this.userJson(this.botUser), verify_key: 'fake', team: null } };
    }
    if (p[0] === 'applications' && (is('applications', '*', 'commands') || is('applications', '*', 'guilds', '*', 'commands'))) {
      allow('GET', 'PUT');
      this.requireBot(req);
      if (p[1] !== this.applicationId) throw discordError(403, 50001, 'Missing Access');
      const guildId = p.length === 5 ? p[3]! : undefined;
      if (guildId !== undefined && guildId !== this.guildId) throw discordError(404, 10004, 'Unknown Guild');
      if (method === 'GET') return { status: 200, body: guildId ? this.guildCommands(guildId) : this.commands };
      return this.putCommands((await body()).json, guildId);
    }
    if (is('interactions', '*', '*', 'callback')) {
      allow('POST');
      return this.callback(p[1]!, p[2]!, url, await body());
    }
    if (p[0] === 'webhooks' && (p.length === 3 || (p.length === 5 && p[3] === 'messages'))) {
      if (p.length === 3) allow('POST');
      else allow('GET', 'PATCH', 'DELETE');
      return this.webhook(method, p[1]!, p[2]!, p[4], url, record.path, method === 'GET' || method === 'DELETE' ? { json: undefined, files: [] } : await body());
    }
    if (p[0] === 'channels' && (p.length === 2 || (p[2] === 'messages' && p.length <= 4))) {
      this.requireBot(req);
      const channel = this.channels.get(p[1]!);
      if (!channel) throw discordError(404, 10003, 'Unknown Channel');
      if (p.length === 2) {
        allow('GET');
        return { status: 200, body: { ...this.channelJson(channel), guild_id: channel.guildId } };
      }
      if (p.length === 3) {
        allow('GET', 'POST');
        if (method === 'GET') return { status: 200, body: this.messagesIn(channel.id).filter((m) => !m.deleted && !m.ephemeral).reverse().map((m) => this.messageJson(m)) };
        return this.channelCreate(channel, record.path, await body());
      }
      allow('GET', 'PATCH', 'DELETE');
      return this.channelMessage(method, channel, p[3]!, record.path, method === 'PATCH' ? await body() : { json: undefined, files: [] });
    }
    throw notFound();
  }

  private serveAttachment(segments: string[]): Reply {
    const [, channelId, attachmentId] = segments;
    for (const message of this.messages.values()) {
      if (message.channelId !== channelId) continue;
      const a = message.attachments.find((x) => x.id === attachmentId);
      if (a) return { status: 200, raw: { data: a.data, contentType: a.contentType ?? 'application/octet-stream' } };
    }
    throw notFound();
  }

  // ------------------------------------------------------------ rate limits

  private budgetOf(channelId: string): MessageBudget {
    return this.budgets.get(channelId) ?? this.options.messageBudget;
  }

  private bucketHeaders(limit: number, remaining: number, resetAt: number, now: number): Record<string, string> {
    return {
      'x-ratelimit-bucket': createHash('sha1').update(`message-writes:${this.applicationId}`).digest('hex').slice(0, 32),
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': ((resetAt) / 1000).toFixed(3),
      'x-ratelimit-reset-after': (Math.max(0, resetAt - now) / 1000).toFixed(3),
    };
  }

  /** Throws the 429 when the channel's budget is spent. */
  private checkBudget(channelId: string, method: string, path: string): void {
    const { limit, windowMs } = this.budgetOf(channelId);
    const now = Date.now();
    let window = this.windows.get(channelId);
    if (!window || now >= window.resetAt) {
      window = { resetAt: now + windowMs, used: 0 };
      this.windows.set(channelId, window);
    }
    if (window.used < limit) return;
    const retryAfterMs = window.resetAt - now;
    const record: RateLimitRecord = { at: now, channelId, method, path, retryAfterMs };
    this.rateLimits.push(record);
    this.events.emit('rateLimited', record);
    throw new HttpError(
      429,
      { message: 'You are being rate limited.', retry_after: Number((retryAfterMs / 1000).toFixed(3)), global: false },
      { ...this.bucketHeaders(limit, 0, window.resetAt, now), 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))), 'x-ratelimit-scope': 'user' },
    );
  }

  /** Uses one write of the channel's budget; returns the headers of the accepted answer. */
  private spendBudget(channelId: string): Record<string, string> {
    const { limit } = this.budgetOf(channelId);
    const window = this.windows.get(channelId)!;
    window.used += 1;
    return this.bucketHeaders(limit, Math.max(0, limit - window.used), window.resetAt, Date.now());
  }

  // ------------------------------------------------------------ message writes

  /**
   * Validates a create/edit body and the files; returns the state to apply.
   * @throws HttpError 400 (50035 form errors, 50006 empty message), 413 (40005 file too large).
   */
  private async prepareWrite(
    body: Body,
    message: FakeMessage | undefined,
    options: { allowEphemeral: boolean; channelId: string },
  ): Promise<{ content: string; embeds: Json[]; attachments: FakeAttachment[]; flags: number; allowedMentions: unknown }> {
    const json = body.json === undefined ? {} : body.json;
    if (!isObject(json)) throw formError({ _errors: [{ code: 'MODEL_TYPE_CONVERT', message: 'Only dictionaries may be used in a ModelType' }] });
    const errors: ErrorTree = {};
    let content = message?.content ?? '';
    if (json.content !== undefined && json.content !== null) {
      if (typeof json.content !== 'string') addError(errors, ['content'], 'BASE_TYPE_STRING', 'Must be a string.');
      else {
        if (codePoints(json.content) > MAX_CONTENT) addError(errors, ['content'], 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_CONTENT} or fewer in length.`);
        content = json.content;
      }
    } else if (json.content === null) content = '';
    const embeds = json.embeds === undefined ? (message?.embeds ?? []) : checkEmbeds(json.embeds, errors);
    checkAllowedMentions(json.allowed_mentions, errors);

    let flags = message?.flags ?? 0;
    if (json.flags !== undefined && json.flags !== null) {
      const f = json.flags;
      const allowed = MessageFlag.SuppressEmbeds | MessageFlag.SuppressNotifications | MessageFlag.IsComponentsV2 | (options.allowEphemeral ? MessageFlag.Ephemeral : 0);
      if (typeof f !== 'number' || !Number.isInteger(f) || (f & ~allowed) !== 0) {
        addError(errors, ['flags'], 'MESSAGE_FLAGS_INVALID', 'Invalid flags for this message');
      } else if (message) flags = (message.flags & ~MessageFlag.SuppressEmbeds) | (f & MessageFlag.SuppressEmbeds);
      else flags = f;
    }

    // Attachments: kept existing ones (by id) and new uploads (files[N] bound to attachment id N).
    if (body.files.length > MAX_FILES) addError(errors, ['files'], 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_FILES} or fewer in length.`);
    const listed = json.attachments;
    if (listed !== undefined && !Array.isArray(listed)) addError(errors, ['attachments'], 'BASE_TYPE_LIST', 'Must be a list.');
    const entries = Array.isArray(listed) ? listed.filter(isObject) : [];
    const existing = message?.attachments ?? [];
    const kept = Array.isArray(listed) ? existing.filter((a) => entries.some((e) => String(e.id) === a.id)) : existing;
    for (const e of entries) {
      const id = String(e.id);
      if (!existing.some((a) => a.id === id) && !body.files.some((f) => f.index === id)) {
        addError(errors, ['attachments', entries.indexOf(e), 'id'], 'ATTACHMENT_NOT_FOUND', `Attachment "${id}" was not found in the request or the message.`);
      }
    }
    if (kept.length + body.files.length > MAX_FILES) addError(errors, ['attachments'], 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_FILES} or fewer in length.`);
    if (hasErrors(errors)) throw formError(errors);
    for (const file of body.files) {
      if (file.data.length > this.options.maxFileBytes) throw discordError(413, 40005, 'Request entity too large');
    }
    const added: FakeAttachment[] = [];
    for (const file of body.files) {
      const entry = entries.find((e) => String(e.id) === file.index);
      const id = snowflake();
      const filename = typeof entry?.filename === 'string' ? entry.filename : file.filename;
      const contentType = contentTypeOf(file);
      let width: number | undefined;
      let height: number | undefined;
      if (contentType?.startsWith('image/')) {
        try {
          const meta = await sharp(file.data).metadata();
          width = meta.width;
          height = meta.height;
        } catch {
          // Not decodable: Discord keeps it as a plain file.
        }
      }
      added.push({
        id,
        filename,
        size: file.data.length,
        contentType,
        width,
        height,
        description: typeof entry?.description === 'string' ? entry.description : undefined,
        data: file.data,
        url: `${this.origin}/attachments/${options.channelId}/${id}/${encodeURIComponent(filename)}`,
      });
    }
    const attachments = [...kept, ...added];
    if (content.trim() === '' && embeds.length === 0 && attachments.length === 0) throw discordError(400, 50006, 'Cannot send an empty message');
    return { content, embeds, attachments, flags, allowedMentions: json.allowed_mentions };
  }

  /** Applies a prepared write to a message, records the revision and the write. */
  private commit(
    message: FakeMessage,
    state: { content: string; embeds: Json[]; attachments: FakeAttachment[]; flags: number; allowedMentions: unknown },
    kind: 'create' | 'edit',
    via: FakeWrite['via'],
  ): void {
    const at = Date.now();
    message.content = state.content;
    message.embeds = state.embeds;
    message.attachments = state.attachments;
    message.flags = state.flags & ~MessageFlag.Loading;
    if (kind === 'edit') message.editedAt = at;
    const pinged = resolvePings(state.content, state.allowedMentions);
    const seq = this.nextSeq();
    message.revisions.push({ seq, at, via: kind, content: state.content, embeds: state.embeds, attachmentIds: state.attachments.map((a) => a.id), flags: message.flags, allowedMentions: state.allowedMentions, pinged });
    const write: FakeWrite = { seq, at, kind, via, channelId: message.channelId, messageId: message.id, interactionId: message.interaction?.id, allowedMentions: state.allowedMentions, content: state.content, pinged };
    this.writes.push(write);
    this.events.emit('write', write);
  }

  private newMessage(channelId: string, kind: FakeMessage['kind'], interaction: FakeInteraction | undefined): FakeMessage {
    const message = new FakeMessage(snowflake(), channelId, this.channels.get(channelId)?.guildId, kind, Date.now(), interaction);
    this.messages.set(message.id, message);
    return message;
  }

  // ------------------------------------------------------------ interactions

  private async callback(id: string, token: string, url: URL, body: Body): Promise<Reply> {
    const interaction = this.interactions.get(id);
    const json = isObject(body.json) ? body.json : {};
    const data = isObject(json.data) ? json.data : {};
    const record: CallbackRecord = {
      seq: this.nextSeq(),
      at: Date.now(),
      type: typeof json.type === 'number' ? json.type : undefined,
      flags: typeof data.flags === 'number' ? data.flags : 0,
      status: 0,
      code: undefined,
    };
    const answer = (reply: Reply): Reply => {
      record.status = reply.status;
      if (interaction) {
        interaction.callbacks.push(record);
        this.events.emit('callback', interaction, record);
      }
      return reply;
    };
    const refuse = (error: HttpError): Reply => {
      record.code = error.body.code as number;
      return answer({ status: error.status, body: error.body });
    };
    if (!interaction || interaction.token !== token) return refuse(unknownInteraction());
    if (interaction.response) return refuse(discordError(400, 40060, 'Interaction has already been acknowledged.'));
    if (record.at - interaction.dispatchedAt > this.options.responseWindowMs) return refuse(unknownInteraction());

    let original: FakeMessage;
    if (record.type === 5) {
      if ((record.flags & ~MessageFlag.Ephemeral) !== 0) return refuse(formError({ data: { flags: { _errors: [{ code: 'MESSAGE_FLAGS_INVALID', message: 'Invalid flags for this message' }] } } }));
      original = this.newMessage(interaction.channelId, 'original', interaction);
      original.flags = MessageFlag.Loading | (record.flags & MessageFlag.Ephemeral);
      original.revisions.push({ seq: record.seq, at: record.at, via: 'defer', content: '', embeds: [], attachmentIds: [], flags: original.flags, allowedMentions: undefined, pinged: { everyone: false, users: [], roles: [] } });
    } else if (record.type === 4) {
      let state;
      try {
        state = await this.prepareWrite({ json: data, files: body.files }, undefined, { allowEphemeral: true, channelId: interaction.channelId });
      } catch (error) {
        if (error instanceof HttpError) return refuse(error);
        throw error;
      }
      original = this.newMessage(interaction.channelId, 'original', interaction);
      this.commit(original, state, 'create', 'callback');
    } else {
      return refuse(formError({ type: { _errors: [{ code: 'INTERACTION_RESPONSE_TYPE_INVALID', message: 'Interaction response type is invalid for this interaction' }] } }));
    }
    interaction.original = original;
    interaction.response = record;
    if (url.searchParams.get('with_response') === 'true') {
      return answer({
        status: 200,
        body: {
          interaction: { id: interaction.id, type: 2, response_message_id: original.id, response_message_loading: original.loading, response_message_ephemeral: original.ephemeral },
          resource: { type: record.type, message: this.messageJson(original) },
        },
      });
    }
    return answer({ status: 204 });
  }

  /** The interaction of a webhook route, checking app id and token. */
  private interactionOf(applicationId: string, token: string): FakeInteraction {
    if (applicationId !== this.applicationId) throw unknownWebhook();
    const interaction = this.byToken.get(token);
    if (!interaction || Date.now() > interaction.tokenExpiresAt) throw invalidWebhookToken();
    return interaction;
  }

  private async webhook(method: string, applicationId: string, token: string, messageRef: string | undefined, url: URL, path: string, body: Body): Promise<Reply> {
    const interaction = this.interactionOf(applicationId, token);
    if (messageRef === undefined) {
      // POST: a follow-up message.
      if (!interaction.response) throw unknownWebhook();
      this.checkBudget(interaction.channelId, method, path);
      const state = await this.prepareWrite(body, undefined, { allowEphemeral: true, channelId: interaction.channelId });
      const headers = this.spendBudget(interaction.channelId);
      const message = this.newMessage(interaction.channelId, 'followup', interaction);
      this.commit(message, state, 'create', 'webhook');
      interaction.followUps.push(message);
      if (url.searchParams.get('wait') === 'true') return { status: 200, body: this.messageJson(message), headers };
      return { status: 204, headers };
    }
    const message = messageRef === '@original' ? interaction.original : interaction.followUps.find((m) => m.id === messageRef);
    if (!message || message.deleted) throw unknownMessage();
    return this.existingMessage(method, message, interaction.channelId, path, body, 'webhook');
  }

  /** GET, DELETE or PATCH (an edit, within the channel's budget) of a message that exists. */
  private async existingMessage(method: string, message: FakeMessage, channelId: string, path: string, body: Body, via: 'webhook' | 'channel'): Promise<Reply> {
    if (method === 'GET') return { status: 200, body: this.messageJson(message) };
    if (method === 'DELETE') {
      message.deleted = true;
      return { status: 204 };
    }
    this.checkBudget(channelId, method, path);
    const state = await this.prepareWrite(body, message, { allowEphemeral: via === 'webhook', channelId });
    const headers = this.spendBudget(channelId);
    this.commit(message, state, 'edit', via);
    return { status: 200, body: this.messageJson(message), headers };
  }

  // ------------------------------------------------------------ channel messages (bot token)

  private async channelCreate(channel: FakeChannel, path: string, body: Body): Promise<Reply> {
    this.checkBudget(channel.id, 'POST', path);
    const state = await this.prepareWrite(body, undefined, { allowEphemeral: false, channelId: channel.id });
    const headers = this.spendBudget(channel.id);
    const message = this.newMessage(channel.id, 'channel', undefined);
    this.commit(message, state, 'create', 'channel');
    return { status: 200, body: this.messageJson(message), headers };
  }

  private async channelMessage(method: string, channel: FakeChannel, messageId: string, path: string, body: Body): Promise<Reply> {
    const message = this.messages.get(messageId);
    // Ephemeral messages exist only for their user: the bot token cannot see them.
    if (!message || message.channelId !== channel.id || message.deleted || message.ephemeral) throw unknownMessage();
    return this.existingMessage(method, message, channel.id, path, body, 'channel');
  }

  // ------------------------------------------------------------ application commands

  private commandIdFor(name: string): string {
    let id = this.commandIds.get(name);
    if (!id) {
      id = snowflake();
      this.commandIds.set(name, id);
    }
    return id;
  }

  private putCommands(list: unknown, guildId: string | undefined): Reply {
    if (!Array.isArray(list)) throw formError({ _errors: [{ code: 'BASE_TYPE_LIST', message: 'Must be a list.' }] });
    const errors: ErrorTree = {};
    if (list.length > 100) addError(errors, [], 'BASE_TYPE_MAX_LENGTH', 'Must be 100 or fewer in length.');
    list.forEach((command, i) => checkCommand(command, i, errors));
    const seen = new Set<string>();
    list.forEach((command, i) => {
      if (!isObject(command)) return;
      const key = `${String(command.type ?? 1)}:${String(command.name)}`;
      if (seen.has(key)) addError(errors, [i, 'name'], 'APPLICATION_COMMANDS_DUPLICATE_NAME', 'Application command names must be unique');
      seen.add(key);
    });
    if (hasErrors(errors)) throw formError(errors);
    const registered = (list as Json[]).map((command): FakeCommand => {
      const name = command.name as string;
      const type = (command.type as number | undefined) ?? 1;
      return {
        id: this.commandIdFor(name),
        application_id: this.applicationId,
        version: snowflake(),
        default_member_permissions: (command.default_member_permissions as string | null | undefined) ?? null,
        type,
        name,
        name_localizations: null,
        description: (command.description as string | undefined) ?? '',
        description_localizations: null,
        ...(guildId ? { guild_id: guildId } : {}),
        dm_permission: true,
        contexts: (command.contexts as number[] | undefined) ?? null,
        integration_types: (command.integration_types as number[] | undefined) ?? [0],
        nsfw: command.nsfw === true,
        ...(Array.isArray(command.options) ? { options: command.options } : {}),
      };
    });
    if (guildId) this.guildCommandLists.set(guildId, registered);
    else this.commands = registered;
    return { status: 200, body: registered };
  }

  /** Wire options of an interaction, typed from the registered command when there is one. */
  private optionsPayload(options: DispatchInteractionOptions, registered: FakeCommand | undefined): Json[] {
    const given = options.options ?? {};
    const defs = registered && Array.isArray(registered.options) ? (registered.options as Json[]) : undefined;
    if (defs) {
      for (const name of Object.keys(given)) {
        if (!defs.some((d) => d.name === name)) throw new Error(`FakeDiscord: /${options.command} has no option ${name}`);
      }
      for (const d of defs) {
        if (d.required === true && given[d.name as string] === undefined) throw new Error(`FakeDiscord: /${options.command} needs option ${String(d.name)}`);
      }
    }
    return Object.entries(given).map(([name, value]) => {
      const def = defs?.find((d) => d.name === name);
      const type = typeof def?.type === 'number'
        ? def.type
        : typeof value === 'string' ? 3 : typeof value === 'boolean' ? 5 : Number.isInteger(value) ? 4 : 10;
      return { name, type, value };
    });
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
