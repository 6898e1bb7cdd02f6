/**
 * The write scheduler's pending writes (scheduler.ts): at most one per key (a message), in the
 * order they were first submitted. A newer write of a key replaces a pending one (which resolves
 * `superseded`), keeping its place and, once final, its finality; a write the platform refused
 * for its rate limit comes back to go again later (refusals.ts), unless a newer one of its key
 * waits already.
 */
import type { Pending, WriteRequest, WriteResult } from './write-request.ts';

/** Pending writes by key. Never throws. */
export class PendingWrites {
  private readonly byKey = new Map<string, Pending>();
  private serial = 0;

  /** Pending writes now. */
  get size(): number {
    return this.byKey.size;
  }

  get(key: string): Pending | undefined {
    return this.byKey.get(key);
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  delete(key: string): void {
    this.byKey.delete(key);
  }

  keys(): IterableIterator<string> {
    return this.byKey.keys();
  }

  /**
   * Adds a submitted write at `now` (clock ms). A pending write of its key is replaced: it
   * resolves `superseded`, and the new one keeps its submission time, its `notBefore` (a refused
   * write's wait) and stays final if either was.
   */
  add(request: WriteRequest, resolve: (result: WriteResult) => void, reject: (error: unknown) => void, now: number) {
    const previous = this.byKey.get(request.key);
    if (previous) {
      previous.resolve('superseded');
      const final = previous.request.final || request.final;
      const { submittedAt, notBefore } = previous;
      const kept = notBefore === undefined ? {} : { notBefore };
      this.byKey.set(request.key, {
        request: { ...request, final },
        resolve,
        reject,
        submittedAt,
        wakeSeq: 0,
        ...kept,
      });
    } else {
      const submittedAt = now + this.serial++ * 1e-6;
      this.byKey.set(request.key, { request, resolve, reject, submittedAt, wakeSeq: 0 });
    }
  }

  /**
   * Puts back a write refused for the platform's rate limit, to go at `notBefore` (clock ms),
   * counted as one more retry; when a newer write of its key is pending, that one goes instead
   * (final if either was) and the refused one resolves `superseded`.
   * @returns the key, to look at again.
   */
  again(refused: Pending, notBefore: number): string {
    const { key } = refused.request;
    const newer = this.byKey.get(key);
    if (newer) {
      newer.request = { ...newer.request, final: newer.request.final || refused.request.final };
      refused.resolve('superseded');
    } else this.byKey.set(key, { ...refused, retries: (refused.retries ?? 0) + 1, notBefore, wakeSeq: 0 });
    return key;
  }
}
