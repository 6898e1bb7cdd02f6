/**
 * Writing whole (not streamed) responses: bytes or JSON with the fake's base headers, each
 * announced on `events` as a `response`; and the 500 of an unexpected error.
 */
import type { ServerResponse } from 'node:http';
import type { ServiceState } from './state.ts';
import type { FakeRoute } from './types.ts';
import { newId } from './util.ts';

/** Headers of every response: a fresh `x-request-id`. */
export function baseHeaders(): Record<string, string> {
  return { 'x-request-id': newId('req_') };
}

/** Writes a whole response (unless the response is gone or begun) and announces it. */
export function send(
  state: ServiceState,
  res: ServerResponse,
  route: FakeRoute | undefined,
  path: string,
  status: number,
  body: Buffer,
  headers: Record<string, string>,
): void {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, { ...baseHeaders(), 'content-length': String(body.length), ...headers });
  res.end(body);
  state.events.emit('response', { route, path, status, stream: false });
}

/** Writes a JSON response. */
export function sendJson(
  state: ServiceState,
  res: ServerResponse,
  route: FakeRoute | undefined,
  path: string,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  send(state, res, route, path, status, Buffer.from(JSON.stringify(body)), {
    'content-type': 'application/json',
    ...headers,
  });
}

/** Answers an unexpected error with a 500 (or cuts a response already begun). */
export function internalError(state: ServiceState, res: ServerResponse, err: unknown): void {
  const message = `The server had an error while processing your request: ${err instanceof Error ? err.message : String(err)}`;
  if (!res.headersSent && !res.destroyed) {
    sendJson(state, res, undefined, '', 500, { error: { message, type: 'server_error', param: null, code: null } });
  } else {
    res.destroy();
  }
}
