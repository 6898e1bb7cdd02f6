/**
 * The REST router: `/api/v10/...` to the handlers of each protocol area (identity and
 * gateway discovery, application commands, interactions and their webhooks, channels and
 * their messages, threads the bot starts, the guild's members), and `/attachments/...` and `/media/attachments/...` to the CDN (no
 * Authorization). Bot routes need `Authorization: Bot <token>` (401, code 0); another API
 * version is 400 code 50041; unknown routes 404; a known route with another method 405.
 */
import type { IncomingMessage } from 'node:http';
import { API_VERSION } from '../constants.ts';
import type { Ctx } from '../context.ts';
import { discordError, notFound, unauthorized } from '../errors.ts';
import { type Body, parseBody, type Reply, type Router } from '../http.ts';
import type { FakeRequestRecord } from '../types.ts';
import { safeDecode } from '../util.ts';
import { serveAttachment } from './cdn.ts';
import { channelRoutes } from './channels.ts';
import { commandRoutes } from './commands.ts';
import { interactionRoutes } from './interactions.ts';
import { memberRoutes } from './members.ts';
import { threadRoutes } from './threads.ts';
import { identityRoutes } from './users.ts';

/** One API request, as the handlers of each area see it. */
export interface ApiRequest {
  req: IncomingMessage;
  method: string;
  url: URL;
  /** The decoded path segments after `/api/v10`. */
  p: string[];
  /** The decoded path (as recorded). */
  path: string;
  /** Parses the body (once per call) and records it on the request record. */
  body(): Promise<Body>;
  /** Whether the segments match `pattern` (`*` matches any one segment). */
  is(...pattern: string[]): boolean;
  /** @throws HttpError 405 unless the method is one of `methods`. */
  allow(...methods: string[]): void;
  /** @throws HttpError 401 unless the request carries the bot token. */
  requireBot(): void;
}

/** A protocol area's handler: its answer, or undefined when the route is not one of its own. */
export type AreaRoutes = (ctx: Ctx, request: ApiRequest) => Reply | Promise<Reply> | undefined;

const AREAS: AreaRoutes[] = [
  identityRoutes,
  commandRoutes,
  interactionRoutes,
  channelRoutes,
  threadRoutes,
  memberRoutes,
];

export function createRouter(ctx: Ctx): Router {
  return async (req, url, raw, record: FakeRequestRecord) => {
    const method = req.method ?? 'GET';
    const segments = url.pathname
      .split('/')
      .slice(1)
      .map((s) => safeDecode(s));
    const cdn = segments[0] === 'attachments' || (segments[0] === 'media' && segments[1] === 'attachments');
    if (cdn && (method === 'GET' || method === 'HEAD'))
      return serveAttachment(ctx, method, url, segments, req.headers.range);
    if (segments[0] !== 'api') throw notFound();
    const version = /^v(\d+)$/.exec(segments[1] ?? '')?.[1];
    if (version !== API_VERSION) throw discordError(400, 50041, 'Invalid API version provided.');
    const p = segments.slice(2);
    const request: ApiRequest = {
      req,
      method,
      url,
      p,
      path: record.path,
      body: async () => {
        const parsed = await parseBody(req, raw);
        record.body = parsed.json;
        record.files = parsed.files.map((f) => ({ field: f.field, filename: f.filename, size: f.data.length }));
        return parsed;
      },
      is: (...pattern) => pattern.length === p.length && pattern.every((s, i) => s === '*' || s === p[i]),
      allow: (...methods) => {
        if (!methods.includes(method)) throw discordError(405, 0, '405: Method Not Allowed');
      },
      requireBot: () => {
        if (req.headers.authorization !== `Bot ${ctx.state.token}`) throw unauthorized();
      },
    };
    for (const area of AREAS) {
      const reply = area(ctx, request);
      if (reply !== undefined) return await reply;
    }
    throw notFound();
  };
}
