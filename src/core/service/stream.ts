/**
 * `Stream<T>`: a single-use stream of parsed SSE chunks (as in openai-node). Leaving the loop,
 * calling `abort()` or aborting the caller's signal cancels the HTTP request.
 *
 * Two ways to read it, either once:
 * - `for await (const chunk of stream)`: one chunk at a time (openai-node's shape);
 * - `for await (const chunks of stream.batches())`: the chunks of one network read at a
 *   time. The product reads this way: a consumer then pays one async step per read instead
 *   of one per chunk, which is most of the per-chunk cost above a bare parse loop (bench/).
 */

import { readErrorBody } from './error-responses.ts';
import {
  AbortedError,
  ConnectionError,
  InvalidResponseError,
  NotAStreamError,
  type ServiceError,
  StreamEndedEarlyError,
  StreamInterruptedError,
} from './errors.ts';
import type { OpenStream, ServiceHttp } from './http.ts';
import { type BatchReading, type SseBatchReader, sseBatches } from './sse.ts';

/** What a {@link Stream} needs besides its response: how to say a transport error, the caller's signal, the slot to give back. */
export interface StreamContext {
  /** The service's client, whose `mapTransportError` names a transport error (timeouts, resets, aborts). */
  http: Pick<ServiceHttp, 'mapTransportError'>;
  /** The caller's signal: its abort cancels the request (stream-body.ts listens to it), its reason travels on. */
  signal: AbortSignal | undefined;
  /** Removes secrets from text quoted in an error. */
  scrub: (text: string) => string;
  /** Gives back the request's slot (gate.ts's release, which does nothing after its first call): when the stream is over. */
  release: () => void;
}

/**
 * A streamed response. Read it once, by chunks or by batches.
 *
 * One object per stream holds what its reading needs (it is its own {@link BatchReading}): a
 * streamed answer lives as long as the answer, and a thousand of them at once are a thousand
 * of each of its parts for every collection to mark, so it keeps no closures or controller of
 * its own. The caller's signal cancels the request directly; {@link abort} cancels it through
 * the body, with a reason of its own.
 */
export class Stream<T> implements AsyncIterable<T>, BatchReading<T> {
  private consumed = false;
  /**
   * The last `finish_reason` a chunk carried (`stop`, `length`, `content_filter`,
   * `tool_calls`…), or undefined while none did.
   */
  finishReason: string | undefined;
  /**
   * The last `usage` a chunk carried (§2.2/§2.3: OpenAI's streams send it on the last chunk, some
   * services on every one), as it came (not validated), or undefined while none did.
   */
  usage: unknown;
  /** The `model` named by the chunk with the finish_reason or the usage (the model that answered), or undefined. */
  model: string | undefined;
  /** Whether any chunk arrived. */
  private received = false;
  /** Set by {@link abort}: the reason a read's failure is told with. */
  private aborted: { reason: unknown } | undefined;

  constructor(
    private readonly response: OpenStream,
    private readonly context: StreamContext,
  ) {}

  /**
   * Calls `onEnd` once the response's body ended (completed, failed or cancelled), read or not:
   * at once when it has. One watcher at a time (a later call replaces it; `undefined` removes it).
   */
  watchBodyEnd(onEnd: (() => void) | undefined): void {
    this.response.body.watchEnd(onEnd);
  }

  /**
   * Cancels the request; a running loop ends with AbortedError (carrying `reason`), after the
   * bytes that arrived before it were read.
   * @param reason why (e.g. a StreamIdleError), kept as the AbortedError's `reason`.
   */
  abort(reason?: unknown): void {
    this.aborted ??= { reason };
    this.response.body.cancel();
    // The request is cancelled: its slot is free even if nobody reads on.
    this.onEnd();
  }

  /**
   * The chunks of each network read, in order, never empty. Leaving the loop cancels the
   * request.
   * A body that ends without `[DONE]` after a chunk with a `finish_reason` ends the loop
   * normally: the answer was complete.
   * @throws Error when the stream was already read; InvalidResponseError for a chunk that is
   *   not a JSON object; StreamInterruptedError for an error object mid-stream or a body that
   *   ends before `[DONE]` and before any `finish_reason`; the transport errors of `mapError`
   *   (timeouts, resets, aborts).
   */
  batches(): SseBatchReader<T> {
    return this.readOnce(this);
  }

