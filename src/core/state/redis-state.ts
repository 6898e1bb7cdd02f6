/**
 * The Redis state backend (keyv + @keyv/redis on a node-redis client of our own): several bot
 * processes share it. Claims are `SET NX PX`, counters a Lua `INCRBY` + `PEXPIRE` (one atomic
 * step), locks `SET NX PX` with an owner token released by a compare-and-delete script.
 *
 * The client queues nothing while disconnected (`disableOfflineQueue`): with Redis down every
 * operation fails at once instead of hanging, and the client reconnects in the background.
 */

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import KeyvRedis, { createClient } from '@keyv/redis';
import Keyv from 'keyv';
import { STORE_DEADLINE_MS, withDeadline, withDeadlines } from './deadline.ts';
import { RedisBudgets, type ScriptClient } from './redis-budgets.ts';
import { SCAN_BATCH, type StateStore } from './store.ts';

/** Raw keys (claims, counters, locks) live under this prefix; keyv's values under `genbot::genbot:`. */
const PREFIX = 'genbot:';

const INCREMENT = `
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return { value, redis.call('PTTL', KEYS[1]) }`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/** keyv's values live under `genbot::genbot:<key>` (@keyv/redis's namespace and `::`, then keyv's `genbot:`). */
const VALUE_PREFIX = `${PREFIX}:${PREFIX}`;

/** `text` with Redis's glob characters escaped, to match itself in `SCAN … MATCH`. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/** How long an operation waits for a (re)connection before failing, in ms. */
const READY_WAIT_MS = 1_000;

/**
 * The Redis store at `url` (open-store.ts `openStore` for `redis://` and `rediss://`), each of its
 * calls bounded by STORE_DEADLINE_MS (deadline.ts `withDeadlines`). It connects in the background.
 */
export function openRedisStore(url: string, options: { onError?: (error: unknown) => void } = {}): StateStore {
  return withDeadlines(new RedisState(url, options));
}

/** State in Redis. */
export class RedisState implements StateStore {
  readonly kind = 'redis';
  readonly keyv: Keyv;
  /** The write scheduler's budgets, shared by every process on this Redis (redis-budgets.ts). */
  readonly budgets: RedisBudgets;
  private readonly client: ReturnType<typeof createClient>;
  private closed = false;
  private waiting: Promise<void> | undefined;

