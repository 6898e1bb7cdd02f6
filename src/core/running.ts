/**
 * The work an adapter is running (commands, mentions, button presses). Each gets an
 * AbortSignal of its own (no listener on a shared, long-lived signal). At shutdown `drain()`
 * lets running work finish within a grace time, then aborts what is left with a
 * {@link StopRequest} that says why (the answer keeps its partial text with that note); a
 * Stop button aborts one alone through the same controllers.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { holdInvocation } from '../ops/tracing.ts';
import type { MessageKey } from './i18n/catalogs.ts';
import { type Sentence, sentence } from './i18n/words.ts';

/** Why running work was stopped: the abort signal's reason, with the sentence users read. */
export class StopRequest extends Error {
  /** What users read (under the partial answer, in the place's words): `answers.stop.stopped` or `.restarting`. */
  readonly sentence: Sentence;
  /** The sentence's catalog key. */
  readonly userMessage: MessageKey;

  /** @param kind `shutdown`: the bot is stopping; `user`: someone pressed Stop. */
  constructor(readonly kind: 'shutdown' | 'user') {
    super(kind === 'shutdown' ? 'stopped for a shutdown' : 'stopped by a user');
    this.name = 'StopRequest';
    this.userMessage = kind === 'shutdown' ? 'answers.stop.restarting' : 'answers.stop.stopped';
    this.sentence = sentence(this.userMessage);
  }
}

/** The catalog key of what a user reads when a command arrives while the bot is stopping (in their words). */
export const RESTARTING_KEY = 'answers.restarting' satisfies MessageKey;

/**
 * How long stopped work may take to write its partial answers at a shutdown, in ms: an answer
 * whose text came in full may still have hundreds of messages to post at the platform's pace.
 */
export const STOPPED_WRITES_MS = 10_000;

/** Running work of one adapter. */
export class RunningCommands {
  /** Each running work's controller, and the promise that settles when the work has. */
  private readonly running = new Map<AbortController, Promise<void>>();
  private stopping = false;

  /** @param stoppedWritesMs how long {@link drain} waits for stopped work, in ms (default {@link STOPPED_WRITES_MS}). */
  constructor(private readonly stoppedWritesMs = STOPPED_WRITES_MS) {}

  /** True once `drain()` began: adapters refuse new work with {@link RESTARTING_KEY}, in the reader's words. */
  get draining(): boolean {
    return this.stopping;
  }

  /**
   * Runs `work` with its own signal (already aborted, as a shutdown, once `drain()` began). With
   * tracing on, the invocation's root span (ops/tracing.ts) stays open until `work` has settled.
   * @param onError told of a rejection of `work` (adapters log it); the returned promise never rejects.
   * @returns a promise that settles when `work` has.
   */
  run(work: (signal: AbortSignal) => Promise<unknown>, onError: (error: unknown) => void): Promise<void> {
    const controller = new AbortController();
    if (this.stopping) controller.abort(new StopRequest('shutdown'));
    const done = this.settled(work(controller.signal), controller, onError, holdInvocation());
    this.running.set(controller, done);
    return done;
  }

  /** Waits for a work's promise; tells `onError` of its rejection, then forgets the work. One frame per work (no chain of callbacks). */
  private async settled(
    working: Promise<unknown>,
    controller: AbortController,
    onError: (error: unknown) => void,
    traced: ((error?: unknown) => void) | undefined,
  ) {
    try {
      await working;
      traced?.();
    } catch (error) {
      traced?.(error);
      onError(error);
    } finally {
      this.running.delete(controller);
    }
  }

  /** How many are running. */
  get size(): number {
    return this.running.size;
  }

  /**
   * Stops taking work, waits up to `graceMs` for what runs to finish, then aborts the rest
   * with a shutdown {@link StopRequest} and waits for it to settle (partial answers are
   * written), at most `stoppedWritesMs` more: a shutdown takes at most `graceMs` + that.
   * @param graceMs time allowed to finish, in ms (0: abort at once).
   * @returns how many were still writing when the bound passed (0 when all settled).
   */
  async drain(graceMs: number): Promise<number> {
    this.stopping = true;
    if (this.running.size > 0 && graceMs > 0) await this.allSettled(graceMs);
    for (const controller of this.running.keys()) controller.abort(new StopRequest('shutdown'));
    if (this.running.size > 0) await this.allSettled(this.stoppedWritesMs);
    return this.running.size;
  }

  /** Waits for every running work to settle, at most `ms`. */
  private async allSettled(ms: number): Promise<void> {
    const timer = new AbortController();
    await Promise.race([
      Promise.all(this.running.values()),
      sleep(ms, undefined, { signal: timer.signal }).catch(() => undefined),
    ]);
    timer.abort();
  }

  /** Aborts every running work at once and waits for it (a drain with no grace). */
  async stopAll(): Promise<void> {
    await this.drain(0);
  }
}
