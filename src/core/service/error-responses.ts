/**
 * The service's error answers read into the errors of errors.ts: a non-2xx response by its
 * status and body (docs/service-api.md, "Errors"), an error inside a stream, `retry-after`.
 */
import {
  AuthenticationError,
  BadRequestError,
  ContextLengthError,
  isContextLengthMessage,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
  type ServiceError,
} from './errors.ts';

/** Parses a `retry-after` header (seconds or HTTP date) into ms; `undefined` when absent or bad. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  const seconds = Number(v);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(v);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Builds the error for a non-2xx answer.
 * @param status HTTP status code.
 * @param body the parsed JSON body when there was one (OpenAI shape expected, variants accepted).
 * @param retryAfterHeader the `retry-after` header.
 */
export function errorFromResponse(status: number, body: unknown, retryAfterHeader?: string | string[]): ServiceError {
  const { message, code, param } = readErrorBody(body, status);
  if (status === 401) return new AuthenticationError(message, status, code);
  if (status === 403)
    return code === 'invalid_api_key'
      ? new AuthenticationError(message, status, code)
      : new PermissionDeniedError(message, code);
  if (status === 404) return new NotFoundError(message, code);
  if (status === 429) return new RateLimitError(message, parseRetryAfter(retryAfterHeader), code);
  if (status >= 500) return new ServerError(message, status, code);
  if ((status === 400 || status === 413) && isContextLengthMessage(message, code))
    return new ContextLengthError(message, status, code);
  return new BadRequestError(message, status, param, code);
}

/** Reads `{ error: { message, code, param } }`, or `{ error: "text" }`, or `{ message }`. */
export function readErrorBody(body: unknown, status: number): { message: string; code?: string; param?: string } {
  const fallback = `HTTP ${status}`;
  if (typeof body !== 'object' || body === null)
    return { message: typeof body === 'string' && body.trim() ? body.trim().slice(0, 300) : fallback };
  const outer = body as Record<string, unknown>;
  const inner =
    typeof outer.error === 'object' && outer.error !== null ? (outer.error as Record<string, unknown>) : outer;
  const message =
    typeof inner.message === 'string' ? inner.message : typeof outer.error === 'string' ? outer.error : fallback;
  const code = typeof inner.code === 'string' ? inner.code : typeof inner.type === 'string' ? inner.type : undefined;
  const param = typeof inner.param === 'string' ? inner.param : undefined;
  return { message: message.slice(0, 500), ...(code ? { code } : {}), ...(param ? { param } : {}) };
}
