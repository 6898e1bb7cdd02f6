/**
 * Counts nothing waits for (use where no limit holds, per channel, tokens), added up in memory
 * and written to the store together every {@link COUNT_FLUSH_MS} (quotas.ts says why). Reads
 * through {@link CountBatch.withUnwritten} add what this process has not written yet.
 */
import type { Logger } from '../../log.ts';
import type { StateStore } from './store.ts';

/** How often counts nothing waits for are written to the store, in ms. */
export const COUNT_FLUSH_MS = 5_000;

/** The counts of one process not written yet. */
export class CountBatch {
  /** By key: what to add, and the counter's window (ms) if it has to be created. */
  private readonly unwritten = new Map<string, { by: number; ttlMs: number }>();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly state: StateStore,
    private readonly log: Logger,
  ) {}

  /** Adds `by` to a counter with the next flush (a window of `ttlMs` if the counter is new). */
  count(key: string, by: number, ttlMs: number): void {
    const entry = this.unwritten.get(key);
    if (entry) entry.by += by;
    else this.unwritten.set(key, { by, ttlMs });
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => void this.flush(), COUNT_FLUSH_MS);
      this.flushTimer.unref();
    }
  }

  /** A stored counter plus what this process has not written to it yet (its window, if the store has none yet). */
  withUnwritten(key: string, stored: { value: number; resetInMs: number }): { value: number; resetInMs: number } {
    const entry = this.unwritten.get(key);
    if (!entry) return stored;
    return { value: stored.value + entry.by, resetInMs: stored.resetInMs > 0 ? stored.resetInMs : entry.ttlMs };
  }

  /**
   * Writes the counts not written yet (each key one increment). Never throws: a count the
   * store refuses is logged at debug and dropped.
   */
  async flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = [...this.unwritten];
    this.unwritten.clear();
    await Promise.all(
      batch.map(([key, { by, ttlMs }]) =>
        this.state
          .increment(key, by, ttlMs)
          .catch((error: unknown) =>
            this.log.debug({ err: error instanceof Error ? error.message : String(error), key }, 'usage not counted'),
          ),
      ),
    );
  }
}
