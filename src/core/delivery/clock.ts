/** Time for the delivery layer, injectable so tests can drive it. */

/** A time source: `now()` in ms (monotonic), `sleep(ms)` resolves after that long. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** Real time: `performance.now()` and `setTimeout`. */
export const systemClock: Clock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
