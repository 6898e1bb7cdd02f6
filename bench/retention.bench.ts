/**
 * Benchmark: the history retention's sweep (core/state/retention.ts) on a store of
 * BENCH_RETENTION_HISTORIES histories (default 50,000, each 20 turns of ~200 characters with its
 * retention marker), of which BENCH_RETENTION_DUE (default 10,000) hold turns past the retention,
 * on SQLite (a file) and on Redis (a redis-server started here, as the tests do). Two sweeps: the
 * first of a store written before markers (every history read once and marked, the due ones
 * trimmed), then a sweep as every hour's is (every marker listed, none due: no history read). While each runs, another
 * conversation is read and appended to every 5 ms (what an answer does), and the event loop's delay
 * is sampled (`monitorEventLoopDelay`, 10 ms resolution). Reports each sweep's time and counts, the
 * loop delay's p50 / p99 / max, and the latency of the turns meanwhile (p50 / p95 / max).
 * Run: `npm run bench:retention`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeKeys } from '../src/core/keys.ts';
import { ConversationStore, DEFAULT_RETENTION_MS, type StoredMessage } from '../src/core/state/history.ts';
import { openStore } from '../src/core/state/open-store.ts';
import { INDEXED_KEY, sweepHistories } from '../src/core/state/retention.ts';
import type { StateStore } from '../src/core/state/store.ts';
import { startRedis } from '../test/helpers/redis.ts';
import { BENCH_TURN_TEXT, besideTurns } from './beside-turns.ts';

const HISTORIES = Number(process.env.BENCH_RETENTION_HISTORIES ?? 50_000);
const DUE = Number(process.env.BENCH_RETENTION_DUE ?? 10_000);
const DAY = 24 * 3_600_000;

/** Writes the histories (the first DUE with their oldest 10 turns past the retention), 256 at a time, without markers. */
async function fill(store: StateStore, now: number): Promise<void> {
  for (let i = 0; i < HISTORIES; i += 256) {
    const writes: Array<Promise<unknown>> = [];
    for (let j = i; j < Math.min(HISTORIES, i + 256); j++) {
      const old = j < DUE;
      const messages: StoredMessage[] = Array.from({ length: 20 }, (_, t) => ({
        role: t % 2 ? 'assistant' : 'user',
        content: BENCH_TURN_TEXT,
        at: now - (old && t < 10 ? DEFAULT_RETENTION_MS + DAY : DAY),
      }));
      writes.push(store.keyv.set(storeKeys.history(`discord:${j % 100}:${j}`), { version: 1, messages }));
    }
    await Promise.all(writes);
  }
}

/** One sweep at `now` with turns elsewhere meanwhile: its line. */
async function measure(name: string, store: StateStore, history: ConversationStore, now: number): Promise<string> {
  const { result: counts, line } = await besideTurns(history, 'TBENCH', () => sweepHistories(store, history, { now }));
  return [
    `${name}: ${counts.ms} ms (${counts.indexed} histories marked, ${counts.markers} markers due,`,
    `${counts.histories} histories trimmed of ${counts.turns} turns, ${counts.batches} batches);`,
    line,
  ].join(' ');
}

async function run(name: string, store: StateStore): Promise<string[]> {
  const now = Date.now();
  await fill(store, now);
  await store.keyv.delete(INDEXED_KEY);
  const history = new ConversationStore(store);
  const first = await measure(`${name}, first sweep (no markers yet)`, store, history, now);
  // Two days later, as an hourly sweep: every history's marker listed, none due (none read).
  const hourly = await measure(`${name}, a sweep with markers`, store, history, now + 2 * DAY);
  return [first, hourly];
}

const lines: string[] = [];
const sqlite = await openStore(`sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-bench-retention-')), 's.sqlite')}`);
lines.push(...(await run('SQLite', sqlite)));
await sqlite.close();
const redis = await startRedis();
try {
  const store = await openStore(redis.url);
  lines.push(...(await run('Redis', store)));
  await store.close();
} finally {
  await redis.stop();
}
console.log(`retention bench: ${HISTORIES} histories of 20 turns, ${DUE} with turns past the retention`);
for (const line of lines) console.log(line);
