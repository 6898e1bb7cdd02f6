/**
 * How many generation requests (a chat or completion stream from its request to its last
 * chunk, an image generation) run at once against the service: `SERVICE_MAX_CONCURRENCY`
 * (default 256). Beyond it requests wait in a queue that is fair across channels: each
 * channel (the request's queue key) has its own line, and the lines are served in turn
 * (round robin), so one busy channel cannot make every other wait behind it. A waiting
 * request learns its place ("queued, 3 ahead") when it joins and whenever it moves, and when
 * its turn comes.
 */
import { AbortedError } from './errors.ts';

/** Where a request waits: its line (a channel) and who to tell of its place. */
export interface QueueTicket {
  /** The line, e.g. the channel key: requests of one key keep their order, keys take turns. */
  key: string;
  /**
   * Told the number of requests that will start before this one, when it joins the queue
   * and each time that number falls. Not called for a request that starts at once.
   */
  onQueued?: (ahead: number) => void;
  /**
   * Told when a request that waited in the queue takes its slot (its wait is over). Not called
   * for a request that starts at once.
   */
  onStart?: () => void;
}

interface Waiter {
  key: string;
  start: () => void;
  onQueued?: ((ahead: number) => void) | undefined;
  /** The place last told. */
  told: number;
  signal?: AbortSignal | undefined;
  onAbort?: () => void;
}

/** A slot of the gate: call once when the request is over (idempotent). */
export type Release = () => void;

/** The concurrency gate of one service. */
export class FairGate {
  private active = 0;
  /** One line per key, in the order keys take turns (a key with an empty line is removed). */
  private readonly lines = new Map<string, Waiter[]>();

  /** @param limit requests running at once (≥ 1). */
  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError('the concurrency limit must be at least 1');
  }

  /** Requests running now. */
  get running(): number {
    return this.active;
  }

  /** Requests waiting now. */
  get waiting(): number {
    let n = 0;
    for (const line of this.lines.values()) n += line.length;
    return n;
  }

  /**
   * Takes a slot: at once when one is free, else when the request's turn comes.
   * @returns the release function of the slot.
   * @throws AbortedError (rejects) when `signal` aborts while waiting (the request leaves the queue).
   */
  acquire(ticket: QueueTicket, signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(new AbortedError(signal.reason));
    if (this.active < this.limit && this.lines.size === 0) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        key: ticket.key,
        onQueued: ticket.onQueued,
        told: -1,
        signal,
        start: () => {
          resolve(this.releaser());
          try {
            ticket.onStart?.();
          } catch {
            // A listener's failure is not the queue's.
          }
        },
      };
      if (signal) {
        waiter.onAbort = () => {
          this.remove(waiter);
          reject(new AbortedError(signal.reason));
          this.tell();
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      const line = this.lines.get(ticket.key);
      if (line) line.push(waiter);
      else this.lines.set(ticket.key, [waiter]);
      this.tell();
    });
  }

  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.next();
    };
  }

  /** Starts waiters while slots are free, taking the lines in turn. */
  private next(): void {
    let started = false;
    while (this.active < this.limit && this.lines.size > 0) {
      const [key, line] = this.lines.entries().next().value as [string, Waiter[]];
      const waiter = line.shift()!;
      // The line goes to the back of the turn order (or away when empty).
      this.lines.delete(key);
      if (line.length) this.lines.set(key, line);
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      this.active++;
      started = true;
      waiter.start();
    }
    if (started) this.tell();
  }

  private remove(waiter: Waiter): void {
    const line = this.lines.get(waiter.key);
    if (!line) return;
    const index = line.indexOf(waiter);
    if (index >= 0) line.splice(index, 1);
    if (line.length === 0) this.lines.delete(waiter.key);
  }

  /**
   * Tells each waiter its place when it changed: how many are served before it in the turn
   * order. The j-th waiter of a line (from 0) waits for min(length, j) of every line (its own
   * j included) and one more of each line ahead of it in the turn order that is longer than j.
   * O(waiters + longest line).
   */
  private tell(): void {
    const lines = [...this.lines.values()];
    let longest = 0;
    let anyone = false;
    for (const line of lines) {
      longest = Math.max(longest, line.length);
      anyone ||= line.some((w) => w.onQueued);
    }
    if (!anyone) return;
    // longer[j]: lines longer than j; below[j] = Σ over lines of min(length, j).
    const longer = new Array<number>(longest + 1).fill(0);
    for (const line of lines) for (let j = 0; j < line.length; j++) longer[j]!++;
    const below = new Array<number>(longest + 1).fill(0);
    for (let j = 1; j <= longest; j++) below[j] = below[j - 1]! + longer[j - 1]!;
    // aheadLonger[j]: lines earlier in the turn order longer than j (grows as lines are passed).
    const aheadLonger = new Array<number>(longest + 1).fill(0);
    for (const line of lines) {
      line.forEach((waiter, j) => {
        if (!waiter.onQueued) return;
        const ahead = below[j]! + aheadLonger[j]!;
        if (ahead === waiter.told) return;
        waiter.told = ahead;
        try {
          waiter.onQueued(ahead);
        } catch {
          // A listener's failure is not the queue's.
        }
      });
      for (let j = 0; j < line.length; j++) aheadLonger[j]!++;
    }
  }
}
