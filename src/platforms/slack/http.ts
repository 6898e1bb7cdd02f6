/**
 * The HTTP server Slack posts to in HTTP mode (`/slack/events`): a guard in front of Bolt's
 * HTTPReceiver, which then does the rest (acks, url_verification, dispatch).
 *
 * The guard verifies every POST itself, strictly, as "Verifying requests from Slack" describes
 * (https://api.slack.com/authentication/verifying-requests-from-slack), BEFORE any store call,
 * so that a request nobody signed costs no store row:
 *
 * 1. The body is read with a cap ({@link MAX_BODY_BYTES}), never whole before its size is
 *    bounded. A larger `content-length`, or more bytes than that, is answered 413 at once; the
 *    rest of the body is then read and dropped (no byte kept) before the connection is closed,
 *    so that a client that sends its whole body before reading the answer (Node's `http`,
 *    Python's `requests`) gets the 413 instead of a reset connection. That draining stops at
 *    {@link MAX_DRAIN_BYTES} or after {@link MAX_DRAIN_MS} (a body that says it is longer is not
 *    drained at all): the connection is then closed under the upload.
 * 2. `x-slack-request-timestamp` must be decimal seconds (no sign, no leading zero, no
 *    fraction) within {@link MAX_CLOCK_SKEW_SEC} of now either way (Bolt only refuses the past).
 * 3. `x-slack-signature` must be exactly `v0=` + 64 lowercase hex digits, equal (timing-safe
 *    compare) to HMAC-SHA256(signing secret, `v0:<timestamp>:<raw body bytes>`). Anything
 *    else is refused, including a valid signature with something appended (`v0=<hex>=x`, which
 *    Bolt 5 accepts: it splits the header on `=` and compares only the second part), a second
 *    signature (`, v0=…`: Node joins repeated headers with a comma) or upper-case hex.
 *
 * A refusal is a 401 (413 for the size) with a short plain-text reason; it is logged at info,
 * at most one line per {@link REFUSAL_LOG_EVERY_MS} with the number of refusals left unlogged
 * since the previous line (no secret, no body, no header value is logged).
 *
 * Only a verified request takes its replay claim, `slack:request:<digest>:<timestamp>` (the
 * verified hex digest and timestamp, never the raw header) for {@link REPLAY_TTL_MS}: the first
 * goes on to Bolt, a later one within that time is acknowledged 200 and not run again (Slack's
 * own retries carry a new timestamp, hence a new signature). Claims live in the shared store, so
 * instances behind one load balancer agree; when the store is down, or has not answered within
 * {@link REPLAY_CLAIM_DEADLINE_MS}, the request still goes to Bolt (a replay then cannot be told
 * apart). The claim is the one store call before Slack's acknowledgement (Bolt acks events before
 * any listener runs, and every listener of this bot acks first): its deadline keeps a stalled
 * store (Redis frozen, its connection open and silent) from holding the ack past Slack's 3 s.
 *
 * Bolt gets the body already read: the guard sets `req.rawBody` (a Buffer), which Bolt 5's
 * `bufferIncomingMessage` takes instead of reading the stream again (`isBufferedIncomingMessage`);
 * Bolt then checks the signature once more, which passes.
 *
 * Exceptions, as in Bolt: a POST whose form body is Slack's `ssl_check=1` goes to Bolt without a
 * signature or claim (Bolt answers 200 and strips every other field); a request that is not a
 * POST goes to Bolt as is (it has no route for one: 404).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { HTTPReceiver } from '@slack/bolt';
import { slackClaims } from '../../core/keys.ts';
import type { Claims } from '../../core/state/claims.ts';
import { withDeadline } from '../../core/state/deadline.ts';
import type { Logger } from '../../log.ts';

/** Slack's window for request timestamps, in seconds (either way). */
export const MAX_CLOCK_SKEW_SEC = 5 * 60;

/** The largest body read, in bytes (Slack's payloads are a few KB). */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The most bytes of a refused (too large) body read and dropped before the connection is closed:
 * a client that reads the answer only once its body is sent gets the 413 up to this size.
 */
