/**
 * The SQLite state backend (keyv + @keyv/sqlite): one bot process. Claims, counters and locks
 * are atomic within the process (one promise chain per key and file); values persist in the file.
 * Two connections: keyv's writes on @keyv/sqlite's, one statement at a time, those that waited
 * together grouped (write-queue.ts); its reads
 * (every `SELECT`) on a read-only one, so that no read waits for a write stuck on another
 * process's lock.
 *
 * Rows, as @keyv/sqlite 4 and keyv 5 write them: table `keyv` (`key VARCHAR(255) PRIMARY KEY,
 * value TEXT`), key `genbot:<key>`, value keyv's JSON `{"value":<the value>,"expires":<ms since
 * the epoch>}`, with no `expires` for a value set without a TTL (history, channel settings).
 * keyv only drops an expired row when it reads that very key again, and claims, stop requests,
 * buttons and counters are mostly never read again: without more, each would stay in the file for
 * good. So the store sweeps: {@link SWEEP_SQL}, one DELETE run inside SQLite (no row is read into
 * JS), {@link FIRST_SWEEP_AFTER_MS} after opening and then every {@link SWEEP_EVERY_MS}, on an
 * unref'd timer that close() stops; a failed sweep goes to `onError` and the next one runs as
 * planned. A row without a numeric top-level `expires` is never deleted. Deleted rows free their
 * pages for reuse: the file stops growing, it does not shrink (no VACUUM).
 */

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import KeyvSqlite from '@keyv/sqlite';
import Keyv from 'keyv';
import sqlite3 from 'sqlite3';
import { STORE_DEADLINE_MS, withDeadlines } from './deadline.ts';
import { coalesceReads } from './read-batch.ts';
import { SCAN_BATCH, type StateStore } from './store.ts';
import { WriteQueue } from './write-queue.ts';

/** How often expired rows are deleted, in ms. */
export const SWEEP_EVERY_MS = 10 * 60 * 1000;

/** When the first sweep runs after opening, in ms. */
export const FIRST_SWEEP_AFTER_MS = 5_000;

/**
 * Deletes the namespace's rows whose keyv `expires` (ms since the epoch) is before `?` (now),
 * as keyv itself treats them (`Date.now() > expires`). CASE evaluates in order, so `json_valid`
 * only runs on rows mentioning `"expires":` (not on every history row) and `json_extract` only on
 * valid JSON (it throws on anything else); a row without a top-level `expires` gives NULL, and a
 * non-numeric one sorts after every number: neither is deleted.
 */
export const SWEEP_SQL = `DELETE FROM keyv WHERE key LIKE 'genbot:%' AND CASE
  WHEN instr(value, '"expires":') = 0 THEN 0
  WHEN json_valid(value) THEN json_extract(value, '$.expires') < ?
  ELSE 0
END`;

/** keyv's namespace: every row's key is `genbot:<key>`. */
const NAMESPACE = 'genbot:';

/**
 * One batch of keys in a range of the primary key (keyset paging: each batch starts after the
 * last key of the one before, so a batch costs the same however far the listing has gone;
 * OFFSET, as keyv's own iterator pages, would read every earlier row again).
 */
const SCAN_SQL = 'SELECT key FROM keyv WHERE key > ? AND key < ? ORDER BY key LIMIT ?';

/** The first batch of {@link SCAN_SQL}: from the prefix itself (a key equal to it included). */
const SCAN_FIRST_SQL = 'SELECT key FROM keyv WHERE key >= ? AND key < ? ORDER BY key LIMIT ?';

/** Deletes the rows of a JSON array of keys (one statement, as @keyv/sqlite's deleteMany). */
const DELETE_KEYS_SQL = 'DELETE FROM keyv WHERE key IN (SELECT value FROM json_each(?))';

/**
 * The smallest string after every string starting with `prefix`: its last code point plus one
 * (SQLite compares TEXT byte by byte, and UTF-8 keeps code point order). `prefix` is not empty.
 */
function pastPrefix(prefix: string): string {
  const last = prefix.codePointAt(prefix.length - 1)!;
  const cut = last > 0xffff ? 2 : 1;
  return prefix.slice(0, -cut) + String.fromCodePoint(last + 1);
}

/** A counter as stored: its value and when it expires (ms since epoch). */
interface StoredCounter {
  value: number;
  expiresAt: number;
}

/**
 * The promise chains of each file, shared by every instance on it in this process (one bot
 * and its tests may open a file twice). Two processes on one SQLite file are not supported:
 * that is what Redis is for.
 */
const CHAINS = new Map<string, Map<string, Promise<unknown>>>();

/** A statement that only reads (keyv's get, getMany, has, iterator and the first step of delete). */
const READ_SQL = /^\s*SELECT\b/i;

