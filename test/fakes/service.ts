/**
 * A local fake of the generation service (docs/service-api.md), for tests.
 *
 * It is a real HTTP server (node:http on 127.0.0.1, random port) that speaks the spec strictly,
 * the way an OpenAI-compatible server would, so the bot's client (undici) is tested against the
 * same bytes a real service sends:
 *
 * - every path needs `Authorization: Bearer <apiKey>` (401 `invalid_api_key` otherwise, without
 *   echoing the key); unknown paths answer 404, wrong methods 405;
 * - request bodies are validated strictly (types, ranges, enums, unknown fields) and refused with
 *   OpenAI-style errors `{ error: { message, type, param, code } }` naming the parameter;
 * - streams are OpenAI SSE (`data: {chunk}\n\n` … `data: [DONE]\n\n`), written in small TCP
 *   writes cut at arbitrary (seeded) byte positions, so events cross network reads;
 * - images are real PNGs (sharp) of the size the aspect ratio asks for.
 *
 * Faults are scripted per request with `enqueue(route, behaviour)` (a one-shot queue per route).
 * Every request is recorded in `requests` and announced on `events`.
 *
 * Where the spec says "not shown", OpenAI's conventions are followed:
 * - chat chunk: `{ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason }] }`,
 *   first delta `{ role: 'assistant', content: '' }`, last chunk `delta: {}` + `finish_reason: 'stop'`, then `[DONE]`;
 * - text completion chunk: `{ id, object: 'text_completion', created, model, choices: [{ text, index, logprobs: null, finish_reason }] }`;
 * - image result items: `{ url }`, `{ b64_json }`, `{ hxd: <hex of the PNG bytes> }`; a list of formats gives ONE item
 *   with every requested field; `revised_prompt` is added with `force_prompt_enhancement: true`;
 * - `/v1/models`: `{ object: 'list', data: [{ id, object: 'model', created, owned_by, ...extra }] }`
 *   (image models `type: 'image'`, vision chat models `vision: true`);
 * - `/v1/images/available-models`: a bare array (option `imageModelsEnvelope` wraps it in `{ data }`).
 */
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { listenOnLoopback } from './listen.ts';
import sharp from 'sharp';

// ---------------------------------------------------------------- public types

/** Names of the scriptable endpoints. */
export type FakeRoute = 'chat' | 'completions' | 'images' | 'models' | 'imageModels' | 'view';

/** A model of `/v1/models`. Extra fields are listed as given. */
export interface FakeModel {
  id: string;
  /** `'image'` for image models (§2.5); omitted for chat models by default. */
  type?: string;
  /** Chat models that accept image parts (§4.1). Listed as `vision: true`. */
  vision?: boolean;
  owned_by?: string;
  created?: number;
  [extra: string]: unknown;
}

/** An image model of `/v1/images/available-models` (§4.4). */
export interface FakeImageModel {
  display_name: string;
  description: string;
  [extra: string]: unknown;
}

export interface FakeServiceOptions {
  /** The one key accepted. Default `sk-fake-service-key`. */
  apiKey?: string;
  /** Default delay (ms) before each SSE event of every stream (0: only an event-loop turn between writes). */
  chunkDelayMs?: number;
  /** Replaces the default `/v1/models` list. */
  models?: FakeModel[];
  /** Replaces the default `/v1/images/available-models` list. */
  imageModels?: FakeImageModel[];
  /** Answer `/v1/images/available-models` with `{ data: [...] }` instead of a bare array. */
  imageModelsEnvelope?: boolean;
  /** Let `disable_safety_checker: true` through (403 `permission_denied` otherwise). */
  allowDisableSafetyChecker?: boolean;
  /**
   * Generated images of random noise instead of one colour: PNGs of several MB (1024×1024 ≈
   * 3 MB), for tests of upload limits. Default false.
   */
  noisyImages?: boolean;
  /**
   * Report the seed used at the result's top level (`{ created, seed, data }`; the shape is not
   * shown in §4.3): the requested one, or one chosen when none was given. Default false.
   */
  reportSeed?: boolean;
  /** Seed of the PRNG that cuts streams into pieces. Default 1. */
  seed?: number;
}

export type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string | ContentPart[];
}
/** A validated POST /v1/chat/completions body (§4.1). */
export interface ChatRequestBody {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  max_tokens?: number;
  stream?: boolean;
  top_p?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  web_search?: false | 'auto' | 'force' | 'images';
  response_format?: 'json';
}
/** A validated POST /v1/completions body (§4.2). */
export interface CompletionRequestBody {
  model: string;
  prompt: string;
  temperature?: number;
  max_tokens?: number;
  stream?: boolean;
}
/** A validated POST /v1/images/generations body (§4.3). */
export interface ImageRequestBody {
  prompt: string;
  style?: 'vivid' | 'natural' | 'preview' | 'upscaled';
  aspect_ratio?: 'square' | 'portrait' | 'landscape';
  response_format?: ImageFormat | ImageFormat[];
  user_selected_model?: string;
  negative_prompt?: string;
  seed?: number;
  disable_safety_checker?: boolean;
  force_prompt_enhancement?: boolean;
  reference_image_url?: string;
  reference_image?: string;
  denoising_strength?: number;
}
export type ImageFormat = 'url' | 'b64_json' | 'hxd';

/** One request as received (every request, also refused ones). */
export interface RecordedRequest {
  method: string;
  /** Path with query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** The endpoint it matched, if any. */
  route: FakeRoute | undefined;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON; `undefined` when empty or not JSON. */
  body: unknown;
  /** `Date.now()` when the body was fully read. */
  receivedAt: number;
}

