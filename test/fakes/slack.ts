/**
 * A local fake of Slack for tests: the Web API, the file upload URL, `response_url`s, and a
 * sender of signed slash commands. @slack/bolt and @slack/web-api run unmodified against it.
 *
 * It is a real HTTP server (node:http on 127.0.0.1, random port):
 *
 * - `POST|GET /api/<method>`: bodies `application/x-www-form-urlencoded` (what @slack/web-api
 *   sends; nested values such as `blocks` or `files` arrive as JSON strings), `application/json`
 *   or `multipart/form-data`; query parameters are read too. The token comes as
 *   `Authorization: Bearer <token>`, or as a `token` field of a form body (as on Slack, a token
 *   inside a JSON body is not read). Answers are HTTP 200 `{ ok: true, … }` / `{ ok: false, error }`
 *   (`not_authed`, `invalid_auth`, `unknown_method`, `invalid_arguments`, …), except rate limits:
 *   HTTP 429 with a `Retry-After` header in whole seconds and `{ ok: false, error: 'ratelimited' }`,
 *   which is what @slack/web-api reads (it waits `Retry-After`, then retries).
 * - `POST /upload/<file_id>`: the `upload_url` that `files.getUploadURLExternal` hands out. Takes
 *   the raw bytes, or a multipart form with one file part (what @slack/web-api's `filesUploadV2`
 *   sends: a part named `body`); the byte count must equal the declared `length` (HTTP 400
 *   otherwise). No token needed (the URL is the secret), as on Slack.
 * - `POST /response/<id>`: the `response_url` of one slash command: JSON `{ text, blocks,
 *   response_type }`; at most 5 uses within 30 minutes (then HTTP 404 `used_url` / `expired_url`).
 * - Socket Mode: `apps.connections.open` takes only the app-level token (`xapp-…`; the bot token
 *   is `not_allowed_token_type`, as is the app token on any other method) and answers
 *   `{ ok: true, url: 'ws://127.0.0.1:PORT/socket-mode?ticket=…&app_id=…' }`. That URL is a
 *   WebSocket endpoint (the `ws` package) speaking what @slack/socket-mode expects: a `hello`
 *   message on connect; envelopes `{ envelope_id, type: 'slash_commands', payload,
 *   accepts_response_payload: true }` whose payload holds the same fields as the HTTP form
 *   body; acks `{ envelope_id, payload? }` from the app; protocol-level pings every
 *   `socketPingIntervalMs` (and a pong for every ping of the app); `disconnect` messages on
 *   request ({@link FakeSlack.sendSocketDisconnect}). Each URL's ticket works once; an unknown
 *   or used ticket is refused at the upgrade with HTTP 401 (the fake's choice: Slack documents
 *   no status for it).
 *
 * What Slack enforces, the fake enforces (shared/PLATFORM-LIMITS.md):
 * - `text` longer than `maxTextChars` (default 4,000) → `msg_too_long`. Slack documents a
 *   40,000-character truncation, but `msg_too_long` shows up near 4,000 in practice; the fake
 *   takes the strict line and counts UTF-16 code units of the text AS SENT (so `&amp;` counts 5),
 *   which is never more lenient than Slack.
 * - `blocks`: not JSON / not an array → `invalid_blocks_format`; more than 50 blocks, a section
 *   text of 3,001+ characters, a header over 150, an image without `alt_text`, an unknown block
 *   type… → `invalid_blocks` with `response_metadata.messages` naming the JSON pointer.
 * - rate limits: `chat.update` at most 50 calls per 60 s per workspace (tier 3; a sliding
 *   window), `chat.postMessage` about 1 a second per channel with a burst of 3 (a token bucket);
 *   both configurable (`rateLimits`, `setRateLimits`); `rateLimitNext` scripts one-shot 429s.
 * - `channel_not_found` for channels it does not know, `not_in_channel` where the bot is not a
 *   member; `message_not_found` for a wrong `ts`; `cant_update_message` / `cant_delete_message`
 *   for messages the bot did not post; `invalid_thread_ts` / `thread_not_found` for bad threads.
 *
 * It keeps what a test wants to read: every message (channel, ts, thread_ts, current text,
 * every revision with its time, blocks, files, the mentions Slack would render), every file
 * (bytes, name, title, alt text), ephemeral messages, `response_url` posts, every API call,
 * the platform failures Slack would show a user (a slash command not acked within 3 s, over
 * HTTP or over the socket), and every Socket Mode connection and envelope with its ack.
 *
 * Error names the Slack documentation does not give are the fake's choice and say so below.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';

// ---------------------------------------------------------------- public types

/** A conversation the fake knows. */
export interface FakeSlackChannel {
  /** e.g. `C0GENERAL`. */
  id: string;
  /** Without `#`, e.g. `general`. */
  name: string;
  isPrivate?: boolean;
  /** User ids in the channel; every known user when absent. */
  members?: string[];
  /** False: the bot is not in the channel (`not_in_channel` on posts). Default true. */
  botIsMember?: boolean;
}

/** A user of the workspace. */
export interface FakeSlackUser {
  /** e.g. `U0ALICE`. */
  id: string;
  name: string;
  isAdmin?: boolean;
}

/** Rate limits the fake applies; see {@link FakeSlackOptions.rateLimits}. */
export interface RateLimitRules {
  /** `chat.update` per workspace: at most `limit` calls in any `windowMs` (sliding window). Default 50 / 60,000 ms (tier 3). */
  chatUpdate: { limit: number; windowMs: number };
  /** `chat.postMessage` per channel: a token bucket refilled with `perSecond` tokens a second, holding at most `burst`. Default 1/s, burst 3. */
  postMessage: { perSecond: number; burst: number };
}

export interface FakeSlackOptions {
  /** The one bot token accepted. Default a random `xoxb-fake-…`. */
  botToken?: string;
  /** The one app-level token accepted (only by `apps.connections.open`). Default a random `xapp-1-<appId>-…`. */
  appToken?: string;
  /** Interval of the fake's WebSocket pings to each Socket Mode connection, in ms; 0 = never. Default 10,000 (Slack's own interval is undocumented). */
  socketPingIntervalMs?: number;
  /** Secret slash commands are signed with. Default random. */
  signingSecret?: string;
  /** The (deprecated) verification token sent as `token` in slash-command bodies. */
  verificationToken?: string;
  teamId?: string;
  teamDomain?: string;
  botUserId?: string;
  botId?: string;
  appId?: string;
  /** Default: {@link DEFAULT_CHANNELS}. */
  channels?: FakeSlackChannel[];
  /** Default: {@link DEFAULT_USERS}. */
  users?: FakeSlackUser[];
  rateLimits?: Partial<RateLimitRules>;
  /** Longest accepted `text`, in UTF-16 code units as sent. Default 4,000. */
  maxTextChars?: number;
  /** Slack's ack deadline for slash commands, in ms. Default 3,000. */
  ackTimeoutMs?: number;
  /** Slack-side clock (ms since the epoch): message ts, rate-limit windows, response_url expiry. Default `Date.now`. */
  now?: () => number;
}

/** One state of a message: as posted, then after each `chat.update`. */
export interface MessageRevision {
  /** The text as sent (Slack-escaped). */
  text: string;
  blocks: unknown[] | undefined;
  /** Fake-clock ms when it was stored. */
  at: number;
  method: string;
}

/** A message in a channel. */
export interface FakeSlackMessage {
  channel: string;
  ts: string;
  /** The parent's ts for a reply in a thread. */
  threadTs: string | undefined;
  /** Author user id (the bot's user id for the bot's messages). */
  user: string;
  botId: string | undefined;
  /** Current text as sent (Slack-escaped: `&amp;`, `&lt;`, `&gt;`); {@link unescapeSlack} shows what users read. */
  text: string;
  blocks: unknown[] | undefined;
  /** File ids shared with the message. */
  files: string[];
  /** Every state, oldest first; `revisions[0]` is the post. */
  revisions: MessageRevision[];
  deleted: boolean;
  via: 'chat.postMessage' | 'files.completeUploadExternal' | 'response_url' | 'user';
  /** Mentions Slack would render from the current text and blocks, e.g. `<!channel>`, `<@U123>`. */
  mentions: string[];
}

