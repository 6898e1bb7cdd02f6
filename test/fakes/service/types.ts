/**
 * The fake service's public types: routes, models, options, the validated request bodies, the
 * recorded requests, scripted streams and behaviours, reply functions and events.
 */
import type { IncomingHttpHeaders } from 'node:http';

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

/** Options of `FakeService.start`; every one has a default. */
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

/** A part of a chat message's content (§4.1): text, or an image as a data URL. */
export type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
/** A chat message (§4.1): a role and a string or content parts. */
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
/** A `response_format` of §4.3. */
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
/**
 * The `usage` of a streamed chat reply, sent in a chunk of its own with empty `choices` after the
 * last one (as OpenAI's `stream_options.include_usage`): fixed token counts, or `counted` (the
 * fake's own counts of the prompt and reply, as its non-streamed answers report them).
 */
export type StreamUsage = { prompt_tokens: number; completion_tokens: number } | 'counted';

export interface StreamScript {
  /** Ends the stream with a usage chunk (wins over `setStreamUsage`). */
  usage?: StreamUsage;
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
  /** Where `malformedLine` / `errorMidStream` go: after this many chunks (0: `errorMidStream` first). Default 2 (role chunk + one piece). */
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
   * Hold the stream after this many chunks (the role chunk counts) until `until` resolves, then
   * go on: an answer kept in flight for exactly as long as a test needs, without a timer.
   */
  hold?: { afterChunks: number; until: Promise<unknown> };
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

/** Makes the chat reply from the validated body (`setChatReply`). */
export type ChatReply = (body: ChatRequestBody) => string | Promise<string>;
/** Makes the text-completion reply from the validated body (`setCompletionReply`). */
export type CompletionReply = (body: CompletionRequestBody) => string | Promise<string>;

/** What `FakeService.events` announces. */
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
