/**
 * One error hierarchy for everything that can go wrong talking to the generation service.
 *
 * The spec leaves errors "not shown" (§7), so the mapping follows OpenAI's conventions:
 * a JSON body `{ "error": { "message", "type", "code", "param" } }` and the HTTP status
 * decides the class. Every class has a stable `code` (for logs, metrics and tests) and a
 * `userMessage`: the one sentence a Discord or Slack user sees. Neither ever contains the
 * API key: messages are built from the server's text, which is scrubbed by the client.
 */

/** Stable machine-readable codes, one per class. */
export type ServiceErrorCode =
  | 'authentication'
  | 'permission_denied'
  | 'not_found'
  | 'bad_request'
  | 'invalid_request'
  | 'rate_limited'
  | 'server_error'
  | 'timeout'
  | 'connection'
  | 'aborted'
  | 'stream_interrupted'
  | 'invalid_response'
  | 'invalid_json'
  | 'context_length'
  | 'stream_idle';

/** Root of the hierarchy. `status` is the HTTP status when there was one. */
export class ServiceError extends Error {
  readonly code: ServiceErrorCode;
  readonly status: number | undefined;
  /** The sentence shown to the user: says what happened and what to do. */
  readonly userMessage: string;
  /** The service's own error code (`error.code` in the body), if any, e.g. `model_not_found`. */
  readonly serviceCode: string | undefined;

  constructor(
    code: ServiceErrorCode,
    message: string,
    userMessage: string,
    options: { status?: number; serviceCode?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = options.status;
    this.serviceCode = options.serviceCode;
    this.userMessage = userMessage;
  }
}

/** 401: the API key is missing, wrong or revoked. */
export class AuthenticationError extends ServiceError {
  constructor(message: string, status = 401, serviceCode?: string) {
    super(
      'authentication',
      message,
      "The generation service refused the bot's API key. An admin needs to check SERVICE_API_KEY.",
      { status, serviceCode },
    );
  }
}

/** 403: the key is valid but not allowed to do this (e.g. `disable_safety_checker`, §8). */
export class PermissionDeniedError extends ServiceError {
  constructor(message: string, serviceCode?: string) {
    super(
      'permission_denied',
      message,
      `The generation service does not allow this for the bot's account: ${message}`,
      { status: 403, serviceCode },
    );
  }
}

/** 404: unknown model, image or path. */
export class NotFoundError extends ServiceError {
  constructor(message: string, serviceCode?: string) {
    const user =
      serviceCode === 'model_not_found' || /model/i.test(message)
        ? `That model is not available on the generation service (${message}). Pick another model.`
        : `The generation service could not find what was asked for (${message}).`;
    super('not_found', message, user, { status: 404, serviceCode });
  }
}

/** 400/413/415/422: the service rejected the request. `param` names the field when known. */
export class BadRequestError extends ServiceError {
  constructor(
    message: string,
    status: number,
    readonly param?: string,
    serviceCode?: string,
  ) {
    super('bad_request', message, `The generation service rejected the request: ${message}`, { status, serviceCode });
  }
}

/**
 * 400 saying the request is longer than the model's context (OpenAI's code
 * `context_length_exceeded`, or a message naming the context length). What the user can do
 * about it is the bot's to say (core/sentences.ts).
 */
export class ContextLengthError extends ServiceError {
  constructor(message: string, status: number, serviceCode?: string) {
    super('context_length', message, 'The conversation is too long for the model.', {
      status,
      ...(serviceCode ? { serviceCode } : {}),
    });
  }
}

/** Whether a 400's text says the context was too long. */
export function isContextLengthMessage(message: string, code: string | undefined): boolean {
  return (
    code === 'context_length_exceeded' ||
    /context (length|window)|maximum context|too many tokens|prompt is too long/i.test(message)
  );
}

/** Raised before any network call: a parameter is outside what the spec allows. */
export class InvalidRequestError extends ServiceError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super('invalid_request', `${field} ${message}`, `\`${field}\` ${message}.`);
  }
}

