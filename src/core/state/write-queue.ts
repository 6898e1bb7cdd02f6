/**
 * The writes of the SQLite store's writer connection (local-state.ts): one statement at a time,
 * in the order they were asked for, with the writes that waited together grouped into one
 * statement (a group commit).
 *
 * Why one at a time: node-sqlite3 hands every statement of a connection to libuv's threads at
 * once, and SQLite holds the connection's mutex for the whole of each, its 1 s busy wait
 * included: writes sent together while another process held the file's write lock each took
 * that wait in turn, all of them landing (or failing) seconds after their callers gave up.
 *
 * Why grouped: one at a time, a burst of answers ending together (1,000 /chat, each storing its
 * history, its kept state, its feedback record and its counts) cost one round trip through the
 * thread pool and one callback on the bot's busy event loop per write, and the queue fell
 * seconds behind: writes past STORE_DEADLINE_MS were given up and the answers said their
 * exchange could not be saved (bench:streams, 1,000 channels). keyv's upserts that waited
 * together now go as one multi-row `INSERT … ON CONFLICT(key) DO UPDATE` (SQLite applies its
 * rows in order: of two rows of one key, the later wins, as two statements in that order would),
 * and its single-key deletes as one `DELETE … WHERE key IN (…)`; any other statement goes alone.
 * A grouped statement's outcome is each of its writes' (they land, or fail, together).
 *
 * A write still waiting for its turn `startWithinMs` after it was asked for is not run: it fails
 * with StoreDeadlineError (its caller has had one already, deadline.ts) instead of landing later,
 * out of order with what its caller did next. Only the statement running when its callers gave up
 * can still land, and every write asked for after it lands after it.
 */
import { StoreDeadlineError } from './deadline.ts';

/** Runs one statement on the writer connection: its rows (node-sqlite3 `Database#all`, promisified by @keyv/sqlite). */
export type Query = (sql: string, ...parameters: unknown[]) => Promise<unknown>;

/** Rows of one grouped statement, at most (two parameters each: SQLite 3.32+ takes 32,766). */
export const ROWS_PER_STATEMENT = 500;

/** keyv's upsert (@keyv/sqlite 4 `set`), whitespace aside; the table named in group 1. */
const UPSERT_SQL =
  /^INSERT INTO (\w+) \(key, value\)\s+VALUES\s*\(\?, \?\)\s+ON CONFLICT\s*\(key\)\s+DO UPDATE SET value\s*=\s*excluded\.value;?\s*$/;

/** keyv's delete of one key (@keyv/sqlite 4 `delete`, after its SELECT); the table named in group 1. */
const DELETE_SQL = /^DELETE FROM (\w+) WHERE key = \?$/;

/** A write asked for and not yet run. */
interface Queued {
  sql: string;
  parameters: unknown[];
  /** How it can be grouped ({@link groupKey}, worked out once when it is asked for). */
  group: string | undefined;
  /** performance.now() when it was asked for. */
  askedAt: number;
  resolve: (rows: unknown) => void;
  reject: (error: unknown) => void;
}

/** How a write can be grouped: its kind and table, or undefined when it goes alone. */
function groupKey(sql: string): string | undefined {
  const upsert = UPSERT_SQL.exec(sql);
  if (upsert) return `upsert ${upsert[1]}`;
  const del = DELETE_SQL.exec(sql);
  return del ? `delete ${del[1]}` : undefined;
}

/** One statement for `writes`, which share a {@link groupKey} (a single write's own statement when it has none, or is alone). */
function statementOf(writes: readonly Queued[]): { sql: string; parameters: unknown[] } {
  const key = writes[0]!.group;
  if (writes.length === 1 || key === undefined) return { sql: writes[0]!.sql, parameters: writes[0]!.parameters };
  const [kind, table] = key.split(' ') as [string, string];
  const parameters = writes.flatMap((w) => w.parameters);
  if (kind === 'upsert') {
    const rows = writes.map(() => '(?, ?)').join(', ');
    return {
      sql: `INSERT INTO ${table} (key, value) VALUES ${rows} ON CONFLICT(key) DO UPDATE SET value=excluded.value`,
      parameters,
    };
  }
  return { sql: `DELETE FROM ${table} WHERE key IN (${writes.map(() => '?').join(', ')})`, parameters };
}

/** The writer connection's queue (see the file's comment). */
export class WriteQueue {
  private queued: Queued[] = [];
  /** The loop running the queue's statements, while one does. */
  private draining: Promise<void> | undefined;
  /** Statements sent to the connection so far (each group counts once): for tests and logs. */
  statements = 0;

  /**
   * @param query runs one statement on the writer connection.
   * @param startWithinMs ms a write may wait for its turn before it is given up.
   */
  constructor(
    private readonly query: Query,
    private readonly startWithinMs: number,
  ) {}

  /**
   * Runs `sql` after every write asked for before it has settled, grouped with the writes of
   * its kind waiting beside it (see the file's comment).
   * @returns the statement's rows (none for a write).
   * @throws StoreDeadlineError (operation `write`) when its turn came later than `startWithinMs`;
   *   else the statement's error (a grouped statement's is each of its writes').
   */
  run(sql: string, parameters: unknown[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.queued.push({ sql, parameters, group: groupKey(sql), askedAt: performance.now(), resolve, reject });
      // drain() clears `draining` in the very step it finds the queue empty: a write asked for
      // after that step starts a new drain, one asked for before it is taken by the loop.
      this.draining ??= this.drain();
    });
  }

  /** Settles once every write asked for so far has (never rejects). */
  async settled(): Promise<void> {
    for (let draining = this.draining; draining !== undefined; draining = this.draining) await draining;
  }

  /** Runs the queue's statements, one at a time, until none is left. */
  private async drain(): Promise<void> {
    // Writes asked for in the same turn as the first go with it.
    await Promise.resolve();
    try {
      while (this.queued.length > 0) {
        const group = this.nextGroup();
        if (group.length === 0) continue;
        const { sql, parameters } = statementOf(group);
        this.statements++;
        try {
          const rows = await this.query(sql, ...parameters);
          for (const write of group) write.resolve(rows);
        } catch (error) {
          for (const write of group) write.reject(error);
        }
      }
    } finally {
      // In the step that found the queue empty (no await between): see run().
      this.draining = undefined;
    }
  }

  /**
   * Takes the next statement's writes off the queue: the first write still within its
   * deadline, and the writes of its kind right after it (at most {@link ROWS_PER_STATEMENT}).
   * Writes past their deadline are failed on the way. Empty when none was within it.
   */
  private nextGroup(): Queued[] {
    const now = performance.now();
    const group: Queued[] = [];
    let key: string | undefined;
    let taken = 0;
    for (; taken < this.queued.length && group.length < ROWS_PER_STATEMENT; taken++) {
      const write = this.queued[taken]!;
      if (now - write.askedAt > this.startWithinMs) {
        write.reject(new StoreDeadlineError('write', this.startWithinMs));
        continue;
      }
      const kind = write.group;
      if (group.length > 0 && (kind === undefined || kind !== key)) break;
      group.push(write);
      key = kind;
      if (kind === undefined) {
        taken++;
        break;
      }
    }
    this.queued.splice(0, taken);
    return group;
  }
}
