/**
 * Downloads of files users send (Discord CDN attachments, Slack `url_private_download`), with
 * a byte cap enforced while the body streams in: the declared `Content-Length` is checked
 * before any byte is read, and the download is cut off as soon as the bytes received pass the
 * cap, so a 50 MB file never sits in memory. undici's `request()` on a pool of our own (the
 * service client's pool is not shared: a slow CDN must not take its connections).
 */
import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';

/** Why a download failed: the stable code and a sentence naming the file, for the user. */
export type DownloadFailure = 'too_large' | 'http_status' | 'html' | 'timeout' | 'network';

/**
 * A file that could not be downloaded: `message` is the sentence for the user (naming the
 * file), `reason` the same without the name, for a list ("took too long to download").
 */
export class DownloadError extends Error {
  readonly reason: string;

  constructor(
    readonly code: DownloadFailure,
    name: string,
    reason: string,
    /** The HTTP status, when the server answered. */
    readonly status?: number,
  ) {
    super(`${name} ${reason}.`);
    this.name = 'DownloadError';
    this.reason = reason;
  }
}

/** Options of one {@link Downloader.download}. */
export interface DownloadOptions {
  /** Largest body accepted, in bytes. */
  maxBytes: number;
  /** Request headers (e.g. Slack's `Authorization: Bearer <bot token>`). Never logged. */
  headers?: Record<string, string>;
  /** Cancels the download (the command was stopped). */
  signal?: AbortSignal;
  /** The file's name, for messages. */
  name: string;
}

/** A downloaded body and the content type the server gave it. */
export interface Downloaded {
  data: Buffer;
  /** e.g. `image/png`; lower case, without parameters; undefined when absent. */
  contentType: string | undefined;
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

/** Downloads user files over HTTP(S) with caps. One per bot; `close()` ends its sockets. */
export class Downloader {
  private readonly agent: Agent;

  /**
   * @param options.timeoutMs longest time for one whole download, in ms (default 30,000).
   * @param options.connections sockets per origin (default 16).
   */
  constructor(private readonly options: { timeoutMs?: number; connections?: number; dispatcher?: Dispatcher } = {}) {
    this.agent = new Agent({ connections: options.connections ?? 16, connectTimeout: 10_000, headersTimeout: 15_000, bodyTimeout: 15_000 });
  }

  /**
   * GETs `url` and returns its body, refusing more than `maxBytes`. Redirects are not
   * followed (a credential must not travel to another host); a 3xx is an `http_status`.
   * @throws DownloadError: `too_large` (declared or streamed size past the cap), `http_status`
   *   (not a 2xx), `html` (a web page instead of a file: typically a login page when the token
   *   lacks a scope), `timeout`, `network`. An abort of `signal` rejects with its reason.
   */
  async download(url: string, options: DownloadOptions): Promise<Downloaded> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 30_000);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let response: Dispatcher.ResponseData;
    try {
      response = await (this.options.dispatcher ?? this.agent).request({
        origin: new URL(url).origin,
        path: `${new URL(url).pathname}${new URL(url).search}`,
        method: 'GET',
        headers: { 'user-agent': 'genbot (attachments)', ...(options.headers ?? {}) },
        signal,
      });
    } catch (error) {
      throw this.failure(error, options, timeout);
    }
    const { statusCode, headers, body } = response;
    // A body given up on is destroyed, which makes undici emit an AbortError on it: expected, not a fault.
    body.on('error', () => undefined);
    const contentType = String(headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() || undefined;
    if (statusCode < 200 || statusCode >= 300) {
      body.destroy();
      throw new DownloadError('http_status', options.name, `could not be downloaded (HTTP ${statusCode})`, statusCode);
    }
    if (contentType === 'text/html') {
      body.destroy();
      throw new DownloadError('html', options.name, 'came back as a web page instead of a file', statusCode);
    }
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      body.destroy();
      throw this.tooLarge(options, declared);
    }
    const chunks: Buffer[] = [];
    let received = 0;
    try {
      for await (const chunk of body) {
        received += (chunk as Buffer).byteLength;
        if (received > options.maxBytes) {
          body.destroy();
          throw this.tooLarge(options);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (error) {
      if (error instanceof DownloadError) throw error;
      throw this.failure(error, options, timeout);
    }
    return { data: Buffer.concat(chunks, received), contentType };
  }

  /** Closes the pool's sockets. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  private tooLarge(options: DownloadOptions, declared?: number): DownloadError {
    const size = declared === undefined ? `over ${mb(options.maxBytes)}` : mb(declared);
    return new DownloadError('too_large', options.name, `is too large (${size}; files up to ${mb(options.maxBytes)} are read)`);
  }

  private failure(error: unknown, options: DownloadOptions, timeout: AbortSignal): Error {
    if (options.signal?.aborted) return options.signal.reason instanceof Error ? options.signal.reason : new Error('aborted');
    if (timeout.aborted || error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError) {
      return new DownloadError('timeout', options.name, 'took too long to download');
    }
    return new DownloadError('network', options.name, 'could not be downloaded (network error)');
  }
}
