/**
 * Part of a file, for a reader that needs no more than its start (download.ts `range`): the
 * HTTP `Range` request header (RFC 9110 §14.2), and the bytes kept of the answer, whether the
 * server sent the range (206 Partial Content, §15.3.7) or ignored the header and sent the whole
 * file (200): then the bytes before the range are passed over, and reading stops at its end.
 */

import type { Dispatcher } from 'undici';

/** Bytes [start, start + length) of a file. */
export interface ByteRange {
  start: number;
  length: number;
}

/** The `Range` header of a {@link ByteRange} (§14.1.2: the last position is inclusive). */
export function rangeHeader(range: ByteRange): string {
  return `bytes=${range.start}-${range.start + Math.max(1, range.length) - 1}`;
}

/** The complete length of a `Content-Range: bytes 0-99/1234` (§14.4), or NaN when it is `*` or malformed. */
function rangeTotal(header: string | string[] | undefined): number {
  const value = Array.isArray(header) ? header[0] : header;
  const slash = value?.lastIndexOf('/') ?? -1;
  return slash < 0 ? Number.NaN : Number(value!.slice(slash + 1));
}

/**
 * Reads at most `min(range.length, maxBytes)` bytes of the range from a 206 or a 200 body, then
 * stops reading and destroys the body.
 * @returns the bytes, and the whole file's size in bytes when the server said it
 *   (`Content-Range`, or a 200's `Content-Length`).
 * @throws what reading the body throws (a timeout, the connection lost).
 */
export async function keepRange(
  body: Dispatcher.ResponseData['body'],
  response: Pick<Dispatcher.ResponseData, 'statusCode' | 'headers'>,
  range: ByteRange,
  maxBytes: number,
): Promise<{ data: Buffer; total?: number }> {
  const { statusCode, headers } = response;
  const want = Math.max(0, Math.min(range.length, maxBytes));
  const total = statusCode === 206 ? rangeTotal(headers['content-range']) : Number(headers['content-length']);
  let skip = statusCode === 206 ? 0 : range.start;
  const chunks: Buffer[] = [];
  let kept = 0;
  try {
    for await (const chunk of body) {
      let piece = chunk as Buffer;
      if (skip > 0) {
        const passed = Math.min(skip, piece.byteLength);
        skip -= passed;
        piece = piece.subarray(passed);
      }
      if (piece.byteLength > want - kept) piece = piece.subarray(0, want - kept);
      if (piece.byteLength > 0) chunks.push(piece);
      kept += piece.byteLength;
      if (kept >= want) break;
    }
  } finally {
    body.destroy();
  }
  return { data: Buffer.concat(chunks, kept), ...(Number.isFinite(total) && total >= 0 ? { total } : {}) };
}
