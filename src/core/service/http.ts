/**
 * The HTTP transport of the service client: undici with one keep-alive Pool per origin,
 * Bearer auth (spec §5), JSON bodies, timeouts, retries, and error mapping (errors.ts).
 */

import { type Dispatcher, Pool, errors as undiciErrors } from 'undici';
import { CONFIG_DEFAULTS } from '../../config.ts';
import { scrubSecrets } from '../../log.ts';
import { errorFromResponse } from './error-responses.ts';
import {
  AbortedError,
  ConnectionError,
  InvalidResponseError,
  RateLimitError,
  ServerError,
  ServiceError,
  TimeoutError,
} from './errors.ts';
import { FairGate } from './gate.ts';
import { requestStream, type StreamResponse } from './stream-body.ts';

/** Options of {@link ServiceHttp}. Times are in ms. */
export interface ServiceHttpOptions {
  /** Base URL, with or without `/v1` and trailing slashes, e.g. `https://api.example.com/v1/`. */
  baseUrl: string;
  apiKey: string;
  /** TCP (+TLS) connect timeout; default 10,000 ms. */
  connectTimeoutMs?: number;
  /** Time from sending the request to the response headers; default 60,000 ms. */
  headersTimeoutMs?: number;
  /** Longest silence between two body chunks; default 60,000 ms. */
  bodyTimeoutMs?: number;
  /** Retries after the first attempt, on 429/5xx/connection failures before any response byte; default 2. */
  maxRetries?: number;
  /** Longest `retry-after` that is waited out; a longer one fails at once. Default 20,000 ms. */
  maxRetryAfterMs?: number;
  /** First backoff step (doubled each retry, with jitter); default 500 ms. */
  backoffBaseMs?: number;
  /** Called before each retry (for logs and metrics). */
  onRetry?: (info: { attempt: number; delayMs: number; error: ServiceError; path: string }) => void;
  /**
   * Called after each attempt (metrics): the endpoint (`/v1/images/view/<id>` as
   * `/v1/images/view`), the HTTP status or the error code when there was none, and the time
   * to the response headers (or the failure), in ms.
   */
  onResponse?: (info: { endpoint: string; status: number | string; ms: number }) => void;
  /** Waits `ms`; injectable so tests need not sleep. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Generation requests running at once (streams until their last chunk, image generations),
   * and the keep-alive connections of the pool (`SERVICE_MAX_CONCURRENCY`); default 256. More
   * wait in a queue fair across channels (gate.ts). HTTP/2 is used where the service offers
   * it (ALPN), so many streams can share a connection.
   */
  maxConcurrency?: number;
}

/** An open response whose body the caller reads and must consume or destroy. */
export interface OpenResponse<B = Dispatcher.ResponseData['body']> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: B;
}

/** An open streamed response (stream-body.ts): its body read in steps of all that arrived. */
export type OpenStream = OpenResponse<StreamResponse['body']>;

/** What one attempt of a request gives: its status, headers and a body that can be read as text. */
type Answered<B> = { statusCode: number; headers: Record<string, string | string[] | undefined>; body: B };

function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError(signal.reason));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortedError(signal?.reason));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Splits a configured base URL into origin and path prefix (without `/v1`).
 * `https://h/x/v1/` → `{ origin: 'https://h', prefix: '/x' }`.
 */
export function splitBaseUrl(baseUrl: string): { origin: string; prefix: string } {
  const url = new URL(baseUrl);
  const prefix = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return { origin: url.origin, prefix };
}

/** How long {@link ServiceHttp.close} lets open requests finish before aborting them, in ms. */
const CLOSE_GRACE_MS = 1_000;

/** The transport. One instance per base URL; `close()` ends its keep-alive sockets. */
export class ServiceHttp {
  readonly origin: string;
  readonly prefix: string;
  private readonly pool: Pool;
  /** Admits generation requests (gate.ts). */
  readonly gate: FairGate;
  private readonly options: Required<Omit<ServiceHttpOptions, 'onRetry' | 'onResponse'>> &
    Pick<ServiceHttpOptions, 'onRetry' | 'onResponse'>;

