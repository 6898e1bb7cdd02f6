/** A streamed completion read as text (§4.1, §4.2), with a limit on how long it may go without any. */
import { AbortedError, StreamIdleError } from './errors.ts';
import type { Stream } from './stream.ts';

/**
 * The text of a streamed completion, one string per network read (the pieces of its chunks
 * joined; reads that carry no text are skipped).
 * @param pieceOf the text of one chunk (§4.1 streaming rule 2: `delta` or `content` may be absent).
 * @param options.idleMs ends the stream when no text came for this long, in ms (keep-alive
 *   comments and empty chunks do not count): a limit on content, where the transport's body
 *   timeout only sees bytes.
 * @throws StreamIdleError when the idle limit passed; as Stream.batches otherwise.
 */
export async function* textOf<T>(
  stream: Stream<T>,
  pieceOf: (chunk: T) => string | null | undefined,
  options: { idleMs?: number } = {},
): AsyncGenerator<string, void, undefined> {
  const idleMs = options.idleMs;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    if (!idleMs) return;
    clearTimeout(timer);
    timer = setTimeout(() => stream.abort(new StreamIdleError(idleMs)), idleMs);
  };
  arm();
  try {
    for await (const chunks of stream.batches()) {
      let text = '';
      for (const chunk of chunks) text += pieceOf(chunk) ?? '';
      if (text) {
        arm();
        yield text;
      }
    }
  } catch (error) {
    if (error instanceof AbortedError && error.reason instanceof StreamIdleError) throw error.reason;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
