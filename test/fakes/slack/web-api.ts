/**
 * The Web API router: `POST|GET /api/<method>`. Reads parameters the way Slack does (form,
 * JSON or multipart bodies, and the query string; nested values arrive as JSON strings), finds
 * the token (`Authorization: Bearer`, or a `token` field of a form body, never of a JSON body),
 * checks it, applies scripted rate limits, runs the method and records the call.
 *
 * Then the bot token's scope for the method (scopes.ts): `missing_scope` with `needed` and
 * `provided`; answers to the bot token carry `X-OAuth-Scopes` / `X-Accepted-OAuth-Scopes`.
 *
 * Answers: HTTP 200 `{ ok: true, … }` / `{ ok: false, error, … }` (`not_authed`, `invalid_auth`,
 * `not_allowed_token_type`, `missing_scope`, `unknown_method`, `invalid_arguments`, …), or HTTP
 * 429 with a `Retry-After` header in whole seconds and `{ ok: false, error: 'ratelimited' }`,
 * or, for a call scripted with {@link WebApi.hangNext}, no answer at all: the request is read
 * and recorded (`status: 0`), nothing is done, and the response stays open until the client
 * gives up or the fake closes (Slack or the network swallowing a call). A call scripted with
 * {@link WebApi.failNext} is refused with the scripted `error` once its token and scope pass,
 * and nothing is done (Slack refusing a call the fake would take, e.g. `cant_update_message`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ALTERNATIVE_SCOPES, neededScope } from './scopes.ts';
import type { SlackApiCall } from './types.ts';
import { isObject, type Json, RateLimited, SlackApiError } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** One Web API method: parameters in, the fields of an `ok: true` answer out. @throws SlackApiError, RateLimited. */
export type MethodHandler = (params: Json) => Json;

/** Web API methods by name, e.g. `chat.postMessage`. */
export type MethodTable = Record<string, MethodHandler>;

/** Web API methods that take the app-level (`xapp-`) token, and no other token. */
const APP_TOKEN_METHODS = new Set(['apps.connections.open']);
/** Web API methods that take no token (oauth.v2.access authenticates the app by its client id and secret). */
const TOKENLESS_METHODS = new Set(['api.test', 'oauth.v2.access']);

/** Writes a JSON answer with its length. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const data = Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(data.length),
    ...headers,
  });
  res.end(data);
}

/** A scripted refusal: {@link WebApi.failNext}. */
export interface ScriptedFailure {
  /** The Web API method, e.g. `chat.update`. */
  method: string;
  /** Slack's `error`, e.g. `cant_update_message`. */
  error: string;
  /** How many more matching calls to refuse (Infinity: until {@link WebApi.stopFailing}). */
  left: number;
  /** Refuses only the calls whose parameters (as received: nested values are JSON strings) it accepts. */
  when?: ((params: Json) => boolean) | undefined;
}

export class WebApi {
  /** Scripted hangs: how many more calls of each method to leave unanswered (Infinity: until {@link stopHanging}). */
  private readonly hangs = new Map<string, number>();
  /** Scripted refusals, used in the order they were added. */
  private readonly failures: ScriptedFailure[] = [];

  constructor(
    private readonly ws: Workspace,
    private readonly methods: MethodTable,
  ) {}

  /**
   * The next `count` calls of `method` (Infinity: every call until {@link stopHanging}) get no
   * answer: each is recorded (`status: 0`, `ok: false`, no `error`) and nothing is done, and its
   * response stays open until the client gives up (its own timeout) or the fake closes.
   */
  hangNext(method: string, count = 1): void {
    this.hangs.set(method, (this.hangs.get(method) ?? 0) + count);
  }

  /** Answers calls of `method` again (of every method when undefined); calls held so far stay unanswered. */
  stopHanging(method?: string): void {
    if (method === undefined) this.hangs.clear();
    else this.hangs.delete(method);
  }

  /**
   * The next `count` calls of `method` (Infinity: every call until {@link stopFailing}) that
   * `when` accepts (all when absent) are answered HTTP 200 `{ ok: false, error }` once their token
   * and scope pass, and do nothing; each is recorded with that error.
   */
  failNext(method: string, error: string, options: { count?: number; when?: (params: Json) => boolean } = {}): void {
    this.failures.push({ method, error, left: options.count ?? 1, when: options.when });
  }

  /** Ends scripted refusals of `method` (of every method when undefined). */
  stopFailing(method?: string): void {
    for (let i = this.failures.length - 1; i >= 0; i--)
      if (method === undefined || this.failures[i]!.method === method) this.failures.splice(i, 1);
  }

  /** Forgets scripted hangs and refusals. */
  reset(): void {
    this.hangs.clear();
    this.failures.length = 0;
  }

  /** Consumes a scripted refusal of this call. @throws SlackApiError with its error. */
  private takeFailure(method: string, params: Json): void {
    const index = this.failures.findIndex((f) => f.method === method && (f.when?.(params) ?? true));
    if (index < 0) return;
    const failure = this.failures[index]!;
    failure.left -= 1;
    if (failure.left <= 0) this.failures.splice(index, 1);
    throw new SlackApiError(failure.error);
  }

  /** Consumes a scripted hang of `method`. @returns whether this call is to be left unanswered. */
  private takeHang(method: string): boolean {
    const left = this.hangs.get(method) ?? 0;
    if (left <= 0) return false;
    if (left === 1) this.hangs.delete(method);
    else this.hangs.set(method, left - 1);
    return true;
  }

