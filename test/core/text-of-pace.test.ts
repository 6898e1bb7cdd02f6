/**
 * textOf's `pace` (StreamingReply.readWaitMs): once an answer's text is shown, its stream is
 * read once per write, whatever arrived meanwhile in one read, instead of once per network read;
 * no text is lost (what arrived before a failure comes first: stream-body.ts), the idle limit
 * does not run during a wait, and the body's end (the answer's end, a failure, an abort) ends
 * the wait at once.
 * Against the fake service over HTTP (undici), events written one by one 15 ms apart.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/core/service/client.ts';
import { AbortedError } from '../../src/core/service/errors.ts';
import type { ChatCompletionChunk } from '../../src/core/service/schemas.ts';
import type { Stream } from '../../src/core/service/stream.ts';
import { type Pace, textOf } from '../../src/core/service/text-of.ts';
import { FakeService } from '../fakes/service.ts';

let fake: FakeService;
let service: ServiceClient;
const PIECES = Array.from({ length: 40 }, (_, i) => `p${i} `);

beforeAll(async () => {
  fake = await FakeService.start();
  service = new ServiceClient({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, backoffBaseMs: 1 });
});
beforeEach(() => fake.reset());
afterAll(async () => {
  await service.close();
  await fake.close();
});

const pieceOf = (chunk: ChatCompletionChunk) => chunk.choices[0]?.delta?.content;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A stream of PIECES, 15 ms apart (600 ms in all). */
async function open() {
  fake.enqueue('chat', { stream: { pieces: PIECES, chunkDelayMs: 15, wholeEvents: true } });
  return service.chat.completions.create({
    model: 'fake-chat',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
  });
}

/** Once a text was shown (`shownAt`, set by the consumer), the next read waits until `ms` after it (as a reply that just wrote would). */
function pacedBy(ms: number): Pace & { shownAt: number | undefined } {
  return {
    shownAt: undefined,
    readWaitMs() {
      return this.shownAt === undefined ? 0 : Math.max(0, this.shownAt + ms - performance.now());
    },
    sleep,
  };
}

describe('textOf with a pace', () => {
  it('gives the text once per wait, every piece in order; unpaced, once per event', async () => {
    const unpaced: string[] = [];
    for await (const text of textOf(await open(), pieceOf)) unpaced.push(text);
    expect(unpaced.join('')).toBe(PIECES.join(''));
    expect(unpaced.length).toBeGreaterThan(20);

    const pace = pacedBy(200);
    const paced: string[] = [];
    // The idle limit (100 ms) is shorter than each wait (200 ms): it does not run during one.
    for await (const text of textOf(await open(), pieceOf, { pace, idleMs: 100 })) {
      paced.push(text);
      pace.shownAt = performance.now();
    }
    expect(paced.join('')).toBe(PIECES.join(''));
    // 600 ms of events read every 200 ms: the first event, then a few reads of many.
    expect(paced.length).toBeLessThanOrEqual(6);
    expect(paced.some((text) => text.split(' ').length > 8)).toBe(true);
  });

  it('a failure during a wait ends it at once: the text that arrived first, then the failure', async () => {
    const stream = await open();
    const pace = pacedBy(10_000);
    const texts = textOf(stream, pieceOf, { pace });
    expect((await texts.next()).value).toBe(PIECES[0]);
    pace.shownAt = performance.now();
    const waiting = texts.next();
    await sleep(100);
    const started = performance.now();
    stream.abort(new Error('stopped'));
    const held = await waiting;
    expect(performance.now() - started).toBeLessThan(1_000);
    // Every piece that arrived in those 100 ms, in order.
    expect(held.value).toMatch(/^p1 p2 p3 (p\d+ )*$/);
    await expect(texts.next()).rejects.toBeInstanceOf(AbortedError);
  });

  it('the end of the stream ends a wait: the rest of the text, then done', async () => {
    const pace = pacedBy(10_000);
    const texts = textOf(await open(), pieceOf, { pace });
    expect((await texts.next()).value).toBe(PIECES[0]);
    pace.shownAt = performance.now();
    const started = performance.now();
    expect((await texts.next()).value).toBe(PIECES.slice(1).join(''));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect((await texts.next()).done).toBe(true);
  });

  it('a stream that waits many times keeps nothing of its past waits', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const held = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    // A stream of 20,000 reads of one piece each whose body never ends meanwhile (a long answer),
    // read with a wait before each read: what a wait leaves behind adds up over the stream's life.
    const WAITS = 20_000;
    let read = 0;
    let watchers = 0;
    const neverEnds = new Promise<void>(() => undefined);
    const stream = {
      texts: () => ({
        next: async () => (read++ < WAITS ? { done: false, value: ['x'] } : { done: true, value: undefined }),
        return: async () => ({ done: true, value: undefined }),
      }),
      watchBodyEnd: (onEnd: (() => void) | undefined) => {
        if (onEnd) watchers++;
      },
      // The shape of a body's end as one promise for the stream's life.
      bodyEnded: () => neverEnds,
      abort: () => undefined,
    } as unknown as Stream<ChatCompletionChunk>;
    const pace: Pace = { readWaitMs: () => 1, sleep: () => Promise.resolve() };
    const texts = textOf(stream, pieceOf, { pace });
    expect((await texts.next()).value).toBe('x');
    const before = held();
    let count = 1;
    for (let next = await texts.next(); !next.done; next = await texts.next()) count++;
    const grown = held() - before;
    expect(count).toBe(WAITS);
    // A reaction, a promise and the resolving functions per wait kept on a promise the stream
    // holds would be several MB; the waits leave nothing.
    expect(grown).toBeLessThan(1_000_000);
    // Each wait watched the body's end (and let go of it after).
    expect(watchers).toBe(WAITS + 1);
  });
});
