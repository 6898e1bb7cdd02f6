/**
 * Shared rate budgets in Redis (budget-store.ts): one Lua script takes slots of several
 * buckets at once, all or none, on Redis's own clock (`TIME`), so that any number of bot
 * processes together keep each bucket's budget. Per bucket (keys.ts `storeKeys.budget*`):
 *
 * - `budget:slots:<bucket>`: a sorted set of the slots granted, each scored with the time it
 *   counts from (its grant plus the take's `countFromMs`: the latest the write may reach the
 *   platform; once the write ended, its end: `settle`); a slot leaves the window `windowMs`
 *   after that (a sliding window);
 * - `budget:state:<bucket>`: a hash of what processes published (`hold`, `slow`, a learnt
 *   budget in force `until`) and the last grant (`last`, for `spacingMs`);
 * - `budget:running:<bucket>`: the writes under way of a concurrency-bound bucket, each scored
 *   with when it is forgotten should its process die first.
 *
 * Scripts run by EVALSHA (EVAL once when the server does not know them yet). With Redis not
 * connected every call throws at once: the client queues nothing (redis-state.ts).
 */
import { createHash } from 'node:crypto';
import { storeKeys } from '../keys.ts';
import type { BucketNews, BudgetStore, SlotSettlement, TakeGrant, TakeRequest } from './budget-store.ts';

/** How long a write under way is counted at most, should its process die before it ends, in ms. */
const RUNNING_MAX_MS = 60_000;
/** How long a take waits before asking again when a concurrency-bound bucket is full, in ms. */
const RUNNING_POLL_MS = 25;

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function keep(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end
`;

const TAKE = `${NOW}
local grant = tonumber(ARGV[1])
local countFrom = tonumber(ARGV[2])
local token = ARGV[3]
local wait = 0
local n = #KEYS / 3
local kept = {}
for i = 0, n - 1 do
  local slots, state, running = KEYS[i * 3 + 1], KEYS[i * 3 + 2], KEYS[i * 3 + 3]
  local a = 4 + i * 4
  local limit, window = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local spacing, conc = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local s = redis.call('HMGET', state, 'until', 'limit', 'window', 'spacing', 'conc', 'hold', 'slow', 'last')
  if tonumber(s[1] or 0) > now then
    limit, window, spacing, conc = tonumber(s[2]), tonumber(s[3]), tonumber(s[4]), tonumber(s[5])
  end
  if tonumber(s[7] or 0) > now then limit = math.max(1, math.floor(limit / 2)) end
  local hold = tonumber(s[6] or 0)
  if hold > now then
    wait = math.max(wait, hold - now)
    grant = 0
  end
  redis.call('ZREMRANGEBYSCORE', slots, '-inf', now - window)
  local free = limit - redis.call('ZCARD', slots)
  if free <= 0 then
    local oldest = redis.call('ZRANGE', slots, 0, 0, 'WITHSCORES')
    wait = math.max(wait, tonumber(oldest[2]) + window - now)
    grant = 0
  elseif free < grant then
    grant = free
  end
  if spacing > 0 then
    grant = math.min(grant, 1)
    local last = tonumber(s[8] or 0)
    if last > 0 and now < last + spacing then
      wait = math.max(wait, last + spacing - now)
      grant = 0
    end
  end
  if conc > 0 then
    redis.call('ZREMRANGEBYSCORE', running, '-inf', now)
    if redis.call('ZCARD', running) >= conc then
      wait = math.max(wait, ${RUNNING_POLL_MS})
      grant = 0
    end
    grant = math.min(grant, 1)
  end
  kept[i] = { window, spacing, conc }
end
if grant <= 0 then return { 0, math.max(1, math.ceil(wait)) } end
for i = 0, n - 1 do
  local slots, state, running = KEYS[i * 3 + 1], KEYS[i * 3 + 2], KEYS[i * 3 + 3]
  local window, spacing, conc = kept[i][1], kept[i][2], kept[i][3]
  for j = 1, grant do redis.call('ZADD', slots, now + countFrom, token .. ':' .. j) end
  keep(slots, window + countFrom + 1000)
  if spacing > 0 then
    redis.call('HSET', state, 'last', now)
    keep(state, spacing + 1000)
  end
  if conc > 0 then
    redis.call('ZADD', running, now + ${RUNNING_MAX_MS}, token)
    keep(running, ${RUNNING_MAX_MS})
  end
end
return { grant, 0 }`;

const PUBLISH = `${NOW}
local state = KEYS[1]
local ms = 1000
if ARGV[1] ~= '' then
  local hold = now + tonumber(ARGV[1])
  if hold > tonumber(redis.call('HGET', state, 'hold') or 0) then redis.call('HSET', state, 'hold', hold) end
  ms = math.max(ms, tonumber(ARGV[1]) + 1000)
end
if ARGV[2] ~= '' then
  local slow = now + tonumber(ARGV[2])
  if slow > tonumber(redis.call('HGET', state, 'slow') or 0) then redis.call('HSET', state, 'slow', slow) end
  ms = math.max(ms, tonumber(ARGV[2]) + 1000)
end
if ARGV[3] ~= '' then
  redis.call('HSET', state, 'until', now + tonumber(ARGV[7]), 'limit', ARGV[3], 'window', ARGV[4],
    'spacing', ARGV[5], 'conc', ARGV[6])
  ms = math.max(ms, tonumber(ARGV[7]) + 1000)
end
keep(state, ms)
return 1`;

const SETTLE = `${NOW}
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now, ARGV[i * 2 - 1])
  keep(KEYS[i], tonumber(ARGV[i * 2]) + 1000)
