/**
 * Server-Sent Events (spec §4.1 "Streaming rules"; framing per OpenAI: `data: {json}` lines,
 * ended by `data: [DONE]`). Framing is parsed by eventsource-parser, which handles CRLF/LF/CR,
 * comment lines, multi-line `data:` and events split at any byte across reads.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { StreamInterruptedError, type ServiceError } from './errors.ts';

/** The end-of-stream marker of OpenAI-compatible streams. */
export const DONE = '[DONE]';

/**
 * Yields the `data` of each SSE event of `body`, up to (not including) `[DONE]`.
 *
 * Leaving the loop early (break/return/throw) destroys `body`, which cancels the HTTP request.
 * @param body an async iterable of bytes (undici's response body).
 * @param mapError turns a transport error (timeout, reset, abort) into a ServiceError.
 * @throws StreamInterruptedError when the body ends before `[DONE]`; whatever `mapError` returns
 *   when reading fails.
 */
export async function* sseData(
  body: AsyncIterable<Uint8Array> & { destroy?: (error?: Error) => unknown; dump?: () => Promise<void> },
  mapError: (cause: unknown) => ServiceError,
): AsyncGenerator<string, void, undefined> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  const decoder = new TextDecoder();
  let done = false;
  try {
    try {
      for await (const chunk of body) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        for (let i = 0; i < pending.length; i++) {
          const data = pending[i]!.data;
          if (data === DONE) {
            done = true;
            return;
          }
          yield data;
        }
        pending.length = 0;
      }
    } catch (cause) {
      if (cause instanceof StreamInterruptedError) throw cause;
      throw mapError(cause);
    }
    // The body ended: flush a last event that lacked its blank line, as a browser would not,
    // but as a lenient client should when the server closed right after `data: [DONE]`.
    parser.feed(decoder.decode() + '\n\n');
    for (const event of pending) {
      if (event.data === DONE) {
        done = true;
        return;
      }
      yield event.data;
    }
    throw new StreamInterruptedError('the stream ended before data: [DONE]');
  } finally {
    // After [DONE] the rest is drained so the keep-alive socket can be reused; otherwise the
    // request is cancelled (the consumer left the loop, or the stream failed).
    if (done) void body.dump?.().catch(() => undefined);
    else body.destroy?.();
  }
}
