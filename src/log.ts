/**
 * Structured logging (pino): JSON lines by default, `LOG_FORMAT=pretty` (pino-pretty) for a
 * terminal. Every configured secret is scrubbed from every line, and every error goes through
 * one serializer that keeps what helps (type, code, status, method, path, message, the
 * service's or Slack's error code, the cause) and cuts every field to a bounded size: no
 * request or response body (a refused upload's image bytes, 45 MB) ever reaches a log line,
 * nor an interaction token from a URL.
 */

import { randomInt } from 'node:crypto';
import { createRequire } from 'node:module';
import { type DestinationStream, type Logger, pino } from 'pino';
import type PinoPretty from 'pino-pretty';
import { noteReference, traceFields } from './ops/tracing.ts';

export type { Logger };

/** What replaces a secret in a log line. */
export const REDACTED = '[redacted]';

/** Longest string kept in a serialized error field, in characters. */
export const MAX_FIELD_CHARS = 500;

/** Characters that end a URL's authority (`user:password@host:port`) in a log line. */
const AUTHORITY_END = new Set(['/', '?', '#', '"', "'", ' ', '\t', '\n', '\r', '\\']);

/**
 * Replaces the user information of every URL in `text` (`redis://:pw@host` →
 * `redis://[redacted]@host`). One pass: each `://` is looked at once, its authority once.
 */
export function redactUrlCredentials(text: string): string {
  let out = '';
  let from = 0;
  let next = text.indexOf('://');
  while (next >= 0) {
    const start = next + 3;
    let end = start;
    let at = -1;
    for (; end < text.length && !AUTHORITY_END.has(text[end]!); end++) if (text[end] === '@') at = end;
    if (at >= 0) {
      out += `${text.slice(from, start)}${REDACTED}`;
      from = at;
    }
    next = text.indexOf('://', end);
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * Slack's tokens by their documented prefixes (bot `xoxb-`, user `xoxp-`, refresh `xoxe-` and
 * rotating `xoxe.xoxb-`, app-level `xapp-`, and the other `xox?-` kinds): in the OAuth mode each
 * workspace's tokens come from the store, so they cannot all be listed among the secrets.
 */
const SLACK_TOKEN = /\b(?:xox[a-z](?:\.xox[a-z])?|xapp)-[A-Za-z0-9-]+/g;

/**
 * Replaces each secret (and its JSON-escaped form) in `text` with {@link REDACTED}, every
 * Slack token ({@link SLACK_TOKEN}), and the credentials of any URL written in it
 * (`redis://:pw@host` → `redis://[redacted]@host`). Secrets shorter than 6 characters are
 * ignored as words (they cannot be told from ordinary ones), but not inside a URL's credentials.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text.includes('@') ? redactUrlCredentials(text) : text;
  if (out.includes('xox') || out.includes('xapp-')) out = out.replace(SLACK_TOKEN, REDACTED);
  for (const secret of secrets) {
    if (secret.length < 6) continue;
    for (const form of new Set([secret, JSON.stringify(secret).slice(1, -1)])) {
      if (out.includes(form)) out = out.split(form).join(REDACTED);
    }
  }
  return out;
}

/** A path with interaction and webhook tokens replaced: `/webhooks/<app>/:token/messages/@original`. */
export function redactPath(path: string): string {
  return path
    .replace(/(\/(?:webhooks|interactions)\/\d+\/)[^/?\s]+/g, '$1:token')
    .replace(/([?&](?:token|ticket|hm|ex|is)=)[^&\s]+/g, '$1…');
}

const cut = (value: unknown): string | undefined => {
  if (value === undefined || value === null) return undefined;
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : undefined;
  if (text === undefined) return undefined;
  return text.length > MAX_FIELD_CHARS ? `${text.slice(0, MAX_FIELD_CHARS)}… (${text.length} characters)` : text;
};

/** The fields of a serialized error (all bounded strings or numbers). */
export interface SerializedError {
  type: string;
  message?: string;
  code?: string;
  status?: number;
  method?: string;
  path?: string;
  /** The service's or Slack's own error code (`model_not_found`, `invalid_auth`, …). */
  detail?: string;
  cause?: SerializedError;
}

/**
 * Serializes any thrown value into a few bounded fields (pino's `err` serializer).
 * discord.js API errors give method, url and status; @slack/web-api errors `data.error`;
 * service errors their code, status and the service's code. Bodies are never kept.
 */
export function serializeError(value: unknown, depth = 0): SerializedError {
  if (!(value instanceof Error) && (typeof value !== 'object' || value === null))
    return { type: typeof value, ...(cut(value) ? { message: cut(value)! } : {}) };
  const e = value as Record<string, unknown> & { name?: string; message?: string; cause?: unknown };
  const out: SerializedError = { type: cut(e.name) ?? (value as object).constructor?.name ?? 'Error' };
  const message = cut(e.message);
  if (message) out.message = redactPath(message);
  const code = e.code ?? e.errorCode;
  if (code !== undefined) out.code = cut(code)!;
  const status = e.status ?? e.statusCode;
  if (typeof status === 'number') out.status = status;
  if (typeof e.method === 'string') out.method = e.method.slice(0, 10);
  const url = typeof e.url === 'string' ? e.url : typeof e.path === 'string' ? e.path : undefined;
  if (url) out.path = redactPath(cut(url.replace(/^https?:\/\/[^/]+/, ''))!);
  const data = e.data as { error?: unknown } | undefined;
  const detail = e.serviceCode ?? data?.error;
  if (detail !== undefined) out.detail = cut(detail)!;
  if (e.cause !== undefined && depth < 2) out.cause = serializeError(e.cause, depth + 1);
  return out;
}

/** Fields whose values are never written, one level into any logged object (`{ request: { token } }`). */
const SECRET_FIELDS = ['authorization', 'token', 'apiKey'] as const;

/** Whether `value` holds a secret field one level in, or `headers.authorization`. */
function holdsSecretField(value: Record<string, unknown>): boolean {
  for (const field of SECRET_FIELDS) if (value[field] !== undefined) return true;
  const headers = value.headers;
  return (
    typeof headers === 'object' && headers !== null && (headers as Record<string, unknown>).authorization !== undefined
  );
}

/**
 * A log line's fields with the value of every `authorization`, `token` and `apiKey` one level
 * into a field, and of every `headers.authorization` two levels in, replaced by {@link REDACTED}:
 * what pino's `redact` paths `*.authorization`, `*.token`, `*.apiKey` and
 * `*.headers.authorization` did. A field holding such a value is copied (one level, or two for
 * the headers), the caller's object left alone; a line without any costs one look at each object
 * field. pino's `formatters.log` (https://getpino.io/#/docs/api?id=formatters-object).
 *
 * Why not pino's `redact`: with paths that begin with a wildcard it runs its whole redaction
 * (a clone, then each path parsed again) on every field of every line and every binding of every
 * child logger, strings included: ~9 KB of garbage and ~10 µs a command, for the child logger
 * each command gets (bench:streams). Child loggers' bindings are not looked at here: the bot binds
 * ids and names only (platform, ref, interaction, command, channel, user). Every configured
 * secret is still scrubbed from every whole line, bindings included (`hooks.streamWrite`).
 */
export function censorSecretFields(fields: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key in fields) {
    const value = fields[key];
    if (
      typeof value !== 'object' ||
      value === null ||
      value instanceof Error ||
      !holdsSecretField(value as Record<string, unknown>)
    )
      continue;
    const censored: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const field of SECRET_FIELDS) if (censored[field] !== undefined) censored[field] = REDACTED;
    const headers = censored.headers as Record<string, unknown> | null | undefined;
    if (typeof headers === 'object' && headers !== null && headers.authorization !== undefined)
      censored.headers = { ...headers, authorization: REDACTED };
    out ??= { ...fields };
    out[key] = censored;
  }
  return out ?? fields;
}

