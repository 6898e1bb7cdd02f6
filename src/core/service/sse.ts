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
 * async step of its own per read (Stream.batches and Stream.texts read the body and frame it in one loop).
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
 * parsed chunks; Stream.texts: a read's text; {@link sseData}: the events' data).
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
 * A reading of a body's SSE events by batches ({@link sseBatches}): one reader, one step at a time.
 * `return()` lets the body go (cancels the request, or drains it after `[DONE]`).
 */
export interface SseBatchReader<T> extends AsyncIterableIterator<T[], void, undefined> {
  return(): Promise<IteratorResult<T[], void>>;
}

/**
 * The items of the SSE events of `body` (by `reading`), one array per network read (so a
 * consumer pays one async step per read, not per event), up to (not including) `[DONE]`. The body
 * is read and framed ({@link SseFramer}) in one loop: a streamed answer pays one async step per
 * network read, not one per layer (bench/).
 *
 * Leaving the loop early (break/return/throw, or `return()` before any step) destroys `body`,
 * which cancels the HTTP request; after `[DONE]` the rest is drained ({@link releaseBody}).
 * @param body an async iterable of bytes (stream-body.ts's StreamBody: each step all that arrived; or any byte iterable).
 * @returns a reader whose steps throw StreamEndedEarlyError (a StreamInterruptedError) when the
 *   body ends before `[DONE]`; what `reading.mapError` returns when reading fails; what `reading` throws.
 */
export function sseBatches<T>(body: SseBody, reading: BatchReading<T>): SseBatchReader<T> {
  return new SseBatches(body, reading);
}

/**
 * {@link sseBatches}'s reader: an object whose state is its fields, not an async generator. A
 * generator waits at its `yield` until the consumer's next step (about a second once an answer's
 * reads are paced: text-of.ts), and its frame keeps that read's bytes, decoded text, events and
 * parsed chunks alive meanwhile: with a thousand streams, long enough for the young generation's
 * collections to copy and promote every one of them. Here a step's locals are gone once it returns.
 */
class SseBatches<T> implements SseBatchReader<T> {
  private readonly reads: AsyncIterator<Uint8Array>;
  private readonly framer = new SseFramer();
  /** A failure found in a read whose items before it were handed out: thrown at the next step. */
  private failure: { error: unknown } | undefined;
  /** The body ended (its last read was done). */
  private bodyEnded = false;
  /** Over: the body let go and `reading.onEnd` called. */
  private finished = false;

  constructor(
    private readonly body: SseBody,
    private readonly reading: BatchReading<T>,
  ) {
    this.reads = body[Symbol.asyncIterator]();
  }

  async next(): Promise<IteratorResult<T[], void>> {
    if (this.finished) return { done: true, value: undefined };
    try {
      const pending = this.failure;
      if (pending) {
        this.failure = undefined;
        throw pending.error;
      }
      while (!this.framer.done) {
        if (this.bodyEnded) throw new StreamEndedEarlyError();
        let read: IteratorResult<Uint8Array>;
        try {
          read = await this.reads.next();
        } catch (cause) {
          throw this.reading.mapError(cause);
        }
        this.bodyEnded = read.done === true;
        const items = this.itemsOf(read.done ? this.framer.end() : this.framer.feed(read.value));
        if (items) return { done: false, value: items };
      }
    } catch (error) {
      this.fail(error);
    }
    this.finish();
    return { done: true, value: undefined };
  }

  /** Leaving early: the body is let go (cancelled, or drained after `[DONE]`). */
  async return(): Promise<IteratorResult<T[], void>> {
    this.finish();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): SseBatchReader<T> {
    return this;
  }

  /**
   * The items of one read's events, or undefined for none. A bad event with items before it is
   * kept for the next step (the items are handed out first); one with none is thrown now.
   */
  private itemsOf(data: readonly string[]): T[] | undefined {
    if (data.length === 0) return undefined;
    const { items, failure } = this.reading.items(data);
    if (failure) {
      if (items.length === 0) throw failure.error;
      this.failure = failure;
    }
    return items.length ? items : undefined;
  }

  /** Ends the reading on `error`: `reading.ended` may end it quietly (returns) or fail it (throws); the body is let go either way. */
  private fail(error: unknown): void {
    try {
      if (!this.reading.ended) throw error;
      this.reading.ended(error);
    } finally {
      this.finish();
    }
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    releaseBody(this.body, this.framer.done);
    this.reading.onEnd?.();
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
