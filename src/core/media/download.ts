/**
 * Downloads of files users send (Discord CDN attachments, Slack `url_private_download`), with
 * a byte cap enforced while the body streams in: the declared `Content-Length` is checked
 * before any byte is read, and the download is cut off as soon as the bytes received pass the
 * cap, so a 50 MB file never sits in memory. undici's `request()` on a pool of our own (the
 * service client's pool is not shared: a slow CDN must not take its connections).
 */
import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';

/** Why a download failed: the stable code and a sentence naming the file, for the user. */
export type DownloadFailure = 'too_large' | 'http_status' | 'html' | 'timeout' | 'network' | 'not_public';

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
  /**
   * A URL a user typed: only https, and only to public addresses (a request to loopback,
   * private, link-local or metadata addresses is refused before connecting: no SSRF).
   */
  publicOnly?: boolean;
}

/** A downloaded body and the content type the server gave it. */
export interface Downloaded {
  data: Buffer;
  /** e.g. `image/png`; lower case, without parameters; undefined when absent. */
  contentType: string | undefined;
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

/** Addresses a user-typed URL may not reach: loopback, private, shared, link-local (cloud metadata), unspecified, multicast. */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 3]] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');

/** Whether an IP address is one a user-typed URL may reach (IPv4-mapped IPv6 judged as IPv4). */
export function isPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const ip = mapped ?? address;
  const family = isIP(ip);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/** The shape of `dns.lookup` with `all: true`, injectable for tests. */
export type LookupAll = (hostname: string, options: { all: true }, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/**
 * A `lookup` for sockets that fails for names resolving to an address that is not public
 * (checked when connecting, on the very addresses used: no DNS rebinding).
 */
function publicLookup(resolve: LookupAll) {
  return (hostname: string, options: object, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void): void => {
  resolve(hostname, { all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const list = addresses as LookupAddress[];
    const refused = list.find((a) => !isPublicAddress(a.address));
    if (refused || list.length === 0) return callback(Object.assign(new Error(`${hostname} does not resolve to a public address`), { code: 'ENOTPUBLIC' }), []);
    if ((options as { all?: boolean }).all) return callback(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  });
  };
}

/** Downloads user files over HTTP(S) with caps. One per bot; `close()` ends its sockets. */
export class Downloader {
  private readonly agent: Agent;
  private readonly publicAgent: Agent;

  /**
   * @param options.timeoutMs longest time for one whole download, in ms (default 30,000).
   * @param options.connections sockets per origin (default 16).
   * @param options.lookup name resolution for `publicOnly` downloads (default `dns.lookup`).
   */
  constructor(private readonly options: { timeoutMs?: number; connections?: number; dispatcher?: Dispatcher; lookup?: LookupAll } = {}) {
    const common = { connections: options.connections ?? 16, headersTimeout: 15_000, bodyTimeout: 15_000 };
    this.agent = new Agent({ ...common, connectTimeout: 10_000 });
    this.publicAgent = new Agent({ ...common, connect: { timeout: 10_000, lookup: publicLookup(options.lookup ?? (dnsLookup as unknown as LookupAll)) } });
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

  /** Closes the pools' sockets. */
  async close(): Promise<void> {
    await Promise.all([this.agent.close(), this.publicAgent.close()]);
  }

  /** @throws DownloadError `not_public` for a URL that is not https or names a non-public address. */
  private checkPublicUrl(url: string, name: string): void {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:') throw new DownloadError('not_public', name, 'is not an https address');
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    if (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && !isPublicAddress(host))) {
      throw new DownloadError('not_public', name, 'points to a private or local address, which the bot does not fetch');
    }
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
    if ((error as { code?: string; cause?: { code?: string } }).code === 'ENOTPUBLIC' || (error as { cause?: { code?: string } }).cause?.code === 'ENOTPUBLIC') {
      return new DownloadError('not_public', options.name, 'points to a private or local address, which the bot does not fetch');
    }
    return new DownloadError('network', options.name, 'could not be downloaded (network error)');
  }
}