/** The reader connection (node-sqlite3). */
interface Reader {
  /** Runs a read: its rows (`Database#all`). */
  all(sql: string, parameters: unknown[]): Promise<unknown[]>;
  close(): Promise<void>;
}

/**
 * Opens a read-only connection to the file (node-sqlite3, its own busy timeout: 1 s).
 * @returns the connection, or undefined (told to `onError`) when it cannot be opened.
 */
function openReader(file: string, onError?: (error: unknown) => void): Promise<Reader | undefined> {
  return new Promise((resolve) => {
    const database: sqlite3.Database = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (error) => {
      if (error) {
        onError?.(error);
        resolve(undefined);
        return;
      }
      resolve({
        all: (sql, parameters) =>
          new Promise((done, fail) =>
            database.all(sql, parameters, (failure, rows) => (failure ? fail(failure) : done(rows))),
          ),
        close: () => new Promise<void>((done) => database.close(() => done())),
      });
    });
  });
}

/**
 * The SQLite store at `path` (open-store.ts `openStore` for `sqlite://<path>`), each of its calls
 * bounded by STORE_DEADLINE_MS (deadline.ts `withDeadlines`).
 * @param path a file (its folder is created) or `:memory:`.
 */
export function openLocalStore(path: string, options: { onError?: (error: unknown) => void } = {}): StateStore {
  return withDeadlines(new LocalState(path, options));
}

/** State in a SQLite file. */
export class LocalState implements StateStore {
  readonly kind = 'sqlite';
  readonly keyv: Keyv;
  private readonly chains: Map<string, Promise<unknown>>;
  private readonly sqlite: KeyvSqlite;
  private readonly onError: (error: unknown) => void;
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private closed = false;
  /** The writer's settings being applied and the reader being opened (every query waits for the settings; close() for both). */
  private opened: Promise<void> = Promise.resolve();
  /** The read-only connection of a file's store (none for `:memory:`, or when it could not be opened). */
  private reader: Promise<Reader | undefined> = Promise.resolve(undefined);
  /** The writer's queue (none for `:memory:`). */
  private writes: WriteQueue | undefined;

  /**
   * @param path a file path (its folder is created) or `:memory:`.
   * @param options.onError told of background errors (a failed pragma or sweep), for logs.
   * @param options.sweepEveryMs ms between sweeps of expired rows (default {@link SWEEP_EVERY_MS}).
   * @param options.firstSweepAfterMs ms from opening to the first sweep (default {@link FIRST_SWEEP_AFTER_MS}).
   * @param options.writeStartWithinMs a write not started this long after it was asked for is not run (default
   *   STORE_DEADLINE_MS: its caller has had its StoreDeadlineError by then); see {@link WriteQueue}.
   */
  constructor(
    path: string,
    options: {
      onError?: (error: unknown) => void;
      sweepEveryMs?: number;
      firstSweepAfterMs?: number;
      writeStartWithinMs?: number;
    } = {},
  ) {
    this.onError = (error) => options.onError?.(error);
    if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
    const file = path === ':memory:' ? `:memory:${Math.random()}` : resolve(path);
    this.chains = CHAINS.get(file) ?? new Map();
    CHAINS.set(file, this.chains);
    const sqlite = new KeyvSqlite({ uri: `sqlite://${path}` });
    this.sqlite = sqlite;
    if (path !== ':memory:') {
      // Write-ahead logging with synchronous=NORMAL (https://sqlite.org/wal.html): a commit
      // appends to the log without an fsync, and readers never wait for the writer. In the
      // default rollback journal every write (a usage counter, a history turn) was an fsync,
      // run on libuv's 4 threads: a burst of 1,000 commands queued its history reads behind
      // 2,000 fsyncs for seconds. A commit survives the process crashing; the last ones may be
      // lost if the machine loses power. Run before any other query on the one connection:
      // node-sqlite3 runs queries in parallel, and a write started beside `journal_mode=WAL`
      // left the file in the rollback journal (SQLITE_BUSY on the pragma), so every other query
      // of this store waits for the two pragmas.
      const query = sqlite.query;
      const pragmas = (async () => {
        for (const pragma of ['PRAGMA journal_mode=WAL', 'PRAGMA synchronous=NORMAL'])
          await query(pragma).catch((error: unknown) => options.onError?.(error));
      })();
      const writes = new WriteQueue(query, options.writeStartWithinMs ?? STORE_DEADLINE_MS);
      this.writes = writes;
      // Reads go through a read-only connection of their own. SQLite holds a connection's mutex
      // for the whole of a statement (and for its preparation), a write's busy wait included: on
      // one connection, a read sent while a write waited for another process's lock waited with
      // it, then again behind the next write (prepare and step are two turns for the mutex), past
      // STORE_DEADLINE_MS: an answer without the history the file still held. Opened once the
      // pragmas ran (the file is in WAL mode, keyv's table exists); in WAL mode each of its reads
      // sees every write whose promise has settled. If it cannot be opened, reads stay on the writer.
      const reader = pragmas.then(() => openReader(file, options.onError));
      this.reader = reader;
      this.opened = reader.then(() => undefined);
      sqlite.query = async (sql, ...parameters) => {
        if (READ_SQL.test(sql)) {
          // The reader is opened once the pragmas ran: waiting for it waits for them.
          const read = await reader;
          return read ? read.all(sql, parameters) : query(sql, ...parameters);
        }
        await pragmas;
        return writes.run(sql, parameters);
      };
    }
    // A burst's reads of single keys go to SQLite together (read-batch.ts).
    this.keyv = coalesceReads(new Keyv({ store: sqlite, namespace: 'genbot', throwOnErrors: true }));
    this.keyv.on('error', (error: unknown) => options.onError?.(error));
    this.scheduleSweep(options.firstSweepAfterMs ?? FIRST_SWEEP_AFTER_MS, options.sweepEveryMs ?? SWEEP_EVERY_MS);
  }

