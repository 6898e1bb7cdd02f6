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

/** A response body: bytes (stream-body.ts's StreamBody for the service's streams), and a way to cancel or drain it. */
export type SseBody = AsyncIterable<Uint8Array> & { destroy?: (error?: Error) => unknown; dump?: () => Promise<void> };

/**
 * Ends the reading of a body: after `[DONE]` the rest is drained so the keep-alive socket can be
 * reused; otherwise (the consumer left, or the stream failed) the request is cancelled.
 */
function releaseBody(body: SseBody, done: boolean): void {
  if (done) void body.dump?.().catch(() => undefined);
  else body.destroy?.();
}

/**
 * How {@link sseBatches} turns the events of each read into items, and how it ends (Stream.batches:
 * parsed chunks; {@link sseData}: the events' text).
 */
export interface BatchReading<T> {
  /**
   * The items of one read's events (never called with none); where one is bad, the items before it
   * and the failure, thrown once those are yielded (so that no text that arrived is lost).
   */
  items(data: readonly string[]): { items: T[]; failure?: { error: unknown } };
  /** Turns a transport error (timeout, reset, abort) into a ServiceError. */
  mapError(cause: unknown): ServiceError;
  /**
   * Given the error that ends the reading (StreamEndedEarlyError when the body ended before
   * `[DONE]`): returns to end the loop quietly, throws to fail it. Default: the error is thrown.
   */
  ended?(error: unknown): void;
  /** Called once when the reading is over, however it ended. */
  onEnd?(): void;
}

/**
 * Yields the items of the SSE events of `body` (by `reading`), one array per network read (so a
 * consumer pays one async step per read, not per event), up to (not including) `[DONE]`. The body
 * is read and framed ({@link SseFramer}) in this one loop: a streamed answer pays one async step
 * per network read, not one per layer (bench/).
 *
 * Leaving the loop early (break/return/throw) destroys `body`, which cancels the HTTP request;
 * after `[DONE]` the rest is drained ({@link releaseBody}).
 * @param body an async iterable of bytes (stream-body.ts's StreamBody: each step all that arrived; or any byte iterable).
 * @throws StreamEndedEarlyError (a StreamInterruptedError) when the body ends before `[DONE]`; what
 *   `reading.mapError` returns when reading fails; what `reading` throws.
 */
export async function* sseBatches<T>(body: SseBody, reading: BatchReading<T>): AsyncGenerator<T[], void, undefined> {
  const reads = body[Symbol.asyncIterator]();
  const framer = new SseFramer();
  try {
    for (;;) {
      let read: IteratorResult<Uint8Array>;
      try {
        read = await reads.next();
      } catch (cause) {
        throw reading.mapError(cause);
      }
      const data = read.done ? framer.end() : framer.feed(read.value);
      if (data.length) {
        const { items, failure } = reading.items(data);
        if (items.length) yield items;
        if (failure) throw failure.error;
      }
      if (framer.done) return;
      if (read.done) throw new StreamEndedEarlyError();
    }
  } catch (error) {
    if (!reading.ended) throw error;
    reading.ended(error);
  } finally {
    releaseBody(body, framer.done);
    reading.onEnd?.();
  }
}

/**
 * The `data` of each SSE event of `body`, one at a time, as it is.
 * @param mapError turns a transport error (timeout, reset, abort) into a ServiceError.
 * @throws as {@link sseBatches}.
 */
export async function* sseData(
  body: SseBody,
  mapError: (cause: unknown) => ServiceError,
): AsyncGenerator<string, void, undefined> {
  for await (const batch of sseBatches(body, { items: (data) => ({ items: [...data] }), mapError })) yield* batch;
}