  /**
   * The text of each network read: its chunks' pieces (`pieceOf`) joined into one string, for the
   * reads that carry any (the others are read past). Each chunk is parsed and turned into its
   * piece in the same step, so that no chunk outlives the read that brought it (a batch of chunks
   * handed to the reader waited one microtask hop per layer, behind every other stream woken in
   * the same turn, and was promoted by the scavenges meanwhile: bench:streams, 1,000 streams).
   * Read once, like {@link batches}; leaving early cancels the request.
   * @param pieceOf the text of one chunk (§4.1 streaming rule 2: `delta` or `content` may be absent).
   * @throws as {@link batches}.
   */
  texts(pieceOf: (chunk: T) => string | null | undefined): SseBatchReader<string> {
    return this.readOnce(new TextReading(this, pieceOf));
  }

  /** The body's events read by `reading`, the first time the stream is read; a reader that fails at once after that. */
  private readOnce<U>(reading: BatchReading<U>): SseBatchReader<U> {
    if (this.consumed) return readAlready();
    this.consumed = true;
    return sseBatches(this.response.body, reading);
  }

  /**
   * A transport error while reading, as a ServiceError: AbortedError with the reason of
   * {@link abort} or of the caller's signal; once the response has begun, a broken connection
   * is a cut-off answer (StreamInterruptedError), not an unreachable service.
   */
  mapError(cause: unknown): ServiceError {
    if (this.aborted) return new AbortedError(this.aborted.reason);
    const error = this.context.http.mapTransportError(cause, this.context.signal);
    return error instanceof ConnectionError
      ? new StreamInterruptedError(`the stream broke off: ${error.message}`, cause)
      : error;
  }

  /** Once the stream is over (read to the end, failed, left or aborted): its slot is given back (a release is once-only: gate.ts). */
  onEnd(): void {
    this.context.release();
  }

  /**
   * Ends the reading on `error`: a body that ended without `[DONE]` after a `finish_reason` is a
   * complete answer (returns); one with no event at all is no stream.
   * @throws NotAStreamError, or `error` itself.
   */
  ended(error: unknown): void {
    if (error instanceof StreamEndedEarlyError && !this.received) throw new NotAStreamError('no_event');
    if (!(error instanceof StreamEndedEarlyError && this.finishReason !== undefined)) throw error;
  }

  /**
   * The chunks of one read's events; where one is bad, the chunks before it and the failure (so
   * that no text that arrived is lost: they are delivered before the error is thrown).
   */
  items(data: readonly string[]): { items: T[]; failure?: { error: unknown } } {
    const chunks: T[] = [];
    try {
      for (const item of data) chunks.push(this.parse(item));
    } catch (error) {
      return { items: chunks, failure: { error } };
    }
    if (chunks.length) this.received = true;
    return { items: chunks };
  }

  /**
   * One chunk at a time. A hand-written iterator rather than an async generator: chunks are
   * handed out of the current batch without an extra generator step each.
   */
  [Symbol.asyncIterator](): AsyncIterator<T> {
    const batches = this.batches();
    let batch: T[] = [];
    let index = 0;
    const refill = async (): Promise<IteratorResult<T>> => {
      while (index >= batch.length) {
        const result = await batches.next();
        if (result.done) return { done: true, value: undefined };
        batch = result.value;
        index = 0;
      }
      return { done: false, value: batch[index++]! };
    };
    return {
      // While the current batch lasts, an already-settled promise: no async function per chunk.
      next: () => (index < batch.length ? Promise.resolve({ done: false, value: batch[index++]! }) : refill()),
      return: async () => {
        await batches.return();
        return { done: true, value: undefined };
      },
    };
  }

