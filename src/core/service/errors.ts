/**
 * One error hierarchy for everything that can go wrong talking to the generation service.
 *
 * The spec leaves errors "not shown" (§7), so the mapping follows OpenAI's conventions:
 * a JSON body `{ "error": { "message", "type", "code", "param" } }` and the HTTP status
 * decides the class. Every class has a stable `code` (for logs, metrics and tests) and a
 * `sentence`: the one sentence a Discord or Slack user sees (catalog `errors.service.*`, rendered
 * in the reader's language; `userMessage` is its English, for logs). Neither ever contains the
 * API key: messages are built from the server's text, which is scrubbed by the client.
 */
import { english, isSentence, type Sentence, sentence } from '../i18n/words.ts';

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
  /** The sentence shown to the user (in their language): says what happened and what to do. */
  readonly sentence: Sentence;
  /** The service's own error code (`error.code` in the body), if any, e.g. `model_not_found`. */
  readonly serviceCode: string | undefined;

  constructor(
    code: ServiceErrorCode,
    message: string,
    said: Sentence,
    options: { status?: number; serviceCode?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = options.status;
    this.serviceCode = options.serviceCode;
    this.sentence = said;
  }

  /** The user's sentence in English: for log lines (and callers not yet given the reader's words). */
  get userMessage(): string {
    return english.say(this.sentence);
  }
}

/** 401: the API key is missing, wrong or revoked. */
export class AuthenticationError extends ServiceError {
  constructor(message: string, status = 401, serviceCode?: string) {
    super('authentication', message, sentence('errors.service.authentication'), { status, serviceCode });
  }
}

/** 403: the key is valid but not allowed to do this (e.g. `disable_safety_checker`, §8). */
export class PermissionDeniedError extends ServiceError {
  constructor(message: string, serviceCode?: string) {
    super('permission_denied', message, sentence('errors.service.permission_denied', { detail: message }), {
      status: 403,
      serviceCode,
    });
  }
}

/** 404: unknown model, image or path. */
export class NotFoundError extends ServiceError {
  constructor(message: string, serviceCode?: string) {
    const user =
      serviceCode === 'model_not_found' || /model/i.test(message)
        ? sentence('errors.service.model_not_found', { detail: message })
        : sentence('errors.service.not_found', { detail: message });
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
    super('bad_request', message, sentence('errors.service.bad_request', { detail: message }), { status, serviceCode });
  }
}

/**
 * 400 saying the request is longer than the model's context (OpenAI's code
 * `context_length_exceeded`, or a message naming the context length). What the user can do
 * about it is the bot's to say (core/sentences.ts).
 */
export class ContextLengthError extends ServiceError {
  constructor(message: string, status: number, serviceCode?: string) {
    super('context_length', message, sentence('errors.service.context_length'), {
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
    super(
      'invalid_request',
      `${field} ${message}`,
      sentence('errors.service.invalid_request', { field, detail: message }),
    );
  }
}

/** 429. `retryAfterMs` from the `retry-after` header when given. */
export class RateLimitError extends ServiceError {
  constructor(
    message: string,
    readonly retryAfterMs: number | undefined,
    serviceCode?: string,
  ) {
    const said =
      retryAfterMs === undefined
        ? sentence('errors.service.rate_limited')
        : sentence('errors.service.rate_limited_for', { seconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) });
    super('rate_limited', message, said, {
      status: 429,
      serviceCode,
    });
  }
}

/** 5xx. */
export class ServerError extends ServiceError {
  constructor(message: string, status: number, serviceCode?: string) {
    super('server_error', message, sentence('errors.service.server_error', { status: String(status) }), {
      status,
      serviceCode,
    });
  }
}

/** No answer in time: connect, headers, or silence between chunks (`phase`). */
export class TimeoutError extends ServiceError {
  constructor(
    readonly phase: 'connect' | 'headers' | 'body',
    cause?: unknown,
  ) {
    super('timeout', `service timed out (${phase})`, sentence('errors.service.timeout'), { cause });
  }
}

/** The service could not be reached (refused, reset, DNS) before any answer. */
export class ConnectionError extends ServiceError {
  constructor(message: string, cause?: unknown) {
    super('connection', message, sentence('errors.service.connection'), { cause });
  }
}

/** The caller's AbortSignal fired. */
export class AbortedError extends ServiceError {
  /**
   * @param reason the abort signal's reason; when it carries a `sentence` (a Sentence: a shutdown,
   *   a Stop button, Discord's time up), that is the sentence shown; else `errors.service.aborted`.
   */
  constructor(readonly reason?: unknown) {
    const given = reason as { sentence?: unknown } | undefined;
    const said = isSentence(given?.sentence) ? given.sentence : sentence('errors.service.aborted');
    super('aborted', 'request aborted', said);
  }
}

/** A stream ended without `[DONE]`, or the service sent an error object mid-stream. */
export class StreamInterruptedError extends ServiceError {
  constructor(message: string, cause?: unknown) {
    super('stream_interrupted', message, sentence('errors.service.stream_interrupted'), { cause });
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
      sentence('errors.service.stream_idle', { seconds: Math.round(idleMs / 1000) }),
    );
  }
}

/** The service answered 2xx with a body that is not what the spec describes. */
export class InvalidResponseError extends ServiceError {
  /** @param said the sentence, when a more precise one than the default fits. */
  constructor(message: string, said: Sentence = sentence('errors.service.invalid_response')) {
    super('invalid_response', message, said);
  }
}

/**
 * What a 2xx that is not an SSE stream held: compressed data not asked for (its
 * `content-encoding`), a body of another `content-type`, a body without one, or an event stream
 * without any event.
 */
export type NotAStreamBody = { encoding: string } | { type: string } | 'untyped' | 'no_event';

/** A 2xx whose body is not an SSE stream (an HTML page, JSON, compressed bytes, nothing). */
export class NotAStreamError extends InvalidResponseError {
  constructor(body: NotAStreamBody) {
    const what =
      typeof body === 'object'
        ? 'encoding' in body
          ? sentence('errors.service.not_a_stream_body.compressed', { encoding: body.encoding })
          : sentence('errors.service.not_a_stream_body.typed', { type: body.type })
        : sentence(
            body === 'untyped'
              ? 'errors.service.not_a_stream_body.untyped'
              : 'errors.service.not_a_stream_body.no_event',
          );
    super(
      `the service answered ${english.say(what)} instead of a stream`,
      sentence('errors.service.not_a_stream', { what }),
    );
  }
}

/** JSON mode (§4.1 rules 1–3): the joined content is not valid JSON. `raw` keeps the text. */
export class InvalidJsonError extends ServiceError {
  constructor(
    readonly raw: string,
    cause?: unknown,
  ) {
    super('invalid_json', 'JSON mode answer is not valid JSON', sentence('errors.service.invalid_json'), { cause });
  }
}

/** The sentence to show a user for any error (non-service errors get a generic one: `errors.internal`). */
export function userMessageOf(error: unknown): Sentence {
  if (error instanceof ServiceError) return error.sentence;
  return sentence('errors.internal');
}
