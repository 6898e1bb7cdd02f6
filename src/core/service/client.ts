/**
 * The client of the generation service. Its shape mirrors the spec's paths, as openai-node does:
 *
 *   service.chat.completions.create(body)       POST /v1/chat/completions   §4.1
 *   service.completions.create(body)            POST /v1/completions        §4.2
 *   service.images.generate(body)               POST /v1/images/generations §4.3
 *   service.images.view(idOrUrl)                GET  /v1/images/view/<id>   §2.4
 *   service.images.availableModels()            GET  /v1/images/available-models §4.4
 *   service.models.list()                       GET  /v1/models             §4.5
 *
 * `create` is overloaded on `stream`: `true` gives a {@link Stream} of chunks.
 */

import type { Span } from '@opentelemetry/api';
import type { z } from 'zod';
import { scrubSecrets } from '../../log.ts';
import { InvalidResponseError, NotAStreamError } from './errors.ts';
import type { QueueTicket, Release } from './gate.ts';
import { type OpenStream, ServiceHttp, type ServiceHttpOptions } from './http.ts';
import {
  type ChatCompletion,
  type ChatCompletionChunk,
  type ChatCompletionRequest,
  type Completion,
  type CompletionChunk,
  type CompletionRequest,
  chatCompletionRequestSchema,
  chatCompletionSchema,
  completionRequestSchema,
  completionSchema,
  type ImageGenerationRequest,
  type ImageGenerationResult,
  type ImageModel,
  imageGenerationRequestSchema,
  imageGenerationSchema,
  imageModelListSchema,
  type Model,
  modelListSchema,
  validateRequest,
} from './schemas.ts';
import { endGenerationSpan, type GenerationOutcome, outcomeOf, startGenerationSpan } from './spans.ts';
import { Stream } from './stream.ts';

/** Per-call options. */
export interface RequestOptions {
  /** Aborting it cancels the request (and a running stream), or takes it out of the queue. */
  signal?: AbortSignal;
  /**
   * The line of a generation request in the fair queue (gate.ts: the channel, and who to tell
   * of its place). Requests without one share the line `''`.
   */
  queue?: QueueTicket;
}

function parseResponse<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const result = schema.safeParse(body);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new InvalidResponseError(
      `${what} does not match the spec (${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'unknown shape'})`,
    );
  }
  return result.data;
}

/** The service client. Create one per base URL and `close()` it at shutdown. */
export class ServiceClient {
  readonly http: ServiceHttp;
  readonly chat: { completions: ChatCompletions };
  readonly completions: Completions;
  readonly images: Images;
  readonly models: Models;

  constructor(options: ServiceHttpOptions) {
    this.http = new ServiceHttp(options);
    const scrub = (text: string) => scrubSecrets(text, [options.apiKey]);
    this.chat = { completions: new ChatCompletions(this.http, scrub) };
    this.completions = new Completions(this.http, scrub);
    this.images = new Images(this.http);
    this.models = new Models(this.http);
  }

  /** Ends the keep-alive sockets. */
  close(): Promise<void> {
    return this.http.close();
  }
}

/**
 * Opens a streaming POST and wraps it in a Stream; `span` (spans.ts) ends when the stream is over,
 * with the answer's model, usage and finish reason, or with the failure to open it.
 */