export const MAX_DRAIN_BYTES = 32 * 1024 * 1024;

/** How long a refused body is drained at most, in ms, before the connection is closed. */
export const MAX_DRAIN_MS = 10_000;

/** How long a verified request is remembered, in ms: past it, its timestamp is too old anyway. */
export const REPLAY_TTL_MS = 2 * MAX_CLOCK_SKEW_SEC * 1000;

/**
 * How long the replay claim may wait for the store, in ms, before the request goes on without it:
 * Slack shows the user an error when its request is not acknowledged within 3 s, and Bolt's own
 * work and the network take part of that.
 */
export const REPLAY_CLAIM_DEADLINE_MS = 1_000;

/** At most one log line per kind (refused, replayed) this often, in ms. */
export const REFUSAL_LOG_EVERY_MS = 10_000;

/** `v0=` and the lowercase hex of a SHA-256 HMAC, nothing before or after. */
const SIGNATURE = /^v0=([0-9a-f]{64})$/;
/** Seconds since the epoch as Slack writes them (and as `String(Number(x))` gives them back). */
const TIMESTAMP = /^[1-9][0-9]{0,11}$/;

/** A request that verified: its digest (64 lowercase hex) and timestamp (s), or why it did not. */
export type Verification =
  | { ok: true; digest: string; timestampSec: string }
  | { ok: false; reason: string; skewSec?: number };

/**
 * Checks a request's signature as Slack specifies, strictly (see the module comment).
 * @param headers the request's headers as Node parsed them.
 * @param body the raw body bytes, exactly as received.
 * @param nowMs the clock, ms since the epoch.
 */
export function verifySlackSignature(
  headers: IncomingHttpHeaders,
  body: Buffer,
  signingSecret: string,
  nowMs: number,
): Verification {
  const timestamp = headers['x-slack-request-timestamp'];
  const signature = headers['x-slack-signature'];
  if (typeof timestamp !== 'string' || !TIMESTAMP.test(timestamp))
    return { ok: false, reason: 'missing or malformed x-slack-request-timestamp' };
  const skewSec = Math.round(Number(timestamp) - nowMs / 1000);
  if (Math.abs(skewSec) > MAX_CLOCK_SKEW_SEC)
    return { ok: false, reason: 'timestamp more than 5 minutes off', skewSec };
  const digest = typeof signature === 'string' ? SIGNATURE.exec(signature)?.[1] : undefined;
  if (digest === undefined) return { ok: false, reason: 'missing or malformed x-slack-signature' };
  const expected = createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(body).digest();
  if (!timingSafeEqual(Buffer.from(digest, 'hex'), expected)) return { ok: false, reason: 'signature mismatch' };
  return { ok: true, digest, timestampSec: timestamp };
}

/**
 * Reads a request's body, at most `cap` bytes.
 * @returns the bytes; `'too large'` when the body is (or says it is) longer than `cap` (the rest is
 *   left unread); undefined when the client went away first.
 */
function readBody(req: IncomingMessage, cap: number): Promise<Buffer | 'too large' | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > cap) return Promise.resolve('too large');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const done = (result: Buffer | 'too large' | undefined) => {
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > cap) {
        req.pause();
        return done('too large');
      }
      chunks.push(chunk);
    };
    const onEnd = () => done(Buffer.concat(chunks, length));
    const onGone = () => done(undefined);
    req.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone);
  });
}

/**
 * Answers 413 to a body over the cap (see the module comment, 1): the answer goes out whole at
 * once (its `content-length` told, `connection: close`), the rest of the body is read and dropped
 * (each chunk let go as it comes), and the response is ended, which closes the connection, when
 * the body has ended; a body that says it is longer than {@link MAX_DRAIN_BYTES}, goes past it, or
 * is still coming after {@link MAX_DRAIN_MS}, has its connection closed under the upload.
 */
