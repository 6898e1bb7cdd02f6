/**
 * REST plumbing of the Discord fake: reading and parsing request bodies (JSON, or multipart
 * with `payload_json` and `files[N]`), recording each request, scripted faults, and writing
 * the answer (JSON, raw bytes, or empty).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_REQUEST_BYTES } from './constants.ts';
import { discordError, formError, HttpError } from './errors.ts';
import type { FakeState } from './state.ts';
import type { FakeRequestRecord, Json } from './types.ts';
import { isObject, safeDecode } from './util.ts';

/** A REST answer: JSON `body`, `raw` bytes, nothing, or a `stream` that writes the response itself. */
export interface Reply {
  status: number;
  body?: unknown;
  raw?: { data: Buffer; contentType: string };
  headers?: Record<string, string>;
  /** Writes status, headers and body (the request is recorded first). */
  stream?: (res: ServerResponse) => void;
}

/** A file uploaded in a multipart body. */
export interface IncomingFile {
  field: string;
  /** `N` of `files[N]` (the attachment id it binds to). */
  index: string;
  filename: string;
  contentType: string | undefined;
  data: Buffer;
}

/** A parsed request body. */
export interface Body {
  json: unknown;
  files: IncomingFile[];
}

/** An empty body (GET, DELETE). */
export const NO_BODY: Body = { json: undefined, files: [] };

/** Decides the answer of a request whose body has been read (`record` gets the parsed body). */
export type Router = (req: IncomingMessage, url: URL, raw: Buffer, record: FakeRequestRecord) => Promise<Reply>;

/** The whole request body. @throws HttpError 413 (40005) past {@link MAX_REQUEST_BYTES}. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) throw discordError(413, 40005, 'Request entity too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * The JSON body, or `payload_json` and `files[N]` of a multipart body.
 * @throws HttpError 400 (50109 invalid JSON, 50035 unparsable multipart or another content type).
 */
export async function parseBody(req: IncomingMessage, raw: Buffer): Promise<Body> {
  if (raw.length === 0) return { json: undefined, files: [] };
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('application/json')) {
    try {
      return { json: JSON.parse(raw.toString('utf8')), files: [] };
    } catch {
      throw discordError(400, 50109, 'The request body contains invalid JSON.');
    }
  }
  if (type.startsWith('multipart/form-data')) {
    let form: FormData;
    try {
      form = await new Request('http://fake.invalid/', {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type']! },
        body: raw,
      }).formData();
    } catch {
      throw formError({ _errors: [{ code: 'FORM_BODY_INVALID', message: 'The multipart body could not be parsed.' }] });
    }
    let json: Json = {};
    const files: IncomingFile[] = [];
    for (const [field, value] of form.entries()) {
      if (typeof value === 'string') {
        if (field === 'payload_json') {
          try {
            const parsed: unknown = JSON.parse(value);
            json = isObject(parsed) ? { ...json, ...parsed } : json;
          } catch {
            throw discordError(400, 50109, 'The request body contains invalid JSON.');
          }
        } else json[field] = value;
        continue;
      }
      const index = /^files\[(\d+)\]$/.exec(field)?.[1] ?? /^file(\d*)$/.exec(field)?.[1] ?? String(files.length);
      files.push({
        field,
        index: index === '' ? '0' : index,
        filename: value.name,
        contentType: value.type || undefined,
        data: Buffer.from(await value.arrayBuffer()),
      });
    }
    return { json, files };
  }
  throw formError({
    _errors: [
      {
        code: 'CONTENT_TYPE_INVALID',
        message:
          "Expected \"Content-Type\" header to be one of {'application/json', 'multipart/form-data', 'application/x-www-form-urlencoded'}.",
      },
    ],
  });
}

/**
 * Answers one REST request: records it in `requests` (and emits `request`), applies a
 * scripted fault first, else asks `route`; an {@link HttpError} becomes its status and body,
 * anything else a 500.
 */
export async function handleRequest(
  state: FakeState,
  req: IncomingMessage,
  res: ServerResponse,
  route: Router,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://fake.invalid');
  const record: FakeRequestRecord = {
    seq: state.nextSeq(),
    at: Date.now(),
    method: req.method ?? 'GET',
    path: url.pathname
      .split('/')
      .map((s) => safeDecode(s))
      .join('/'),
    query: url.search,
    headers: { ...req.headers },
    body: undefined,
    files: [],
    status: 0,
    code: undefined,
  };
  let reply: Reply;
  try {
    const raw = await readBody(req);
    const fault = state.faults.find(
      (f) => f.left > 0 && (f.method === undefined || f.method === record.method) && f.path.test(record.path),
    );
    if (fault) {
      fault.left -= 1;
      throw new HttpError(fault.status, fault.body ?? { message: `${fault.status}: Injected failure`, code: 0 });
    }
    state.pressure.global(record);
    state.globalLimit.take(record);
    reply = await route(req, url, raw, record);
  } catch (error) {
    if (error instanceof HttpError) reply = { status: error.status, body: error.body, headers: error.headers };
    else
      reply = {
        status: 500,
        body: {
          message: `500: Internal Server Error (${error instanceof Error ? error.message : String(error)})`,
          code: 0,
        },
      };
  }
  record.status = reply.status;
  record.code =
    isObject(reply.body) && typeof reply.body.code === 'number' && reply.status >= 400 ? reply.body.code : undefined;
  state.requests.push(record);
  state.events.emit('request', record);
  if (res.destroyed) return;
  if (reply.stream) {
    reply.stream(res);
    return;
  }
  const headers: Record<string, string> = {
    via: '1.1 fake-discord',
    'x-request-id': randomUUID(),
    ...(reply.headers ?? {}),
  };
  if (reply.raw) {
    res.writeHead(reply.status, {
      ...headers,
      'content-type': reply.raw.contentType,
      'content-length': String(reply.raw.data.length),
    });
    res.end(reply.raw.data);
  } else if (reply.body === undefined) {
    res.writeHead(reply.status, headers);
    res.end();
  } else {
    const data = Buffer.from(JSON.stringify(reply.body));
    res.writeHead(reply.status, {
      ...headers,
      'content-type': 'application/json',
      'content-length': String(data.length),
    });
    res.end(data);
  }
}