/** 429. `retryAfterMs` from the `retry-after` header when given. */
export class RateLimitError extends ServiceError {
  constructor(
    message: string,
    readonly retryAfterMs: number | undefined,
    serviceCode?: string,
  ) {
    const wait = retryAfterMs === undefined ? 'in a minute' : `in ${Math.max(1, Math.ceil(retryAfterMs / 1000))} s`;
    super('rate_limited', message, `The generation service is busy (rate limited). Try again ${wait}.`, {
      status: 429,
      serviceCode,
    });
  }
}

/** 5xx. */
export class ServerError extends ServiceError {
  constructor(message: string, status: number, serviceCode?: string) {
    super(
      'server_error',
      message,
      `The generation service is having trouble (HTTP ${status}). Try again in a minute.`,
      { status, serviceCode },
    );
  }
}

/** No answer in time: connect, headers, or silence between chunks (`phase`). */
export class TimeoutError extends ServiceError {
  constructor(
    readonly phase: 'connect' | 'headers' | 'body',
    cause?: unknown,
  ) {
    super(
      'timeout',
      `service timed out (${phase})`,
      'The generation service took too long to answer. Try again, perhaps with a shorter request.',
      { cause },
    );
  }
}

/** The service could not be reached (refused, reset, DNS) before any answer. */
export class ConnectionError extends ServiceError {
  constructor(message: string, cause?: unknown) {
    super('connection', message, 'The generation service cannot be reached right now. Try again in a minute.', {
      cause,
    });
  }
}

/** The caller's AbortSignal fired. */
export class AbortedError extends ServiceError {
  /**
   * @param reason the abort signal's reason; when it carries a `userMessage` (a shutdown, a
   *   Stop button), that is the sentence shown.
   */
  constructor(readonly reason?: unknown) {
    const said =
      typeof (reason as { userMessage?: unknown } | undefined)?.userMessage === 'string'
        ? (reason as { userMessage: string }).userMessage
        : undefined;
    super('aborted', 'request aborted', said ?? 'The request was stopped.');
  }
}

/** A stream ended without `[DONE]`, or the service sent an error object mid-stream. */
export class StreamInterruptedError extends ServiceError {
  constructor(message: string, cause?: unknown) {
    super(
      'stream_interrupted',
      message,
      'The answer was cut off because the generation service stopped sending. Try again.',
      { cause },
    );
  }
}

/**
 * The body ended without `data: [DONE]` (a StreamInterruptedError). A stream whose last chunk
 * carried a `finish_reason` is complete all the same (the service just closed early).
 */
export class StreamEndedEarlyError extends StreamInterruptedError {
  constructor() {
    super('the stream ended before data: [DONE]');
  }
}

/** The stream went on (keep-alive comments, empty chunks) but no text came for `idleMs`. */
export class StreamIdleError extends ServiceError {
  constructor(readonly idleMs: number) {
    super(
      'stream_idle',
      `no text for ${idleMs} ms`,
      `The generation service stopped sending text for ${Math.round(idleMs / 1000)} s, so the answer ends here. Try again.`,
    );
  }
}

/** The service answered 2xx with a body that is not what the spec describes. */
export class InvalidResponseError extends ServiceError {
  /** @param userMessage the sentence, when a more precise one than the default fits. */
  constructor(
    message: string,
    userMessage = 'The generation service sent an answer the bot could not read. Try again.',
  ) {
    super('invalid_response', message, userMessage);
  }
}

/** A 2xx whose body is not an SSE stream (an HTML page, JSON, compressed bytes, nothing). */
export class NotAStreamError extends InvalidResponseError {
  constructor(what: string) {
    super(
      `the service answered ${what} instead of a stream`,
      `The generation service answered something that is not a stream of text (${what}). Try again; if it lasts, an admin should check SERVICE_BASE_URL.`,
    );
  }
}

/** JSON mode (§4.1 rules 1–3): the joined content is not valid JSON. `raw` keeps the text. */
export class InvalidJsonError extends ServiceError {
  constructor(
    readonly raw: string,
    cause?: unknown,
  ) {
    super(
      'invalid_json',
      'JSON mode answer is not valid JSON',
      'The model was asked for JSON but its answer is not valid JSON; here is what it wrote.',
      { cause },
    );
  }
}

/** The sentence to show a user for any error (non-service errors get a generic one). */
export function userMessageOf(error: unknown): string {
  if (error instanceof ServiceError) return error.userMessage;
  return "Something went wrong on the bot's side. The team has been told; try again in a moment.";
}
