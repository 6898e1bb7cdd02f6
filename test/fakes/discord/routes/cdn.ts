/**
 * The CDN: `GET`/`HEAD /attachments/:channel/:attachment/:filename?ex=…&is=…&hm=…&` and the
 * media proxy's `/media/attachments/…`, without Authorization, as Discord's CDN serves
 * attachments of messages that still exist (and the uploads of interactions' attachment options).
 *
 * - Only the exact, unexpired signature of the URL the message carried is served; anything
 *   else (no query, another signature, an unknown or deleted file) is 404 with the text
 *   "This content is no longer available.", which is what Discord's CDN answers for missing
 *   or invalid `ex`/`is`/`hm` since enforcement began in 2024 (reports: get-got/
 *   discord-downloader-go#148 "All you get is a 404 error"; Zeptosec/Thermastore#10 for the
 *   text; Dastan21/BDAddons#240: "if it has no expiration parameters or has invalid/expired
 *   parameters the attachment won't work").
 * - Bytes are streamed in 64 KiB chunks with backpressure, and stop as soon as the client
 *   aborts or closes the socket; `Content-Length` is the real length served (not the
 *   advertised `size`), absent for a `chunked` attachment.
 * - A `Range: bytes=a-b` request is answered 206 with those bytes only (416 past the end), as an
 *   HTTP file host may (RFC 9110 §14.2; test/fakes/range.ts); a `chunked` attachment, whose
 *   length is not announced, is always sent whole (a host that ignores ranges: the bot then cuts
 *   the stream itself, test/core/download.test.ts).
 * - Every GET is recorded in `downloads` (bytes sent, completed, aborted), updated when the
 *   response ends or its socket closes, then announced as a `download` event.
 */
import type { ServerResponse } from 'node:http';
import { chunksInRange, type RangeAnswer, rangeAnswer, rangeHeaders } from '../../range.ts';
import { attachmentPath, hasValidSignature } from '../attachments.ts';
import type { Ctx } from '../context.ts';
import type { Reply } from '../http.ts';
import type { FakeAttachment } from '../model.ts';
import type { FakeDownload } from '../types.ts';

const GONE: Reply = {
  status: 404,
  raw: { data: Buffer.from('This content is no longer available.'), contentType: 'text/plain; charset=utf-8' },
};

/** `segments` are the decoded path segments; the raw path and query are checked against the signature. */
export function serveAttachment(
  ctx: Ctx,
  method: string,
  url: URL,
  segments: string[],
  range: string | undefined,
): Reply {
  const via = segments[0] === 'media' ? 'media' : 'cdn';
  const [, channelId, attachmentId, filename, ...rest] = via === 'media' ? segments.slice(1) : segments;
  if (rest.length > 0 || !channelId || !attachmentId) return GONE;
  const attachment = findAttachment(ctx, channelId, attachmentId);
  if (!attachment || attachment.filename !== filename) return GONE;
  const path = attachmentPath(channelId, attachmentId, attachment.filename);
  const requested = via === 'media' ? url.pathname.slice('/media'.length) : url.pathname;
  if (requested !== path || !hasValidSignature(ctx.state, path, url.searchParams)) return GONE;
  const answer: RangeAnswer = attachment.chunked ? { status: 200 } : rangeAnswer(range, attachment.byteLength);
  return {
    status: answer.status,
    stream: (res) => send(ctx, attachment, via, { headOnly: method === 'HEAD', answer }, res),
  };
}

/**
 * A file of a message of that channel that still exists, or of an attachment option of an
 * interaction in that channel whose token still lives.
 */
function findAttachment(ctx: Ctx, channelId: string, attachmentId: string): FakeAttachment | undefined {
  const option = ctx.state.optionAttachments.get(attachmentId);
  if (option)
    return option.channelId === channelId && Date.now() <= option.interaction.tokenExpiresAt
      ? option.attachment
      : undefined;
  for (const message of ctx.state.messages.values()) {
    if (message.channelId !== channelId || message.deleted) continue;
    const found = message.attachments.find((a) => a.id === attachmentId);
    if (found) return found;
  }
  return undefined;
}

function send(
  ctx: Ctx,
  attachment: FakeAttachment,
  via: FakeDownload['via'],
  how: { headOnly: boolean; answer: RangeAnswer },
  res: ServerResponse,
): void {
  const { answer } = how;
  res.writeHead(answer.status, {
    'content-type': attachment.contentType ?? 'application/octet-stream',
    ...(attachment.chunked ? {} : { 'content-length': String(attachment.byteLength), 'accept-ranges': 'bytes' }),
    ...rangeHeaders(answer, attachment.byteLength),
    'cache-control': 'public, max-age=31536000',
    via: '1.1 fake-discord-cdn',
  });
  if (how.headOnly || answer.status === 416) {
    res.end();
    return;
  }
  const download: FakeDownload = {
    attachmentId: attachment.id,
    filename: attachment.filename,
    via,
    at: Date.now(),
    bytesSent: 0,
    completed: false,
    aborted: false,
  };
  ctx.state.downloads.push(download);
  res.once('close', () => {
    download.completed = res.writableFinished;
    download.aborted = !res.writableFinished;
    ctx.state.events.emit('download', download);
  });
  const chunks =
    answer.status === 206 ? chunksInRange(attachment.chunks(), answer.start, answer.end) : attachment.chunks();
  void pump(chunks, res, download);
}

/** Writes chunks while the client reads them; stops when the response is destroyed. */
async function pump(chunks: Iterable<Buffer>, res: ServerResponse, download: FakeDownload): Promise<void> {
  for (const chunk of chunks) {
    if (res.destroyed) return;
    download.bytesSent += chunk.length;
    if (!res.write(chunk)) await drainedOrClosed(res);
  }
  if (!res.destroyed) res.end();
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
