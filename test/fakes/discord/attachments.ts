/**
 * Attachments and their signed CDN URLs. Discord signs attachment URLs (user and bot
 * uploads alike): `?ex=<hex expiry>&is=<hex issue time>&hm=<signature>&`, valid until `ex`
 * (docs: reference.mdx, "Signed Attachment CDN URLs"). The fake signs the path, `ex` and `is`
 * with HMAC-SHA256 under a per-fake key; the CDN (routes/cdn.ts) serves only exact matches.
 *
 * Bytes are kept for uploads and for user attachments given as `data`; a `stream` attachment
 * is a length only, its bytes generated in 64 KiB chunks when read (a repeating ASCII pattern).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FakeAttachment } from './model.ts';
import type { FakeState } from './state.ts';
import type { UserAttachmentOptions } from './types.ts';

/** Chunk size of the CDN, in bytes. */
export const CHUNK_BYTES = 64 * 1024;
/** How long a signed URL is valid, in seconds (Discord's are about a day). */
const URL_LIFETIME_S = 24 * 60 * 60;

/** 64 bytes, repeated: the content of generated attachments (64 divides the chunk size). */
const UNIT = Buffer.from('genbot fake-discord CDN stream: deterministic filler bytes 0123\n', 'ascii');
/** One full chunk of the pattern, shared by every generated download (never copied). */
const PATTERN_CHUNK = Buffer.alloc(CHUNK_BYTES, UNIT);

const EXTENSION_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  txt: 'text/plain; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/** What Discord would say the file is: the given type unless generic, else from the extension. */
export function contentTypeFor(filename: string, given: string | undefined): string | undefined {
  if (given && given !== 'application/octet-stream') return given;
  const ext = filename.split('.').pop()?.toLowerCase() ?? '';
  return EXTENSION_TYPES[ext] ?? given;
}

/** The path an attachment is served at (filename percent-encoded), without the query. */
export const attachmentPath = (channelId: string, attachmentId: string, filename: string) =>
  `/attachments/${channelId}/${attachmentId}/${encodeURIComponent(filename)}`;

function signature(state: FakeState, path: string, ex: string, is: string): string {
  return createHmac('sha256', state.cdnSecret).update(`${path}\n${ex}\n${is}`).digest('hex');
}

/** The signed URL of a path and its media-proxy twin, valid for a day from now. */
function signedUrls(state: FakeState, path: string): { url: string; proxyUrl: string } {
  const issued = Math.floor(Date.now() / 1000);
  const is = issued.toString(16);
  const ex = (issued + URL_LIFETIME_S).toString(16);
  const query = `?ex=${ex}&is=${is}&hm=${signature(state, path, ex, is)}&`;
  return { url: `${state.origin}${path}${query}`, proxyUrl: `${state.origin}/media${path}${query}` };
}

/** Whether `query` holds this path's exact, unexpired signature. */
export function hasValidSignature(state: FakeState, path: string, query: URLSearchParams): boolean {
  const ex = query.get('ex');
  const is = query.get('is');
  const hm = query.get('hm');
  if (!ex || !is || !hm || !/^[0-9a-f]+$/.test(ex) || !/^[0-9a-f]{64}$/.test(hm)) return false;
  const expected = Buffer.from(signature(state, path, ex, is), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(hm, 'hex'))) return false;
  return parseInt(ex, 16) * 1000 > Date.now();
}

function* slices(data: Buffer): Generator<Buffer> {
  for (let offset = 0; offset < data.length; offset += CHUNK_BYTES) yield data.subarray(offset, offset + CHUNK_BYTES);
}

/** `bytes` of the pattern in chunks: full chunks are the one shared buffer, the last a view of it. */
function* generated(bytes: number): Generator<Buffer> {
  for (let offset = 0; offset < bytes; offset += CHUNK_BYTES)
    yield PATTERN_CHUNK.subarray(0, Math.min(CHUNK_BYTES, bytes - offset));
}

/** An uploaded file of the bot, bytes kept. */
export function storedAttachment(
  state: FakeState,
  channelId: string,
  file: {
    id: string;
    filename: string;
    data: Buffer;
    contentType: string | undefined;
    width: number | undefined;
    height: number | undefined;
    description: string | undefined;
  },
): FakeAttachment {
  const { data } = file;
  return {
    ...file,
    size: data.length,
    byteLength: data.length,
    chunks: () => slices(data),
    chunked: false,
    ...signedUrls(state, attachmentPath(channelId, file.id, file.filename)),
  };
}

/**
 * A file a test attached to a user's message.
 * @throws Error unless exactly one of `data` and `stream` is given, or for a negative length.
 */
export function userAttachment(
  state: FakeState,
  channelId: string,
  id: string,
  options: UserAttachmentOptions,
): FakeAttachment {
  if ((options.data === undefined) === (options.stream === undefined))
    throw new Error(`FakeDiscord: attachment ${options.filename} needs exactly one of data and stream`);
  const byteLength = options.data?.length ?? options.stream!.bytes;
  if (!Number.isSafeInteger(byteLength) || byteLength < 0)
    throw new Error(`FakeDiscord: attachment ${options.filename} has an invalid length`);
  const data = options.data;
  const base = {
    id,
    filename: options.filename,
    size: options.declaredSize ?? byteLength,
    byteLength,
    contentType: contentTypeFor(options.filename, options.contentType),
    width: options.width,
    height: options.height,
    description: options.description,
    chunked: options.chunked === true,
    ...signedUrls(state, attachmentPath(channelId, id, options.filename)),
  };
  if (data) return { ...base, data, chunks: () => slices(data) };
  return {
    ...base,
    get data() {
      return Buffer.concat([...generated(byteLength)]);
    },
    chunks: () => generated(byteLength),
  };
}
