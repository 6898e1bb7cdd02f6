/**
 * The SQLite state backend (keyv + @keyv/sqlite): one bot process. Claims, counters and locks
 * are atomic within the process (one promise chain per key and file); values persist in the file.
 */
import Keyv from 'keyv';
import KeyvSqlite from '@keyv/sqlite';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { StateStore } from './store.ts';

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

/** State in a SQLite file. */
export class LocalState implements StateStore {
  readonly kind = 'sqlite';
  readonly keyv: Keyv;
  private readonly chains: Map<string, Promise<unknown>>;

  /** @param path a file path (its folder is created) or `:memory:`. */
  constructor(path: string, options: { onError?: (error: unknown) => void } = {}) {
    if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
    const file = path === ':memory:' ? `:memory:${Math.random()}` : resolve(path);
    this.chains = CHAINS.get(file) ?? new Map();
    CHAINS.set(file, this.chains);
    const sqlite = new KeyvSqlite({ uri: `sqlite://${path}` });
    if (path !== ':memory:') {
      // Write-ahead logging with synchronous=NORMAL (https://sqlite.org/wal.html): a commit
      // appends to the log without an fsync, and readers never wait for the writer. In the
      // default rollback journal every write (a usage counter, a history turn) was an fsync,
      // run on libuv's 4 threads: a burst of 1,000 commands queued its history reads behind
      // 2,000 fsyncs for seconds. A commit survives the process crashing; the last ones may be
      // lost if the machine loses power. Issued before any other query, on the one connection.
      for (const pragma of ['PRAGMA journal_mode=WAL', 'PRAGMA synchronous=NORMAL']) {
        sqlite.query(pragma).catch((error: unknown) => options.onError?.(error));
      }
    }
    this.keyv = new Keyv({ store: sqlite, namespace: 'genbot', throwOnErrors: true });
    this.keyv.on('error', (error: unknown) => options.onError?.(error));
  }

  setIfAbsent(key: string, ttlMs: number): Promise<boolean> {
    return this.serial(key, async () => {
      if ((await this.keyv.get(key)) !== undefined) return false;
      await this.keyv.set(key, Date.now(), ttlMs);
      return true;
    });
  }

  increment(key: string, by: number, ttlMs: number): Promise<{ value: number; resetInMs: number }> {
    return this.serial(key, async () => {
      const now = Date.now();
      const current = await this.keyv.get<StoredCounter>(key);
      const next: StoredCounter = current && current.expiresAt > now ? { value: current.value + by, expiresAt: current.expiresAt } : { value: by, expiresAt: now + ttlMs };
      await this.keyv.set(key, next, next.expiresAt - now);
      return { value: next.value, resetInMs: next.expiresAt - now };
    });
  }

  async counter(key: string): Promise<{ value: number; resetInMs: number }> {
    const current = await this.keyv.get<StoredCounter>(key);
    const now = Date.now();
    return current && current.expiresAt > now ? { value: current.value, resetInMs: current.expiresAt - now } : { value: 0, resetInMs: 0 };
  }

  withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.serial(`lock:${key}`, fn);
  }

  async ping(): Promise<void> {
    await this.keyv.get('ping');
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.chains.values()]);
    await this.keyv.disconnect();
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