  /**
   * Parses one event's data into a chunk: the common case (an object with `choices` and no
   * `error`) on a short path, everything else in {@link unusual}.
   * @throws InvalidResponseError, StreamInterruptedError.
   */
  private parse(data: string): T {
    let chunk: { error?: unknown; choices?: unknown } | null;
    try {
      chunk = JSON.parse(data) as { error?: unknown; choices?: unknown } | null;
    } catch {
      throw new InvalidResponseError(
        `the stream held a line that is not JSON: ${this.context.scrub(data.slice(0, 120))}`,
      );
    }
    if (typeof chunk === 'object' && chunk !== null && !chunk.error && Array.isArray(chunk.choices)) {
      const reason = (chunk.choices[0] as { finish_reason?: unknown } | undefined)?.finish_reason;
      if (typeof reason === 'string') {
        this.finishReason = reason;
        this.noteModel(chunk);
      }
      this.noteUsage(chunk);
      return chunk as T;
    }
    return this.unusual(chunk);
  }

  /** A chunk that is not an object, carries an error, or has no `choices`. */
  private unusual(chunk: unknown): T {
    if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) {
      throw new InvalidResponseError('the stream held a chunk that is not an object');
    }
    if ((chunk as { error?: unknown }).error) {
      const { message } = readErrorBody(chunk, 500);
      throw new StreamInterruptedError(`the service reported an error mid-stream: ${this.context.scrub(message)}`);
    }
    // A chunk without choices (e.g. a trailing usage-only chunk) is valid and carries no text.
    (chunk as { choices: unknown[] }).choices = [];
    this.noteUsage(chunk);
    return chunk as T;
  }

  /** Keeps the chunk's `usage` when it carries one, and then its `model`. */
  private noteUsage(chunk: object): void {
    const { usage } = chunk as { usage?: unknown };
    if (usage !== undefined && usage !== null) {
      this.usage = usage;
      this.noteModel(chunk);
    }
  }

  /** Keeps the chunk's `model` (read only from the chunks that end an answer: its finish_reason's, its usage's). */
  private noteModel(chunk: object): void {
    const { model } = chunk as { model?: unknown };
    if (typeof model === 'string') this.model = model;
  }
}

/**
 * How {@link Stream.texts} reads: the stream's own reading, each read's chunks turned into their
 * joined text at once. One object per stream.
 */
class TextReading<T> implements BatchReading<string> {
  constructor(
    private readonly stream: Stream<T>,
    private readonly pieceOf: (chunk: T) => string | null | undefined,
  ) {}

  /** One read's text (none when its chunks carry no text); a bad chunk's failure after the text before it. */
  items(data: readonly string[]): { items: string[]; failure?: { error: unknown } } {
    const { items, failure } = this.stream.items(data);
    const text = joinedText(items, this.pieceOf);
    const texts = text ? [text] : [];
    return failure ? { items: texts, failure } : { items: texts };
  }

  mapError(cause: unknown): ServiceError {
    return this.stream.mapError(cause);
  }

  ended(error: unknown): void {
    this.stream.ended(error);
  }

  onEnd(): void {
    this.stream.onEnd();
  }
}

/**
 * The text of a read's chunks, one piece after another, as one flat string: the pieces (often a
 * dozen words) joined once, where `+=` would make a rope of them that the answer's text then
 * holds for as long as it streams (V8's cons strings: one object per piece).
 */
function joinedText<T>(chunks: readonly T[], pieceOf: (chunk: T) => string | null | undefined): string {
  let first = '';
  let pieces: string[] | undefined;
  for (const chunk of chunks) {
    const piece = pieceOf(chunk);
    if (!piece) continue;
    if (first === '') first = piece;
    else {
      pieces ??= [first];
      pieces.push(piece);
    }
  }
  return pieces ? pieces.join('') : first;
}

/** The batches of a Stream read before: the first step fails (a Stream can be read only once). */
// biome-ignore lint/correctness/useYield: it only throws, at its first step, as a second read of a Stream must.
async function* readAlready(): AsyncGenerator<never, void, undefined> {
  throw new Error('a Stream can be read only once');
}