end
return #KEYS`;

const ANNOUNCE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
keep(KEYS[1], 2 * tonumber(ARGV[2]))
return redis.call('ZCARD', KEYS[1])`;

/** What of a node-redis client the budgets use. */
export interface ScriptClient {
  readonly isReady: boolean;
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  zRem(key: string, member: string): Promise<unknown>;
}

/** A script and its SHA-1 (EVALSHA's name for it). */
interface Script {
  source: string;
  sha: string;
}

const script = (source: string): Script => ({ source, sha: createHash('sha1').update(source).digest('hex') });
const SCRIPTS = { take: script(TAKE), settle: script(SETTLE), publish: script(PUBLISH), announce: script(ANNOUNCE) };

/** Shared budgets on a node-redis client (the store's own). Every method throws when Redis does not answer. */
export class RedisBudgets implements BudgetStore {
  /**
   * @param client the store's node-redis client (`disableOfflineQueue`: calls fail at once while disconnected).
   * @param prefix the prefix of the store's raw keys (`genbot:`).
   */
  constructor(
    private readonly client: ScriptClient,
    private readonly prefix: string,
  ) {}

  async take(request: TakeRequest): Promise<TakeGrant> {
    const keys: string[] = [];
    const args = [String(request.want), String(Math.round(request.countFromMs)), request.token];
    for (const b of request.buckets) {
      keys.push(this.key(storeKeys.budgetSlots(b.bucket)), this.key(storeKeys.budgetState(b.bucket)));
      keys.push(this.key(storeKeys.budgetRunning(b.bucket)));
      args.push(
        String(b.limit),
        String(Math.round(b.windowMs)),
        String(Math.round(b.spacingMs)),
        String(b.concurrency),
      );
    }
    const [granted, waitMs] = (await this.run(SCRIPTS.take, keys, args)) as [number, number];
    return { granted: Number(granted), waitMs: Number(waitMs) };
  }

  async settle(slots: readonly SlotSettlement[]): Promise<void> {
    await this.run(
      SCRIPTS.settle,
      slots.map((s) => this.key(storeKeys.budgetSlots(s.bucket))),
      slots.flatMap((s) => [s.member, String(Math.round(s.windowMs))]),
    );
  }

  async release(buckets: readonly string[], token: string): Promise<void> {
    this.connected();
    await Promise.all(buckets.map((b) => this.client.zRem(this.key(storeKeys.budgetRunning(b)), token)));
  }

  async publish(bucket: string, news: BucketNews): Promise<void> {
    const ms = (n: number | undefined) => (n === undefined ? '' : String(Math.max(1, Math.round(n))));
    const learnt = news.learnt;
    await this.run(
      SCRIPTS.publish,
      [this.key(storeKeys.budgetState(bucket))],
      [
        ms(news.holdMs),
        ms(news.slowMs),
        ...(learnt
          ? [learnt.limit, learnt.windowMs, learnt.spacingMs, learnt.concurrency, learnt.forMs].map((n) =>
              String(Math.round(n)),
            )
          : ['', '', '', '', '']),
      ],
    );
  }

  async announce(instance: string, ttlMs: number): Promise<number> {
    return Number(
      await this.run(SCRIPTS.announce, [this.key(storeKeys.instances())], [instance, String(Math.round(ttlMs))]),
    );
  }

  private key(name: string): string {
    return this.prefix + name;
  }

  /** @throws Error when the client is not connected (nothing waits for Redis). */
  private connected(): void {
    if (!this.client.isReady) throw new Error('the store is not connected');
  }

  /** EVALSHA, or EVAL when the server does not know the script yet (it then does). */
  private async run(s: Script, keys: string[], args: string[]): Promise<unknown> {
    this.connected();
    try {
      return await this.client.evalSha(s.sha, { keys, arguments: args });
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return this.client.eval(s.source, { keys, arguments: args });
    }
  }
}