/**
 * pino-pretty's stream, loaded (CommonJS, synchronously) only when `LOG_FORMAT=pretty` asks for
 * it: the JSON lines a deployment writes do not need its ~30 modules in the bot's heap.
 */
function prettyStream(options: PinoPretty.PrettyOptions): DestinationStream {
  const build = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  return build(options);
}

/**
 * Builds the bot's logger.
 * @param options.level pino level name (`info`, `debug`, `silent`, …).
 * @param options.secrets values never to be written (API keys, tokens, signing secrets).
 * @param options.format `json` (default: one JSON object a line) or `pretty` (pino-pretty, for a terminal).
 * @param options.destination where lines go; stdout by default (tests pass a collecting stream).
 * @param options.traceIds with tracing on: each line written under a traced invocation gets its
 *   `trace_id` and `span_id` (pino's `mixin`), beside the invocation's `ref`; off, no mixin runs.
 */
export function createLogger(options: {
  level: string;
  secrets: readonly string[];
  format?: 'json' | 'pretty';
  destination?: DestinationStream;
  traceIds?: boolean;
}): Logger {
  const secrets = [...options.secrets];
  const destination =
    options.destination ??
    (options.format === 'pretty'
      ? prettyStream({
          destination: 1,
          sync: true,
          colorize: process.stdout.isTTY === true,
          translateTime: 'SYS:HH:MM:ss.l',
        })
      : pino.destination(1));
  return pino(
    {
      level: options.level,
      base: undefined,
      // `hooks.streamWrite` sees each finished line: the last place a secret could slip through.
      hooks: { streamWrite: (line: string) => scrubSecrets(line, secrets) },
      serializers: { err: serializeError, error: serializeError },
      formatters: { log: censorSecretFields },
      ...(options.traceIds ? { mixin: traceFields } : {}),
    },
    destination,
  );
}

/** An alphabet without look-alikes (no 0/O, 1/I/L), for reference ids people read out. */
const REF_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';

/**
 * A short reference id (6 characters, e.g. `K7M2QX`) that ties an error a user sees to its log
 * line; with tracing on, also the `genbot.reference` attribute of its trace's root span.
 */
export function newReference(): string {
  let ref = '';
  for (let i = 0; i < 6; i++) ref += REF_ALPHABET[randomInt(REF_ALPHABET.length)];
  noteReference(ref);
  return ref;
}

/**
 * Logs a promise rejection that nothing handled (a library's background work, such as a
 * Socket Mode reconnect that finally failed) as one error line, instead of letting Node 20
 * end the bot for it; the discord.js guide sets up the same. Secrets are scrubbed as on
 * every line.
 * @param target the process (tests pass an EventEmitter).
 * @returns a function that removes the handler.
 */
export function logUnhandledRejections(log: Logger, target: NodeJS.EventEmitter = process): () => void {
  const handler = (reason: unknown) =>
    log.error({ err: reason }, 'unhandled promise rejection (outside any command); the bot goes on');
  target.on('unhandledRejection', handler);
  return () => target.off('unhandledRejection', handler);
}
