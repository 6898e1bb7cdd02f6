import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { english } from '../../src/core/i18n/words.ts';
import { RunningCommands, StopRequest } from '../../src/core/running.ts';

/** A command that runs until its signal aborts, then resolves. */
const untilAborted = (seen: AbortSignal[]) => (signal: AbortSignal) => {
  seen.push(signal);
  return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
};

describe('RunningCommands', () => {
  it('gives each command its own signal; stopAll aborts every running one and waits for them', async () => {
    const running = new RunningCommands();
    const seen: AbortSignal[] = [];
    const a = running.run(untilAborted(seen), () => undefined);
    const b = running.run(untilAborted(seen), () => undefined);
    expect(seen[0]).not.toBe(seen[1]);
    expect(running.size).toBe(2);
    await running.stopAll();
    expect(seen.every((s) => s.aborted)).toBe(true);
    expect(running.size).toBe(0);
    await Promise.all([a, b]);
  });

  it('forgets a finished command (nothing is left on any signal) and gives one started after stopAll an aborted signal', async () => {
    const running = new RunningCommands();
    let first: AbortSignal | undefined;
    await running.run(
      async (signal) => {
        first = signal;
      },
      () => undefined,
    );
    expect(running.size).toBe(0);
    expect(getEventListeners(first!, 'abort')).toHaveLength(0);
    await running.stopAll();
    let late: AbortSignal | undefined;
    await running.run(
      async (signal) => {
        late = signal;
      },
      () => undefined,
    );
    expect(late!.aborted).toBe(true);
  });

  it('hands a rejection to onError; the run promise itself resolves', async () => {
    const running = new RunningCommands();
    const errors: unknown[] = [];
    await expect(
      running.run(
        async () => {
          throw new Error('boom');
        },
        (e) => errors.push(e),
      ),
    ).resolves.toBeUndefined();
    expect(errors.map((e) => (e as Error).message)).toEqual(['boom']);
    expect(running.size).toBe(0);
  });

  it('drain lets work that finishes within the grace time finish, then aborts the rest with a shutdown StopRequest', async () => {
    const running = new RunningCommands();
    const seen: AbortSignal[] = [];
    let quickDone = false;
    void running.run(
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        quickDone = true;
      },
      () => undefined,
    );
    void running.run(untilAborted(seen), () => undefined);
    const draining = running.drain(300);
    expect(running.draining).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(quickDone).toBe(true);
    expect(seen[0]!.aborted).toBe(false);
    await draining;
    expect(seen[0]!.reason).toBeInstanceOf(StopRequest);
    expect(english.say((seen[0]!.reason as StopRequest).sentence)).toBe(
      'Stopped: the bot is restarting. Ask again in a moment.',
    );
    expect(running.size).toBe(0);
  });

  it('drain waits for stopped work only a bounded time: an answer still writing its pages does not hold a shutdown', async () => {
    const running = new RunningCommands(200);
    // Ignores its signal (a final write of hundreds of messages at the platform's pace).
    void running.run(
      () => new Promise((resolve) => setTimeout(resolve, 5_000)),
      () => undefined,
    );
    const started = Date.now();
    expect(await running.drain(100)).toBe(1);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('drain returns as soon as everything finished, without waiting out the grace time', async () => {
    const running = new RunningCommands();
    void running.run(
      () => new Promise((resolve) => setTimeout(resolve, 20)),
      () => undefined,
    );
    const started = Date.now();
    await running.drain(60_000);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
