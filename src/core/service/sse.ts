/**
 * Server-Sent Events (spec §4.1 "Streaming rules"; framing per OpenAI: `data: {json}` lines,
 * ended by `data: [DONE]`). Framing is parsed by eventsource-parser, which handles CRLF/LF/CR,
 * comment lines, multi-line `data:` and events split at any byte across reads.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { type ServiceError, StreamEndedEarlyError } from './errors.ts';

/** The end-of-stream marker of OpenAI-compatible streams. */
export const DONE = '[DONE]';

/**
 * Yields the `data` of the SSE events of `body`, one array per network read (so a consumer
 * pays one async step per read, not per event), up to (not including) `[DONE]`.
 *
 * Leaving the loop early (break/return/throw) destroys `body`, which cancels the HTTP request.
 * @param body an async iterable of bytes (undici's response body).
 * @param mapError turns a transport error (timeout, reset, abort) into a ServiceError.
 * @throws StreamEndedEarlyError (a StreamInterruptedError) when the body ends before `[DONE]`; whatever `mapError` returns
 *   when reading fails.
 */
export async function* sseBatches(
  body: AsyncIterable<Uint8Array> & { destroy?: (error?: Error) => unknown; dump?: () => Promise<void> },
  mapError: (cause: unknown) => ServiceError,
): AsyncGenerator<string[], void, undefined> {
  let pending: string[] = [];
  let done = false;
  const parser = createParser({
    onEvent: (event: EventSourceMessage) => {
      if (done) return;
      if (event.data === DONE) done = true;
      else pending.push(event.data);
    },
  });
  const decoder = new TextDecoder();
  const take = () => {
    const batch = pending;
    pending = [];
    return batch;
  };
  try {
    try {
      for await (const chunk of body) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        if (pending.length) yield take();
        if (done) return;
      }
    } catch (cause) {
      throw mapError(cause);
    }
    // The body ended: flush a last event that lacked its blank line (a lenient reading of a
    // server that closed right after `data: [DONE]`).
    parser.feed(`${decoder.decode()}\n\n`);
    if (pending.length) yield take();
    if (!done) throw new StreamEndedEarlyError();
  } finally {
    // After [DONE] the rest is drained so the keep-alive socket can be reused; otherwise the
    // request is cancelled (the consumer left the loop, or the stream failed).
    if (done) void body.dump?.().catch(() => undefined);
    else body.destroy?.();
  }
}

/** Like {@link sseBatches}, one event's `data` at a time. */
export async function* sseData(
  body: Parameters<typeof sseBatches>[0],
  mapError: (cause: unknown) => ServiceError,
): AsyncGenerator<string, void, undefined> {
  for await (const batch of sseBatches(body, mapError)) yield* batch;
}
