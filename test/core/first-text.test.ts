/**
 * readFirstText (core/service/first-text.ts): a stream's text read up to its first, before any
 * of the answer shows, so that a model failing before it lets a fallback answer; every other
 * outcome is given back to the reader as the stream would have given it.
 */
import { describe, expect, it } from 'vitest';
import { AbortedError, StreamIdleError, StreamInterruptedError } from '../../src/core/service/errors.ts';
import { readFirstText } from '../../src/core/service/first-text.ts';

/** An iterator over `texts`, then `failure` (thrown) when given; records its reads and whether it was left. */
function scripted(texts: string[], failure?: unknown) {
  const seen = { reads: 0, left: false };
  let index = 0;
  const iterator: AsyncIterableIterator<string> = {
    async next() {
      seen.reads += 1;
      if (index < texts.length) return { done: false, value: texts[index++]! };
      if (failure !== undefined) throw failure;
      return { done: true, value: undefined };
    },
    async return() {
      seen.left = true;
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return { iterator, seen };
}

async function readAll(texts: AsyncIterableIterator<string>): Promise<{ texts: string[]; error?: unknown }> {
  const out: string[] = [];
  try {
    for await (const text of texts) out.push(text);
  } catch (error) {
    return { texts: out, error };
  }
  return { texts: out };
}

describe('readFirstText', () => {
  it('reads one text ahead, then gives the prompt, that text and the rest in order', async () => {
    const { iterator, seen } = scripted(['Hel', 'lo', '!']);
    const texts = await readFirstText(iterator, 'Say: ');
    expect(seen.reads).toBe(1);
    expect(await readAll(texts)).toEqual({ texts: ['Say: ', 'Hel', 'lo', '!'] });
  });

  it('throws a failure before the first text that falls back (idle, an error event), leaving the stream', async () => {
    for (const failure of [new StreamIdleError(1000), new StreamInterruptedError('error event: overloaded')]) {
      const { iterator, seen } = scripted([], failure);
      await expect(readFirstText(iterator, '')).rejects.toBe(failure);
      expect(seen.left).toBe(true);
    }
  });

  it("a failure after the first text is the reader's, in its place: the answer so far shows, nothing falls back", async () => {
    const cut = new StreamInterruptedError('the stream broke off');
    const texts = await readFirstText(scripted(['Going ', 'well'], cut).iterator, '');
    expect(await readAll(texts)).toEqual({ texts: ['Going ', 'well'], error: cut });
  });

  it('a failure before the first text that does not fall back (a Stop) is kept and thrown at the first read, after the prompt', async () => {
    const stop = new AbortedError('stop');
    const { iterator, seen } = scripted([], stop);
    const texts = await readFirstText(iterator, 'It');
    expect(seen.left).toBe(false);
    expect(await readAll(texts)).toEqual({ texts: ['It'], error: stop });
  });

  it('a stream with no text at all ends, after the prompt', async () => {
    expect(await readAll(await readFirstText(scripted([]).iterator, 'It'))).toEqual({ texts: ['It'] });
  });
});
