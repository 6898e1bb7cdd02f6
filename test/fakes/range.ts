/**
 * HTTP range requests for the fakes' file hosts (Discord's CDN, Slack's `files-pri`), as an HTTP
 * file host may serve them: RFC 9110 §14.2. One range
 * `bytes=<first>-[<last>]` is answered 206 with `Content-Range: bytes <first>-<last>/<size>`;
 * a first byte past the end 416 with `Content-Range: bytes * /<size>`; anything else (no header,
 * several ranges, a suffix range, a malformed one) is answered with the whole file (200), which
 * §14.2 allows a server to do.
 */

/** What to send for a request's `Range` header. */
export type RangeAnswer = { status: 200 } | { status: 206; start: number; end: number } | { status: 416 };

/** How to answer `header` for a file of `size` bytes (`end` inclusive). */
export function rangeAnswer(header: string | undefined, size: number): RangeAnswer {
  const match = /^bytes=(\d+)-(\d*)$/.exec(header?.trim() ?? '');
  if (!match) return { status: 200 };
  const start = Number(match[1]);
  const last = match[2] === '' ? size - 1 : Number(match[2]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(last) || last < start) return { status: 200 };
  if (start >= size) return { status: 416 };
  return { status: 206, start, end: Math.min(last, size - 1) };
}

/** The headers of a 206 or 416 answer for a file of `size` bytes. */
export function rangeHeaders(answer: RangeAnswer, size: number): Record<string, string> {
  if (answer.status === 206)
    return {
      'content-range': `bytes ${answer.start}-${answer.end}/${size}`,
      'content-length': String(answer.end - answer.start + 1),
    };
  if (answer.status === 416) return { 'content-range': `bytes */${size}`, 'content-length': '0' };
  return {};
}

/** The bytes [start, end] (inclusive) of a file given as chunks, themselves in chunks, reading no chunk past `end`. */
export function* chunksInRange(chunks: Iterable<Buffer>, start: number, end: number): Generator<Buffer> {
  let offset = 0;
  for (const chunk of chunks) {
    const from = Math.max(0, start - offset);
    const to = Math.min(chunk.length, end + 1 - offset);
    if (to > from) yield chunk.subarray(from, to);
    offset += chunk.length;
    if (offset > end) return;
  }
}
