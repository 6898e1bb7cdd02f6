/**
 * Users' files (added, and shared in a conversation by their owner) and file downloads: `GET|HEAD /files-pri/<team>-<file>/<name>` (`url_private`)
 * and `/files-pri/<team>-<file>/download/<name>` (`url_private_download`), for users' files
 * ({@link addUserFile}) and the bot's uploads alike.
 *
 * - With `Authorization: Bearer <bot token>` and the scope `files:read`: HTTP 200, the file's
 *   mimetype as content type, `Content-Length` equal to the real byte count (whatever `size`
 *   the file object claims), the bytes. A generated (`stream`) file is written 64 KiB at a
 *   time as the client reads, never held in memory, and stops as soon as the client goes away.
 * - Without a token, with another token, or without `files:read`: what Slack does, a redirect
 *   to its sign-in page instead of the file — HTTP 302, `Location: <origin>/?redir=<path>`,
 *   body `<a href="…">Found</a>.` (the body quoted in slackapi/node-slack-sdk#1750; "302 → HTML
 *   login page" for a token lacking files:read in OpenRouterLabs/spawn#2316); following it
 *   gives HTTP 200 `text/html` (what clients that follow redirects see: "Slack answers an
 *   unauthorized file download with a 200 and an HTML sign-in page", PostHog/posthog#74184;
 *   "a text/html answer means a missing scope", seratch/ChatGPT-in-Slack app/slack_ops.py).
 * - An unknown file: HTTP 404 `text/html`.
 * - `GET /files/<user>/<file>/<name>` (a `permalink`) is a web page (HTTP 200 `text/html`),
 *   never the bytes, as on Slack.
 *
 * Every request for a file's bytes is recorded in `downloads` (authorized or not, bytes
 * written, completed or aborted).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { rangeAnswer, rangeHeaders } from '../range.ts';
import type { UserFileInput } from './inbound-types.ts';
import type { FakeSlackFile, FakeSlackMessage, FileDownload } from './types.ts';
import type { Workspace } from './workspace.ts';

/** Bytes written per chunk of a generated file. */
export const DOWNLOAD_CHUNK_BYTES = 64 * 1024;

/** Byte `i` of a generated file is `i % 251` (a prime, so chunks are not all alike). */
const PERIOD = 251;
const PATTERN = Buffer.from(Array.from({ length: DOWNLOAD_CHUNK_BYTES + PERIOD }, (_, i) => i % PERIOD));

/** The bytes `[offset, offset + length)` of a generated file (for tests that check the content). */
export function generatedBytes(offset: number, length: number): Buffer {
  return Buffer.from(Array.from({ length }, (_, i) => (offset + i) % PERIOD));
}

/** A chunk of at most DOWNLOAD_CHUNK_BYTES at `offset`, as a view of one shared buffer (no allocation). */
function chunkAt(offset: number, length: number): Buffer {
  const start = offset % PERIOD;
  return PATTERN.subarray(start, start + length);
}

/** See {@link FakeSlack.addUserFile}. @throws Error for a bad input (a test mistake). */
export function addUserFile(ws: Workspace, input: UserFileInput): FakeSlackFile {
  if (!input.name) throw new Error('addUserFile: a name is needed');
  if ((input.data === undefined) === (input.stream === undefined))
    throw new Error('addUserFile: give exactly one of data and stream');
  if (input.stream && !(Number.isInteger(input.stream.bytes) && input.stream.bytes >= 0))
    throw new Error('addUserFile: stream.bytes must be a whole number ≥ 0');
  const user = input.user ?? [...ws.users.keys()][0] ?? '';
  if (!ws.users.has(user)) throw new Error(`addUserFile: unknown user ${user}`);
  const length = input.data ? input.data.length : input.stream!.bytes;
  return ws.addFile({
    origin: 'user',
    filename: input.name,
    length,
    size: input.size ?? length,
    altText: undefined,
    title: input.title,
    data: input.data,
    streamBytes: input.stream?.bytes,
    contentType: input.mimetype,
    user,
    completed: true,
    ...(input.filetype ? { filetype: input.filetype } : {}),
  });
}

/** See {@link FakeSlack.shareUserFile}. @throws Error for a file of another fake, an unknown channel, or an owner not in it. */
export function shareUserFile(
  ws: Workspace,
  file: FakeSlackFile,
  channel: string,
  options: { text?: string; threadTs?: string } = {},
): FakeSlackMessage {
  const where = ws.channels.get(channel);
  if (ws.file(file.id) !== file) throw new Error(`shareUserFile: file ${file.id} is not a file of this fake`);
  if (!where) throw new Error(`shareUserFile: unknown channel ${channel}`);
  if (where.isIm ? where.imUser !== file.user : where.members && !where.members.includes(file.user))
    throw new Error(`shareUserFile: ${file.user} is not a member of ${channel}`);
  const m = ws.storeMessage({
    channel,
    user: file.user,
    botId: undefined,
    text: options.text ?? '',
    blocks: undefined,
    threadTs: options.threadTs,
    files: [file.id],
    via: 'user',
    method: 'user',
  });
  Object.assign(file, { channel, threadTs: options.threadTs, messageTs: m.ts });
  file.shares.push({ channel, ts: m.ts, threadTs: options.threadTs });
  return m;
}

