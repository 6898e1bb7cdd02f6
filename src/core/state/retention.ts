/**
 * Retention (HISTORY_RETENTION_DAYS): nothing a conversation left is kept longer than the
 * retention, on SQLite and on Redis, and the store removes it, not a loop over every key on the
 * event path.
 *
 * - Records under random ids (answer and Regenerate states, /imagine button states, feedback
 *   records and votes: owned.ts `keepOwned`) are written with an expiry of at most the retention
 *   ({@link retainedTtl}). Redis drops them itself; SQLite's own sweep deletes expired rows in one
 *   statement (local-state.ts `SWEEP_SQL`, every 10 minutes).
 * - A history expires a retention after its last write (history.ts). The turns of a history still
 *   in use are trimmed by {@link sweepHistories}: each write that changes a history's oldest turn
 *   replaces its marker, a key naming the conversation and when that turn passes the retention
 *   (keys.ts `historyDue`: no value to read). The sweep lists the markers' keys (SQLite: a range
 *   of the primary key; Redis: `SCAN … MATCH`; in bounded batches), drops the old turns of each
 *   history whose marker is due, marks its new oldest turn, and deletes the markers it read. A
 *   history's value is read only when one of its turns is due; a marker names its workspace, so
 *   that a purge (purge.ts) deletes it with the rest.
 * - Histories written before markers existed have none: the first sweep of a store lists every
 *   history once (in batches), marks each, and notes that it did ({@link INDEXED_KEY}). A turn
 *   without a time is given the sweep's: it goes a retention later.
 *
 * {@link RetentionSweeper} runs the sweep at start and every {@link SWEEP_INTERVAL_MS}, in the
 * background: {@link SWEEP_BATCH} keys a batch, a turn of the event loop between batches
 * (bench/retention.bench.ts measures the event loop's delay while it runs on a large store).
 */
import type { Logger } from '../../log.ts';
import { parseHistoryDue, storeKeys } from '../keys.ts';
import type { ConversationStore, StoredConversation, StoredMessage } from './history.ts';
import type { StateStore } from './store.ts';

/** How often the sweep runs after the one at start, in ms: hourly. */
export const SWEEP_INTERVAL_MS = 3_600_000;

/** Keys listed (and histories read at most) per batch of a sweep. */
export const SWEEP_BATCH = 200;

/** Set once every history of the store has its retention marker (the first sweep's pass over them). */
export const INDEXED_KEY = 'retention-indexed';

/** The retention of each store, in ms (createCore sets it from HISTORY_RETENTION_DAYS). */
const retentions = new WeakMap<StateStore, number>();

/** Sets the retention of a store's records, in ms ({@link retainedTtl}). */
export function setRetention(store: StateStore, retentionMs: number): void {
  retentions.set(store, retentionMs);
}

/** A record's expiry within its store's retention: `ttlMs` (ms), at most the retention; none given: the retention. */
export function retainedTtl(store: StateStore, ttlMs: number | undefined): number | undefined {
  const retention = retentions.get(store);
  if (retention === undefined) return ttlMs;
  return ttlMs === undefined ? retention : Math.min(ttlMs, retention);
}

/** What a sweep did, counted. */
export interface SweepCounts {
  /** Histories whose old turns were dropped (or that were deleted, none left). */
  histories: number;
  /** Turns dropped. */
  turns: number;
  /** Retention markers read (due) and deleted. */
  markers: number;
  /** Histories marked by the pass over those without markers (0 once it ran). */
  indexed: number;
  /** Batches run. */
  batches: number;
  /** How long it took, in ms. */
  ms: number;
}

/** One turn of the event loop (what arrived meanwhile goes first). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The turns kept at `now`: those said less than the retention ago; one without a time is given `now`.
 * @returns `messages` itself when none is dropped or stamped.
 */
export function retainedTurns(messages: StoredMessage[], retentionMs: number, now: number): StoredMessage[] {
  const cutoff = now - retentionMs;
  if (messages.every((m) => Number.isFinite(m.at) && m.at > cutoff)) return messages;
  return messages.flatMap((m) => (!Number.isFinite(m.at) ? [{ ...m, at: now }] : m.at > cutoff ? [m] : []));
}