/** A file announced with `files.getUploadURLExternal`. */
export interface FakeSlackFile {
  id: string;
  filename: string;
  /** Declared size in bytes. */
  length: number;
  altText: string | undefined;
  title: string | undefined;
  /** Bytes received at the upload URL. */
  data: Buffer | undefined;
  /** Content type of the upload (the multipart part's type, or the request's). */
  contentType: string | undefined;
  completed: boolean;
  /** Where it was shared (`files.completeUploadExternal`). */
  channel: string | undefined;
  threadTs: string | undefined;
  messageTs: string | undefined;
}

/** A message only one user sees. */
export interface FakeSlackEphemeral {
  channel: string;
  user: string;
  /** As sent (Slack-escaped). */
  text: string;
  blocks: unknown[] | undefined;
  at: number;
  via: 'chat.postEphemeral' | 'response_url';
}

/** One POST to a `response_url` (also refused ones). */
export interface ResponseUrlPost {
  /** HTTP status the fake answered: 200, 400 (bad payload) or 404 (used, expired, unknown). */
  status: number;
  /** Slack's error for a refused post, e.g. `used_url`. */
  error: string | undefined;
  /** `ephemeral` unless the body said `in_channel` (Slack's default). */
  responseType: 'ephemeral' | 'in_channel';
  /** As sent (Slack-escaped). */
  text: string;
  body: Record<string, unknown>;
  at: number;
}

/** A `response_url` issued for one slash command. */
export interface ResponseUrl {
  id: string;
  url: string;
  command: string;
  channel: string;
  user: string;
  issuedAt: number;
  posts: ResponseUrlPost[];
}

/** One Web API call as received. */
export interface SlackApiCall {
  method: string;
  /** Parameters (form values are strings; `token` removed). */
  params: Record<string, unknown>;
  /** Where the token came from. */
  auth: 'header' | 'body' | 'none';
  /** Which token it was: the bot token, the app-level token, another one, or none. */
  tokenType: 'bot' | 'app' | 'unknown' | 'none';
  /** HTTP status answered (200, or 429 when rate limited). */
  status: number;
  ok: boolean;
  error: string | undefined;
  at: number;
  /** Position among all calls and uploads (shared counter with {@link FakeSlack.uploads}). */
  seq: number;
}

/** Something Slack itself would show a user as a failure of the app. */
export interface PlatformFailure {
  /**
   * `operation_timeout`: no ack within 3 s (HTTP, or an ack by envelope_id over the socket);
   * `http_error`: the ack was not HTTP 200; `dispatch_failed`: the app could not be reached
   * (no HTTP connection, or no open Socket Mode connection).
   */
  kind: 'operation_timeout' | 'http_error' | 'dispatch_failed';
  command: string;
  detail: string;
}

/** A slash command as Slack sends it; omitted fields get workspace defaults. */
export interface SlashCommandInput {
  /** With the slash, e.g. `/chat`. */
  command: string;
  /** What the user typed after the command (unescaped: the fake applies Slack's `&`, `<`, `>` escaping). */
  text: string;
  /** Default: the first configured channel. */
  channel_id?: string;
  /** Default: the first configured user. */
  user_id?: string;
  team_id?: string;
}

/** How to (mis)sign a request; the default is a correct signature made now. */
export interface SignOptions {
  /** Sign with this secret instead of the right one. */
  signingSecret?: string;
  /** `x-slack-request-timestamp` in seconds (e.g. 10 minutes ago: stale). */
  timestampSec?: number;
  /** Send this `x-slack-signature` verbatim. */
  signature?: string;
  /** Path on the app; default `/slack/events`. */
  path?: string;
}

/** What came back from the app for a slash command. */
export interface SlashCommandResult {
  /** HTTP status of the ack; undefined when there was none within the deadline or the app was unreachable. */
  status: number | undefined;
  body: string;
  /** ms from sending to the complete answer (real time). */
  ackMs: number;
  /** HTTP 200 within Slack's deadline (3 s): anything else Slack shows the user as an error. */
  ackedInTime: boolean;
  responseUrl: string;
  triggerId: string;
  /** The exact body that was signed and sent. */
  rawBody: string;
  /** Set when Slack would have shown the user an error. */
  failure: PlatformFailure | undefined;
}

/** How a Socket Mode connection ended. */
export interface SocketModeClose {
  /** WebSocket close code: 1000 normal closure; 1005 a close frame without a code; 1006 no close frame at all (the TCP connection just ended). */
  code: number;
  reason: string;
  /** `app`: the app sent the first close frame; `fake`: the fake closed it ({@link FakeSlack.close}); `network`: it ended without a close frame. */
  initiatedBy: 'app' | 'fake' | 'network';
  /** Fake-clock ms. */
  at: number;
}

/** One Socket Mode WebSocket connection of the app, opened with a URL from `apps.connections.open`. */
export interface SocketModeConnection {
  /** 1, 2, … in the order connections opened. */
  id: number;
  /** The single-use ticket of the URL it connected with. */
  ticket: string;
  /** Fake-clock ms when the upgrade was accepted (and `hello` sent). */
  openedAt: number;
  /** WebSocket pings the fake sent, and the pongs the app answered them with. */
  pingsSent: number;
  pongsReceived: number;
  /** WebSocket pings the app sent (each answered with a pong). */
  pingsReceived: number;
  /** Every text message the app sent, oldest first: parsed JSON, or the raw string when it is not JSON. */
  received: unknown[];
  /** Reasons of the `disconnect` messages the fake sent on this connection. */
  disconnectsSent: string[];
  /** Undefined while the connection is open. */
  closed: SocketModeClose | undefined;
}

/** An envelope the fake sent over a Socket Mode connection, and the app's ack of it. */
export interface SocketModeEnvelope {
  envelopeId: string;
  type: 'slash_commands';
  connectionId: number;
  /** The envelope's `payload` as sent. */
  payload: Record<string, unknown>;
  /** Fake-clock ms. */
  sentAt: number;
  /** The first message of the app with this `envelope_id`; undefined until one arrives. */
  ack:
    | {
        /** The ack's `payload` (@slack/socket-mode always sends one, `{}` for a bare ack); undefined when absent. */
        payload: Record<string, unknown> | undefined;
        /** Real-time ms from sending the envelope to the ack. */
        ms: number;
        /** Arrived after Slack's deadline (`ackTimeoutMs`). */
        late: boolean;
        /** Fake-clock ms. */
        at: number;
      }
    | undefined;
}

/** What came back from the app for a slash command sent over Socket Mode. */
export interface SocketSlashCommandResult {
  envelopeId: string;
  /** The connection it went over; undefined when the app had none open (then `failure.kind` is `dispatch_failed`). */
  connectionId: number | undefined;
  /** An ack carrying this `envelope_id` arrived within Slack's deadline (3 s). */
  ackedInTime: boolean;
  /** Real-time ms from sending to the ack, when it came within the deadline. */
  ackMs: number | undefined;
  /** The ack's `payload` (`{}` for a bare `ack()`), when it came within the deadline. */
  ackPayload: Record<string, unknown> | undefined;
  responseUrl: string;
  triggerId: string;
  /** The envelope's payload as sent: the same fields as the HTTP form body. */
  payload: Record<string, string>;
  /** Set when Slack would have shown the user an error (`operation_timeout`, `dispatch_failed`). */
  failure: PlatformFailure | undefined;
}

// ---------------------------------------------------------------- defaults and helpers

export const DEFAULT_CHANNELS: readonly FakeSlackChannel[] = [
  { id: 'C0GENERAL', name: 'general' },
  { id: 'C0RANDOM', name: 'random' },
  { id: 'C0DEV', name: 'dev' },
];

export const DEFAULT_USERS: readonly FakeSlackUser[] = [
  { id: 'U0ALICE', name: 'alice', isAdmin: true },
  { id: 'U0BOB', name: 'bob' },
];

const DEFAULT_RATE_LIMITS: RateLimitRules = {
  chatUpdate: { limit: 50, windowMs: 60_000 },
  postMessage: { perSecond: 1, burst: 3 },
};

/** A response_url may be used this many times … */
export const RESPONSE_URL_MAX_USES = 5;
/** … within this many ms of the command. */
export const RESPONSE_URL_TTL_MS = 30 * 60_000;

/** Web API methods that take the app-level (`xapp-`) token, and no other token. */
const APP_TOKEN_METHODS = new Set(['apps.connections.open']);

const MAX_BLOCKS = 50;
const MAX_SECTION_TEXT = 3000;
const TS_PATTERN = /^\d{10}\.\d{6}$/;