/** A web page: Slack's sign-in page, or the web app at a permalink. */
function sendHtml(res: ServerResponse, status: number, title: string, text: string): void {
  const body = Buffer.from(
    `<!DOCTYPE html><html lang="en-US"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${text}</h1></body></html>`,
  );
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(body.length) });
  res.end(body);
}

/** `GET /` (where the redirect of an unauthorized download leads): the sign-in page. */
export function handleSignInPage(ws: Workspace, res: ServerResponse): void {
  sendHtml(res, 200, 'Slack', `Sign in to ${ws.teamDomain}`);
}

/** `GET /files/<user>/<file>/<name>`: a permalink is the web app, never the bytes. */
export function handlePermalink(res: ServerResponse): void {
  sendHtml(res, 200, 'Slack', 'Redirecting…');
}

/** Serves `url_private` / `url_private_download`; see the file comment. */
export async function handleFileDownload(
  ws: Workspace,
  req: IncomingMessage,
  url: URL,
  res: ServerResponse,
): Promise<void> {
  const [, team, fileId] = /^\/files-pri\/([A-Z0-9]+)-(F[A-Z0-9]+)\/(?:download\/)?[^/]+$/.exec(url.pathname) ?? [];
  const record: FileDownload = {
    fileId: fileId ?? '',
    path: url.pathname,
    authorized: false,
    status: 0,
    bytesSent: 0,
    completed: false,
    aborted: false,
    at: ws.now(),
  };
  ws.downloads.push(record);
  const token = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
  const installed = token ? ws.oauth.tokenTeam(token) : undefined;
  record.authorized = (token === ws.botToken || typeof installed === 'object') && ws.scopes.includes('files:read');
  if (!record.authorized) {
    const location = `${ws.baseUrl}/?redir=${encodeURIComponent(url.pathname)}`;
    const body = Buffer.from(`<a href="${location}">Found</a>.`);
    record.status = 302;
    res.writeHead(302, { location, 'content-type': 'text/html; charset=utf-8', 'content-length': String(body.length) });
    res.end(body);
    return;
  }
  const file = fileId ? ws.file(fileId) : undefined;
  if (!file || team !== ws.teamId || (file.data === undefined && file.streamBytes === undefined)) {
    record.status = 404;
    return sendHtml(res, 404, 'File not found', 'This file could not be found.');
  }
  // One range is served as asked (206; 416 past the end), as an HTTP file host may (RFC 9110 §14.2).
  const answer = rangeAnswer(req.headers.range, file.length);
  record.status = answer.status;
  const download = url.pathname.includes('/download/');
  res.writeHead(answer.status, {
    'content-type': file.contentType ?? 'application/octet-stream',
    'content-length': String(file.length),
    'accept-ranges': 'bytes',
    ...rangeHeaders(answer, file.length),
    'cache-control': 'private, no-transform',
    ...(download
      ? { 'content-disposition': `attachment; filename="${file.filename.replace(/["\\\r\n]/g, '_')}"` }
      : {}),
  });
  res.on('finish', () => {
    record.completed = true;
  });
  res.on('close', () => {
    record.aborted = !record.completed;
  });
  if (req.method === 'HEAD' || answer.status === 416) return void res.end();
  const [from, to] = answer.status === 206 ? [answer.start, answer.end + 1] : [0, file.length];
  if (file.data) {
    record.bytesSent = to - from;
    return void res.end(file.data.subarray(from, to));
  }
  await writeGenerated(res, { from, to }, record);
}

/** Writes bytes [from, to) of a generated file chunk by chunk, waiting for `drain`, and stops when the client closes. */
async function writeGenerated(
  res: ServerResponse,
  bytes: { from: number; to: number },
  record: FileDownload,
): Promise<void> {
  let closed = false;
  let wake: (() => void) | undefined;
  res.on('drain', () => wake?.());
  res.on('close', () => {
    closed = true;
    wake?.();
  });
  let offset = bytes.from;
  while (offset < bytes.to && !closed) {
    const length = Math.min(DOWNLOAD_CHUNK_BYTES, bytes.to - offset);
    const flushed = res.write(chunkAt(offset, length));
    offset += length;
    record.bytesSent = offset - bytes.from;
    if (!flushed && !closed) await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
  }
  if (!closed) res.end();
}
