import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConnectionError, StreamInterruptedError } from '../../src/core/service/errors.ts';
import { sseBatches, sseData } from '../../src/core/service/sse.ts';

/** A body that yields `bytes` cut at `cuts`, and records whether it was destroyed. */
function body(bytes: Uint8Array, cuts: number[]) {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let last = 0;
  for (const p of [...points, bytes.length]) {
    if (p > last) pieces.push(bytes.subarray(last, p));
    last = Math.max(last, p);
  }
  const state = { destroyed: false };
  const iterable = {
    destroy: () => {
      state.destroyed = true;
    },
    async *[Symbol.asyncIterator]() {
      for (const piece of pieces) {
        if (state.destroyed) return;
        yield piece;
      }
    },
  };
  return { iterable, state };
}

const mapError = (cause: unknown) => new ConnectionError(String(cause));

async function collect(iterable: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const d of iterable) out.push(d);
  return out;
}

/** Serialises events as a server might: LF or CRLF, optional comments, multi-line data. */
function serialise(datas: string[], opts: { crlf: boolean; comments: boolean; multiline: boolean }): string {
  const nl = opts.crlf ? '\r\n' : '\n';
  let out = opts.comments ? `: hello${nl}${nl}` : '';
  for (const data of [...datas, '[DONE]']) {
    if (opts.comments) out += `: keep-alive${nl}`;
    const lines = opts.multiline && data.includes('\n') ? data.split('\n') : [data];
    out += lines.map((l) => `data: ${l}`).join(nl) + nl + nl;
  }
  return out;
}

describe('sseData', () => {
  it('property: any split of a valid stream yields the same events', async () => {
    const chunk = fc
      .record({ content: fc.string({ maxLength: 30, unit: 'grapheme' }) })
      .map((c) =>
        JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: c, finish_reason: null }] }),
      );
    await fc.assert(
      fc.asyncProperty(
        fc.array(chunk, { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 60 }),
        fc.boolean(),
        fc.boolean(),
        async (datas, cuts, crlf, comments) => {
          const bytes = new TextEncoder().encode(serialise(datas, { crlf, comments, multiline: false }));
          const { iterable } = body(bytes, cuts);
          expect(await collect(sseData(iterable, mapError))).toEqual(datas);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('joins multi-line data fields with a line feed', async () => {
    const bytes = new TextEncoder().encode(serialise(['{"a":\n1}'], { crlf: true, comments: false, multiline: true }));
    expect(await collect(sseData(body(bytes, [3, 9]).iterable, mapError))).toEqual(['{"a":\n1}']);
  });

  it('fails, never truncates silently, when the body ends before [DONE]', async () => {
    const bytes = new TextEncoder().encode('data: {"x":1}\n\ndata: {"x":2}\n\n');
    const seen: string[] = [];
    await expect(async () => {
      for await (const d of sseData(body(bytes, [5]).iterable, mapError)) seen.push(d);
    }).rejects.toBeInstanceOf(StreamInterruptedError);
    expect(seen).toEqual(['{"x":1}', '{"x":2}']);
  });

  it('accepts a final [DONE] without its blank line', async () => {
    const bytes = new TextEncoder().encode('data: {"x":1}\n\ndata: [DONE]');
    expect(await collect(sseData(body(bytes, []).iterable, mapError))).toEqual(['{"x":1}']);
  });

  it('destroys the body (cancelling the request) when the consumer leaves the loop', async () => {
    const bytes = new TextEncoder().encode(
      serialise(['1', '2', '3'], { crlf: false, comments: false, multiline: false }),
    );
    const { iterable, state } = body(bytes, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    for await (const d of sseData(iterable, mapError)) {
      if (d === '1') break;
    }
    expect(state.destroyed).toBe(true);
  });

  it('maps a read error through mapError', async () => {
    const failing = {
      async *[Symbol.asyncIterator]() {
        yield new TextEncoder().encode('data: {"x":1}\n\n');
        throw new Error('socket hang up');
      },
    };
    await expect(collect(sseData(failing, mapError))).rejects.toBeInstanceOf(ConnectionError);
  });
});

describe('sseBatches', () => {
  const reading = { items: (data: readonly string[]) => ({ items: data.map((d) => ({ data: d })) }), mapError };

  it('keeps nothing of a batch it handed out while the consumer has not asked for the next', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // A paced reader takes a batch, then waits about a second before its next step: what the
    // reader keeps meanwhile lives through every young-generation collection of that second.
    const bytes = new TextEncoder().encode(serialise(['1', '2'], { crlf: false, comments: false, multiline: false }));
    const { iterable, state } = body(bytes, [bytes.indexOf(10) + 2]);
    const reader = sseBatches(iterable, reading);
    const first = await reader.next();
    expect(first.value).toEqual([{ data: '1' }]);
    const batch = new WeakRef(first.value!);
    const item = new WeakRef(first.value![0]!);
    first.value = undefined;
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(batch.deref()).toBeUndefined();
    expect(item.deref()).toBeUndefined();
    expect((await reader.next()).value).toEqual([{ data: '2' }]);
    expect((await reader.next()).done).toBe(true);
    expect(state.destroyed).toBe(false);
  });

  it('hands out the items before a bad event, then fails at the next step', async () => {
    const bytes = new TextEncoder().encode('data: 1\n\ndata: bad\n\ndata: [DONE]\n\n');
    const failing = {
      items: (data: readonly string[]) => {
        const items: Array<{ data: string }> = [];
        for (const d of data) {
          if (d === 'bad') return { items, failure: { error: new StreamInterruptedError('bad event') } };
          items.push({ data: d });
        }
        return { items };
      },
      mapError,
    };
    // The first read ends after the bad event: the stream is cut off there, not drained after a [DONE].
    const { iterable, state } = body(bytes, ['data: 1\n\ndata: bad\n\n'.length]);
    const reader = sseBatches(iterable, failing);
    expect((await reader.next()).value).toEqual([{ data: '1' }]);
    await expect(reader.next()).rejects.toThrow('bad event');
    expect(state.destroyed).toBe(true);
    expect((await reader.next()).done).toBe(true);
  });

  it('lets the body go when left before its first step, and tells the reading once', async () => {
    let ends = 0;
    const bytes = new TextEncoder().encode(serialise(['1'], { crlf: false, comments: false, multiline: false }));
    const { iterable, state } = body(bytes, []);
    const reader = sseBatches(iterable, { ...reading, onEnd: () => ends++ });
    await reader.return();
    await reader.return();
    expect(state.destroyed).toBe(true);
    expect(ends).toBe(1);
    expect((await reader.next()).done).toBe(true);
  });
});
