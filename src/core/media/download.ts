/**
 * Downloads of files users send (Discord CDN attachments, Slack `url_private_download`), with
 * a byte cap enforced while the body streams in: the declared `Content-Length` is checked
 * before any byte is read, and the download is cut off as soon as the bytes received pass the
 * cap, so a 50 MB file never sits in memory. undici's `request()` on a pool of our own (the
 * service client's pool is not shared: a slow CDN must not take its connections).
 *
 * Links users type are held to public addresses: isPublicAddress (addresses.ts: the IANA
 * special-purpose registries, written once there) judges the addresses a
 * `publicOnly` download connects to and those of a link the bot passes on to the service
 * ({@link checkForwardableUrl}).
 */

import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent, type Dispatcher, errors as undiciErrors } from 'undici';
import { english, type Sentence } from '../i18n/words.ts';
import { ipLiteralOf, isLocalhostName, isPublicAddress } from './addresses.ts';
import { type ByteRange, keepRange, rangeHeader } from './download-range.ts';
import { megabytes, type Reason, reason, reasonSentence } from './reasons.ts';

/** Why a download failed: the stable code and a sentence naming the file, for the user. */
export type DownloadFailure = 'too_large' | 'http_status' | 'html' | 'timeout' | 'network' | 'not_public';

/**
 * A file that could not be downloaded: `reason` says why (reasons.ts: the phrase for a list,
 * "took too long to download", or a sentence naming the file); `message` is that sentence in
 * English, for logs.
 */
export class DownloadError extends Error {
  readonly reason: Reason;

  /**
   * @param name the file's name, as users read it.
   * @param said why (`media.reason.*`, or a platform's reason with the same `form`/`name` values).
   */
  constructor(
    readonly code: DownloadFailure,
    readonly file: string,
    said: Reason,
    /** The HTTP status, when the server answered. */
    readonly status?: number,
  ) {
    super(english.say(reasonSentence(said, file)));
    this.name = 'DownloadError';
    this.reason = said;
  }

