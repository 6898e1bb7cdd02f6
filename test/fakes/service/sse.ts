/**
 * Streamed answers: chunks serialised as OpenAI SSE (`data: {chunk}` … `data: [DONE]`) with a
 * script's faults (keep-alive comments, CRLF, multi-line data, a malformed line, an error mid
 * stream, a drop, a stall, a hold until the test releases it, no `[DONE]`), written in pieces of
 * 1–40 bytes cut at seeded positions one event-loop turn apart (or whole events), with
 * `chunkDelayMs` before events.
 */
import type { ServerResponse } from 'node:http';
import { baseHeaders } from './respond.ts';
import type { ServiceState } from './state.ts';
import type { FakeRoute, StreamScript } from './types.ts';

const MAX_PIECE_BYTES = 40;

/** How a stream ends: `[DONE]` (unless omitted), an error event, a cut, or keep-alives forever. */
type Ending = 'done' | 'error' | 'drop' | 'stall';

/** The SSE frames of the chunks with the script's faults, and how the stream ends. */
function framesOf(
  chunks: unknown[],
  script: StreamScript,
): { frames: string[]; ending: Ending; comment: string; holdAt: number | undefined } {
  const eol = script.crlf ? '\r\n' : '\n';
  const frames: string[] = [];
  const comment = `: keep-alive${eol}${eol}`;
  const dataFrame = (obj: unknown) => {
    const lines = script.multiLineData
      ? JSON.stringify(obj, null, 1)
          .split('\n')
          .map((l, i) => (i % 2 === 0 ? `data: ${l}` : `data:${l}`))
      : [`data: ${JSON.stringify(obj)}`];
    return lines.join(eol) + eol + eol;
  };
  const afterChunks = script.afterChunks ?? 2;
  let ending: Ending = 'done';
  if (script.comments) frames.push(comment);
  let sent = 0;
  let holdAt: number | undefined;
  const errorFrame = (e: Record<string, unknown>) => dataFrame('error' in e ? e : { error: e });
  // afterChunks 0: the error is the first event (a legacy completion has no role chunk before its text).
  const errorFirst = afterChunks === 0 && script.errorMidStream !== undefined;
  if (errorFirst) {
    frames.push(errorFrame(script.errorMidStream!));
    ending = 'error';
  }
  for (const chunk of errorFirst ? [] : chunks) {
    if (script.hold && sent === script.hold.afterChunks) holdAt = frames.length;
    if (script.dropAfterChunks !== undefined && sent >= script.dropAfterChunks) {
      ending = 'drop';
      break;
    }
    if (script.stallAfterChunks !== undefined && sent >= script.stallAfterChunks) {
      ending = 'stall';
      break;
    }
    frames.push(dataFrame(chunk));
    sent += 1;
    if (script.comments && sent % 2 === 0) frames.push(comment);
    if (sent === afterChunks && script.malformedLine !== undefined) frames.push(script.malformedLine + eol + eol);
    if (sent === afterChunks && script.errorMidStream !== undefined) {
      frames.push(errorFrame(script.errorMidStream));
      ending = 'error';
      break;
    }
  }
  if (ending === 'done' && script.dropAfterChunks !== undefined && sent >= script.dropAfterChunks) ending = 'drop';
  if (ending === 'done' && !script.omitDone) frames.push(`data: [DONE]${eol}${eol}`);
  return { frames, ending, comment, holdAt };
}

/** The frames' bytes, and the byte offset where each frame starts. */
function bytesOf(frames: string[]): { all: Buffer; starts: number[] } {
  const buffers = frames.map((f) => Buffer.from(f, 'utf8'));
  const starts: number[] = [];
  let offset = 0;
  for (const b of buffers) {
    starts.push(offset);
    offset += b.length;
  }
  return { all: Buffer.concat(buffers), starts };
}

/** Writes the status line and headers of an event stream; counts it open until it closes. */
function openStream(state: ServiceState, res: ServerResponse, route: FakeRoute, path: string): void {
  state.open += 1;
  res.once('close', () => {
    state.open -= 1;
    state.events.emit('streamClosed', { route, at: Date.now(), finished: res.writableFinished });
  });
  res.writeHead(200, {
    ...baseHeaders(),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  res.flushHeaders();
  state.events.emit('response', { route, path, status: 200, stream: true });
}

/**
 * Writes the bytes in pieces (`chunkDelayMs` before each piece that starts events). False when
 * the response or the fake closed on the way.
 */
async function writePieces(
  state: ServiceState,
  res: ServerResponse,
  { all, starts }: { all: Buffer; starts: number[] },
  script: StreamScript,
  rnd: () => number,
): Promise<boolean> {
  const delay = script.chunkDelayMs ?? state.options.chunkDelayMs;
  let pos = 0;
  let frame = 1; // next frame start to account for (frame 0 starts with the headers)
  while (pos < all.length) {
    // Whole events: up to the next frame's start (`pos` is always at one, counted in `frame` after the first).
    const end = script.wholeEvents
      ? (starts[pos === 0 ? frame : frame + 1] ?? all.length)
      : Math.min(all.length, pos + 1 + Math.floor(rnd() * MAX_PIECE_BYTES));
    let newEvents = 0;
    while (frame < starts.length && starts[frame]! < end) {
      newEvents += 1;
      frame += 1;
    }
    await state.sleep(delay > 0 && (newEvents > 0 || pos === 0) ? delay * Math.max(newEvents, 1) : 0);
    if (res.destroyed || state.closed) return false;
    res.write(all.subarray(pos, end));
    pos = end;
  }
  return true;
}

/** Ends a written stream its script's way: keep-alives until the client leaves, a cut, or the end. */
async function endStream(
  state: ServiceState,
  res: ServerResponse,
  ending: Ending,
  comment: string,
  script: StreamScript,
): Promise<void> {
  if (ending === 'stall') {
    // Keep the connection alive with comments (bytes, but no text) until the client leaves.
    while (!res.destroyed && !state.closed) {
      await state.sleep(script.keepAliveMs ?? 200);
      if (!res.destroyed) res.write(comment);
    }
    return;
  }
  if (ending === 'drop') {
    // Let the written bytes reach the kernel, then cut the connection (no terminating chunk).
    const socket = res.socket;
    for (let i = 0; socket && !socket.destroyed && socket.writableLength > 0 && i < 1000; i++) await state.sleep(1);
    socket?.destroy();
    return;
  }
  res.end();
}

/**
 * Serialises the chunks as SSE (with the script's faults) and writes the bytes in pieces of
 * 1–40 bytes cut at seeded positions, one event-loop turn apart (plus `chunkDelayMs` before
 * each event), so events and even UTF-8 characters cross network reads.
 */
export async function writeSse(
  state: ServiceState,
  res: ServerResponse,
  route: FakeRoute,
  path: string,
  chunks: unknown[],
  script: StreamScript,
  rnd: () => number,
): Promise<void> {
  const { frames, ending, comment, holdAt } = framesOf(chunks, script);
  openStream(state, res, route, path);
  if (holdAt !== undefined) {
    // The frames before the hold, then nothing until the test lets the stream go on.
    if (!(await writePieces(state, res, bytesOf(frames.slice(0, holdAt)), script, rnd))) return;
    await script.hold?.until;
    if (res.destroyed || state.closed) return;
  }
  if (!(await writePieces(state, res, bytesOf(frames.slice(holdAt ?? 0)), script, rnd))) return;
  await state.sleep(0);
  if (res.destroyed) return;
  await endStream(state, res, ending, comment, script);
}