/** `'v0=' + hex(HMAC-SHA256(secret, 'v0:' + timestampSec + ':' + rawBody))`: Slack's request signature. */
export function signSlackRequest(signingSecret: string, timestampSec: number, rawBody: string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestampSec}:${rawBody}`).digest('hex')}`;
}

/** Slack's escaping of `&`, `<`, `>` in message text. */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** What a user reads for Slack-escaped text: `&lt;` → `<`, `&gt;` → `>`, `&amp;` → `&`. */
export function unescapeSlack(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Mentions Slack renders from raw message text: `<@U…>`, `<!channel>`, `<!here>`, `<!everyone>`, `<!subteam^…>`. */
export function mentionsIn(text: string): string[] {
  return [...text.matchAll(/<(@[UW][A-Z0-9]+|!channel|!here|!everyone|!subteam\^[A-Z0-9]+)(?:\|[^>]*)?>/g)].map((m) => `<${m[1]}>`);
}

type Json = Record<string, unknown>;

/** The text of a WebSocket message as `ws` delivers it (a Buffer, an ArrayBuffer or fragments). */
function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data).toString('utf8');
}

/** Slack's ts format for a time in µs since the epoch: `<seconds>.<6 digits>`. */
function formatTs(micros: number): string {
  return `${Math.floor(micros / 1e6)}.${String(micros % 1e6).padStart(6, '0')}`;
}

/** A Web API error answered as `{ ok: false, error, ...extra }` with HTTP 200. */
class SlackApiError extends Error {
  constructor(
    readonly error: string,
    readonly extra: Json = {},
  ) {
    super(error);
  }
}

/** A rate-limited call: HTTP 429 + `Retry-After`. */
class RateLimited extends Error {
  constructor(readonly retryAfterSec: number) {
    super('ratelimited');
  }
}

const blockError = (message: string, pointer: string) =>
  new SlackApiError('invalid_blocks', { response_metadata: { messages: [`[ERROR] ${message} [json-pointer:${pointer}]`] } });

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A text object `{ type: 'plain_text' | 'mrkdwn', text }` of 1..max characters. */
function checkTextObject(value: unknown, pointer: string, max: number, plainOnly = false): void {
  if (!isObject(value) || (value.type !== 'plain_text' && (plainOnly || value.type !== 'mrkdwn'))) {
    throw blockError(`must be a ${plainOnly ? 'plain_text' : 'plain_text or mrkdwn'} text object`, pointer);
  }
  if (typeof value.text !== 'string' || value.text.length === 0) throw blockError('must be more than 0 characters', `${pointer}/text`);
  if (value.text.length > max) throw blockError(`must be less than ${max + 1} characters`, `${pointer}/text`);
}

/**
 * Checks `blocks` the way Slack does for the limits that matter here.
 * @returns the parsed array, or undefined when absent.
 * @throws SlackApiError `invalid_blocks_format` (not JSON, not an array) or `invalid_blocks`.
 */
function parseBlocks(raw: unknown): unknown[] | undefined {
  if (raw === undefined || raw === '') return undefined;
  let blocks: unknown = raw;
  if (typeof raw === 'string') {
    try {
      blocks = JSON.parse(raw);
    } catch {
      throw new SlackApiError('invalid_blocks_format');
    }
  }
  if (!Array.isArray(blocks)) throw new SlackApiError('invalid_blocks_format');
  if (blocks.length > MAX_BLOCKS) throw blockError(`no more than ${MAX_BLOCKS} items allowed`, '/blocks');
  const ids = new Set<string>();
  blocks.forEach((block: unknown, i) => {
    const at = `/blocks/${i}`;
    if (!isObject(block)) throw blockError('must be an object', at);
    if (block.block_id !== undefined) {
      if (typeof block.block_id !== 'string' || block.block_id.length > 255) throw blockError('must be a string of at most 255 characters', `${at}/block_id`);
      if (ids.has(block.block_id)) throw blockError('duplicate block_id', `${at}/block_id`);
      ids.add(block.block_id);
    }
    switch (block.type) {
      case 'section':
        if (block.text === undefined && block.fields === undefined) throw blockError('must provide either text or fields', at);
        if (block.text !== undefined) checkTextObject(block.text, `${at}/text`, MAX_SECTION_TEXT);
        if (block.fields !== undefined) {
          if (!Array.isArray(block.fields) || block.fields.length > 10) throw blockError('no more than 10 items allowed', `${at}/fields`);
          block.fields.forEach((f: unknown, j) => checkTextObject(f, `${at}/fields/${j}`, 2000));
        }
        break;
      case 'header':
        checkTextObject(block.text, `${at}/text`, 150, true);
        break;
      case 'image':
        if (typeof block.alt_text !== 'string' || block.alt_text.length === 0 || block.alt_text.length > 2000) {
          throw blockError('must be a string of 1 to 2000 characters', `${at}/alt_text`);
        }
        if (block.slack_file === undefined && (typeof block.image_url !== 'string' || block.image_url.length === 0 || block.image_url.length > 3000)) {
          throw blockError('must provide image_url (at most 3000 characters) or slack_file', `${at}/image_url`);
        }
        if (block.title !== undefined) checkTextObject(block.title, `${at}/title`, 2000, true);
        break;
      case 'context':
        if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > 10) {
          throw blockError('must have 1 to 10 elements', `${at}/elements`);
        }
        break;
      case 'markdown':
        if (typeof block.text !== 'string' || block.text.length === 0 || block.text.length > 12_000) {
          throw blockError('must be a string of 1 to 12000 characters', `${at}/text`);
        }
        break;
      case 'actions':
        if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > 25) {
          throw blockError('must have 1 to 25 elements', `${at}/elements`);
        }
        break;
      case 'rich_text':
        if (!Array.isArray(block.elements)) throw blockError('must be an array', `${at}/elements`);
        break;
      case 'divider':
      case 'file':
      case 'input':
      case 'video':
        break;
      default:
        throw blockError(`unsupported type: ${String(block.type)}`, `${at}/type`);
    }
  });
  return blocks;
}

/** Texts inside blocks that Slack renders as mrkdwn (where mentions would work). */
function mrkdwnTexts(blocks: unknown[] | undefined): string[] {
  const out: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (isObject(value)) {
      if ((value.type === 'mrkdwn' || value.type === 'markdown') && typeof value.text === 'string') out.push(value.text);
      Object.values(value).forEach(visit);
    }
  };
  visit(blocks);
  return out;
}

/** A parameter as a string (form values are strings; JSON values are converted). */
function str(p: Json, key: string): string | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** A required string parameter. @throws SlackApiError (`missingError`, default `invalid_arguments`). */
function required(p: Json, key: string, missingError = 'invalid_arguments'): string {
  const v = str(p, key);
  if (v === undefined || v === '') {
    throw new SlackApiError(missingError, { response_metadata: { messages: [`[ERROR] missing required field: ${key}`] } });
  }
  return v;
}

/** A parameter that may be a JSON string (form) or a value (JSON body). @throws SlackApiError `invalid_arguments`. */
function jsonParam(p: Json, key: string): unknown {
  const v = p[key];
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    throw new SlackApiError('invalid_arguments', { response_metadata: { messages: [`[ERROR] ${key} must be JSON`] } });
  }
}

// ---------------------------------------------------------------- the server

/** The fake Slack. Start with {@link FakeSlack.start}; stop with {@link FakeSlack.close}. */
export class FakeSlack {
  readonly botToken: string;
  /** The app-level token (`xapp-…`) that `apps.connections.open` accepts (SLACK_APP_TOKEN). */
  readonly appToken: string;
  readonly signingSecret: string;
  readonly verificationToken: string;
  readonly teamId: string;
  readonly teamDomain: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly appId: string;
  /** `http://127.0.0.1:PORT` */
  readonly baseUrl: string;
  /** `http://127.0.0.1:PORT/api/` (SLACK_API_URL). */
  readonly apiUrl: string;