  /** Answers one Web API request for `method` (already URL-decoded). */
  async handle(method: string, req: IncomingMessage, url: URL, raw: Buffer, res: ServerResponse): Promise<void> {
    const ws = this.ws;
    const call: SlackApiCall = {
      method,
      params: {},
      auth: 'none',
      tokenType: 'none',
      status: 200,
      ok: false,
      error: undefined,
      at: ws.now(),
      seq: ws.nextSeq(),
    };
    ws.calls.push(call);
    const headers: Record<string, string> = {};
    try {
      const { params, bodyToken } = await parseParams(req, url, raw);
      call.params = params;
      if (this.takeHang(method)) {
        call.status = 0;
        return; // the response stays open: the client's deadline (or close()) ends it
      }
      const handler = this.methods[method];
      if (!handler) throw new SlackApiError('unknown_method', { req_method: method });
      const authorization = req.headers.authorization ?? '';
      const header = /^Bearer\s+(.+)$/i.exec(authorization)?.[1];
      const token = header ?? bodyToken;
      call.auth = header ? 'header' : bodyToken ? 'body' : 'none';
      call.token = token;
      // An installed workspace's bot token (oauth.ts): its workspace, or why it is refused.
      const installed = token && token !== ws.botToken && token !== ws.appToken ? ws.oauth.tokenTeam(token) : undefined;
      call.tokenType = !token
        ? 'none'
        : token === ws.botToken || installed !== undefined
          ? 'bot'
          : token === ws.appToken
            ? 'app'
            : 'unknown';
      call.team = typeof installed === 'object' ? installed.teamId : call.tokenType === 'bot' ? ws.teamId : undefined;
      if (method === 'oauth.v2.access') Object.assign(params, basicCredentials(authorization));
      if (!TOKENLESS_METHODS.has(method)) {
        if (call.tokenType === 'none') throw new SlackApiError('not_authed');
        if (call.tokenType === 'unknown') throw new SlackApiError('invalid_auth');
        if (typeof installed === 'string') throw new SlackApiError(installed);
        if (call.tokenType === 'bot' && ws.uninstalled) throw new SlackApiError('token_revoked'); // uninstall.ts
        // The app-level token is good for app methods only, the bot token for everything else.
        if ((call.tokenType === 'app') !== APP_TOKEN_METHODS.has(method))
          throw new SlackApiError('not_allowed_token_type');
      }
      if (call.tokenType === 'bot') {
        headers['x-oauth-scopes'] = ws.scopes.join(',');
        const needed = neededScope(ws, method, params);
        if (needed !== undefined) {
          const accepted = [needed, ...(ALTERNATIVE_SCOPES[method] ?? [])];
          headers['x-accepted-oauth-scopes'] = accepted.join(',');
          if (!accepted.some((s) => ws.scopes.includes(s)))
            throw new SlackApiError('missing_scope', { needed, provided: ws.scopes.join(',') });
        }
      }
      ws.limits.takeScripted(method, params);
      this.takeFailure(method, params);
      // The workspace the call acts in (channels and users of another are not found): the token's.
      ws.callerTeam = typeof installed === 'object' ? installed.teamId : ws.teamId;
      let body: Json;
      try {
        body = handler(params);
      } finally {
        ws.callerTeam = undefined;
      }
      call.ok = true;
      sendJson(res, 200, { ok: true, ...body }, headers);
    } catch (error) {
      if (error instanceof RateLimited) {
        call.status = 429;
        call.error = 'ratelimited';
        sendJson(
          res,
          429,
          { ok: false, error: 'ratelimited' },
          { ...headers, 'retry-after': String(error.retryAfterSec) },
        );
      } else if (error instanceof SlackApiError) {
        call.error = error.error;
        sendJson(res, 200, { ok: false, error: error.error, ...error.extra }, headers);
      } else {
        throw error;
      }
    }
  }
}

/** Parses a Web API request's parameters; `bodyToken` is the token found in a form body or the query. */
async function parseParams(
  req: IncomingMessage,
  url: URL,
  raw: Buffer,
): Promise<{ params: Json; bodyToken: string | undefined }> {
  const params: Json = Object.fromEntries(url.searchParams);
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  let bodyToken = url.searchParams.get('token') ?? undefined;
  if (raw.length === 0) return { params, bodyToken };
  if (type.startsWith('application/json')) {
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new SlackApiError('invalid_json');
    }
    if (!isObject(body)) throw new SlackApiError('json_not_object');
    const { token: _ignored, ...rest } = body;
    Object.assign(params, rest);
  } else if (type.startsWith('multipart/form-data')) {
    const form = await new Request(url, { method: 'POST', headers: { 'content-type': type }, body: raw }).formData();
    for (const [key, value] of form) {
      if (key === 'token' && typeof value === 'string') bodyToken = value;
      else params[key] = typeof value === 'string' ? value : Buffer.from(await value.arrayBuffer());
    }
  } else {
    for (const [key, value] of new URLSearchParams(raw.toString('utf8'))) {
      if (key === 'token') bodyToken = value;
      else params[key] = value;
    }
  }
  return { params, bodyToken };
}

/** `client_id` and `client_secret` from an HTTP Basic authorization (oauth.v2.access takes either form). */
function basicCredentials(authorization: string): Json {
  const basic = /^Basic\s+(.+)$/i.exec(authorization)?.[1];
  if (!basic) return {};
  const [id, secret] = Buffer.from(basic, 'base64').toString('utf8').split(':');
  return { client_id: id, client_secret: secret };
}
