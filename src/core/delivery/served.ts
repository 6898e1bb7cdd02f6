/**
 * What the write scheduler (scheduler.ts) remembers of the writes it started: when each key (a
 * message) was last written, for `minIntervalMs`, and when each stream (an answer) was last
 * served, for its turn among the streams sharing a bucket. Times are clock ms; a key or stream
 * quiet for {@link FORGET_AFTER_MS} is forgotten (longer than any `minIntervalMs`; a stream not
 * served for that long comes first anyway).
 */

/** How long the last write time of a quiet key or stream is kept, in ms. */
const FORGET_AFTER_MS = 60_000;

/** Last write times by key and by stream. Never throws. */
export class ServedTimes {
  private readonly keys = new Map<string, number>();
  private readonly streams = new Map<string, number>();

  /** When the key was last written, if it was lately. */
  lastWriteOf(key: string): number | undefined {
    return this.keys.get(key);
  }

  /** When the stream was last served; -1 when not lately. */
  lastServed(stream: string): number {
    return this.streams.get(stream) ?? -1;
  }

  /** A write of `key` in `stream` started at `now`. */
  started(key: string, stream: string, now: number): void {
    this.keys.set(key, now);
    this.streams.set(stream, now);
  }

  /** Forgets the keys (but those `running`) and streams quiet since `now - FORGET_AFTER_MS`. */
  forget(now: number, running: (key: string) => boolean): void {
    for (const [key, at] of this.keys) if (at <= now - FORGET_AFTER_MS && !running(key)) this.keys.delete(key);
    for (const [stream, at] of this.streams) if (at <= now - FORGET_AFTER_MS) this.streams.delete(stream);
  }
}
