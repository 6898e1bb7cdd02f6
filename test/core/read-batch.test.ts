/**
 * Reads of a burst: single-key reads asked for while one is on its way go to the store together
 * (read-batch.ts), each caller getting its own key's value, errors included; and a history read
 * started ahead (ConversationStore.prefetch) is taken by the next read of the conversation,
 * unless the conversation was written meanwhile. SQLite's store is coalesced the same way.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Keyv from 'keyv';
import { afterAll, describe, expect, it } from 'vitest';
import { storeKeys } from '../../src/core/keys.ts';
import { StoreDeadlineError, withDeadline } from '../../src/core/state/deadline.ts';
import { ConversationStore } from '../../src/core/state/history.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import { coalesceReads } from '../../src/core/state/read-batch.ts';
import type { StateStore } from '../../src/core/state/store.ts';

/** A keyv on a Map store that counts the store's reads (a `get` or a `getMany` each) and can be made to fail. */
function countingKeyv() {
  const map = new Map<string, unknown>();
  const reads: string[][] = [];
  let failing = false;
  const store = {
    get: async (key: string) => {
      reads.push([key]);
      if (failing) throw new Error('store down');
      return map.get(key);
    },
    getMany: async (keys: string[]) => {
      reads.push(keys);
      if (failing) throw new Error('store down');
      return keys.map((k) => map.get(k));
    },
    set: async (key: string, value: unknown) => {
      map.set(key, value);
      return true;
    },
    delete: async (key: string) => map.delete(key),
    clear: async () => map.clear(),
    on: () => store,
  };
  const keyv = coalesceReads(new Keyv({ store: store as never, throwOnErrors: true }));
  return { keyv, reads, fail: (on: boolean) => (failing = on) };
}

const opened: StateStore[] = [];
afterAll(async () => {
  await Promise.allSettled(opened.map((s) => s.close()));
});