  /** Every Web API call, oldest first. */
  readonly calls: SlackApiCall[] = [];
  /** Every file announced, by id. */
  readonly files = new Map<string, FakeSlackFile>();
  readonly ephemerals: FakeSlackEphemeral[] = [];
  /** Every response_url issued, by id. */
  readonly responseUrls = new Map<string, ResponseUrl>();
  /** What Slack would have shown users as app failures. */
  readonly platformFailures: PlatformFailure[] = [];
  /** Every upload request to an upload URL, in order (also refused ones). */
  readonly uploads: Array<{ fileId: string; status: number; bytes: number; at: number; seq: number }> = [];
  /** Every Socket Mode connection ever accepted, oldest first (open ones have `closed: undefined`). */
  readonly socketConnections: SocketModeConnection[] = [];
  /** Every Socket Mode envelope sent, oldest first, with its ack. */
  readonly envelopes: SocketModeEnvelope[] = [];

  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly wss = new WebSocketServer({ noServer: true });
  /** Open Socket Mode connections by id, with what the fake needs to drive them. */
  private readonly liveSockets = new Map<number, { ws: WebSocket; record: SocketModeConnection; closingByFake: boolean; pinger: NodeJS.Timeout | undefined; onClose: Array<() => void> }>();
  /** Tickets handed out by apps.connections.open: ticket → used. */
  private readonly tickets = new Map<string, boolean>();
  /** Envelopes waiting for their ack: envelope id → resolver. */
  private readonly ackWaiters = new Map<string, () => void>();
  /** Real-time (performance.now) sending time of each envelope. */
  private readonly sentAtReal = new Map<string, number>();
  /** Envelopes whose ack deadline has passed. */
  private readonly lateAfter = new Set<string>();
  private readonly socketPingIntervalMs: number;
  private readonly channels = new Map<string, FakeSlackChannel>();
  private readonly users = new Map<string, FakeSlackUser>();
  private readonly messageList: FakeSlackMessage[] = [];
  private readonly messageIndex = new Map<string, FakeSlackMessage>();
  private rateLimits: RateLimitRules;
  private readonly updateCalls: number[] = [];
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly scriptedLimits: Array<{ method: string; retryAfterSec: number }> = [];
  private readonly maxTextChars: number;
  private readonly ackTimeoutMs: number;
  private readonly now: () => number;
  private lastTsMicros = 0;
  private seq = 0;
  private closed = false;

  private constructor(server: Server, port: number, o: FakeSlackOptions) {
    this.server = server;
    this.baseUrl = `http://127.0.0.1:${port}`;
    this.apiUrl = `${this.baseUrl}/api/`;
    this.botToken = o.botToken ?? `xoxb-fake-${randomBytes(12).toString('hex')}`;
    this.appToken = o.appToken ?? `xapp-1-${o.appId ?? 'A0FAKEAPP'}-1-${randomBytes(16).toString('hex')}`;
    this.socketPingIntervalMs = o.socketPingIntervalMs ?? 10_000;
    this.signingSecret = o.signingSecret ?? randomBytes(16).toString('hex');
    this.verificationToken = o.verificationToken ?? 'fake-verification-token';
    this.teamId = o.teamId ?? 'T0FAKETEAM';
    this.teamDomain = o.teamDomain ?? 'fake-workspace';
    this.botUserId = o.botUserId ?? 'U0FAKEBOT';
    this.botId = o.botId ?? 'B0FAKEBOT';
    this.appId = o.appId ?? 'A0FAKEAPP';
    for (const c of o.channels ?? DEFAULT_CHANNELS) this.addChannel(c);
    for (const u of o.users ?? DEFAULT_USERS) this.addUser(u);
    this.rateLimits = { ...DEFAULT_RATE_LIMITS, ...o.rateLimits };
    this.maxTextChars = o.maxTextChars ?? 4000;
    this.ackTimeoutMs = o.ackTimeoutMs ?? 3000;
    this.now = o.now ?? Date.now;
  }