/** Options of a scripted stream. Events are counted as `data: {json}` chunks; the role chunk is the first. */
export interface StreamScript {
  /** Reply text (split into pieces of a few characters). Default: the normal reply. */
  text?: string;
  /** Exact content pieces, one chunk each (wins over `text`). */
  pieces?: string[];
  /** Delay (ms) before each event; default the server's `chunkDelayMs`. */
  chunkDelayMs?: number;
  /** Destroy the socket once this many chunks were sent (no final chunk, no `[DONE]`). */
  dropAfterChunks?: number;
  /** A raw line (e.g. `data: {"choices":[`) sent as its own event after `afterChunks` chunks; the stream then goes on. */
  malformedLine?: string;
  /** Sent as `data: {"error": …}` after `afterChunks` chunks; the response then ends without `[DONE]`. */
  errorMidStream?: Record<string, unknown>;
  /** Where `malformedLine` / `errorMidStream` go: after this many chunks. Default 2 (role chunk + one piece). */
  afterChunks?: number;
  /** Insert `: keep-alive` comment lines (first, and after every second event). */
  comments?: boolean;
  /** End lines with `\r\n`. */
  crlf?: boolean;
  /** Spread each chunk's JSON over several `data:` lines (pretty-printed; SSE joins them with `\n`). */
  multiLineData?: boolean;
  /** Add chunks with `delta: {}` and with no `delta` at all after the first piece (spec §4.1 streaming rule 2). */
  emptyDeltas?: boolean;
  /** The last chunk's `finish_reason` (e.g. `content_filter`, `length`). Default `stop`. */
  finishReason?: string;
  /** Before the last chunk, a chunk whose delta holds only `tool_calls` (and `finish_reason` becomes `tool_calls`). */
  toolCalls?: boolean;
  /** End after the last chunk (with its `finish_reason`) by closing the response, without `data: [DONE]`. */
  omitDone?: boolean;
  /** After this many chunks, send only `: keep-alive` comments, every `keepAliveMs`, until the client leaves. */
  stallAfterChunks?: number;
  /** Interval of the comments of `stallAfterChunks`, in ms. Default 200. */
  keepAliveMs?: number;
  /**
   * Write each event whole, in one write, as production servers flush them (default: cut into
   * pieces of 1–40 bytes one event-loop turn apart, to test parsers). For benchmarks, where the
   * cut costs both processes a write and a read per piece that no real service would cause.
   */
  wholeEvents?: boolean;
}

/** What the next request of a route gets. */
export type Behaviour =
  /** A canned answer (bypasses auth and validation). `body`: object → JSON, string → raw; default an OpenAI error for the status. */
  | { status: number; body?: unknown; headers?: Record<string, string>; delayHeadersMs?: number }
  /** The normal answer (auth and validation apply), streamed as SSE with these options. */
  | { stream: StreamScript; delayHeadersMs?: number }
  /** The normal answer, with the response headers held back this long. */
  | { delayHeadersMs: number }
  /** Read the request, never answer. */
  | { hang: true }
  /** Read the request, then reset the connection before any byte of a response. */
  | { resetConnection: true };

export type ChatReply = (body: ChatRequestBody) => string | Promise<string>;
export type CompletionReply = (body: CompletionRequestBody) => string | Promise<string>;

export interface FakeServiceEvents {
  /** A request was received (body read). */
  request: [RecordedRequest];
  /** A response began (status line written) or a scripted fault happened (status 0). */
  response: [{ route: FakeRoute | undefined; path: string; status: number; stream: boolean }];
  /**
   * A streamed response's connection closed: `finished` when the fake had written all of it,
   * false when the client went away first (an aborted request); `at` in ms since the epoch.
   */
  streamClosed: [{ route: FakeRoute | undefined; at: number; finished: boolean }];
}

// ---------------------------------------------------------------- defaults

/** Default `/v1/models`: two chat models (only `fake-vision` takes images) and two image models. */
export const DEFAULT_MODELS: readonly FakeModel[] = [
  { id: 'fake-chat', owned_by: 'fake-service' },
  { id: 'fake-vision', owned_by: 'fake-service', vision: true },
  { id: 'fake-image', owned_by: 'fake-service', type: 'image' },
  { id: 'fake-image-xl', owned_by: 'fake-service', type: 'image' },
];

/** Default `/v1/images/available-models`. */
export const DEFAULT_IMAGE_MODELS: readonly FakeImageModel[] = [
  { display_name: 'Fake Image', description: 'Fast solid-colour images for tests' },
  { display_name: 'Fake Image XL', description: 'The same, with more feeling' },
];

export const DEFAULT_API_KEY = 'sk-fake-service-key';

/** §4.3 output size by aspect ratio. */
export const IMAGE_SIZES = {
  square: { width: 1024, height: 1024 },
  portrait: { width: 832, height: 1216 },
  landscape: { width: 1216, height: 832 },
} as const;

const CREATED = 1_700_000_000;
const MAX_BODY_BYTES = 25 * 1024 * 1024;
const MAX_PIECE_BYTES = 40;

// ---------------------------------------------------------------- errors

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.error.message);
  }
}

function apiError(
  status: number,
  message: string,
  param: string | null,
  code: string | null,
  type = 'invalid_request_error',
  headers: Record<string, string> = {},
): ApiError {
  return new ApiError(status, { error: { message, type, param, code } }, headers);
}

const invalid = (param: string, message: string) => apiError(400, message, param, 'invalid_value');

/** OpenAI-like default error bodies for canned statuses. */
function defaultErrorBody(status: number): ErrorBody {
  const e = (message: string, type: string, code: string | null): ErrorBody => ({ error: { message, type, param: null, code } });
  switch (status) {
    case 400: return e('Bad request.', 'invalid_request_error', null);
    case 401: return e('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    case 403: return e('You are not allowed to perform this action.', 'permission_error', 'permission_denied');
    case 404: return e('Not found.', 'invalid_request_error', 'not_found');
    case 408: return e('Request timed out.', 'timeout', null);
    case 409: return e('Conflict.', 'invalid_request_error', null);
    case 422: return e('Unprocessable entity.', 'invalid_request_error', null);
    case 429: return e('Rate limit reached for requests. Please try again later.', 'requests', 'rate_limit_exceeded');
    case 500: return e('The server had an error while processing your request. Sorry about that!', 'server_error', null);
    case 502: return e('Bad gateway.', 'server_error', null);
    case 503: return e('The engine is currently overloaded, please try again later.', 'server_error', 'overloaded');
    case 504: return e('Gateway timeout.', 'server_error', null);
    default: return e(`Error ${status}.`, status >= 500 ? 'server_error' : 'invalid_request_error', null);
  }
}

// ---------------------------------------------------------------- validation helpers

type Json = Record<string, unknown>;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal';
  return `a ${typeof value}`;
}

