/**
 * Serving requests: each one read and recorded (`requests`, the `request` event), then the
 * behaviour scripted for the model it names (`setModelBehaviour`), else the route's next scripted behaviour, played (canned status, hang, reset, delayed headers, stream
 * script), then the spec's gatekeeping (Bearer key, unknown path 404, wrong method 405, body
 * size 413, Content-Type 415, JSON object 400) and the endpoint's handler; an `ApiError`
 * becomes its response, any other error a 500.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { handleChat } from './chat.ts';
import { handleCompletion } from './completions.ts';
import { MAX_BODY_BYTES } from './constants.ts';
import { ApiError, apiError, defaultErrorBody } from './errors.ts';
import { handleImageModels, handleImages, handleView } from './images.ts';
import { handleModels } from './models.ts';
import { internalError, send, sendJson } from './respond.ts';
import type { ServiceState } from './state.ts';
import type { Behaviour, FakeRoute, RecordedRequest, StreamScript } from './types.ts';
import { lowerKeys } from './util.ts';
import { describe, isObject, type Json, shown } from './validation.ts';

/** The endpoint a path names, and its method. */
interface RouteMatch {
  route: FakeRoute;
  method: 'GET' | 'POST';
}

/** Routes the fake's server to the state: socket bookkeeping, and every request handled. */
export function serve(server: Server, state: ServiceState): void {
  server.on('connection', (socket) => {
    socket.setNoDelay(true);
    state.sockets.add(socket);
    socket.once('close', () => state.sockets.delete(socket));
  });
  server.on('request', (req, res) => {
    handle(state, req, res).catch((err: unknown) => internalError(state, res, err));
  });
}

/** The endpoint of a path, if any. */
function routeOf(path: string): RouteMatch | undefined {
  switch (path) {
    case '/v1/chat/completions':
      return { route: 'chat', method: 'POST' };
    case '/v1/completions':
      return { route: 'completions', method: 'POST' };
    case '/v1/images/generations':
      return { route: 'images', method: 'POST' };
    case '/v1/models':
      return { route: 'models', method: 'GET' };
    case '/v1/images/available-models':
      return { route: 'imageModels', method: 'GET' };
    default:
      return /^\/v1\/images\/view\/[^/]+$/.test(path) ? { route: 'view', method: 'GET' } : undefined;
  }
}