  constructor(options: ServiceHttpOptions) {
    const { origin, prefix } = splitBaseUrl(options.baseUrl);
    this.origin = origin;
    this.prefix = prefix;
    this.options = {
      ...CONFIG_DEFAULTS.service,
      maxRetries: 2,
      maxRetryAfterMs: 20_000,
      backoffBaseMs: 500,
      sleep: sleepFor,
      ...options,
    };
    this.gate = new FairGate(this.options.maxConcurrency);
    this.pool = new Pool(origin, {
      connect: { timeout: this.options.connectTimeoutMs },
      keepAliveTimeout: 30_000,
      connections: this.options.maxConcurrency,
      // HTTP/2 where the service's TLS offers it (ALPN); plain HTTP/1.1 otherwise.
      allowH2: true,
    });
  }

  /** The absolute URL of a spec path such as `/v1/models`. */
  url(path: string): string {
    return `${this.origin}${this.prefix}${path}`;
  }

  /** True when `url` points at this service (so it may carry the API key). */
  isServiceUrl(url: string): boolean {
    try {
      const u = new URL(url);
      return u.origin === this.origin && u.pathname.startsWith(`${this.prefix}/`);
    } catch {
      return false;
    }
  }

  /**
   * Sends a request and returns the open 2xx response (body unread).
   * Retries 429/5xx/connection failures (never after a 2xx arrived: the caller owns it then).
   * @param path absolute path on the service, e.g. `/v1/chat/completions`, or a full service URL.
   * @throws ServiceError subclasses; the API key never appears in their messages.
   */
  open(
    method: 'GET' | 'POST',
    path: string,
    init: { body?: unknown; signal?: AbortSignal; accept?: string } = {},
  ): Promise<OpenResponse> {
    return this.opened(method, path, init, (options) => this.pool.request(options));
  }

  /**
   * Like {@link open} for a streamed POST (`accept: text/event-stream`), its body read through
   * undici's dispatch API (stream-body.ts): each step of the reader takes all that arrived.
   * @throws ServiceError subclasses.
   */
  openStream(path: string, init: { body?: unknown; signal?: AbortSignal }): Promise<OpenStream> {
    return this.opened('POST', path, { ...init, accept: 'text/event-stream' }, (options) =>
      requestStream(this.pool, options),
    );
  }

  /** {@link open}'s request and retries, each attempt sent by `send`. */
  private async opened<B extends { text(): Promise<string> }>(
    method: 'GET' | 'POST',
    path: string,
    init: { body?: unknown; signal?: AbortSignal; accept?: string },
    send: (options: Dispatcher.DispatchOptions & { signal?: AbortSignal | undefined }) => Promise<Answered<B>>,
  ): Promise<OpenResponse<B>> {
    const target = path.startsWith('http') ? new URL(path) : new URL(this.url(path));
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      accept: init.accept ?? 'application/json',
    };
    const body = init.body === undefined ? undefined : JSON.stringify(init.body);
    if (body !== undefined) headers['content-type'] = 'application/json';