async function openStream<T>(
  http: ServiceHttp,
  path: string,
  body: unknown,
  options: RequestOptions,
  scrub: (t: string) => string,
  span: Span,
): Promise<Stream<T>> {
  let gateRelease: Release;
  try {
    gateRelease = await http.gate.acquire(options.queue ?? { key: '' }, options.signal);
  } catch (error) {
    endGenerationSpan(span, undefined, error);
    throw error;
  }
  let stream: Stream<T> | undefined;
  const release = () => {
    endGenerationSpan(span, stream);
    gateRelease();
  };
  // The slot is held until the stream is over (read to the end, failed or left).
  let response: OpenStream;
  try {
    response = await http.openStream(path, { body, signal: options.signal });
  } catch (error) {
    endGenerationSpan(span, undefined, error);
    gateRelease();
    throw error;
  }
  // A 2xx that is not an event stream (an HTML page, a JSON body, compressed bytes the bot did
  // not ask for) is said as such, not as an answer cut off.
  const type = String(response.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  const encoding = String(response.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (type !== 'text/event-stream' || (encoding !== 'identity' && encoding !== '')) {
    // Read a little and let go (destroying it would raise an abort error nobody listens to).
    void response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    const error = new NotAStreamError(
      encoding !== 'identity' && encoding !== '' ? { encoding } : type ? { type } : 'untyped',
    );
    endGenerationSpan(span, undefined, error);
    gateRelease();
    throw error;
  }
  stream = new Stream<T>(response, { http, signal: options.signal, scrub, release });
  return stream;
}

/** A non-streamed generation request (`json`) in its span (spans.ts), ended with the answer or the failure. */
async function inGenerationSpan<T>(
  span: Span,
  request: () => Promise<T>,
  outcome: (answer: T) => GenerationOutcome = outcomeOf,
): Promise<T> {
  try {
    const answer = await request();
    endGenerationSpan(span, outcome(answer));
    return answer;
  } catch (error) {
    endGenerationSpan(span, undefined, error);
    throw error;
  }
}

/** §4.1 POST /v1/chat/completions. */
export class ChatCompletions {
  constructor(
    private readonly http: ServiceHttp,
    private readonly scrub: (t: string) => string,
  ) {}

  /**
   * Creates a chat completion.
   * @param body §4.1 parameters; validated before sending (InvalidRequestError names the field).
   * @returns a ChatCompletion (§2.2), or with `stream: true` a Stream of chunks whose
   *   `choices[0].delta.content` pieces join to the answer.
   * @throws ServiceError subclasses (see errors.ts).
   */
  create(
    body: ChatCompletionRequest & { stream: true },
    options?: RequestOptions,
  ): Promise<Stream<ChatCompletionChunk>>;
  create(body: ChatCompletionRequest & { stream?: false }, options?: RequestOptions): Promise<ChatCompletion>;
  create(body: ChatCompletionRequest, options?: RequestOptions): Promise<ChatCompletion | Stream<ChatCompletionChunk>>;
  async create(
    body: ChatCompletionRequest,
    options: RequestOptions = {},
  ): Promise<ChatCompletion | Stream<ChatCompletionChunk>> {
    const valid = validateRequest(chatCompletionRequestSchema, body);
    const span = startGenerationSpan('chat', valid.model);
    if (valid.stream)
      return openStream<ChatCompletionChunk>(this.http, '/v1/chat/completions', valid, options, this.scrub, span);
    return inGenerationSpan(span, async () => {
      const json = await this.http.json('POST', '/v1/chat/completions', { body: valid, signal: options.signal });
      return parseResponse(chatCompletionSchema, json, 'the chat completion');
    });
  }
}

/** §4.2 POST /v1/completions (legacy). */
export class Completions {
  constructor(
    private readonly http: ServiceHttp,
    private readonly scrub: (t: string) => string,
  ) {}

  /**
   * Creates a text completion.
   * @returns a Completion (§2.3), or with `stream: true` a Stream of chunks with `choices[0].text`.
   * @throws ServiceError subclasses.
   */
  create(body: CompletionRequest & { stream: true }, options?: RequestOptions): Promise<Stream<CompletionChunk>>;
  create(body: CompletionRequest & { stream?: false }, options?: RequestOptions): Promise<Completion>;
  async create(body: CompletionRequest, options: RequestOptions = {}): Promise<Completion | Stream<CompletionChunk>> {
    const valid = validateRequest(completionRequestSchema, body);
    const span = startGenerationSpan('text_completion', valid.model);
    if (valid.stream)
      return openStream<CompletionChunk>(this.http, '/v1/completions', valid, options, this.scrub, span);
    return inGenerationSpan(span, async () => {
      const json = await this.http.json('POST', '/v1/completions', { body: valid, signal: options.signal });
      return parseResponse(completionSchema, json, 'the text completion');
    });
  }
}

/** §4.3, §4.4 and the image view path of §2.4. */
export class Images {
  constructor(private readonly http: ServiceHttp) {}

  /**
   * Generates images.
   * @param body §4.3 parameters; validated before sending.
   * @returns the raw result (§2.4); see media.ts `imagesFromResult` for the bytes.
   * @throws ServiceError subclasses.
   */
  async generate(body: ImageGenerationRequest, options: RequestOptions = {}): Promise<ImageGenerationResult> {
    const valid = validateRequest(imageGenerationRequestSchema, body);
    const span = startGenerationSpan('generate_content', valid.user_selected_model);
    return inGenerationSpan(
      span,
      async () => {
        const release = await this.http.gate.acquire(options.queue ?? { key: '' }, options.signal);
        let json: unknown;
        try {
          json = await this.http.json('POST', '/v1/images/generations', { body: valid, signal: options.signal });
        } finally {
          release();
        }
        return parseResponse(imageGenerationSchema, json, 'the image generation result');
      },
      () => ({}),
    );
  }

  /**
   * Downloads a generated image, with the API key, from `{base_url}/v1/images/view/<id>`.
   * @param idOrUrl the image id, or the full `url` of a result item (must be on this service:
   *   the key is never sent elsewhere).
   * @returns the bytes and the server's content type.
   * @throws InvalidResponseError for a URL outside the service; ServiceError subclasses.
   */
  async view(
    idOrUrl: string,
    options: RequestOptions = {},
  ): Promise<{ data: Buffer; contentType: string | undefined }> {
    let path: string;
    if (/^https?:\/\//.test(idOrUrl)) {
      if (!this.http.isServiceUrl(idOrUrl))
        throw new InvalidResponseError('the image URL is not on the generation service');
      path = idOrUrl;
    } else {
      path = `/v1/images/view/${encodeURIComponent(idOrUrl)}`;
    }
    return this.http.bytes(path, options);
  }

  /** §4.4 image models (`display_name` is what `user_selected_model` takes). Accepts a bare array or `{ data }`. */
  async availableModels(options: RequestOptions = {}): Promise<ImageModel[]> {
    const json = await this.http.json('GET', '/v1/images/available-models', options);
    const list = parseResponse(imageModelListSchema, json, 'the image model list');
    return Array.isArray(list) ? list : list.data;
  }
}

/** §4.5 GET /v1/models. */
export class Models {
  constructor(private readonly http: ServiceHttp) {}

  /** All models; image models carry `type: "image"`. Accepts `{ data }` or a bare array. */
  async list(options: RequestOptions = {}): Promise<Model[]> {
    const json = await this.http.json('GET', '/v1/models', options);
    const list = parseResponse(modelListSchema, json, 'the model list');
    return Array.isArray(list) ? list : list.data;
  }
}

/** True for image models (§2.5: `type` = `image`). */
export function isImageModel(model: Model): boolean {
  return model.type === 'image';
}
