/** A streamed completion read as text (§4.1, §4.2), with a limit on how long it may go without any. */
import { AbortedError, StreamIdleError } from './errors.ts';
import type { Stream } from './stream.ts';

/**
 * The text of a streamed completion, one string per network read (the pieces of its chunks
 * joined; reads that carry no text are skipped). A hand-written iterator over the stream's
 * batches rather than a generator of its own: a streamed answer pays one async step per network
 * read, not one per layer (bench/).
 * @param pieceOf the text of one chunk (§4.1 streaming rule 2: `delta` or `content` may be absent).
 * @param options.idleMs ends the stream when no text came for this long, in ms (keep-alive
 *   comments and empty chunks do not count): a limit on content, where the transport's body
 *   timeout only sees bytes.
 * @param options.first a text given before the stream's (a completion's prompt), when not empty.
 * @throws (from the iteration) StreamIdleError when the idle limit passed; as Stream.batches otherwise.
 */
export function textOf<T>(
  stream: Stream<T>,
  pieceOf: (chunk: T) => string | null | undefined,
  options: { idleMs?: number; first?: string } = {},
): AsyncIterableIterator<string> {
  const { idleMs } = options;
  let first = options.first ?? '';
  const batches = stream.batches();
  // One timer per stream, armed at the first read and pushed back (refresh) at each text instead of made again.
  let timer: NodeJS.Timeout | undefined;
  let over = false;
  const end = () => {
    over = true;
    clearTimeout(timer);
  };
  const next = async (): Promise<IteratorResult<string, undefined>> => {
    if (idleMs && !timer && !over) timer = setTimeout(() => stream.abort(new StreamIdleError(idleMs)), idleMs);
    if (first) {
      const text = first;
      first = '';
      return { done: false, value: text };
    }
    try {
      while (!over) {
        const read = await batches.next();
        if (read.done) break;
        let text = '';
        for (const chunk of read.value) text += pieceOf(chunk) ?? '';
        if (text) {
          timer?.refresh();
          return { done: false, value: text };
        }
      }
    } catch (error) {
      end();
      if (error instanceof AbortedError && error.reason instanceof StreamIdleError) throw error.reason;
      throw error;
    }
    end();
    return { done: true, value: undefined };
  };
  return {
    next,
    // Leaving the loop early cancels the request (the batches' cleanup).
    return: async () => {
      end();
      await batches.return(undefined);
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