/** The body's bytes; undefined when over {@link MAX_BODY_BYTES}. */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The body parsed as JSON; undefined when empty or not JSON. */
function parseJson(raw: Buffer | undefined): unknown {
  if (!raw || raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Records the request and announces it. */
function record(
  state: ServiceState,
  req: IncomingMessage,
  path: string,
  match: RouteMatch | undefined,
  parsed: unknown,
): void {
  const entry: RecordedRequest = {
    method: req.method ?? 'GET',
    path: req.url ?? path,
    route: match?.route,
    headers: { ...req.headers },
    body: parsed,
    receivedAt: Date.now(),
  };
  state.requests.push(entry);
  state.events.emit('request', entry);
}

/**
 * Plays a scripted behaviour. True when it answered (or will never answer); false when the
 * normal answer follows (after delayed headers, or as a scripted stream).
 */
async function playScripted(
  state: ServiceState,
  behaviour: Behaviour,
  req: IncomingMessage,
  res: ServerResponse,
  route: FakeRoute | undefined,
  path: string,
): Promise<boolean> {
  if ('hang' in behaviour) {
    state.events.emit('response', { route, path, status: 0, stream: false });
    return true;
  }
  if ('resetConnection' in behaviour) {
    state.events.emit('response', { route, path, status: 0, stream: false });
    const socket = req.socket;
    if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
    else socket.destroy();
    return true;
  }
  if (behaviour.delayHeadersMs !== undefined) await state.sleep(behaviour.delayHeadersMs);
  if (res.destroyed) return true;
  if ('status' in behaviour) {
    const body = behaviour.body === undefined ? defaultErrorBody(behaviour.status) : behaviour.body;
    const isRaw = typeof body === 'string' || Buffer.isBuffer(body);
    const bytes = Buffer.isBuffer(body) ? body : Buffer.from(isRaw ? (body as string) : JSON.stringify(body));
    send(state, res, route, path, behaviour.status, bytes, {
      'content-type': isRaw ? 'text/plain; charset=utf-8' : 'application/json',
      ...lowerKeys(behaviour.headers ?? {}),
    });
    return true;
  }
  return false;
}

/** The key, the path and the method: 401, 404 or 405. */
function checkAccess(
  state: ServiceState,
  req: IncomingMessage,
  path: string,
  match: RouteMatch | undefined,
): asserts match is RouteMatch {
  if (req.headers.authorization !== `Bearer ${state.apiKey}`) {
    throw apiError(401, 'Incorrect API key provided.', null, 'invalid_api_key');
  }
  if (!match) {
    throw apiError(404, `Invalid URL (${req.method} ${path})`, null, 'unknown_url');
  }
  if (req.method !== match.method) {
    throw apiError(
      405,
      `Method ${req.method} is not allowed on ${path}; use ${match.method}.`,
      null,
      'method_not_allowed',
      'invalid_request_error',
      { allow: match.method },
    );
  }
}

/** A POST body: within the size limit, sent as JSON, a JSON object (413, 415, 400). */
function checkBody(req: IncomingMessage, raw: Buffer | undefined, parsed: unknown): Json {
  if (raw === undefined) {
    throw apiError(413, `Request body too large: the maximum is ${MAX_BODY_BYTES} bytes.`, null, 'request_too_large');
  }
  const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (ct !== 'application/json') {
    throw apiError(
      415,
      `Unsupported Content-Type ${shown(req.headers['content-type'] ?? '(none)')}: request bodies must be sent with Content-Type: application/json.`,
      null,
      'unsupported_media_type',
    );
  }
  if (!isObject(parsed)) {
    throw apiError(
      400,
      parsed === undefined
        ? "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The API expects a JSON payload, but what was sent was not valid JSON.)"
        : `The request body must be a JSON object, but got ${describe(parsed)}.`,
      null,
      'invalid_json',
    );
  }
  return parsed;
}

/** Answers a GET endpoint. */
async function handleGet(state: ServiceState, route: FakeRoute, path: string, res: ServerResponse): Promise<void> {
  if (route === 'models') return handleModels(state, route, path, res);
  if (route === 'imageModels') return handleImageModels(state, route, path, res);
  if (route === 'view') return handleView(state, route, path, res);
  throw apiError(404, `Invalid URL (GET ${path})`, null, 'unknown_url');
}

/** The model a generation request names (`model`; an image request's `user_selected_model`), if any. */
function modelNamed(route: FakeRoute | undefined, body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const model =
    route === 'images'
      ? body.user_selected_model
      : route === 'chat' || route === 'completions'
        ? body.model
        : undefined;
  return typeof model === 'string' ? model : undefined;
}

/** Handles one request, from reading its body to the last byte of the answer. */
async function handle(state: ServiceState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://fake.invalid').pathname;
  const match = routeOf(path);
  const raw = await readBody(req);
  const parsed = parseJson(raw);
  record(state, req, path, match, parsed);

  // A model scripted to fail answers so every time it is named; else the route's next scripted behaviour.
  const named = modelNamed(match?.route, parsed);
  const byModel = named === undefined ? undefined : state.byModel.get(named);
  const behaviour = byModel ?? (match ? state.queues.get(match.route)?.shift() : undefined);
  let stream: StreamScript | undefined;
  if (behaviour) {
    if (await playScripted(state, behaviour, req, res, match?.route, path)) return;
    if ('stream' in behaviour) stream = behaviour.stream;
  }

  try {
    checkAccess(state, req, path, match);
    if (match.method === 'GET') {
      await handleGet(state, match.route, path, res);
      return;
    }
    const body = checkBody(req, raw, parsed);
    switch (match.route) {
      case 'chat':
        return await handleChat(state, body, res, stream);
      case 'completions':
        return await handleCompletion(state, body, res, stream);
      case 'images':
        return await handleImages(state, body, res);
      default:
        throw apiError(404, `Invalid URL (${req.method} ${path})`, null, 'unknown_url');
    }
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    sendJson(state, res, match?.route, path, err.status, err.body, err.headers);
  }
}