function shown(value: unknown): string {
  const text = typeof value === 'string' ? `'${value}'` : JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function rejectUnknown(obj: Json, allowed: readonly string[], prefix = ''): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      throw apiError(400, `Unknown parameter: '${prefix}${key}'.`, `${prefix}${key}`, 'unknown_parameter');
    }
  }
}

function requireField(obj: Json, key: string, param = key): unknown {
  if (!(key in obj) || obj[key] === undefined) {
    throw apiError(400, `Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
  }
  return obj[key];
}

function checkNumber(obj: Json, key: string, min: number, max: number, { integer = false, required = false } = {}): void {
  if (!(key in obj)) {
    if (required) requireField(obj, key);
    return;
  }
  const value = obj[key];
  const expected = integer
    ? max === Infinity ? `an integer of at least ${min}` : `an integer from ${min} to ${max}`
    : `a number from ${min} to ${max}`;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw invalid(key, `Invalid type for '${key}': expected ${expected}, but got ${describe(value)} instead.`);
  }
  if (integer && !Number.isInteger(value)) {
    throw invalid(key, `Invalid type for '${key}': expected ${expected}, but got a decimal (${value}) instead.`);
  }
  if (value < min || value > max) {
    throw invalid(key, `Invalid '${key}': expected ${expected}, but got ${value} instead.`);
  }
}

function checkBoolean(obj: Json, key: string): void {
  if (key in obj && typeof obj[key] !== 'boolean') {
    throw invalid(key, `Invalid type for '${key}': expected a boolean (true or false), but got ${describe(obj[key])} instead.`);
  }
}

function checkString(obj: Json, key: string, { required = false, nonEmpty = false } = {}): void {
  if (!(key in obj)) {
    if (required) requireField(obj, key);
    return;
  }
  const value = obj[key];
  if (typeof value !== 'string') {
    throw invalid(key, `Invalid type for '${key}': expected a string, but got ${describe(value)} instead.`);
  }
  if (nonEmpty && value.trim() === '') {
    throw invalid(key, `Invalid '${key}': expected a non-empty string, but got an empty string instead.`);
  }
}

function checkEnum(obj: Json, key: string, values: readonly unknown[]): void {
  if (!(key in obj)) return;
  const value = obj[key];
  if (!values.includes(value)) {
    const list = values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ');
    throw invalid(key, `Invalid value for '${key}': expected one of ${list}, but got ${shown(value)} instead.`);
  }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Strict standard base64 (padded). Returns the bytes, or undefined. */
function decodeBase64(text: string): Buffer | undefined {
  if (text.length === 0 || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const isPng = (b: Buffer) => b.length > 8 && b.subarray(0, 8).equals(PNG_SIGNATURE);
const isJpeg = (b: Buffer) => b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;

/** Checks a data URL: `data:image/<allowed>;base64,<valid base64 of such an image>`. */
function checkImageDataUrl(param: string, url: unknown, allowed: ReadonlyArray<'png' | 'jpeg'>): void {
  const forms = allowed.map((t) => `data:image/${t};base64,<BASE64>`).join(' or ');
  if (typeof url !== 'string') {
    throw invalid(param, `Invalid type for '${param}': expected a string (${forms}), but got ${describe(url)} instead.`);
  }
  const m = /^data:image\/([a-z0-9.+-]+);base64,/i.exec(url);
  const kind = m?.[1]?.toLowerCase();
  if (!m || (kind !== 'png' && kind !== 'jpeg') || !allowed.includes(kind)) {
    throw invalid(param, `Invalid '${param}': expected a base64 data URL ${forms}, but got ${shown(url.slice(0, 40))} instead.`);
  }
  const bytes = decodeBase64(url.slice(m[0].length));
  if (!bytes) {
    throw invalid(param, `Invalid '${param}': the base64 data of the ${forms.split(' or ')[0]} URL does not decode.`);
  }
  if (!(kind === 'png' ? isPng(bytes) : isJpeg(bytes))) {
    throw invalid(param, `Invalid '${param}': the data does not decode to a ${kind === 'png' ? 'PNG' : 'JPEG'} image.`);
  }
}

// ---------------------------------------------------------------- small utilities

/** mulberry32: a small seeded PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const newId = (prefix: string) => `${prefix}${randomBytes(12).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);
const tokensOf = (text: string) => Math.ceil(text.length / 4);

/** Cuts text into pieces of 1–6 code points. */
function cutText(text: string, rnd: () => number): string[] {
  const chars = Array.from(text);
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; ) {
    const n = 1 + Math.floor(rnd() * 6);
    pieces.push(chars.slice(i, i + n).join(''));
    i += n;
  }
  return pieces;
}

function lastUserText(messages: ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    return m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
  }
  return '';
}

function routeOf(path: string): { route: FakeRoute; method: 'GET' | 'POST' } | undefined {
  switch (path) {
    case '/v1/chat/completions': return { route: 'chat', method: 'POST' };
    case '/v1/completions': return { route: 'completions', method: 'POST' };
    case '/v1/images/generations': return { route: 'images', method: 'POST' };
    case '/v1/models': return { route: 'models', method: 'GET' };
    case '/v1/images/available-models': return { route: 'imageModels', method: 'GET' };
    default:
      return /^\/v1\/images\/view\/[^/]+$/.test(path) ? { route: 'view', method: 'GET' } : undefined;
  }
}

const CHAT_FIELDS = ['model', 'messages', 'temperature', 'max_tokens', 'stream', 'top_p', 'frequency_penalty', 'presence_penalty', 'web_search', 'response_format'] as const;
const COMPLETION_FIELDS = ['model', 'prompt', 'temperature', 'max_tokens', 'stream'] as const;
const IMAGE_FIELDS = [
  'prompt', 'style', 'aspect_ratio', 'response_format', 'user_selected_model', 'negative_prompt', 'seed',
  'disable_safety_checker', 'force_prompt_enhancement', 'reference_image_url', 'reference_image', 'denoising_strength',
] as const;
const IMAGE_FORMATS: readonly ImageFormat[] = ['url', 'b64_json', 'hxd'];

// ---------------------------------------------------------------- the server

export class FakeService {
  /** Every request received, oldest first. */
  readonly requests: RecordedRequest[] = [];
  private open = 0;
  readonly events = new EventEmitter<FakeServiceEvents>();
  readonly apiKey: string;
  /** `http://127.0.0.1:PORT` (no `/v1`). */
  readonly baseUrl: string;
  /** Stored images of `/v1/images/view/<id>`. */
  readonly images = new Map<string, Buffer>();

  private readonly server: Server;
  private readonly options: Required<Pick<FakeServiceOptions, 'chunkDelayMs' | 'imageModelsEnvelope' | 'allowDisableSafetyChecker' | 'seed' | 'reportSeed' | 'noisyImages'>>;
  private models: FakeModel[];
  private imageModels: FakeImageModel[];
  private readonly queues = new Map<FakeRoute, Behaviour[]>();
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private chatReply: ChatReply | undefined;
  private completionReply: CompletionReply | undefined;
  private streamCount = 0;
  private closed = false;

  private constructor(server: Server, baseUrl: string, opts: FakeServiceOptions) {
    this.server = server;
    this.baseUrl = baseUrl;
    this.apiKey = opts.apiKey ?? DEFAULT_API_KEY;
    this.options = {
      chunkDelayMs: opts.chunkDelayMs ?? 0,
      imageModelsEnvelope: opts.imageModelsEnvelope ?? false,
      allowDisableSafetyChecker: opts.allowDisableSafetyChecker ?? false,
      seed: opts.seed ?? 1,
      reportSeed: opts.reportSeed ?? false,
      noisyImages: opts.noisyImages ?? false,
    };
    this.models = (opts.models ?? DEFAULT_MODELS).map((m) => ({ ...m }));
    this.imageModels = (opts.imageModels ?? DEFAULT_IMAGE_MODELS).map((m) => ({ ...m }));
  }

  /** Starts a fake on 127.0.0.1 with a random port. */
  static async start(opts: FakeServiceOptions = {}): Promise<FakeService> {
    const { server, port } = await listenOnLoopback();
    const fake = new FakeService(server, `http://127.0.0.1:${port}`, opts);
    server.on('connection', (socket) => {
      socket.setNoDelay(true);
      fake.sockets.add(socket);
      socket.once('close', () => fake.sockets.delete(socket));
    });
    server.on('request', (req, res) => {
      fake.handle(req, res).catch((err: unknown) => fake.internalError(res, err));
    });
    return fake;
  }

  // ------------------------------------------------------------ scripting and inspection

  /** Scripts the next request of `route` (one-shot, FIFO per route). */
  enqueue(route: FakeRoute, behaviour: Behaviour): void {
    const q = this.queues.get(route) ?? [];
    q.push(behaviour);
    this.queues.set(route, q);
  }

  /** Scripted behaviours not used yet. */
  pending(route: FakeRoute): number {
    return this.queues.get(route)?.length ?? 0;
  }

  /** Sets the chat reply (a string, or a function of the validated body); `undefined` restores the default (`Echo: <last user text>`, JSON in JSON mode). */
  setChatReply(reply: ChatReply | string | undefined): void {
    this.chatReply = typeof reply === 'string' ? () => reply : reply;
  }

  /** Sets the text-completion reply; `undefined` restores the default (`Echo: <prompt>`). */
  setCompletionReply(reply: CompletionReply | string | undefined): void {
    this.completionReply = typeof reply === 'string' ? () => reply : reply;
  }

  /** Replaces the model lists at run time. */
  setModels(models: FakeModel[], imageModels?: FakeImageModel[]): void {
    this.models = models.map((m) => ({ ...m }));
    if (imageModels) this.imageModels = imageModels.map((m) => ({ ...m }));
  }

  /** Bodies of the POST /v1/chat/completions requests (also refused ones), oldest first. */
  chatRequests(): ChatRequestBody[] {
    return this.requests.filter((r) => r.route === 'chat' && r.method === 'POST').map((r) => r.body as ChatRequestBody);
  }

  /** The last request of a route (any route when omitted). */
  lastRequest(route?: FakeRoute): RecordedRequest | undefined {
    for (let i = this.requests.length - 1; i >= 0; i--) {
      const r = this.requests[i]!;
      if (route === undefined || r.route === route) return r;
    }
    return undefined;
  }

  /** Streamed responses whose connection is still open (a client that left has closed its own). */
  get openStreams(): number {
    return this.open;
  }

  /** Forgets recorded requests, scripted behaviours and reply overrides. */
  reset(): void {
    this.requests.length = 0;
    this.queues.clear();
    this.chatReply = undefined;
    this.completionReply = undefined;
  }

  /** Stops the server and destroys every open socket (keep-alive, hanging, streaming). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const done = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    for (const s of this.sockets) s.destroy();
    await done;
    this.events.removeAllListeners();
  }

  // ------------------------------------------------------------ request handling

  private sleep(ms: number): Promise<void> {
    if (this.closed) return new Promise(() => undefined);
    if (ms <= 0) return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      this.timers.add(t);
    });
  }

  private async readBody(req: IncomingMessage): Promise<Buffer | undefined> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return undefined;
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    const path = url.pathname;
    const match = routeOf(path);
    const raw = await this.readBody(req);

    let parsed: unknown;
    if (raw && raw.length > 0) {
      try {
        parsed = JSON.parse(raw.toString('utf8'));
      } catch {
        parsed = undefined;
      }
    }
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? path,
      route: match?.route,
      headers: { ...req.headers },
      body: parsed,
      receivedAt: Date.now(),
    };
    this.requests.push(record);
    this.events.emit('request', record);

    const behaviour = match ? this.queues.get(match.route)?.shift() : undefined;
    let stream: StreamScript | undefined;
    if (behaviour) {
      if ('hang' in behaviour) {
        this.events.emit('response', { route: match?.route, path, status: 0, stream: false });
        return;
      }
      if ('resetConnection' in behaviour) {
        this.events.emit('response', { route: match?.route, path, status: 0, stream: false });
        const socket = req.socket;
        if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
        else socket.destroy();
        return;
      }
      if (behaviour.delayHeadersMs !== undefined) await this.sleep(behaviour.delayHeadersMs);
      if (res.destroyed) return;
      if ('status' in behaviour) {
        const body = behaviour.body === undefined ? defaultErrorBody(behaviour.status) : behaviour.body;
        const isRaw = typeof body === 'string' || Buffer.isBuffer(body);
        const bytes = Buffer.isBuffer(body) ? body : Buffer.from(isRaw ? (body as string) : JSON.stringify(body));
        this.send(res, match?.route, path, behaviour.status, bytes, {
          'content-type': isRaw ? 'text/plain; charset=utf-8' : 'application/json',
          ...lowerKeys(behaviour.headers ?? {}),
        });
        return;
      }
      if ('stream' in behaviour) stream = behaviour.stream;
    }

    try {
      if (req.headers.authorization !== `Bearer ${this.apiKey}`) {
        throw apiError(401, 'Incorrect API key provided.', null, 'invalid_api_key');
      }
      if (!match) {
        throw apiError(404, `Invalid URL (${req.method} ${path})`, null, 'unknown_url');
      }
      if (req.method !== match.method) {
        throw apiError(405, `Method ${req.method} is not allowed on ${path}; use ${match.method}.`, null, 'method_not_allowed', 'invalid_request_error', { allow: match.method });
      }
      if (match.method === 'GET') {
        await this.handleGet(match.route, path, res);
        return;
      }
      if (raw === undefined) {
        throw apiError(413, `Request body too large: the maximum is ${MAX_BODY_BYTES} bytes.`, null, 'request_too_large');
      }
      const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (ct !== 'application/json') {
        throw apiError(415, `Unsupported Content-Type ${shown(req.headers['content-type'] ?? '(none)')}: request bodies must be sent with Content-Type: application/json.`, null, 'unsupported_media_type');
      }
      if (!isObject(parsed)) {
        throw apiError(
          400,
          parsed === undefined
            ? "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The API expects a JSON payload, but what was sent was not valid JSON.)"
            : `The request body must be a JSON object, but got ${describe(parsed)}.`,
          null,
          'invalid_json',
        );
      }
      switch (match.route) {
        case 'chat': return await this.handleChat(parsed, res, stream);
        case 'completions': return await this.handleCompletion(parsed, res, stream);
        case 'images': return await this.handleImages(parsed, res);
        default: throw apiError(404, `Invalid URL (${req.method} ${path})`, null, 'unknown_url');
      }
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      this.sendJson(res, match?.route, path, err.status, err.body, err.headers);
    }
  }

  private async handleGet(route: FakeRoute, path: string, res: ServerResponse): Promise<void> {
    if (route === 'models') {
      const data = this.models.map(({ id, ...rest }) => ({ id, object: 'model', created: CREATED, owned_by: 'fake-service', ...rest }));
      this.sendJson(res, route, path, 200, { object: 'list', data });
      return;
    }
    if (route === 'imageModels') {
      const list = this.imageModels.map((m) => ({ ...m }));
      this.sendJson(res, route, path, 200, this.options.imageModelsEnvelope ? { data: list } : list);
      return;
    }
    if (route === 'view') {
      const id = decodeURIComponent(path.slice('/v1/images/view/'.length));
      const png = this.images.get(id);
      if (!png) throw apiError(404, `No image with id '${clip(id)}'.`, null, 'image_not_found');
      this.send(res, route, path, 200, png, { 'content-type': 'image/png', 'cache-control': 'private, max-age=3600' });
      return;
    }
    throw apiError(404, `Invalid URL (GET ${path})`, null, 'unknown_url');
  }

  // ------------------------------------------------------------ POST /v1/chat/completions

  private validateChat(body: Json): ChatRequestBody {
    rejectUnknown(body, CHAT_FIELDS);
    checkString(body, 'model', { required: true, nonEmpty: true });
    const messages = requireField(body, 'messages');
    if (!Array.isArray(messages)) {
      throw invalid('messages', `Invalid type for 'messages': expected a non-empty array of messages, but got ${describe(messages)} instead.`);
    }
    if (messages.length === 0) {
      throw invalid('messages', "Invalid 'messages': empty array. Expected an array with at least 1 message, but got an empty array instead.");
    }
    messages.forEach((m: unknown, i) => this.validateMessage(m, `messages[${i}]`));
    checkNumber(body, 'temperature', 0, 2);
    checkNumber(body, 'max_tokens', 1, Infinity, { integer: true });
    checkBoolean(body, 'stream');
    checkNumber(body, 'top_p', 0, 1);
    checkNumber(body, 'frequency_penalty', -2, 2);
    checkNumber(body, 'presence_penalty', -2, 2);
    checkEnum(body, 'web_search', [false, 'auto', 'force', 'images']);
    checkEnum(body, 'response_format', ['json']);

    const chat = body as unknown as ChatRequestBody;
    const model = this.chatModel(chat.model);
    if (!model.vision) {
      chat.messages.forEach((m, i) => {
        if (typeof m.content === 'string') return;
        const j = m.content.findIndex((p) => p.type === 'image_url');
        if (j >= 0) {
          throw invalid(
            `messages[${i}].content[${j}]`,
            `Invalid 'messages[${i}].content[${j}]': the model '${chat.model}' does not support image input; use a model with vision support (${this.visionModelIds().join(', ') || 'none listed'}).`,
          );
        }
      });
    }
    return chat;
  }

  private validateMessage(m: unknown, at: string): void {
    if (!isObject(m)) throw invalid(at, `Invalid type for '${at}': expected a message object, but got ${describe(m)} instead.`);
    rejectUnknown(m, ['role', 'content'], `${at}.`);
    const role = requireField(m, 'role', `${at}.role`);
    if (role !== 'system' && role !== 'user' && role !== 'assistant') {
      throw invalid(`${at}.role`, `Invalid value for '${at}.role': expected one of 'system', 'user', 'assistant', but got ${shown(role)} instead.`);
    }
    const content = requireField(m, 'content', `${at}.content`);
    if (typeof content === 'string') return;
    if (!Array.isArray(content)) {
      throw invalid(`${at}.content`, `Invalid type for '${at}.content': expected a string or an array of content parts, but got ${describe(content)} instead.`);
    }
    if (content.length === 0) {
      throw invalid(`${at}.content`, `Invalid '${at}.content': empty array. Expected a string or at least 1 content part.`);
    }
    content.forEach((p: unknown, j) => {
      const pat = `${at}.content[${j}]`;
      if (!isObject(p)) throw invalid(pat, `Invalid type for '${pat}': expected a content part object, but got ${describe(p)} instead.`);
      const type = requireField(p, 'type', `${pat}.type`);
      if (type === 'text') {
        rejectUnknown(p, ['type', 'text'], `${pat}.`);
        const text = requireField(p, 'text', `${pat}.text`);
        if (typeof text !== 'string') throw invalid(`${pat}.text`, `Invalid type for '${pat}.text': expected a string, but got ${describe(text)} instead.`);
      } else if (type === 'image_url') {
        rejectUnknown(p, ['type', 'image_url'], `${pat}.`);
        if (role !== 'user') {
          throw invalid(`${pat}.type`, `Invalid '${pat}.type': image_url parts are only allowed in messages with role 'user', but this message has role '${String(role)}'.`);
        }
        const iu = requireField(p, 'image_url', `${pat}.image_url`);
        if (!isObject(iu)) throw invalid(`${pat}.image_url`, `Invalid type for '${pat}.image_url': expected an object { url }, but got ${describe(iu)} instead.`);
        rejectUnknown(iu, ['url'], `${pat}.image_url.`);
        checkImageDataUrl(`${pat}.image_url.url`, requireField(iu, 'url', `${pat}.image_url.url`), ['jpeg', 'png']);
      } else {
        throw invalid(`${pat}.type`, `Invalid value for '${pat}.type': expected one of 'text', 'image_url', but got ${shown(type)} instead.`);
      }
    });
  }

  private visionModelIds(): string[] {
    return this.models.filter((m) => m.vision === true && m.type !== 'image').map((m) => m.id);
  }

  private chatModel(id: string): FakeModel {
    const model = this.models.find((m) => m.id === id);
    if (!model) {
      throw apiError(404, `The model '${clip(id)}' does not exist or you do not have access to it.`, 'model', 'model_not_found');
    }
    if (model.type === 'image') {
      throw invalid('model', `Invalid 'model': '${id}' is an image model; chat and text completions need a language model from /v1/models.`);
    }
    return model;
  }

  private async handleChat(raw: Json, res: ServerResponse, script: StreamScript | undefined): Promise<void> {
    const body = this.validateChat(raw);
    let text: string;
    if (script?.pieces) text = script.pieces.join('');
    else if (script?.text !== undefined) text = script.text;
    else if (this.chatReply) text = await this.chatReply(body);
    else {
      const last = lastUserText(body.messages);
      text = body.response_format === 'json' ? JSON.stringify({ echo: last }) : `Echo: ${last}`;
    }

    const id = newId('chatcmpl-');
    const created = now();
    if (body.stream === true || script) {
      const rnd = this.nextRandom();
      const pieces = script?.pieces ?? cutText(text, rnd);
      const head = { id, object: 'chat.completion.chunk', created, model: body.model };
      const chunks: unknown[] = [{ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }];
      pieces.forEach((piece, i) => {
        chunks.push({ ...head, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
        if (i === 0 && script?.emptyDeltas) {
          chunks.push({ ...head, choices: [{ index: 0, delta: {}, finish_reason: null }] });
          chunks.push({ ...head, choices: [{ index: 0, finish_reason: null }] });
        }
      });
      if (script?.toolCalls) {
        const call = { index: 0, id: newId('call_'), type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } };
        chunks.push({ ...head, choices: [{ index: 0, delta: { tool_calls: [call] }, finish_reason: null }] });
      }
      chunks.push({ ...head, choices: [{ index: 0, delta: {}, finish_reason: script?.finishReason ?? (script?.toolCalls ? 'tool_calls' : 'stop') }] });
      await this.writeSse(res, 'chat', '/v1/chat/completions', chunks, script ?? {}, rnd);
      return;
    }

    const promptTokens = body.messages.reduce((sum, m) => {
      if (typeof m.content === 'string') return sum + 4 + tokensOf(m.content);
      return sum + 4 + m.content.reduce((s, p) => s + (p.type === 'text' ? tokensOf(p.text) : 85), 0);
    }, 3);
    const completionTokens = tokensOf(text);
    this.sendJson(res, 'chat', '/v1/chat/completions', 200, {
      id,
      object: 'chat.completion',
      created,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    });
  }

  // ------------------------------------------------------------ POST /v1/completions

  private async handleCompletion(raw: Json, res: ServerResponse, script: StreamScript | undefined): Promise<void> {
    rejectUnknown(raw, COMPLETION_FIELDS);
    checkString(raw, 'model', { required: true, nonEmpty: true });
    checkString(raw, 'prompt', { required: true });
    checkNumber(raw, 'temperature', 0, 2);
    checkNumber(raw, 'max_tokens', 1, Infinity, { integer: true });
    checkBoolean(raw, 'stream');
    const body = raw as unknown as CompletionRequestBody;
    this.chatModel(body.model);

    let text: string;
    if (script?.pieces) text = script.pieces.join('');
    else if (script?.text !== undefined) text = script.text;
    else if (this.completionReply) text = await this.completionReply(body);
    else text = `Echo: ${body.prompt}`;

    const id = newId('cmpl-');
    const created = now();
    if (body.stream === true || script) {
      const rnd = this.nextRandom();
      const pieces = script?.pieces ?? cutText(text, rnd);
      const head = { id, object: 'text_completion', created, model: body.model };
      const chunks: unknown[] = pieces.map((piece) => ({ ...head, choices: [{ text: piece, index: 0, logprobs: null, finish_reason: null }] }));
      chunks.push({ ...head, choices: [{ text: '', index: 0, logprobs: null, finish_reason: 'stop' }] });
      await this.writeSse(res, 'completions', '/v1/completions', chunks, script ?? {}, rnd);
      return;
    }
    const promptTokens = tokensOf(body.prompt);
    const completionTokens = tokensOf(text);
    this.sendJson(res, 'completions', '/v1/completions', 200, {
      id,
      object: 'text_completion',
      created,
      model: body.model,
      choices: [{ text, index: 0, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    });
  }

  // ------------------------------------------------------------ POST /v1/images/generations

  private validateImage(body: Json): ImageRequestBody {
    rejectUnknown(body, IMAGE_FIELDS);
    checkString(body, 'prompt', { required: true, nonEmpty: true });
    checkEnum(body, 'style', ['vivid', 'natural', 'preview', 'upscaled']);
    checkEnum(body, 'aspect_ratio', ['square', 'portrait', 'landscape']);
    if ('response_format' in body) {
      const rf = body.response_format;
      const list = Array.isArray(rf) ? rf : [rf];
      const what = "expected 'url', 'b64_json', 'hxd' or a non-empty array of them";
      if (Array.isArray(rf) && rf.length === 0) {
        throw invalid('response_format', `Invalid 'response_format': ${what}, but got an empty array instead.`);
      }
      for (const f of list) {
        if (!IMAGE_FORMATS.includes(f as ImageFormat)) {
          throw invalid('response_format', `Invalid value for 'response_format': ${what}, but got ${shown(f)} instead.`);
        }
      }
    }
    if ('user_selected_model' in body) {
      checkString(body, 'user_selected_model', { nonEmpty: true });
      const name = body.user_selected_model as string;
      if (!this.imageModels.some((m) => m.display_name === name)) {
        throw apiError(
          404,
          `The image model '${clip(name)}' does not exist. 'user_selected_model' takes a display_name from /v1/images/available-models: ${this.imageModels.map((m) => `'${m.display_name}'`).join(', ')}.`,
          'user_selected_model',
          'model_not_found',
        );
      }
    }
    checkString(body, 'negative_prompt');
    if ('seed' in body && !(typeof body.seed === 'number' && Number.isSafeInteger(body.seed))) {
      throw invalid('seed', `Invalid type for 'seed': expected an integer, but got ${typeof body.seed === 'number' ? String(body.seed) : describe(body.seed)} instead.`);
    }
    checkBoolean(body, 'disable_safety_checker');
    checkBoolean(body, 'force_prompt_enhancement');
    if ('reference_image_url' in body) {
      checkString(body, 'reference_image_url', { nonEmpty: true });
      let ok = false;
      try {
        const u = new URL(body.reference_image_url as string);
        ok = u.protocol === 'http:' || u.protocol === 'https:';
      } catch {
        ok = false;
      }
      if (!ok) {
        throw invalid('reference_image_url', `Invalid 'reference_image_url': expected an http(s) URL, but got ${shown(body.reference_image_url)} instead.`);
      }
    }
    if ('reference_image' in body) checkImageDataUrl('reference_image', body.reference_image, ['png']);
    checkNumber(body, 'denoising_strength', 0, 1);
    if (body.disable_safety_checker === true && !this.options.allowDisableSafetyChecker) {
      throw apiError(403, "Your account does not have permission to use 'disable_safety_checker'.", 'disable_safety_checker', 'permission_denied', 'permission_error');
    }
    return body as unknown as ImageRequestBody;
  }

  private async handleImages(raw: Json, res: ServerResponse): Promise<void> {
    const body = this.validateImage(raw);
    const ratio = body.aspect_ratio ?? 'square';
    const { width, height } = IMAGE_SIZES[ratio];
    const seed = body.seed ?? (this.options.reportSeed ? randomBytes(4).readUInt32BE(0) : null);
    const hash = createHash('sha256')
      .update(JSON.stringify([body.prompt, seed, body.style ?? 'vivid', body.negative_prompt ?? '']))
      .digest();
    const png = this.options.noisyImages
      ? await sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } }).png().toBuffer()
      : await sharp({ create: { width, height, channels: 3, background: { r: hash[0]!, g: hash[1]!, b: hash[2]! } } })
          .png()
          .toBuffer();

    const formats = body.response_format === undefined ? ['url'] : Array.isArray(body.response_format) ? body.response_format : [body.response_format];
    const item: Record<string, string> = {};
    if (formats.includes('url')) {
      const id = `img_${randomBytes(10).toString('hex')}`;
      this.images.set(id, png);
      item.url = `${this.baseUrl}/v1/images/view/${id}`;
    }
    if (formats.includes('b64_json')) item.b64_json = png.toString('base64');
    if (formats.includes('hxd')) item.hxd = png.toString('hex');
    if (body.force_prompt_enhancement === true) {
      item.revised_prompt = `A detailed, high-quality ${ratio} image of ${body.prompt}, with balanced composition and soft lighting.`;
    }
    this.sendJson(res, 'images', '/v1/images/generations', 200, { created: now(), ...(this.options.reportSeed ? { seed } : {}), data: [item] });
  }

  // ------------------------------------------------------------ writing

  private nextRandom(): () => number {
    this.streamCount += 1;
    return prng(this.options.seed * 7919 + this.streamCount);
  }

  private baseHeaders(): Record<string, string> {
    return { 'x-request-id': newId('req_') };
  }

  private send(res: ServerResponse, route: FakeRoute | undefined, path: string, status: number, body: Buffer, headers: Record<string, string>): void {
    if (res.destroyed || res.headersSent) return;
    res.writeHead(status, { ...this.baseHeaders(), 'content-length': String(body.length), ...headers });
    res.end(body);
    this.events.emit('response', { route, path, status, stream: false });
  }

  private sendJson(res: ServerResponse, route: FakeRoute | undefined, path: string, status: number, body: unknown, headers: Record<string, string> = {}): void {
    this.send(res, route, path, status, Buffer.from(JSON.stringify(body)), { 'content-type': 'application/json', ...headers });
  }

  private internalError(res: ServerResponse, err: unknown): void {
    const message = `The server had an error while processing your request: ${err instanceof Error ? err.message : String(err)}`;
    if (!res.headersSent && !res.destroyed) {
      this.sendJson(res, undefined, '', 500, { error: { message, type: 'server_error', param: null, code: null } });
    } else {
      res.destroy();
    }
  }

  /**
   * Serialises the chunks as SSE (with the script's faults) and writes the bytes in pieces of
   * 1–40 bytes cut at seeded positions, one event-loop turn apart (plus `chunkDelayMs` before
   * each event), so events and even UTF-8 characters cross network reads.
   */
  private async writeSse(res: ServerResponse, route: FakeRoute, path: string, chunks: unknown[], script: StreamScript, rnd: () => number): Promise<void> {
    const eol = script.crlf ? '\r\n' : '\n';
    const frames: string[] = [];
    const comment = `: keep-alive${eol}${eol}`;
    const dataFrame = (obj: unknown) => {
      const lines = script.multiLineData
        ? JSON.stringify(obj, null, 1).split('\n').map((l, i) => (i % 2 === 0 ? `data: ${l}` : `data:${l}`))
        : [`data: ${JSON.stringify(obj)}`];
      return lines.join(eol) + eol + eol;
    };
    const afterChunks = script.afterChunks ?? 2;
    let ending: 'done' | 'error' | 'drop' | 'stall' = 'done';
    if (script.comments) frames.push(comment);
    let sent = 0;
    for (const chunk of chunks) {
      if (script.dropAfterChunks !== undefined && sent >= script.dropAfterChunks) {
        ending = 'drop';
        break;
      }
      if (script.stallAfterChunks !== undefined && sent >= script.stallAfterChunks) {
        ending = 'stall';
        break;
      }
      frames.push(dataFrame(chunk));
      sent += 1;
      if (script.comments && sent % 2 === 0) frames.push(comment);
      if (sent === afterChunks && script.malformedLine !== undefined) frames.push(script.malformedLine + eol + eol);
      if (sent === afterChunks && script.errorMidStream !== undefined) {
        const e = script.errorMidStream;
        frames.push(dataFrame('error' in e ? e : { error: e }));
        ending = 'error';
        break;
      }
    }
    if (ending === 'done' && script.dropAfterChunks !== undefined && sent >= script.dropAfterChunks) ending = 'drop';
    if (ending === 'done' && !script.omitDone) frames.push(`data: [DONE]${eol}${eol}`);

    // Byte offsets where each frame starts, to add chunkDelayMs before events.
    const buffers = frames.map((f) => Buffer.from(f, 'utf8'));
    const starts: number[] = [];
    let offset = 0;
    for (const b of buffers) {
      starts.push(offset);
      offset += b.length;
    }
    const all = Buffer.concat(buffers);
    const delay = script.chunkDelayMs ?? this.options.chunkDelayMs;

    this.open += 1;
    res.once('close', () => {
      this.open -= 1;
      this.events.emit('streamClosed', { route, at: Date.now(), finished: res.writableFinished });
    });
    res.writeHead(200, {
      ...this.baseHeaders(),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    res.flushHeaders();
    this.events.emit('response', { route, path, status: 200, stream: true });

    let pos = 0;
    let frame = 1; // next frame start to account for (frame 0 starts with the headers)
    while (pos < all.length) {
      // Whole events: up to the next frame's start (`pos` is always at one, counted in `frame` after the first).
      const end = script.wholeEvents ? (starts[pos === 0 ? frame : frame + 1] ?? all.length) : Math.min(all.length, pos + 1 + Math.floor(rnd() * MAX_PIECE_BYTES));
      let newEvents = 0;
      while (frame < starts.length && starts[frame]! < end) {
        newEvents += 1;
        frame += 1;
      }
      await this.sleep(delay > 0 && (newEvents > 0 || pos === 0) ? delay * Math.max(newEvents, 1) : 0);
      if (res.destroyed || this.closed) return;
      res.write(all.subarray(pos, end));
      pos = end;
    }
    await this.sleep(0);
    if (res.destroyed) return;
    if (ending === 'stall') {
      // Keep the connection alive with comments (bytes, but no text) until the client leaves.
      while (!res.destroyed && !this.closed) {
        await this.sleep(script.keepAliveMs ?? 200);
        if (!res.destroyed) res.write(comment);
      }
      return;
    }
    if (ending === 'drop') {
      // Let the written bytes reach the kernel, then cut the connection (no terminating chunk).
      const socket = res.socket;
      for (let i = 0; socket && !socket.destroyed && socket.writableLength > 0 && i < 1000; i++) await this.sleep(1);
      socket?.destroy();
      return;
    }
    res.end();
  }
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}
