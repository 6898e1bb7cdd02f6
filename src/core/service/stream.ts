/**
 * `Stream<T>`: a single-use AsyncIterable of parsed SSE chunks (as in openai-node), with an
 * AbortController. Leaving a `for await` loop or calling `abort()` cancels the HTTP request.
 */
import { sseBatches } from './sse.ts';
import { InvalidResponseError, StreamInterruptedError, readErrorBody, type ServiceError } from './errors.ts';
import type { OpenResponse } from './http.ts';

/** A streamed response. Iterate it once. */
export class Stream<T> implements AsyncIterable<T> {
  private consumed = false;

  constructor(
    private readonly response: OpenResponse,
    /** Aborting it cancels the request. */
    readonly controller: AbortController,
    private readonly mapError: (cause: unknown) => ServiceError,
    private readonly scrub: (text: string) => string,
  ) {}

  /** Cancels the request; a running loop ends with AbortedError. */
  abort(): void {
    this.controller.abort();
  }

  /**
   * A hand-written iterator rather than an async generator: events arrive in batches (one per
   * network read) and are handed out from the batch without an extra await each, which keeps
   * the per-chunk cost at the level of a bare parse loop (see bench/).
   */
  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.consumed) throw new Error('a Stream can be iterated only once');
    this.consumed = true;
    const batches = sseBatches(this.response.body, this.mapError);
    let batch: string[] = [];
    let index = 0;
    const next = async (): Promise<IteratorResult<T>> => {
      while (index >= batch.length) {
        const result = await batches.next();
        if (result.done) return { done: true, value: undefined };
        batch = result.value;
        index = 0;
      }
      try {
        return { done: false, value: this.parse(batch[index++]!) };
      } catch (error) {
        // A bad chunk ends the stream: cancel the request (a throwing next() gets no return()).
        await batches.return();
        throw error;
      }
    };
    return {
      next,
      return: async () => {
        await batches.return();
        return { done: true, value: undefined };
      },
    };
  }

  /** Parses one event's data into a chunk. @throws InvalidResponseError, StreamInterruptedError. */
  private parse(data: string): T {
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw new InvalidResponseError(`the stream held a line that is not JSON: ${this.scrub(data.slice(0, 120))}`);
    }
    if (typeof chunk !== 'object' || chunk === null) {
      throw new InvalidResponseError('the stream held a chunk that is not an object');
    }
    if ('error' in chunk && (chunk as { error: unknown }).error) {
      const { message } = readErrorBody(chunk, 500);
      throw new StreamInterruptedError(`the service reported an error mid-stream: ${this.scrub(message)}`);
    }
    if (!Array.isArray((chunk as { choices?: unknown }).choices)) {
      // A chunk without choices (e.g. a trailing usage-only chunk) is valid and carries no text.
      (chunk as { choices: unknown[] }).choices = [];
    }
    return chunk as T;
  }
}