  /**
   * Deletes every expired row now (see {@link SWEEP_SQL}); one sweep at a time.
   * @throws the database's error.
   */
  sweepExpired(): Promise<void> {
    this.sweeping ??= this.sqlite
      .query(SWEEP_SQL, Date.now())
      .then(() => undefined)
      .finally(() => {
        this.sweeping = undefined;
      });
    return this.sweeping;
  }

  /** Runs a sweep after `firstMs`, then every `everyMs`, until close(). */
  private scheduleSweep(firstMs: number, everyMs: number): void {
    const run = (delayMs: number) => {
      this.sweepTimer = setTimeout(() => {
        if (this.closed) return;
        this.sweepExpired()
          .catch((error: unknown) => this.onError(error))
          .finally(() => {
            if (!this.closed) run(everyMs);
          });
      }, delayMs);
      this.sweepTimer.unref();
    };
    run(firstMs);
  }

  setIfAbsent(key: string, ttlMs: number): Promise<boolean> {
    return this.serial(key, async () => {
      if ((await this.keyv.get(key)) !== undefined) return false;
      await this.keyv.set(key, Date.now(), ttlMs);
      return true;
    });
  }

  async release(key: string): Promise<void> {
    await this.serial(key, () => this.keyv.delete(key));
  }

  increment(key: string, by: number, ttlMs: number): Promise<{ value: number; resetInMs: number }> {
    return this.serial(key, async () => {
      const now = Date.now();
      const current = await this.keyv.get<StoredCounter>(key);
      const next: StoredCounter =
        current && current.expiresAt > now
          ? { value: current.value + by, expiresAt: current.expiresAt }
          : { value: by, expiresAt: now + ttlMs };
      await this.keyv.set(key, next, next.expiresAt - now);
      return { value: next.value, resetInMs: next.expiresAt - now };
    });
  }

  async counter(key: string): Promise<{ value: number; resetInMs: number }> {
    const current = await this.keyv.get<StoredCounter>(key);
    const now = Date.now();
    return current && current.expiresAt > now
      ? { value: current.value, resetInMs: current.expiresAt - now }
      : { value: 0, resetInMs: 0 };
  }

  withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.serial(`lock:${key}`, fn);
  }

  async *scanKeys(prefix: string, batchSize = SCAN_BATCH): AsyncIterable<string[]> {
    const from = NAMESPACE + prefix;
    const until = pastPrefix(from);
    let after: string | undefined;
    for (;;) {
      const sql = after === undefined ? SCAN_FIRST_SQL : SCAN_SQL;
      const rows = (await this.sqlite.query(sql, after ?? from, until, batchSize)) as Array<{ key: string }>;
      if (rows.length === 0) return;
      after = rows.at(-1)!.key;
      yield rows.map((row) => row.key.slice(NAMESPACE.length));
      if (rows.length < batchSize) return;
    }
  }

  async deleteKeys(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.sqlite.query(DELETE_KEYS_SQL, JSON.stringify(keys.map((key) => NAMESPACE + key)));
  }

  async ping(): Promise<void> {
    await this.keyv.get('ping');
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.sweepTimer);
    await Promise.allSettled([...this.chains.values(), this.sweeping, this.opened]);
    // Writes asked for before close() but not sent yet go before the connection closes.
    await this.writes?.settled();
    await this.keyv.disconnect();
    await (await this.reader)?.close();
  }

  /** Runs `fn` after every earlier call with the same key has settled. */
  private serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(key) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const settled = run.catch(() => undefined);
    this.chains.set(key, settled);
    void settled.then(() => {
      if (this.chains.get(key) === settled) this.chains.delete(key);
    });
    return run;
  }
}
