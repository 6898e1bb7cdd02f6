import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConnectionError, StreamInterruptedError } from '../../src/core/service/errors.ts';
import { sseData } from '../../src/core/service/sse.ts';

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
