/** A streamed completion read as text (§4.1, §4.2), with a limit on how long it may go without any. */
import { AbortedError, StreamIdleError } from './errors.ts';
import type { SseBatchReader } from './sse.ts';
import type { Stream } from './stream.ts';

/** When a stream's next read may wait: the answer's StreamingReply (`readWaitMs`, and `sleep` on its scheduler's clock). */
export interface Pace {
  /** How long the next read may wait, in ms (0: read now). */
  readWaitMs(): number;
  /** Resolves after `ms`. */
  sleep(ms: number): Promise<void>;
}

/**
 * The text of a streamed completion, one string per network read (the pieces of its chunks
 * joined; reads that carry no text are skipped: Stream.texts). A hand-written iterator over the
 * stream's texts rather than a generator of its own: a streamed answer pays one async step per network
 * read, not one per layer (bench/).
 * @param pieceOf the text of one chunk (§4.1 streaming rule 2: `delta` or `content` may be absent).
 * @param options.idleMs ends the stream when no text came for this long, in ms (keep-alive
 *   comments and empty chunks do not count): a limit on content, where the transport's body
 *   timeout only sees bytes.
 * @param options.first a text given before the stream's (a completion's prompt), when not empty.
 * @param options.pace how long (ms) the next read may wait, and how to wait (the answer's
 *   StreamingReply: `readWaitMs`, `sleep` on the scheduler's clock): the body is then read once per write of the answer, all that arrived
 *   meanwhile in one read (stream-body.ts keeps it, and a failure after it), instead of once per
 *   network read. The wait ends early when the body ends (the answer's end, a failure, Stop);
 *   the idle limit does not run during it.
 * @throws (from the iteration) StreamIdleError when the idle limit passed; as Stream.texts otherwise.
 */
export function textOf<T>(
  stream: Stream<T>,
  pieceOf: (chunk: T) => string | null | undefined,
  options: { idleMs?: number; first?: string; pace?: Pace } = {},
): AsyncIterableIterator<string> {
  return new StreamText(stream, pieceOf, options);
}

/** {@link textOf}'s iterator. */
class StreamText<T> implements AsyncIterableIterator<string> {
  private first: string;
  /** The stream's text, one string per network read that carries any (Stream.texts). */
  private readonly reads: SseBatchReader<string>;
  /** One timer per stream, armed at the first read and pushed back (refresh) at each text instead of made again. */
  private timer: NodeJS.Timeout | undefined;
  private over = false;

  constructor(
    private readonly stream: Stream<T>,
    pieceOf: (chunk: T) => string | null | undefined,
    private readonly options: { idleMs?: number; first?: string; pace?: Pace },
  ) {
    this.first = options.first ?? '';
    this.reads = stream.texts(pieceOf);
  }

  async next(): Promise<IteratorResult<string, undefined>> {
    this.arm();
    if (this.first) {
      const text = this.first;
      this.first = '';
      return { done: false, value: text };
    }
    try {
      const waitMs = this.over ? 0 : (this.options.pace?.readWaitMs() ?? 0);
      if (waitMs > 0) {
        // The idle limit does not run during a paced wait.
        try {
          await this.pacedWait(waitMs);
        } finally {
          this.stream.watchBodyEnd(undefined);
        }
        this.arm();
      }
      // Each read's text in one string (reads without text are read past by Stream.texts).
      const read = this.over ? undefined : await this.reads.next();
      if (read && !read.done) {
        this.timer?.refresh();
        return { done: false, value: read.value[0]! };
      }
    } catch (error) {
      this.end();
      if (error instanceof AbortedError && error.reason instanceof StreamIdleError) throw error.reason;
      throw error;
    }
    this.end();
    return { done: true, value: undefined };
  }

  /** Leaving the loop early cancels the request (the reader's cleanup). */
  async return(): Promise<IteratorResult<string, undefined>> {
    this.end();
    await this.reads.return();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<string> {
    return this;
  }

  /** Arms the idle limit (once; a paced wait disarms it). */
  private arm(): void {
    const { idleMs } = this.options;
    if (idleMs && !this.timer && !this.over)
      this.timer = setTimeout(() => this.stream.abort(new StreamIdleError(idleMs)), idleMs);
  }

  /**
   * A paced wait's promise: until `ms` passed or the body ended (watched through one slot,
   * replaced each wait and cleared after it by {@link next}: a stream waits once a write for as
   * long as it runs, and nothing of a wait outlives it). Not an async function of its own: the
   * reader's one frame waits.
   */
  private pacedWait(ms: number): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    return new Promise<void>((resolve, reject) => {
      this.stream.watchBodyEnd(resolve);
      this.options.pace!.sleep(ms).then(resolve, reject);
    });
  }

  private end(): void {
    this.over = true;
    clearTimeout(this.timer);
  }
}