  constructor(url: string, options: { onError?: (error: unknown) => void } = {}) {
    this.client = createClient({
      url,
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 5_000,
        reconnectStrategy: (retries: number) => Math.min(100 * 2 ** Math.min(retries, 6), 5_000),
      },
    });
    this.client.on('error', (error: unknown) => options.onError?.(error));
    this.budgets = new RedisBudgets(this.client as unknown as ScriptClient, PREFIX);
    // Connects in the background and keeps reconnecting; operations fail fast meanwhile.
    this.client.connect().catch((error: unknown) => options.onError?.(error));
    const ready = () => this.ready();
    // keyv's reads and writes wait for a connection being made, as the other operations do.
    const store = new (class extends KeyvRedis<unknown> {
      override async getClient() {
        await ready();
        return super.getClient();
      }
    })(this.client, { throwOnErrors: true, throwOnConnectError: false });
    this.keyv = new Keyv({ store, namespace: 'genbot', throwOnErrors: true });
    this.keyv.on('error', () => undefined);
  }

  async setIfAbsent(key: string, ttlMs: number): Promise<boolean> {
    await this.ready();
    return (
      (await this.client.set(PREFIX + key, String(Date.now()), { NX: true, PX: Math.max(1, Math.round(ttlMs)) })) ===
      'OK'
    );
  }

  async release(key: string): Promise<void> {
    await this.ready();
    await this.client.del(PREFIX + key);
  }

  async increment(key: string, by: number, ttlMs: number): Promise<{ value: number; resetInMs: number }> {
    await this.ready();
    const [value, ttl] = (await this.client.eval(INCREMENT, {
      keys: [PREFIX + key],
      arguments: [String(by), String(Math.max(1, Math.round(ttlMs)))],
    })) as [number, number];
    return { value: Number(value), resetInMs: Math.max(0, Number(ttl)) };
  }

  async counter(key: string): Promise<{ value: number; resetInMs: number }> {
    await this.ready();
    const [value, ttl] = await Promise.all([this.client.get(PREFIX + key), this.client.pTTL(PREFIX + key)]);
    return value === null ? { value: 0, resetInMs: 0 } : { value: Number(value), resetInMs: Math.max(0, Number(ttl)) };
  }

  async withLock<T>(key: string, fn: () => Promise<T>, ttlMs = 10_000): Promise<T> {
    await this.ready();
    const lockKey = `${PREFIX}lock:${key}`;
    const token = randomUUID();
    const deadline = Date.now() + ttlMs * 2;
    for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
      const taken = this.client.set(lockKey, token, { NX: true, PX: ttlMs });
      // Each try answers at once unless Redis is stalled (deadline.ts): waiting behind a holder is not bounded here.
      if ((await this.tryLock(taken, lockKey, token)) === 'OK') break;
      if (Date.now() > deadline) throw new Error(`could not take the lock on ${key} within ${ttlMs * 2} ms`);
      await sleep(wait);
    }
    try {
      return await fn();
    } finally {
      await this.client.eval(RELEASE, { keys: [lockKey], arguments: [token] }).catch(() => undefined);
    }
  }

  /**
   * One try at a lock, bounded by STORE_DEADLINE_MS. A try that misses its deadline (a stalled
   * Redis) is still queued on the connection and lands once Redis answers again: the lock it then
   * takes is nobody's, and held for its whole TTL it kept every write of the conversation waiting
   * (an exchange answered just after a 10 s freeze was stored 10 s late, after the next question
   * had been read without it). So a late try that took the lock releases it at once.
   * @throws StoreDeadlineError past the deadline; the store's error.
   */
  private async tryLock(taken: Promise<string | null>, lockKey: string, token: string): Promise<string | null> {
    try {
      return await withDeadline(taken, STORE_DEADLINE_MS, 'withLock');
    } catch (error) {
      taken
        .then((late) =>
          late === 'OK' ? this.client.eval(RELEASE, { keys: [lockKey], arguments: [token] }) : undefined,
        )
        .catch(() => undefined);
      throw error;
    }
  }

  /**
   * One `SCAN` pass with `MATCH genbot:*<prefix>*` (both key spaces: raw `genbot:<key>` and
   * keyv's `genbot::genbot:<key>`; a key holding the prefix further in is dropped here), `COUNT`
   * `batchSize`: each call walks about that many slots of Redis's table, so none blocks it.
   */
  async *scanKeys(prefix: string, batchSize = SCAN_BATCH): AsyncIterable<string[]> {
    await this.ready();
    const match = `${globEscape(PREFIX)}*${globEscape(prefix)}*`;
    for await (const found of this.client.scanIterator({ MATCH: match, COUNT: batchSize })) {
      const keys: string[] = [];
      for (const key of found as string[]) {
        const bare = key.startsWith(VALUE_PREFIX) ? key.slice(VALUE_PREFIX.length) : key.slice(PREFIX.length);
        if (bare.startsWith(prefix)) keys.push(bare);
      }
      if (keys.length) yield keys;
    }
  }

  async deleteKeys(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.ready();
    // UNLINK frees the values in the background: a large answer state does not stall Redis.
    await this.client.unlink(keys.flatMap((key) => [PREFIX + key, VALUE_PREFIX + key]));
  }

  async ping(): Promise<void> {
    await this.ready();
    await this.client.ping();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.client.isReady) await this.client.close();
    else this.client.destroy();
  }

  /**
   * Waits a moment for a connection being (re)made; the operation then fails fast if there is
   * none. Concurrent operations share one wait (one listener on the client, however many wait).
   */
  private ready(): Promise<void> {
    if (this.client.isReady || this.closed) return Promise.resolve();
    this.waiting ??= new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.client.off('ready', done);
        this.waiting = undefined;
        resolve();
      };
      const timer = setTimeout(done, READY_WAIT_MS);
      this.client.once('ready', done);
    });
    return this.waiting;
  }
}