describe('coalesced reads', () => {
  it('sends the first read alone and the keys asked for meanwhile together, each caller its own value', async () => {
    const { keyv, reads } = countingKeyv();
    for (let i = 0; i < 10; i++) await keyv.set(`k${i}`, { n: i });
    reads.length = 0;
    const values = await Promise.all(Array.from({ length: 10 }, (_, i) => keyv.get<{ n: number }>(`k${i}`)));
    expect(values.map((v) => v?.n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // Two reads at once at most: the first two keys alone, the other eight in one getMany.
    expect(reads.length).toBe(3);
    expect(reads.flat().length).toBe(10);
    expect(await keyv.get('absent')).toBeUndefined();
  });

  it("resumes a batch's callers 32 at a time, one group per turn of the event loop, so that what arrived meanwhile goes between", async () => {
    const { keyv } = countingKeyv();
    for (let i = 0; i < 100; i++) await keyv.set(`b${i}`, i);
    const order: string[] = [];
    // The first read goes alone; the other 99 wait for it and go together in one getMany.
    const gets = Array.from({ length: 100 }, (_, i) => keyv.get(`b${i}`).then(() => void order.push(`b${i}`)));
    await gets[0];
    // Once the batch's first group has run, a turn of the event loop comes before the next group.
    await new Promise<void>((resolve) => {
      const mark = () => {
        order.push('turn');
        resolve();
      };
      const wait = () => setImmediate(order.length > 1 ? mark : wait);
      wait();
    });
    await Promise.all(gets);
    const turn = order.indexOf('turn');
    expect(turn).toBeGreaterThan(1);
    expect(turn).toBeLessThan(order.length - 1);
    expect(order.filter((o) => o !== 'turn')).toHaveLength(100);
  });

  it("keeps a batch's values for the callers resumed past their deadline on a busy event loop: the store answered in time", async () => {
    const { keyv } = countingKeyv();
    for (let i = 0; i < 300; i++) await keyv.set(`d${i}`, i);
    // Every store call's deadline, as openStore's withDeadlines puts it on keyv's get: 50 ms here.
    const get = keyv.get.bind(keyv) as (key: string) => Promise<unknown>;
    const timedGet = (key: string) => withDeadline(get(key), 50, 'get');
    // A busy neighbour: every turn of the event loop also runs 20 ms of other work, so the batch's
    // 10 groups of callers are resumed over ~200 ms, well past 50 ms.
    let busy = true;
    const neighbour = () => {
      const until = performance.now() + 20;
      while (performance.now() < until);
      if (busy) setImmediate(neighbour);
    };
    setImmediate(neighbour);
    const started = performance.now();
    const outcomes = await Promise.allSettled(Array.from({ length: 300 }, (_, i) => timedGet(`d${i}`)));
    const tookMs = performance.now() - started;
    busy = false;
    expect(tookMs).toBeGreaterThan(50);
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : undefined))).toEqual(
      Array.from({ length: 300 }, (_, i) => i),
    );
  });

  it('still fails a read the store does not answer within its deadline', async () => {
    const { keyv } = countingKeyv();
    const store = (keyv as unknown as { opts: { store: { getMany: unknown; get: unknown } } }).opts.store;
    const stalled = () => new Promise<never>(() => undefined);
    store.get = stalled;
    store.getMany = stalled;
    const get = keyv.get.bind(keyv) as (key: string) => Promise<unknown>;
    await expect(withDeadline(get('never'), 50, 'get')).rejects.toBeInstanceOf(StoreDeadlineError);
  });

  it('gives one read to callers asking for the same key before it went out', async () => {
    const { keyv, reads } = countingKeyv();
    await keyv.set('a', 1);
    await keyv.set('b', 2);
    reads.length = 0;
    // Two reads on their way (the most at once): what is asked for meanwhile waits for them.
    const [, , a1, a2, b1, b2, b3] = await Promise.all([
      keyv.get('p1'),
      keyv.get('p2'),
      keyv.get('a'),
      keyv.get('a'),
      keyv.get('b'),
      keyv.get('b'),
      keyv.get('b'),
    ]);
    expect([a1, a2, b1, b2, b3]).toEqual([1, 1, 2, 2, 2]);
    expect(reads).toEqual([['keyv:p1'], ['keyv:p2'], ['keyv:a', 'keyv:b']]);
  });

  it("makes a batch's error each of its callers' error, and reads again afterwards", async () => {
    const { keyv, fail } = countingKeyv();
    await keyv.set('x', 'yes');
    fail(true);
    const results = await Promise.allSettled(['x', 'y', 'z'].map((k) => keyv.get(k)));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    fail(false);
    expect(await keyv.get('x')).toBe('yes');
  });

  it('reads a burst of SQLite keys right, expired ones included', async () => {
    const store = await openStore(`sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-batch-')), 'state.sqlite')}`);
    opened.push(store);
    await Promise.all(Array.from({ length: 300 }, (_, i) => store.keyv.set(`s${i}`, { i })));
    await store.keyv.set('gone', 'old', 1);
    await new Promise((r) => setTimeout(r, 5));
    const keys = [...Array.from({ length: 300 }, (_, i) => `s${i}`), 'gone', 'never'];
    const values = await Promise.all(keys.map((k) => store.keyv.get<{ i: number }>(k)));
    expect(values.slice(0, 300).map((v) => v?.i)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(values.slice(300)).toEqual([undefined, undefined]);
  });
});

describe('history read ahead', () => {
  it('is taken by the next read of the conversation, once', async () => {
    const { keyv, reads } = countingKeyv();
    const history = new ConversationStore({ keyv } as unknown as StateStore);
    await keyv.set(storeKeys.history('c1'), { version: 1, messages: [{ role: 'user', content: 'hi', at: 1 }] });
    reads.length = 0;
    history.prefetch('c1');
    expect((await history.get('c1')).map((m) => m.content)).toEqual(['hi']);
    expect(reads.length).toBe(1);
    await history.get('c1');
    expect(reads.length).toBe(2);
  });

  it('is dropped when the conversation is written meanwhile: the read after the append sees it', async () => {
    const store = await openStore(`sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-ahead-')), 'state.sqlite')}`);
    opened.push(store);
    const history = new ConversationStore(store);
    history.prefetch('c2');
    await history.append('c2', { role: 'user', content: 'q', at: 1 }, { role: 'assistant', content: 'a', at: 2 });
    expect((await history.get('c2')).map((m) => m.content)).toEqual(['q', 'a']);
    history.prefetch('c2');
    await history.clear('c2');
    expect(await history.get('c2')).toEqual([]);
  });
});
