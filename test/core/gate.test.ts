/**
 * The service's concurrency gate (src/core/service/gate.ts): a limit on requests at once, a
 * queue that serves channels in turn, places told to waiting requests, aborts leaving the queue.
 */
import { describe, expect, it } from 'vitest';
import { AbortedError } from '../../src/core/service/errors.ts';
import { FairGate, type Release } from '../../src/core/service/gate.ts';

describe('FairGate', () => {
  it('admits up to the limit at once and queues the rest until a slot is released', async () => {
    const gate = new FairGate(2);
    const a = await gate.acquire({ key: 'c1' });
    await gate.acquire({ key: 'c1' });
    let third: Release | undefined;
    const pending = gate.acquire({ key: 'c1' }).then((r) => (third = r));
    await Promise.resolve();
    expect(gate.running).toBe(2);
    expect(gate.waiting).toBe(1);
    expect(third).toBeUndefined();
    a();
    a(); // a second release of the same slot changes nothing
    await pending;
    expect(third).toBeTypeOf('function');
    expect(gate.running).toBe(2);
    expect(gate.waiting).toBe(0);
  });

  it('serves the channels in turn: one busy channel does not make another wait behind all of its requests', async () => {
    const gate = new FairGate(1);
    const first = await gate.acquire({ key: 'busy' });
    const order: string[] = [];
    const waits: Array<Promise<void>> = [];
    const take = (key: string, name: string) =>
      waits.push(
        gate.acquire({ key }).then((release) => {
          order.push(name);
          release();
        }),
      );
    for (let i = 1; i <= 3; i++) take('busy', `busy${i}`);
    take('quiet', 'quiet1');
    first();
    await Promise.all(waits);
    expect(order).toEqual(['busy1', 'quiet1', 'busy2', 'busy3']);
  });

  it('tells each waiting request its place when it joins and as it moves up, counting the turn order', async () => {
    const gate = new FairGate(1);
    const running = await gate.acquire({ key: 'x' });
    const places: Record<string, number[]> = { a1: [], a2: [], b1: [] };
    const a1 = gate.acquire({ key: 'a', onQueued: (n) => places.a1!.push(n) });
    const a2 = gate.acquire({ key: 'a', onQueued: (n) => places.a2!.push(n) });
    const b1 = gate.acquire({ key: 'b', onQueued: (n) => places.b1!.push(n) });
    // Turn order: a1, b1, a2.
    expect(places).toEqual({ a1: [0], a2: [1, 2], b1: [1] });
    running();
    (await a1)();
    (await b1)();
    (await a2)();
    expect(places.b1).toEqual([1, 0]);
    expect(places.a2).toEqual([1, 2, 1, 0]);
  });

  it('a request aborted while it waits leaves the queue with AbortedError carrying the reason, and the others move up', async () => {
    const gate = new FairGate(1);
    const running = await gate.acquire({ key: 'x' });
    const controller = new AbortController();
    const leaving = gate.acquire({ key: 'a' }, controller.signal);
    const places: number[] = [];
    const staying = gate.acquire({ key: 'b', onQueued: (n) => places.push(n) });
    controller.abort(new Error('user left'));
    const error = await leaving.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortedError);
    expect((error as AbortedError).reason).toEqual(new Error('user left'));
    expect(places).toEqual([1, 0]);
    running();
    expect(await staying).toBeTypeOf('function');
    expect(gate.waiting).toBe(0);
  });

  it('tells a request that waited when its turn comes (onStart), and not one that started at once', async () => {
    const gate = new FairGate(1);
    const events: string[] = [];
    const running = await gate.acquire({ key: 'x', onStart: () => events.push('x started') });
    const waiting = gate.acquire({
      key: 'a',
      onQueued: (n) => events.push(`a queued ${n}`),
      onStart: () => events.push('a started'),
    });
    expect(events).toEqual(['a queued 0']);
    running();
    (await waiting)();
    expect(events).toEqual(['a queued 0', 'a started']);
  });

  it('refuses a limit below 1, and a signal already aborted', async () => {
    expect(() => new FairGate(0)).toThrow(RangeError);
    const controller = new AbortController();
    controller.abort();
    await expect(new FairGate(1).acquire({ key: 'a' }, controller.signal)).rejects.toBeInstanceOf(AbortedError);
  });
});
