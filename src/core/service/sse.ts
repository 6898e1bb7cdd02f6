/**
 * Server-Sent Events (spec §4.1 "Streaming rules"; framing per OpenAI: `data: {json}` lines,
 * ended by `data: [DONE]`). Framing is parsed by eventsource-parser, which handles CRLF/LF/CR,
 * comment lines, multi-line `data:` and events split at any byte across reads.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { type ServiceError, StreamEndedEarlyError } from './errors.ts';

/** The end-of-stream marker of OpenAI-compatible streams. */
export const DONE = '[DONE]';

/** What {@link SseFramer.feed} returns for a read that completed no event (shared: never written to). */
const NO_EVENTS: readonly string[] = Object.freeze([]);

/**
 * The SSE framing of one response body, fed one network read at a time: the `data` of the events
 * each read completes, up to (not including) `[DONE]`. Synchronous, so that a reader pays no
 * async step of its own per read (Stream.batches reads the body and frames it in one loop).
 */
export class SseFramer {
  /** Whether `[DONE]` came (events after it are ignored). */
  done = false;
  private pending: string[] = [];
  private readonly decoder = new TextDecoder();
  private readonly parser = createParser({
    onEvent: (event: EventSourceMessage) => {
      if (this.done) return;
      if (event.data === DONE) this.done = true;
      else this.pending.push(event.data);
    },
  });

  /** The `data` of the events that `bytes` completes, in order (often none). */
  feed(bytes: Uint8Array): readonly string[] {
    this.parser.feed(this.decoder.decode(bytes, { stream: true }));
    return this.take();
  }

  /**
   * Once the body ended: a last event that lacked its blank line (a lenient reading of a server
   * that closed right after `data: [DONE]`).
   */
  end(): readonly string[] {
    this.parser.feed(`${this.decoder.decode()}\n\n`);
    return this.take();
  }

  private take(): readonly string[] {
    if (this.pending.length === 0) return NO_EVENTS;
    const batch = this.pending;
    this.pending = [];
    return batch;
  }
}

/** A response body as undici gives it: bytes, and a way to cancel or drain it. */
export type SseBody = AsyncIterable<Uint8Array> & { destroy?: (error?: Error) => unknown; dump?: () => Promise<void> };

/**
 * Ends the reading of a body: after `[DONE]` the rest is drained so the keep-alive socket can be
 * reused; otherwise (the consumer left, or the stream failed) the request is cancelled.
 */
export function releaseBody(body: SseBody, done: boolean): void {
  if (done) void body.dump?.().catch(() => undefined);
  else body.destroy?.();
}

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
  body: SseBody,
  mapError: (cause: unknown) => ServiceError,
): AsyncGenerator<readonly string[], void, undefined> {
  const framer = new SseFramer();
  try {
    try {
      for await (const chunk of body) {
        const batch = framer.feed(chunk);
        if (batch.length) yield batch;
        if (framer.done) return;
      }
    } catch (cause) {
      throw mapError(cause);
    }
    const last = framer.end();
    if (last.length) yield last;
    if (!framer.done) throw new StreamEndedEarlyError();
  } finally {
    releaseBody(body, framer.done);
  }
}

/** Like {@link sseBatches}, one event's `data` at a time. */
export async function* sseData(
  body: Parameters<typeof sseBatches>[0],
  mapError: (cause: unknown) => ServiceError,
): AsyncGenerator<string, void, undefined> {
  for await (const batch of sseBatches(body, mapError)) yield* batch;
}