  /**
   * Starts a fake on 127.0.0.1 with a random port.
   * @throws when the port cannot be bound.
   */
  static async start(options: FakeSlackOptions = {}): Promise<FakeSlack> {
    const server = createServer({ keepAliveTimeout: 5_000 });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const fake = new FakeSlack(server, (server.address() as AddressInfo).port, options);
    server.on('connection', (socket) => {
      fake.sockets.add(socket);
      socket.once('close', () => fake.sockets.delete(socket));
    });
    server.on('request', (req, res) => {
      fake.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`fake slack error: ${err instanceof Error ? err.message : String(err)}`);
      });
    });
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => fake.handleUpgrade(req, socket, head));
    return fake;
  }

  /** Stops the server, drops Socket Mode connections (recorded as closed by the fake, code 1006) and destroys open sockets. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const live of this.liveSockets.values()) {
      live.closingByFake = true;
      live.ws.terminate();
    }
    this.wss.close();
    const done = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    for (const s of this.sockets) s.destroy();
    await done;
  }

  // ------------------------------------------------------------ workspace setup

  /** Adds (or replaces) a channel. */
  addChannel(channel: FakeSlackChannel): void {
    this.channels.set(channel.id, { ...channel });
  }

  /** Adds (or replaces) a user. */
  addUser(user: FakeSlackUser): void {
    this.users.set(user.id, { ...user });
  }

  /** Changes rate limits from now on (partial: the rest stays). */
  setRateLimits(rules: Partial<RateLimitRules>): void {
    this.rateLimits = { ...this.rateLimits, ...rules };
    this.updateCalls.length = 0;
    this.buckets.clear();
  }

  /**
   * Scripts rate limits: the next `count` calls of `method` (any channel) are answered HTTP 429
   * with `Retry-After: retryAfterSec`, whatever the windows say (Slack may limit any call).
   */
  rateLimitNext(method: string, count = 1, retryAfterSec = 1): void {
    for (let i = 0; i < count; i++) this.scriptedLimits.push({ method, retryAfterSec });
  }

  /**
   * Posts a message as a user (not the bot), e.g. to check that the bot cannot edit it.
   * @throws Error for an unknown channel or user.
   */
  postUserMessage(channel: string, user: string, text: string, threadTs?: string): FakeSlackMessage {
    if (!this.channels.has(channel)) throw new Error(`unknown channel ${channel}`);
    if (!this.users.has(user)) throw new Error(`unknown user ${user}`);
    return this.storeMessage({ channel, user, botId: undefined, text, blocks: undefined, threadTs, files: [], via: 'user', method: 'user' });
  }

  /**
   * Forgets messages, files, calls, ephemerals, response URLs, failures, envelopes, closed Socket
   * Mode connections and rate-limit state; keeps channels, users, settings and open connections.
   */
  reset(): void {
    this.envelopes.length = 0;
    const open = this.socketConnections.filter((c) => c.closed === undefined);
    this.socketConnections.splice(0, this.socketConnections.length, ...open);
    this.calls.length = 0;
    this.files.clear();
    this.ephemerals.length = 0;
    this.responseUrls.clear();
    this.platformFailures.length = 0;
    this.uploads.length = 0;
    this.messageList.length = 0;
    this.messageIndex.clear();
    this.updateCalls.length = 0;
    this.buckets.clear();
    this.scriptedLimits.length = 0;
  }

  // ------------------------------------------------------------ inspection

  /** Messages (not deleted) in ts order; of one channel when given, replies in threads included. */
  messages(channel?: string): FakeSlackMessage[] {
    return this.messageList.filter((m) => !m.deleted && (channel === undefined || m.channel === channel));
  }

  /** One message, deleted or not. */
  message(channel: string, ts: string): FakeSlackMessage | undefined {
    return this.messageIndex.get(`${channel}/${ts}`);
  }

  /** Replies in the thread of `ts` (not deleted), oldest first. */
  thread(channel: string, ts: string): FakeSlackMessage[] {
    return this.messages(channel).filter((m) => m.threadTs === ts);
  }

  /** Calls of one Web API method. */
  callsTo(method: string): SlackApiCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** Every response_url post, in order. */
  responsePosts(): Array<ResponseUrlPost & { command: string; channel: string; user: string }> {
    return [...this.responseUrls.values()].flatMap((r) => r.posts.map((p) => ({ ...p, command: r.command, channel: r.channel, user: r.user })));
  }

  /**
   * Everything users could have seen, as one string (for secret checks): message texts and every
   * revision, blocks, file names/titles/alt texts, ephemeral messages, response_url posts.
   */
  visibleText(): string {
    const parts: string[] = [];
    for (const m of this.messageList) for (const r of m.revisions) parts.push(r.text, JSON.stringify(r.blocks ?? []));
    for (const f of this.files.values()) parts.push(f.filename, f.title ?? '', f.altText ?? '');
    for (const e of this.ephemerals) parts.push(e.text, JSON.stringify(e.blocks ?? []));
    for (const r of this.responseUrls.values()) for (const p of r.posts) parts.push(JSON.stringify(p.body));
    return parts.join('\n');
  }

  // ------------------------------------------------------------ slash commands (Slack → app)

  /**
   * Sends a slash command to the app the way Slack does: the real form-encoded body (`token`,
   * `team_id`, `team_domain`, `channel_id`, `channel_name`, `user_id`, `user_name`, `command`,
   * `text`, `api_app_id`, `is_enterprise_install`, `response_url`, `trigger_id`), signed with
   * `x-slack-request-timestamp` / `x-slack-signature`, POSTed to `botUrl` + `/slack/events`.
   * Like Slack, it waits at most 3 s (`ackTimeoutMs`) for the ack; a late, failed or non-200 ack
   * of a correctly signed command is recorded in {@link platformFailures}. A fresh `response_url`
   * of this fake is issued for the command.
   * @param botUrl the app's origin, e.g. `http://127.0.0.1:PORT`.
   * @param sign deliberate signing faults (wrong secret, stale timestamp, forged signature).
   * @throws Error for an unknown channel or user (a test mistake: Slack only sends real ones).
   */
  async sendSlashCommand(botUrl: string, input: SlashCommandInput, sign: SignOptions = {}): Promise<SlashCommandResult> {
    const { fields, responseUrl, triggerId } = this.slashCommandFields('sendSlashCommand', input);
    const rawBody = new URLSearchParams(fields).toString();
    const result = await this.sendSigned(botUrl, rawBody, 'application/x-www-form-urlencoded', sign);
    const faulty = sign.signingSecret !== undefined || sign.timestampSec !== undefined || sign.signature !== undefined;
    let failure: PlatformFailure | undefined;
    if (!faulty) {
      if (result.timedOut) failure = { kind: 'operation_timeout', command: input.command, detail: `no ack within ${this.ackTimeoutMs} ms` };
      else if (result.status === undefined) failure = { kind: 'dispatch_failed', command: input.command, detail: result.body };
      else if (result.status !== 200) failure = { kind: 'http_error', command: input.command, detail: `HTTP ${result.status}` };
      if (failure) this.platformFailures.push(failure);
    }
    return {
      status: result.status,
      body: result.body,
      ackMs: result.ms,
      ackedInTime: result.status === 200 && !result.timedOut,
      responseUrl,
      triggerId,
      rawBody,
      failure,
    };
  }

  /**
   * The fields of a slash command as Slack sends them (the form body over HTTP, the envelope
   * payload in Socket Mode), with a fresh `response_url` of this fake issued for it.
   * @throws Error for an unknown channel or user (a test mistake: Slack only sends real ones).
   */
  private slashCommandFields(caller: string, input: SlashCommandInput): { fields: Record<string, string>; responseUrl: string; triggerId: string } {
    const channelId = input.channel_id ?? [...this.channels.keys()][0] ?? '';
    const userId = input.user_id ?? [...this.users.keys()][0] ?? '';
    const channel = this.channels.get(channelId);
    const user = this.users.get(userId);
    if (!channel) throw new Error(`${caller}: unknown channel ${channelId}`);
    if (!user) throw new Error(`${caller}: unknown user ${userId}`);
    const id = randomBytes(8).toString('hex');
    const responseUrl = `${this.baseUrl}/response/${id}`;
    this.responseUrls.set(id, { id, url: responseUrl, command: input.command, channel: channelId, user: userId, issuedAt: this.now(), posts: [] });
    const triggerId = `${Math.floor(this.now() / 1000)}.${randomBytes(4).readUInt32BE()}.${randomBytes(16).toString('hex')}`;
    const fields = {
      token: this.verificationToken,
      team_id: input.team_id ?? this.teamId,
      team_domain: this.teamDomain,
      channel_id: channelId,
      channel_name: channel.isPrivate ? 'privategroup' : channel.name,
      user_id: userId,
      user_name: user.name,
      command: input.command,
      text: escapeSlack(input.text),
      api_app_id: this.appId,
      is_enterprise_install: 'false',
      response_url: responseUrl,
      trigger_id: triggerId,
    };
    return { fields, responseUrl, triggerId };
  }

  // ------------------------------------------------------------ Socket Mode (Slack → app over the WebSocket)

  /** Socket Mode connections that are open now, oldest first. */
  openSocketConnections(): SocketModeConnection[] {
    return [...this.liveSockets.values()].map((l) => l.record);
  }

  /**
   * Sends a slash command over Socket Mode the way Slack does: an envelope
   * `{ envelope_id, type: 'slash_commands', payload, accepts_response_payload: true }` whose
   * payload holds the same fields as {@link sendSlashCommand}'s form body (strings; a fresh
   * `response_url` of this fake is issued). It goes over the newest open connection unless
   * `options.connectionId` names one (Slack spreads envelopes over an app's connections; which one
   * it picks is not specified). Like Slack, it waits at most 3 s (`ackTimeoutMs`) for a message
   * with the same `envelope_id`; a missing or late ack is recorded in {@link platformFailures} as
   * `operation_timeout` (a late ack is still stored on the envelope, `late: true`), and a command
   * with no open connection as `dispatch_failed`.
   * @throws Error for an unknown channel or user, or an unknown or closed `options.connectionId`.
   */
  async sendSocketSlashCommand(input: SlashCommandInput, options: { connectionId?: number } = {}): Promise<SocketSlashCommandResult> {
    const live = this.liveSocket('sendSocketSlashCommand', options.connectionId);
    const { fields, responseUrl, triggerId } = this.slashCommandFields('sendSocketSlashCommand', input);
    const envelopeId = randomUUID();
    const base = { envelopeId, responseUrl, triggerId, payload: fields };
    if (!live) {
      const failure: PlatformFailure = { kind: 'dispatch_failed', command: input.command, detail: 'no open Socket Mode connection' };
      this.platformFailures.push(failure);
      return { ...base, connectionId: undefined, ackedInTime: false, ackMs: undefined, ackPayload: undefined, failure };
    }
    const envelope: SocketModeEnvelope = { envelopeId, type: 'slash_commands', connectionId: live.record.id, payload: fields, sentAt: this.now(), ack: undefined };
    this.envelopes.push(envelope);
    const acked = new Promise<void>((resolve) => this.ackWaiters.set(envelopeId, resolve));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.ackTimeoutMs);
    });
    this.sentAtReal.set(envelopeId, performance.now());
    live.ws.send(JSON.stringify({ envelope_id: envelopeId, type: 'slash_commands', payload: fields, accepts_response_payload: true }));
    await Promise.race([acked, deadline]);
    clearTimeout(timer);
    const ack = envelope.ack;
    if (ack && !ack.late) {
      return { ...base, connectionId: live.record.id, ackedInTime: true, ackMs: ack.ms, ackPayload: ack.payload, failure: undefined };
    }
    // From now on an ack is late (stored, but Slack has already shown the user an error).
    this.lateAfter.add(envelopeId);
    const failure: PlatformFailure = { kind: 'operation_timeout', command: input.command, detail: `no ack of envelope ${envelopeId} within ${this.ackTimeoutMs} ms` };
    this.platformFailures.push(failure);
    return { ...base, connectionId: live.record.id, ackedInTime: false, ackMs: undefined, ackPayload: undefined, failure };
  }

  /**
   * Sends `{ type: 'disconnect', reason, debug_info }` on one connection, as Slack does before it
   * recycles a connection (`warning`, `refresh_requested`) or when Socket Mode was turned off
   * (`link_disabled`). @slack/socket-mode answers by closing the socket and, unless it is shutting
   * down, opening a new one through `apps.connections.open`.
   * @param connectionId default: the newest open connection.
   * @returns the id of the connection it was sent on.
   * @throws Error when there is no such open connection.
   */
  sendSocketDisconnect(reason: 'warning' | 'refresh_requested' | 'link_disabled' = 'refresh_requested', connectionId?: number): number {
    const live = this.liveSocket('sendSocketDisconnect', connectionId);
    if (!live) throw new Error('sendSocketDisconnect: no open Socket Mode connection');
    live.record.disconnectsSent.push(reason);
    live.ws.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: `fake-applink-${live.record.id}` } }));
    return live.record.id;
  }

  /**
   * Resolves with how a Socket Mode connection ended, once it has.
   * @param timeoutMs real-time ms to wait (default 5,000).
   * @throws Error for an unknown connection id, or when it is still open after `timeoutMs`.
   */
  async socketClosed(connectionId: number, timeoutMs = 5000): Promise<SocketModeClose> {
    const record = this.socketConnections.find((c) => c.id === connectionId);
    if (!record) throw new Error(`socketClosed: unknown connection ${connectionId}`);
    if (record.closed) return record.closed;
    const live = this.liveSockets.get(connectionId);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`socket connection ${connectionId} still open after ${timeoutMs} ms`)), timeoutMs);
      live?.onClose.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    return record.closed!;
  }

  /** The open connection `id`, or the newest open one when `id` is undefined (undefined when none is open). @throws Error for an unknown or closed `id`. */
  private liveSocket(caller: string, id: number | undefined) {
    if (id === undefined) return [...this.liveSockets.values()].at(-1);
    const live = this.liveSockets.get(id);
    if (!live) throw new Error(`${caller}: Socket Mode connection ${id} is unknown or closed`);
    return live;
  }

  /** Accepts a WebSocket upgrade at `/socket-mode?ticket=…` for a ticket from apps.connections.open (once); anything else gets HTTP 401 or 404. */
  private handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const refuse = (status: string) => {
      socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    };
    if (url.pathname !== '/socket-mode') return refuse('404 Not Found');
    const ticket = url.searchParams.get('ticket') ?? '';
    if (this.tickets.get(ticket) !== false) return refuse('401 Unauthorized');
    this.tickets.set(ticket, true);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws, ticket));
  }

  /** A new Socket Mode connection: record it, say `hello`, ping it, and collect acks. */
  private onSocket(ws: WebSocket, ticket: string): void {
    const record: SocketModeConnection = {
      id: this.socketConnections.length === 0 ? 1 : this.socketConnections.at(-1)!.id + 1,
      ticket,
      openedAt: this.now(),
      pingsSent: 0,
      pongsReceived: 0,
      pingsReceived: 0,
      received: [],
      disconnectsSent: [],
      closed: undefined,
    };
    this.socketConnections.push(record);
    const live = { ws, record, closingByFake: false, pinger: undefined as NodeJS.Timeout | undefined, onClose: [] as Array<() => void> };
    this.liveSockets.set(record.id, live);
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
      if (isObject(message) && typeof message.envelope_id === 'string') this.onAck(message.envelope_id, message.payload);
    });
    ws.on('close', (code: number, reason: Buffer) => {
      clearInterval(live.pinger);
      this.liveSockets.delete(record.id);
      const initiatedBy = live.closingByFake ? 'fake' : code === 1006 ? 'network' : 'app';
      record.closed = { code, reason: reason.toString('utf8'), initiatedBy, at: this.now() };
      for (const notify of live.onClose) notify();
    });
    ws.on('error', () => undefined); // a broken connection ends in 'close' (code 1006)
    if (this.socketPingIntervalMs > 0) {
      live.pinger = setInterval(() => {
        record.pingsSent++;
        ws.ping(`fake-slack ping ${record.pingsSent}`);
      }, this.socketPingIntervalMs);
      live.pinger.unref();
    }
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.liveSockets.size,
        debug_info: { host: `fake-applink-${record.id}`, build_number: 1, approximate_connection_time: 18_060 },
        connection_info: { app_id: this.appId },
      }),
    );
  }

  /** Stores the first ack of an envelope (late when Slack's deadline had passed) and wakes its sender. */
  private onAck(envelopeId: string, payload: unknown): void {
    const envelope = this.envelopes.find((e) => e.envelopeId === envelopeId);
    const sentAt = this.sentAtReal.get(envelopeId);
    if (!envelope || envelope.ack || sentAt === undefined) return;
    envelope.ack = { payload: isObject(payload) ? payload : undefined, ms: performance.now() - sentAt, late: this.lateAfter.has(envelopeId), at: this.now() };
    this.ackWaiters.get(envelopeId)?.();
    this.ackWaiters.delete(envelopeId);
  }

  /**
   * POSTs `rawBody` to the app, signed (or mis-signed per `sign`), waiting at most `ackTimeoutMs`.
   * @returns the status (undefined on timeout or connection failure), body and real-time duration.
   */
  async sendSigned(
    botUrl: string,
    rawBody: string,
    contentType: string,
    sign: SignOptions = {},
  ): Promise<{ status: number | undefined; body: string; ms: number; timedOut: boolean }> {
    const timestampSec = sign.timestampSec ?? Math.floor(Date.now() / 1000);
    const signature = sign.signature ?? signSlackRequest(sign.signingSecret ?? this.signingSecret, timestampSec, rawBody);
    const url = new URL(sign.path ?? '/slack/events', botUrl);
    const started = performance.now();
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': contentType,
          'x-slack-request-timestamp': String(timestampSec),
          'x-slack-signature': signature,
          'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
        },
        body: rawBody,
        signal: AbortSignal.timeout(this.ackTimeoutMs),
      });
      const body = await res.text();
      return { status: res.status, body, ms: performance.now() - started, timedOut: false };
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      return { status: undefined, body: error instanceof Error ? error.message : String(error), ms: performance.now() - started, timedOut };
    }
  }

  // ------------------------------------------------------------ HTTP

  private async readBody(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    return Buffer.concat(chunks);
  }

  private sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const data = Buffer.from(JSON.stringify(body));
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(data.length), ...headers });
    res.end(data);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const raw = await this.readBody(req);
    const [, root, rest] = /^\/([^/]+)\/(.+)$/.exec(url.pathname) ?? [];
    if (root === 'api' && rest) return this.handleApi(decodeURIComponent(rest), req, url, raw, res);
    if (root === 'upload' && rest && req.method === 'POST') return this.handleUpload(rest, req, raw, res);
    if (root === 'response' && rest && req.method === 'POST') return this.handleResponseUrl(rest, req, raw, res);
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  }

  /** Parses a Web API request's parameters; `bodyToken` is the token found in a form body. */
  private async parseParams(req: IncomingMessage, url: URL, raw: Buffer): Promise<{ params: Json; bodyToken: string | undefined }> {
    const params: Json = Object.fromEntries(url.searchParams);
    const type = (req.headers['content-type'] ?? '').toLowerCase();
    let bodyToken = url.searchParams.get('token') ?? undefined;
    if (raw.length === 0) return { params, bodyToken };
    if (type.startsWith('application/json')) {
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        throw new SlackApiError('invalid_json');
      }
      if (!isObject(body)) throw new SlackApiError('json_not_object');
      const { token: _ignored, ...rest } = body;
      Object.assign(params, rest);
    } else if (type.startsWith('multipart/form-data')) {
      const form = await new Request(url, { method: 'POST', headers: { 'content-type': type }, body: raw }).formData();
      for (const [key, value] of form) {
        if (key === 'token' && typeof value === 'string') bodyToken = value;
        else params[key] = typeof value === 'string' ? value : Buffer.from(await value.arrayBuffer());
      }
    } else {
      for (const [key, value] of new URLSearchParams(raw.toString('utf8'))) {
        if (key === 'token') bodyToken = value;
        else params[key] = value;
      }
    }
    return { params, bodyToken };
  }

  private async handleApi(method: string, req: IncomingMessage, url: URL, raw: Buffer, res: ServerResponse): Promise<void> {
    const call: SlackApiCall = { method, params: {}, auth: 'none', tokenType: 'none', status: 200, ok: false, error: undefined, at: this.now(), seq: ++this.seq };
    this.calls.push(call);
    try {
      const { params, bodyToken } = await this.parseParams(req, url, raw);
      call.params = params;
      const handler = this.handlers[method];
      if (!handler) throw new SlackApiError('unknown_method', { req_method: method });
      const header = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
      const token = header ?? bodyToken;
      call.auth = header ? 'header' : bodyToken ? 'body' : 'none';
      call.tokenType = !token ? 'none' : token === this.botToken ? 'bot' : token === this.appToken ? 'app' : 'unknown';
      if (method !== 'api.test') {
        if (call.tokenType === 'none') throw new SlackApiError('not_authed');
        if (call.tokenType === 'unknown') throw new SlackApiError('invalid_auth');
        // The app-level token is good for app methods only, the bot token for everything else.
        if ((call.tokenType === 'app') !== APP_TOKEN_METHODS.has(method)) throw new SlackApiError('not_allowed_token_type');
      }
      const scripted = this.scriptedLimits.findIndex((l) => l.method === method);
      if (scripted >= 0) throw new RateLimited(this.scriptedLimits.splice(scripted, 1)[0]!.retryAfterSec);
      const body = handler(params);
      call.ok = true;
      this.sendJson(res, 200, { ok: true, ...body });
    } catch (error) {
      if (error instanceof RateLimited) {
        call.status = 429;
        call.error = 'ratelimited';
        this.sendJson(res, 429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(error.retryAfterSec) });
      } else if (error instanceof SlackApiError) {
        call.error = error.error;
        this.sendJson(res, 200, { ok: false, error: error.error, ...error.extra });
      } else {
        throw error;
      }
    }
  }

  private async handleUpload(fileId: string, req: IncomingMessage, raw: Buffer, res: ServerResponse): Promise<void> {
    const file = this.files.get(fileId);
    const refuse = (status: number, text: string) => {
      this.uploads.push({ fileId, status, bytes: raw.length, at: this.now(), seq: ++this.seq });
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(text);
    };
    if (!file) return refuse(404, 'upload url not found');
    if (file.data) return refuse(400, 'file already uploaded');
    let data = raw;
    let contentType = req.headers['content-type'];
    if (contentType?.toLowerCase().startsWith('multipart/form-data')) {
      const form = await new Request(`${this.baseUrl}/upload/${fileId}`, { method: 'POST', headers: { 'content-type': contentType }, body: raw }).formData();
      const parts = [...form.values()].filter((v): v is File => typeof v !== 'string');
      if (parts.length !== 1) return refuse(400, `expected one file part, got ${parts.length}`);
      data = Buffer.from(await parts[0]!.arrayBuffer());
      contentType = parts[0]!.type || undefined;
    }
    if (data.length !== file.length) return refuse(400, `length mismatch: declared ${file.length} bytes, received ${data.length}`);
    file.data = data;
    file.contentType = contentType;
    this.uploads.push({ fileId, status: 200, bytes: data.length, at: this.now(), seq: ++this.seq });
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`OK - ${data.length}`);
  }

  private handleResponseUrl(id: string, req: IncomingMessage, raw: Buffer, res: ServerResponse): void {
    const record = this.responseUrls.get(id);
    let body: Json = {};
    let parsed = false;
    try {
      const value: unknown = JSON.parse(raw.toString('utf8'));
      if (isObject(value)) {
        body = value;
        parsed = true;
      }
    } catch {
      // refused below
    }
    const responseType = body.response_type === 'in_channel' ? 'in_channel' : 'ephemeral';
    const text = typeof body.text === 'string' ? body.text : '';
    const answer = (status: number, error: string | undefined) => {
      record?.posts.push({ status, error, responseType, text, body, at: this.now() });
      if (error) this.sendJson(res, status, { ok: false, error });
      else this.sendJson(res, 200, { ok: true });
    };
    if (!record) return answer(404, 'no_such_url');
    if (this.now() - record.issuedAt > RESPONSE_URL_TTL_MS) return answer(404, 'expired_url');
    if (record.posts.filter((p) => p.status === 200).length >= RESPONSE_URL_MAX_USES) return answer(404, 'used_url');
    if (!parsed || !(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) return answer(400, 'invalid_payload');
    let blocks: unknown[] | undefined;
    try {
      blocks = parseBlocks(body.blocks);
      this.checkText(text, blocks, false);
    } catch (error) {
      if (error instanceof SlackApiError) return answer(400, error.error);
      throw error;
    }
    if (responseType === 'in_channel') {
      this.storeMessage({ channel: record.channel, user: this.botUserId, botId: this.botId, text, blocks, threadTs: undefined, files: [], via: 'response_url', method: 'response_url' });
    } else {
      this.ephemerals.push({ channel: record.channel, user: record.user, text, blocks, at: this.now(), via: 'response_url' });
    }
    answer(200, undefined);
  }

  // ------------------------------------------------------------ Web API methods

  private readonly handlers: Record<string, (p: Json) => Json> = {
    'api.test': (p) => ({ args: p }),
    'apps.connections.open': () => {
      const ticket = randomBytes(16).toString('hex');
      this.tickets.set(ticket, false);
      return { url: `${this.baseUrl.replace(/^http/, 'ws')}/socket-mode?ticket=${ticket}&app_id=${this.appId}` };
    },
    'auth.test': () => ({
      url: `https://${this.teamDomain}.slack.com/`,
      team: 'Fake Workspace',
      user: 'genbot',
      team_id: this.teamId,
      user_id: this.botUserId,
      bot_id: this.botId,
      is_enterprise_install: false,
    }),
    'chat.postMessage': (p) => this.postMessage(p),
    'chat.update': (p) => this.update(p),
    'chat.postEphemeral': (p) => this.postEphemeral(p),
    'chat.delete': (p) => this.deleteMessage(p),
    'files.getUploadURLExternal': (p) => this.getUploadUrl(p),
    'files.completeUploadExternal': (p) => this.completeUpload(p),
    'users.info': (p) => {
      const user = this.users.get(required(p, 'user', 'user_not_found'));
      if (!user) throw new SlackApiError('user_not_found');
      return {
        user: {
          id: user.id,
          team_id: this.teamId,
          name: user.name,
          real_name: user.name,
          deleted: false,
          is_admin: Boolean(user.isAdmin),
          is_owner: false,
          is_bot: false,
          profile: { display_name: user.name, real_name: user.name },
        },
      };
    },
    'conversations.info': (p) => {
      const channel = this.channelOf(p, 'channel');
      return {
        channel: {
          id: channel.id,
          name: channel.name,
          is_channel: !channel.isPrivate,
          is_group: false,
          is_im: false,
          is_private: Boolean(channel.isPrivate),
          is_archived: false,
          is_member: channel.botIsMember !== false,
          created: 1_700_000_000,
        },
      };
    },
  };

  /** The channel named by parameter `key` (an id, or a name with or without `#`). @throws SlackApiError `channel_not_found`. */
  private channelOf(p: Json, key: string): FakeSlackChannel {
    const ref = required(p, key, 'channel_not_found');
    const byId = this.channels.get(ref);
    if (byId) return byId;
    const name = ref.replace(/^#/, '');
    for (const c of this.channels.values()) if (c.name === name) return c;
    throw new SlackApiError('channel_not_found');
  }

  private requireMember(channel: FakeSlackChannel): void {
    if (channel.botIsMember === false) throw new SlackApiError('not_in_channel');
  }

  /** Checks text (length) and that there is something to show. @throws SlackApiError `msg_too_long`, `no_text`. */
  private checkText(text: string | undefined, blocks: unknown[] | undefined, allowEmpty: boolean): void {
    if (text !== undefined && text.length > this.maxTextChars) throw new SlackApiError('msg_too_long');
    if (!allowEmpty && (text === undefined || text === '') && (blocks === undefined || blocks.length === 0)) throw new SlackApiError('no_text');
  }

  /** A thread parent in `channel` for `thread_ts` (a reply's ts resolves to its parent). @throws SlackApiError. */
  private threadParent(channel: string, threadTs: string | undefined): string | undefined {
    if (threadTs === undefined || threadTs === '') return undefined;
    if (!TS_PATTERN.test(threadTs)) throw new SlackApiError('invalid_thread_ts', { response_metadata: { messages: [`[ERROR] ${threadTs} is not a valid thread_ts`] } });
    const parent = this.message(channel, threadTs);
    if (!parent || parent.deleted) throw new SlackApiError('thread_not_found');
    return parent.threadTs ?? parent.ts;
  }

  /** A token bucket per channel for chat.postMessage. @throws RateLimited. */
  private takePostToken(channel: string): void {
    const { perSecond, burst } = this.rateLimits.postMessage;
    const now = this.now();
    const bucket = this.buckets.get(channel) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    this.buckets.set(channel, bucket);
    if (bucket.tokens < 1) throw new RateLimited(Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)));
    bucket.tokens -= 1;
  }

  /** A sliding window for chat.update per workspace. @throws RateLimited. */
  private takeUpdateSlot(): void {
    const { limit, windowMs } = this.rateLimits.chatUpdate;
    const now = this.now();
    while (this.updateCalls.length > 0 && this.updateCalls[0]! <= now - windowMs) this.updateCalls.shift();
    if (this.updateCalls.length >= limit) {
      throw new RateLimited(Math.max(1, Math.ceil((this.updateCalls[0]! + windowMs - now) / 1000)));
    }
    this.updateCalls.push(now);
  }

  /** A new ts, strictly increasing across the workspace: `<seconds>.<6 digits>`. */
  private nextTs(): string {
    const micros = Math.max(Math.floor(this.now() * 1000), this.lastTsMicros + 1);
    this.lastTsMicros = micros;
    return formatTs(micros);
  }

  private storeMessage(m: Pick<FakeSlackMessage, 'channel' | 'user' | 'botId' | 'text' | 'blocks' | 'threadTs' | 'files' | 'via'> & { method: string }): FakeSlackMessage {
    const ts = this.nextTs();
    const message: FakeSlackMessage = {
      channel: m.channel,
      ts,
      threadTs: m.threadTs,
      user: m.user,
      botId: m.botId,
      text: m.text,
      blocks: m.blocks,
      files: m.files,
      revisions: [{ text: m.text, blocks: m.blocks, at: this.now(), method: m.method }],
      deleted: false,
      via: m.via,
      mentions: [],
    };
    message.mentions = this.mentionsOf(message);
    this.messageList.push(message);
    this.messageIndex.set(`${m.channel}/${ts}`, message);
    return message;
  }

  private mentionsOf(m: { text: string; blocks: unknown[] | undefined }): string[] {
    return [m.text, ...mrkdwnTexts(m.blocks)].flatMap(mentionsIn);
  }

  /** The message object Slack returns. */
  private wire(m: FakeSlackMessage): Json {
    return {
      type: 'message',
      text: m.text,
      user: m.user,
      ...(m.botId ? { bot_id: m.botId, app_id: this.appId } : {}),
      team: this.teamId,
      ts: m.ts,
      ...(m.threadTs ? { thread_ts: m.threadTs } : {}),
      ...(m.blocks ? { blocks: m.blocks } : {}),
      ...(m.files.length ? { files: m.files.map((id) => this.fileObject(this.files.get(id)!)), upload: true } : {}),
      ...(m.revisions.length > 1 ? { edited: { user: m.user, ts: formatTs(Math.floor(m.revisions.at(-1)!.at * 1000)) } } : {}),
    };
  }

  private fileObject(f: FakeSlackFile): Json {
    return {
      id: f.id,
      name: f.filename,
      title: f.title ?? f.filename,
      mimetype: f.contentType ?? 'application/octet-stream',
      size: f.length,
      ...(f.altText ? { alt_txt: f.altText } : {}),
      user: this.botUserId,
    };
  }

  private postMessage(p: Json): Json {
    const channel = this.channelOf(p, 'channel');
    this.takePostToken(channel.id);
    this.requireMember(channel);
    const blocks = parseBlocks(p.blocks);
    const text = str(p, 'text');
    this.checkText(text, blocks, p.attachments !== undefined);
    const threadTs = this.threadParent(channel.id, str(p, 'thread_ts'));
    const m = this.storeMessage({ channel: channel.id, user: this.botUserId, botId: this.botId, text: text ?? '', blocks, threadTs, files: [], via: 'chat.postMessage', method: 'chat.postMessage' });
    return { channel: channel.id, ts: m.ts, message: this.wire(m) };
  }

  private update(p: Json): Json {
    this.takeUpdateSlot();
    const channel = this.channelOf(p, 'channel');
    const ts = required(p, 'ts', 'message_not_found');
    const m = this.message(channel.id, ts);
    if (!m || m.deleted) throw new SlackApiError('message_not_found');
    if (m.user !== this.botUserId) throw new SlackApiError('cant_update_message');
    const blocks = parseBlocks(p.blocks);
    const text = str(p, 'text');
    if (text === undefined && blocks === undefined) throw new SlackApiError('no_text');
    this.checkText(text, blocks, true);
    // Slack keeps the previous blocks when `blocks` is absent (an empty array removes them).
    if (text !== undefined) m.text = text;
    if (blocks !== undefined) m.blocks = blocks.length ? blocks : undefined;
    m.revisions.push({ text: m.text, blocks: m.blocks, at: this.now(), method: 'chat.update' });
    m.mentions = this.mentionsOf(m);
    return { channel: channel.id, ts: m.ts, text: m.text, message: this.wire(m) };
  }

  private postEphemeral(p: Json): Json {
    const channel = this.channelOf(p, 'channel');
    this.requireMember(channel);
    const userId = required(p, 'user', 'user_not_found');
    if (!this.users.has(userId)) throw new SlackApiError('user_not_found');
    if (channel.members && !channel.members.includes(userId)) throw new SlackApiError('user_not_in_channel');
    const blocks = parseBlocks(p.blocks);
    const text = str(p, 'text');
    this.checkText(text, blocks, p.attachments !== undefined);
    this.ephemerals.push({ channel: channel.id, user: userId, text: text ?? '', blocks, at: this.now(), via: 'chat.postEphemeral' });
    return { message_ts: this.nextTs() };
  }

  private deleteMessage(p: Json): Json {
    const channel = this.channelOf(p, 'channel');
    const m = this.message(channel.id, required(p, 'ts', 'message_not_found'));
    if (!m || m.deleted) throw new SlackApiError('message_not_found');
    if (m.user !== this.botUserId) throw new SlackApiError('cant_delete_message');
    m.deleted = true;
    return { channel: channel.id, ts: m.ts };
  }

  private getUploadUrl(p: Json): Json {
    const filename = required(p, 'filename');
    const lengthText = required(p, 'length');
    const length = Number(lengthText);
    if (!Number.isInteger(length) || length <= 0) {
      throw new SlackApiError('invalid_arguments', { response_metadata: { messages: ['[ERROR] length must be a positive integer'] } });
    }
    const id = `F${randomBytes(5).toString('hex').toUpperCase()}`;
    this.files.set(id, {
      id,
      filename,
      length,
      // Slack's docs name it `alt_txt`; @slack/web-api sends `alt_text`. Both are read.
      altText: str(p, 'alt_text') ?? str(p, 'alt_txt'),
      title: undefined,
      data: undefined,
      contentType: undefined,
      completed: false,
      channel: undefined,
      threadTs: undefined,
      messageTs: undefined,
    });
    return { upload_url: `${this.baseUrl}/upload/${id}`, file_id: id };
  }

  /**
   * Shares uploaded files. Error names are the fake's choice where Slack's docs give none:
   * `file_not_found` for an unknown id, bytes that never arrived, or a second completion
   * (Slack: "this method can only be called once").
   */
  private completeUpload(p: Json): Json {
    const list = jsonParam(p, 'files');
    if (!Array.isArray(list) || list.length === 0 || !list.every((f) => isObject(f) && typeof f.id === 'string')) {
      throw new SlackApiError('invalid_arguments', { response_metadata: { messages: ['[ERROR] files must be a JSON array of {"id","title"}'] } });
    }
    const files = list.map((entry: Json) => {
      const f = this.files.get(entry.id as string);
      if (!f || !f.data || f.completed) throw new SlackApiError('file_not_found', { response_metadata: { messages: [`[ERROR] file ${String(entry.id)} is unknown, not uploaded, or already completed`] } });
      return { f, title: typeof entry.title === 'string' ? entry.title : undefined };
    });
    const channelRef = str(p, 'channel_id') ?? str(p, 'channels');
    let channel: FakeSlackChannel | undefined;
    let threadTs: string | undefined;
    const comment = str(p, 'initial_comment');
    let blocks: unknown[] | undefined;
    if (channelRef !== undefined && channelRef !== '') {
      channel = this.channelOf({ channel: channelRef }, 'channel');
      this.requireMember(channel);
      threadTs = this.threadParent(channel.id, str(p, 'thread_ts'));
      // Slack ignores `blocks` when `initial_comment` is given.
      blocks = comment === undefined ? parseBlocks(p.blocks) : undefined;
      this.checkText(comment, blocks, true);
    }
    for (const { f, title } of files) {
      f.completed = true;
      f.title = title;
    }
    if (channel) {
      const m = this.storeMessage({
        channel: channel.id,
        user: this.botUserId,
        botId: this.botId,
        text: comment ?? '',
        blocks,
        threadTs,
        files: files.map(({ f }) => f.id),
        via: 'files.completeUploadExternal',
        method: 'files.completeUploadExternal',
      });
      for (const { f } of files) {
        f.channel = channel.id;
        f.threadTs = threadTs;
        f.messageTs = m.ts;
      }
    }
    return { files: files.map(({ f }) => this.fileObject(f)) };
  }
}