  /** The sentence for the user, naming the file. */
  get sentence(): Sentence {
    return reasonSentence(this.reason, this.file);
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
  /**
   * A URL a user typed (or any link that carries no credential): only https, and only to
   * public addresses ({@link isPublicAddress}): an IP literal that is not public, `localhost`,
   * or a name resolving to any address that is not public is refused before connecting (no
   * SSRF). Ignored when the Downloader was given a `dispatcher` (tests), except the https and
   * IP-literal checks.
   */
  publicOnly?: boolean;
  /**
   * Only these bytes of the file (`length` of them from `start`), for a reader that needs no
   * more (a text file's start, within a budget of characters): asked with an HTTP `Range`
   * header (RFC 9110 §14.2; a 206 answer), and cut from the body as it streams when the server
   * sends the whole file instead (a 200), reading no further. A range past the end is empty.
   * Never a `too_large` failure: at most `min(length, maxBytes)` bytes are kept.
   */
  range?: ByteRange;
}

/** A downloaded body and the content type the server gave it. */
export interface Downloaded {
  data: Buffer;
  /** e.g. `image/png`; lower case, without parameters; undefined when absent. */
  contentType: string | undefined;
  /** The whole file's size in bytes when the server said it (`Content-Range`, or `Content-Length` of a 200). */
  total?: number;
}

/** The shape of `dns.lookup` with `all: true`, injectable for tests. */
export type LookupAll = (
  hostname: string,
  options: { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A `lookup` for sockets that fails for names resolving to an address that is not public
 * (checked when connecting, on the very addresses used: no DNS rebinding).
 */
function publicLookup(resolve: LookupAll) {
  return (
    hostname: string,
    options: object,
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    resolve(hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as LookupAddress[];
      const refused = list.find((a) => !isPublicAddress(a.address));
      if (refused || list.length === 0)
        return callback(
          Object.assign(new Error(`${hostname} does not resolve to a public address`), { code: 'ENOTPUBLIC' }),
          [],
        );
      if ((options as { all?: boolean }).all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** The sentence ending of a refused private or local address. */
const NOT_FETCHED = reason('media.reason.private_address');

/** All the addresses `hostname` resolves to, or undefined when it does not resolve within `timeoutMs`. */
function resolveAll(lookup: LookupAll, hostname: string, timeoutMs: number): Promise<LookupAddress[] | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    try {
      lookup(hostname, { all: true }, (error, addresses) => {
        clearTimeout(timer);
        resolve(error ? undefined : addresses);
      });
    } catch {
      clearTimeout(timer);
      resolve(undefined);
    }
  });
}

/**
 * Checks a URL a user typed that the bot passes on for another server to fetch (the service's
 * `reference_image_url`, §4.3) instead of fetching it itself: only `http:`/`https:`; not
 * `localhost` or `*.localhost`; not an IP address outside the public ones
 * ({@link isPublicAddress}); not a name that resolves here (`lookup` with `all: true`, at most
 * `timeoutMs`, default 2,000 ms) to any address that is not public. A name that does not
 * resolve here (or not in time) is passed on: the service resolves it on its own network.
 * @param name how the URL is named in the error (e.g. "`reference_image_url`").
 * @returns the URL as parsed and serialized (WHATWG URL), which is what should be passed on, so
 *   that the service reads the very host checked here (`http://0x7f.1/` is `http://127.0.0.1/`).
 * @throws DownloadError `not_public` with a sentence naming `name`: not an http(s) address, or
 *   a private or local one.
 */
export async function checkForwardableUrl(
  url: string,
  options: { name: string; lookup: LookupAll; timeoutMs?: number },
): Promise<string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DownloadError('not_public', options.name, reason('media.reason.not_http'));
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new DownloadError('not_public', options.name, reason('media.reason.not_http'));
  const refused = new DownloadError('not_public', options.name, reason('media.reason.private_forward'));
  if (isLocalhostName(parsed.hostname)) throw refused;
  const literal = ipLiteralOf(parsed);
  if (literal !== undefined) {
    if (!isPublicAddress(literal)) throw refused;
    return parsed.href;
  }
  const addresses = await resolveAll(options.lookup, parsed.hostname, options.timeoutMs ?? 2_000);
  if (addresses?.some((a) => !isPublicAddress(a.address))) throw refused;
  return parsed.href;
}

/** Downloads user files over HTTP(S) with caps. One per bot; `close()` ends its sockets. */
export class Downloader {
  private readonly agent: Agent;
  private readonly publicAgent: Agent;
  /** The name resolution of `publicOnly` downloads (`dns.lookup` unless one was given), for checks of links the bot passes on ({@link checkForwardableUrl}). */
  readonly lookup: LookupAll;

  /**
   * @param options.timeoutMs longest time for one whole download, in ms (default 30,000).
   * @param options.connections sockets per origin (default 16).
   * @param options.lookup name resolution for `publicOnly` downloads (default `dns.lookup`).
   */
  constructor(
    private readonly options: {
      timeoutMs?: number;
      connections?: number;
      dispatcher?: Dispatcher;
      lookup?: LookupAll;
    } = {},
  ) {
    const common = { connections: options.connections ?? 16, headersTimeout: 15_000, bodyTimeout: 15_000 };
    this.agent = new Agent({ ...common, connectTimeout: 10_000 });
    this.lookup = options.lookup ?? (dnsLookup as unknown as LookupAll);
    this.publicAgent = new Agent({ ...common, connect: { timeout: 10_000, lookup: publicLookup(this.lookup) } });
  }

  /**
   * GETs `url` and returns its body, refusing more than `maxBytes`. Redirects are not
   * followed (a credential must not travel to another host); a 3xx is an `http_status`.
   * @throws DownloadError: `too_large` (declared or streamed size past the cap), `http_status`
   *   (not a 2xx), `html` (a web page instead of a file: typically a login page when the token
   *   lacks a scope), `timeout`, `network`. An abort of `signal` rejects with its reason.
   */
  async download(url: string, options: DownloadOptions): Promise<Downloaded> {
    if (options.publicOnly) this.checkPublicUrl(url, options.name);
    const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 30_000);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let response: Dispatcher.ResponseData;
    try {
      response = await (this.options.dispatcher ?? (options.publicOnly ? this.publicAgent : this.agent)).request({
        origin: new URL(url).origin,
        path: `${new URL(url).pathname}${new URL(url).search}`,
        method: 'GET',
        headers: {
          'user-agent': 'genbot (attachments)',
          ...(options.headers ?? {}),
          ...(options.range ? { range: rangeHeader(options.range) } : {}),
        },
        signal,
      });
    } catch (error) {
      throw this.failure(error, options, timeout);
    }
    const { statusCode, headers, body } = response;
    // A body given up on is destroyed, which makes undici emit an AbortError on it: expected, not a fault.
    body.on('error', () => undefined);
    if (options.range && statusCode === 416) {
      body.destroy();
      return { data: Buffer.alloc(0), contentType: undefined };
    }
    const contentType = this.checkResponse(response, options);
    if (options.range) {
      try {
        return { ...(await keepRange(body, { statusCode, headers }, options.range, options.maxBytes)), contentType };
      } catch (error) {
        throw this.failure(error, options, timeout);
      }
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

  /**
   * The response's content type (lower case, without parameters), once its status and type say
   * it is the file. @throws DownloadError `http_status` (not a 2xx) or `html` (a web page); the body is destroyed then.
   */
  private checkResponse(response: Dispatcher.ResponseData, options: DownloadOptions): string | undefined {
    const { statusCode, headers, body } = response;
    const contentType =
      String(headers['content-type'] ?? '')
        .split(';')[0]!
        .trim()
        .toLowerCase() || undefined;
    if (statusCode < 200 || statusCode >= 300) {
      body.destroy();
      throw new DownloadError(
        'http_status',
        options.name,
        reason('media.reason.http_status', { status: String(statusCode) }),
        statusCode,
      );
    }
    if (contentType === 'text/html') {
      body.destroy();
      throw new DownloadError('html', options.name, reason('media.reason.html'), statusCode);
    }
    return contentType;
  }

  /** Closes the pools' sockets. */
  async close(): Promise<void> {
    await Promise.all([this.agent.close(), this.publicAgent.close()]);
  }

  /** @throws DownloadError `not_public` for a URL that is not https or names a non-public address. */
  private checkPublicUrl(url: string, name: string): void {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:') throw new DownloadError('not_public', name, reason('media.reason.not_https'));
    const literal = ipLiteralOf(parsed);
    if (isLocalhostName(parsed.hostname) || (literal !== undefined && !isPublicAddress(literal)))
      throw new DownloadError('not_public', name, NOT_FETCHED);
  }

  private tooLarge(options: DownloadOptions, declared?: number): DownloadError {
    const max = megabytes(options.maxBytes);
    return new DownloadError(
      'too_large',
      options.name,
      declared === undefined
        ? reason('media.reason.too_large_over', { max })
        : reason('media.reason.too_large', { size: megabytes(declared), max, what: 'file' }),
    );
  }

  private failure(error: unknown, options: DownloadOptions, timeout: AbortSignal): Error {
    if (options.signal?.aborted)
      return options.signal.reason instanceof Error ? options.signal.reason : new Error('aborted');
    if (
      timeout.aborted ||
      error instanceof undiciErrors.HeadersTimeoutError ||
      error instanceof undiciErrors.BodyTimeoutError
    ) {
      return new DownloadError('timeout', options.name, reason('media.reason.download_timeout'));
    }
    if (
      (error as { code?: string; cause?: { code?: string } }).code === 'ENOTPUBLIC' ||
      (error as { cause?: { code?: string } }).cause?.code === 'ENOTPUBLIC'
    ) {
      return new DownloadError('not_public', options.name, NOT_FETCHED);
    }
    return new DownloadError('network', options.name, reason('media.reason.network'));
  }
}