/**
 * Drops the turns past the retention from the histories whose markers are due at `now`, and
 * (first sweep of a store) marks the histories that have no marker. Keys written meanwhile may
 * wait for the next sweep.
 * @param options.now the time to sweep at, ms since the epoch (default now).
 * @param options.batchSize keys a batch (default {@link SWEEP_BATCH}).
 * @returns what it did, counted.
 * @throws the store's error (what was done stays done; the next sweep goes on).
 */
export async function sweepHistories(
  store: StateStore,
  history: ConversationStore,
  options: { now?: number; batchSize?: number } = {},
): Promise<SweepCounts> {
  const started = performance.now();
  const now = options.now ?? Date.now();
  const batchSize = options.batchSize ?? SWEEP_BATCH;
  const counts: SweepCounts = { histories: 0, turns: 0, markers: 0, indexed: 0, batches: 0, ms: 0 };
  const retain = async (conversationId: string) => {
    const { before, after } = await history.edit(
      conversationId,
      (messages) => retainedTurns(messages, history.retentionMs, now),
      { mark: true },
    );
    if (after < before) {
      counts.histories += 1;
      counts.turns += before - after;
    }
  };
  if ((await store.keyv.get(INDEXED_KEY)) === undefined) {
    const prefix = storeKeys.history('');
    for await (const batch of store.scanKeys(prefix, batchSize)) {
      const values = (await store.keyv.getMany(batch)) as Array<StoredConversation | undefined>;
      for (const [i, key] of batch.entries()) {
        if (!Array.isArray(values[i]?.messages)) continue;
        await retain(key.slice(prefix.length));
        counts.indexed += 1;
      }
      counts.batches += 1;
      await turn();
    }
    await store.keyv.set(INDEXED_KEY, now);
  }
  for await (const batch of store.scanKeys('history-due:', batchSize)) {
    const due = batch.flatMap((key) => {
      const marker = parseHistoryDue(key);
      return marker && marker.dueMs <= now ? [{ key, ...marker }] : [];
    });
    for (const conversationId of new Set(due.map((d) => d.conversationId))) await retain(conversationId);
    // The markers just written are due after `now` (retainedTurns keeps turns newer than the cutoff): none is deleted here.
    await store.deleteKeys(due.map((d) => d.key));
    counts.markers += due.length;
    counts.batches += 1;
    await turn();
  }
  counts.ms = Math.round(performance.now() - started);
  return counts;
}

/**
 * Runs {@link sweepHistories} at start and every {@link SWEEP_INTERVAL_MS} (or `everyMs`), one at a
 * time, on an unref'd timer; each sweep is logged with its counts, a failed one logged and the next
 * run as planned.
 */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SweepCounts | undefined> | undefined;
  private stopped = false;

  constructor(
    private readonly store: StateStore,
    private readonly history: ConversationStore,
    private readonly log: Logger,
    private readonly everyMs = SWEEP_INTERVAL_MS,
  ) {}

  /** Starts: a sweep now (in the background), then one every interval. */
  start(): void {
    void this.sweep();
  }

  /**
   * Runs a sweep now unless one runs (then its promise).
   * @returns its counts, or undefined when it failed (logged).
   */
  sweep(): Promise<SweepCounts | undefined> {
    this.running ??= sweepHistories(this.store, this.history)
      .then(
        (counts) => {
          if (counts.turns || counts.indexed) this.log.info({ ...counts }, 'history retention swept');
          else this.log.debug({ ...counts }, 'history retention swept');
          return counts;
        },
        (error: unknown) => {
          this.log.warn(
            { err: error instanceof Error ? error.message : String(error) },
            'history retention sweep failed (the next one goes on)',
          );
          return undefined;
        },
      )
      .finally(() => {
        this.running = undefined;
        if (!this.stopped) this.schedule();
      });
    return this.running;
  }

  /** Stops the timer and waits for a sweep that runs. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.sweep(), this.everyMs);
    this.timer.unref();
  }
}
