/**
 * Small wire-format helpers shared by every part of the fake Slack: Slack's text escaping,
 * mention parsing, the `ts` format, Web API parameter reading and cursor pagination, and the two errors a Web API
 * method throws (`{ ok: false, error }` with HTTP 200, or HTTP 429).
 */

/** A JSON object as parsed. */
export type Json = Record<string, unknown>;

/** A message `ts`: `<10 digits>.<6 digits>`. */
export const TS_PATTERN = /^\d{10}\.\d{6}$/;

/** Slack's escaping of `&`, `<`, `>` in message text. */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** What a user reads for Slack-escaped text: `&lt;` → `<`, `&gt;` → `>`, `&amp;` → `&`. */
export function unescapeSlack(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Mentions Slack renders from raw message text: `<@U…>`, `<!channel>`, `<!here>`, `<!everyone>`, `<!subteam^…>`. */
export function mentionsIn(text: string): string[] {
  return [...text.matchAll(/<(@[UW][A-Z0-9]+|!channel|!here|!everyone|!subteam\^[A-Z0-9]+)(?:\|[^>]*)?>/g)].map(
    (m) => `<${m[1]}>`,
  );
}

/** Slack's ts format for a time in µs since the epoch: `<seconds>.<6 digits>`. */
export function formatTs(micros: number): string {
  return `${Math.floor(micros / 1e6)}.${String(micros % 1e6).padStart(6, '0')}`;
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A Web API error answered as `{ ok: false, error, ...extra }` with HTTP 200. */
export class SlackApiError extends Error {
  constructor(
    readonly error: string,
    readonly extra: Json = {},
  ) {
    super(error);
  }
}

/** A rate-limited call: HTTP 429 + `Retry-After`. */
export class RateLimited extends Error {
  constructor(readonly retryAfterSec: number) {
    super('ratelimited');
  }
}

/** A parameter as a string (form values are strings; JSON values are converted). */
export function str(p: Json, key: string): string | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** A required string parameter. @throws SlackApiError (`missingError`, default `invalid_arguments`). */
export function required(p: Json, key: string, missingError = 'invalid_arguments'): string {
  const v = str(p, key);
  if (v === undefined || v === '') {
    throw new SlackApiError(missingError, {
      response_metadata: { messages: [`[ERROR] missing required field: ${key}`] },
    });
  }
  return v;
}

/** A parameter that may be a JSON string (form) or a value (JSON body). @throws SlackApiError `invalid_arguments`. */
export function jsonParam(p: Json, key: string): unknown {
  const v = p[key];
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    throw new SlackApiError('invalid_arguments', { response_metadata: { messages: [`[ERROR] ${key} must be JSON`] } });
  }
}

/**
 * One page of `items` by `limit` and `cursor` (Slack's cursor pagination: `next_cursor` is `''` on
 * the last page; the cursor is opaque to callers).
 * @throws SlackApiError `invalid_cursor`, `invalid_limit`.
 */
export function paginate<T>(
  items: T[],
  p: Json,
  defaultLimit: number,
  maxLimit: number,
): { items: T[]; nextCursor: string } {
  const limitText = str(p, 'limit');
  const limit = limitText === undefined || limitText === '' ? defaultLimit : Number(limitText);
  if (!Number.isInteger(limit) || limit < 0) throw new SlackApiError('invalid_limit');
  const size = limit === 0 ? defaultLimit : Math.min(limit, maxLimit);
  const cursor = str(p, 'cursor');
  let offset = 0;
  if (cursor) {
    const match = /^offset:(\d+)$/.exec(Buffer.from(cursor, 'base64').toString('utf8'));
    if (!match) throw new SlackApiError('invalid_cursor');
    offset = Number(match[1]);
  }
  const page = items.slice(offset, offset + size);
  const nextCursor = offset + size < items.length ? Buffer.from(`offset:${offset + size}`).toString('base64') : '';
  return { items: page, nextCursor };
}
