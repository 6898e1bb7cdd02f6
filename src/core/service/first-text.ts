/**
 * A streamed answer's first text, read before any of the answer is shown, for model fallback
 * (fallback.ts, docs/service-api.md §10): a model whose stream opened (200) but fails before its
 * first text (silent past the idle limit, an error event, a body cut off, a body timeout) has
 * shown nothing, so the next model of the chain may answer in its place. Once a text came, the
 * answer is the model's: its failure afterwards is shown as a cut answer, never asked again.
 */
import { fallsBack } from './fallback.ts';

/** What the first read gave: a text, the end (no text at all), or a failure that does not fall back. */
type FirstRead = { text: string } | { done: true } | { error: unknown };

/**
 * Reads `texts` (textOf's iterator over an open stream) up to its first text.
 * @param head a text shown before the stream's (a completion's prompt; '' for none).
 * @returns an iterator giving `head` (when not empty), then what the first read gave (its text;
 *   or the end; or its failure, thrown there as the reading would have thrown it), then the rest
 *   of `texts`.
 * @throws the first read's failure when it falls back (fallsBack): the stream is cancelled first.
 */
export async function readFirstText(
  texts: AsyncIterableIterator<string>,
  head: string,
): Promise<AsyncIterableIterator<string>> {
  let first: FirstRead;
  try {
    const read = await texts.next();
    first = read.done ? { done: true } : { text: read.value };
  } catch (error) {
    if (fallsBack(error)) {
      await texts.return?.();
      throw error;
    }
    first = { error };
  }
  return new ReadAhead(head, first, texts);
}

/** {@link readFirstText}'s iterator: what was read ahead, then the rest. */
class ReadAhead implements AsyncIterableIterator<string> {
  /**
   * @param head given first, when not empty (then '').
   * @param pending what the first read gave, given next (then undefined: the rest is read).
   */
  constructor(
    private head: string,
    private pending: FirstRead | undefined,
    private readonly rest: AsyncIterableIterator<string>,
  ) {}

  async next(): Promise<IteratorResult<string, undefined>> {
    if (this.head) {
      const text = this.head;
      this.head = '';
      return { done: false, value: text };
    }
    const first = this.pending;
    this.pending = undefined;
    if (first === undefined) return this.rest.next();
    if ('text' in first) return { done: false, value: first.text };
    if ('error' in first) throw first.error;
    return { done: true, value: undefined };
  }

  async return(): Promise<IteratorResult<string, undefined>> {
    this.pending = undefined;
    await this.rest.return?.();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<string> {
    return this;
  }
}
