/**
 * The commands an adapter is running. Each gets an AbortSignal of its own (no listener on a
 * shared, long-lived signal): `stopAll()` aborts every one and waits for them to settle at
 * shutdown, and a Stop button will later abort one alone through the same controllers.
 */

/** Running commands of one adapter. */
export class RunningCommands {
  private readonly running = new Map<Promise<void>, AbortController>();
  private stopped = false;

  /**
   * Runs `work` with its own signal (already aborted once `stopAll()` has been called).
   * @param onError told of a rejection of `work` (adapters log it); the returned promise never rejects.
   * @returns a promise that settles when `work` has.
   */
  run(work: (signal: AbortSignal) => Promise<unknown>, onError: (error: unknown) => void): Promise<void> {
    const controller = new AbortController();
    if (this.stopped) controller.abort();
    const done: Promise<void> = work(controller.signal)
      .then(
        () => undefined,
        (error: unknown) => {
          onError(error);
        },
      )
      .finally(() => this.running.delete(done));
    this.running.set(done, controller);
    return done;
  }

  /** How many commands are running. */
  get size(): number {
    return this.running.size;
  }

  /** Aborts every running command's signal and resolves when all have settled. */
  async stopAll(): Promise<void> {
    this.stopped = true;
    for (const controller of this.running.values()) controller.abort();
    await Promise.all(this.running.keys());
  }
}