function answerTooLarge(req: IncomingMessage, res: ServerResponse): void {
  const text = 'body too large';
  res.writeHead(413, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(text), connection: 'close' });
  res.write(text);
  const declared = Number(req.headers['content-length']);
  if (req.complete || (Number.isFinite(declared) && declared > MAX_DRAIN_BYTES)) {
    res.end();
    return;
  }
  let drained = 0;
  const cut = () => {
    clearTimeout(timer);
    req.off('data', onData);
    req.socket.destroy();
  };
  const timer = setTimeout(cut, MAX_DRAIN_MS);
  timer.unref();
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > MAX_DRAIN_BYTES) cut();
  };
  req.on('data', onData);
  req.once('end', () => {
    clearTimeout(timer);
    res.end();
  });
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

/** Slack's SSL check, which Bolt answers without a signature: a form body with `ssl_check=1`. */
function isSslCheck(req: IncomingMessage, body: Buffer): boolean {
  return (
    req.headers['content-type'] === 'application/x-www-form-urlencoded' && parseQuery(body.toString()).ssl_check === '1'
  );
}

/** Logs at most one line per `everyMs`, with how many were left unlogged since the previous one. */
function throttled(
  now: () => number,
  everyMs: number,
  write: (fields: Record<string, unknown>, message: string) => void,
) {
  let last = -Infinity;
  let unlogged = 0;
  return (fields: Record<string, unknown>, message: string) => {
    const t = now();
    if (t - last < everyMs) {
      unlogged += 1;
      return;
    }
    write({ ...fields, unloggedSincePrevious: unlogged }, message);
    last = t;
    unlogged = 0;
  };
}

/**
 * Creates (does not start) the server.
 * @param deps.signingSecret the app's signing secret (the one Bolt's receiver has).
 * @param deps.now the clock, ms since the epoch (tests).
 */
export function createSlackServer(
  receiver: HTTPReceiver,
  deps: { signingSecret: string; claims: Claims; log: Logger; now?: () => number },
): Server {
  const now = deps.now ?? Date.now;
  const logRefusal = throttled(now, REFUSAL_LOG_EVERY_MS, (fields, message) => deps.log.info(fields, message));
  const logReplay = throttled(now, REFUSAL_LOG_EVERY_MS, (fields, message) => deps.log.warn(fields, message));
  const pass = (req: IncomingMessage, res: ServerResponse, body?: Buffer) => {
    // Bolt reads `rawBody` instead of the (already consumed) stream.
    if (body) Object.assign(req, { rawBody: body });
    try {
      receiver.requestListener(req, res);
    } catch {
      // Bolt throws for a path it does not serve.
      if (!res.headersSent) res.writeHead(404).end();
    }
  };
  const refuse = (res: ServerResponse, status: 401, reason: string, fields: Record<string, unknown> = {}) => {
    logRefusal({ status, ...fields }, `slack request refused: ${reason}`);
    res.writeHead(status, { 'content-type': 'text/plain' }).end(reason);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') return pass(req, res);
    const body = await readBody(req, MAX_BODY_BYTES);
    if (body === undefined) return; // the client went away
    if (body === 'too large') {
      logRefusal({ status: 413 }, `slack request refused: body over ${MAX_BODY_BYTES} bytes`);
      return answerTooLarge(req, res);
    }
    if (isSslCheck(req, body)) return pass(req, res, body);
    const verified = verifySlackSignature(req.headers, body, deps.signingSecret, now());
    if (!verified.ok)
      return refuse(res, 401, verified.reason, verified.skewSec === undefined ? {} : { skewSec: verified.skewSec });
    let first: boolean;
    try {
      const claim = deps.claims.claim(slackClaims.request(verified.digest, verified.timestampSec), REPLAY_TTL_MS);
      first = await withDeadline(claim, REPLAY_CLAIM_DEADLINE_MS, 'replay claim');
    } catch {
      // Without the store (down, or too slow for Slack's ack) a replay cannot be told apart; the request is genuine, so it runs.
      return pass(req, res, body);
    }
    if (first) return pass(req, res, body);
    logReplay({}, 'slack request replayed (same signature and timestamp): acknowledged, not run again');
    res.writeHead(200).end();
  };
  return createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
}