    const endpoint = target.pathname.slice(this.prefix.length).replace(/^(\/v1\/images\/view)\/.*$/, '$1');
    for (let attempt = 0; ; attempt++) {
      let error: ServiceError;
      const started = performance.now();
      try {
        const response = await send({
          origin: this.origin,
          path: target.pathname + target.search,
          method,
          headers,
          body,
          signal: init.signal,
          headersTimeout: this.options.headersTimeoutMs,
          bodyTimeout: this.options.bodyTimeoutMs,
        });
        this.options.onResponse?.({ endpoint, status: response.statusCode, ms: performance.now() - started });
        if (response.statusCode >= 200 && response.statusCode < 300) {
          return { status: response.statusCode, headers: response.headers, body: response.body };
        }
        error = await this.errorFrom(response);
      } catch (cause) {
        error = this.mapTransportError(cause, init.signal);
        this.options.onResponse?.({ endpoint, status: error.code, ms: performance.now() - started });
      }
      const delay = this.retryDelay(error, attempt);
      if (delay === undefined) throw error;
      this.options.onRetry?.({ attempt: attempt + 1, delayMs: delay, error, path: target.pathname });
      await this.options.sleep(delay, init.signal);
    }
  }

  /** Sends a request and parses the JSON answer. @throws ServiceError, InvalidResponseError on non-JSON. */
  async json(
    method: 'GET' | 'POST',
    path: string,
    init: { body?: unknown; signal?: AbortSignal } = {},
  ): Promise<unknown> {
    const response = await this.open(method, path, init);
    const text = await this.readText(response.body, init.signal);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new InvalidResponseError(`${path} answered ${response.status} with a body that is not JSON`);
    }
  }

  /** Sends a request and returns the raw body bytes and content type (images). */
  async bytes(
    path: string,
    init: { signal?: AbortSignal } = {},
  ): Promise<{ data: Buffer; contentType: string | undefined }> {
    const response = await this.open('GET', path, { ...init, accept: 'image/*,*/*' });
    try {
      const data = Buffer.from(await response.body.arrayBuffer());
      const ct = response.headers['content-type'];
      return { data, contentType: Array.isArray(ct) ? ct[0] : ct };
    } catch (cause) {
      throw this.mapTransportError(cause, init.signal);
    }
  }

  /** Maps an error thrown while reading a body (timeouts, resets, aborts) into the hierarchy. */
  mapTransportError(cause: unknown, signal?: AbortSignal): ServiceError {
    if (cause instanceof ServiceError) return cause;
    if (signal?.aborted) return new AbortedError(signal.reason);
    if (cause instanceof undiciErrors.ConnectTimeoutError) return new TimeoutError('connect', cause);
    if (cause instanceof undiciErrors.HeadersTimeoutError) return new TimeoutError('headers', cause);
    if (cause instanceof undiciErrors.BodyTimeoutError) return new TimeoutError('body', cause);
    if (cause instanceof undiciErrors.RequestAbortedError || (cause as Error | undefined)?.name === 'AbortError') {
      return new AbortedError();
    }
    const message =
      cause instanceof Error
        ? `${(cause as NodeJS.ErrnoException).code ?? cause.name}: ${cause.message}`
        : String(cause);
    return new ConnectionError(this.scrub(`cannot reach ${this.origin}: ${message}`), cause);
  }

  /**
   * Closes the keep-alive sockets. Called at shutdown, once the answers have drained: a request
   * still open then (a background model-list refresh the service never answers) is given
   * {@link CLOSE_GRACE_MS} and then aborted, so a stop never waits for the request timeout.
   */
  async close(): Promise<void> {
    const closed = this.pool.close();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), CLOSE_GRACE_MS);
    });
    const outcome = await Promise.race([closed.then(() => 'closed' as const), late]);
    clearTimeout(timer);
    if (outcome === 'late') await this.pool.destroy();
    await closed.catch(() => undefined);
  }

  private async readText(body: OpenResponse['body'], signal?: AbortSignal): Promise<string> {
    try {
      return await body.text();
    } catch (cause) {
      throw this.mapTransportError(cause, signal);
    }
  }

  private async errorFrom(response: Answered<{ text(): Promise<string> }>): Promise<ServiceError> {
    let parsed: unknown;
    try {
      const text = await response.body.text();
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    } catch {
      parsed = undefined;
    }
    const error = errorFromResponse(response.statusCode, parsed, response.headers['retry-after']);
    Object.defineProperty(error, 'message', { value: this.scrub(error.message) });
    // The sentence's values hold the service's text too (its `message`): scrubbed alike.
    const values = Object.fromEntries(
      Object.entries(error.sentence.values ?? {}).map(([k, v]) => [k, typeof v === 'string' ? this.scrub(v) : v]),
    );
    Object.defineProperty(error, 'sentence', { value: { ...error.sentence, values } });
    return error;
  }

  private scrub(text: string): string {
    return scrubSecrets(text, [this.options.apiKey]);
  }

  /** ms to wait before the next attempt, or `undefined` when the error is final. */
  private retryDelay(error: ServiceError, attempt: number): number | undefined {
    if (attempt >= this.options.maxRetries) return undefined;
    const retryable =
      error instanceof RateLimitError || error instanceof ServerError || error instanceof ConnectionError;
    if (!retryable) return undefined;
    const backoff = Math.min(8_000, this.options.backoffBaseMs * 2 ** attempt) * (0.75 + Math.random() * 0.25);
    if (error instanceof RateLimitError && error.retryAfterMs !== undefined) {
      if (error.retryAfterMs > this.options.maxRetryAfterMs) return undefined;
      return Math.max(error.retryAfterMs, 0);
    }
    return backoff;
  }
}
