/**
 * Benchmark: the history cost of one chat turn — load the conversation, then append the
 * question and the answer (what /chat does) — with 10,000 conversations in the store, on
 * SQLite (a file) and on Redis (a redis-server started here on a free port, as the tests do).
 * Each conversation is prefilled with 20 turns of ~400 characters; turns then hit random
 * conversations, one at a time (latency) and 16 at a time (throughput, as concurrent users).
 * Reports p50 / p95 latency per turn (ms) and turns per second. Run: `npm run bench:history`.
 * Environment: BENCH_CONVERSATIONS (10000), BENCH_TURNS (2000), BENCH_CONCURRENCY (16).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConversationStore, type StoredMessage } from '../src/core/state/history.ts';
import { openStore } from '../src/core/state/open-store.ts';
import type { StateStore } from '../src/core/state/store.ts';
import { startRedis } from '../test/helpers/redis.ts';

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 10_000);
const TURNS = Number(process.env.BENCH_TURNS ?? 2_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const PREFILL = 20;
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(9);

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** One turn: load, then append question and answer. Returns its duration in ms. */
async function turn(history: ConversationStore, id: string): Promise<number> {
  const started = performance.now();
  await history.asChatMessages(id);
  const at = Date.now();
  await history.append(id, { role: 'user', content: TEXT, at }, { role: 'assistant', content: TEXT, at });
  return performance.now() - started;
}

async function measure(name: string, store: StateStore): Promise<string> {
  const history = new ConversationStore(store);
  const id = (i: number) => `bench:${i}`;
  const messages: StoredMessage[] = Array.from({ length: PREFILL * 2 }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: TEXT,
    at: i,
  }));
  for (let i = 0; i < CONVERSATIONS; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, CONVERSATIONS - i) }, (_, j) =>
        store.keyv.set(`history:${id(i + j)}`, { version: 1, messages }),
      ),
    );
  }
  const pick = () => id(Math.floor(Math.random() * CONVERSATIONS));
  for (let i = 0; i < 200; i++) await turn(history, pick()); // warm-up
  const sequential: number[] = [];
  for (let i = 0; i < TURNS; i++) sequential.push(await turn(history, pick()));
  sequential.sort((a, b) => a - b);
  const started = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (done < TURNS) {
        done += 1;
        await turn(history, pick());
      }
    }),
  );
  const perSecond = TURNS / ((performance.now() - started) / 1000);
  return `| ${name} | ${percentile(sequential, 50).toFixed(2)} | ${percentile(sequential, 95).toFixed(2)} | ${Math.round(perSecond)} |`;
}

const rows: string[] = [];
const sqlite = await openStore(`sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-bench-')), 'history.sqlite')}`);
try {
  rows.push(await measure('SQLite (file)', sqlite));
} finally {
  await sqlite.close();
}
const redis = await startRedis();
const redisStore = await openStore(redis.url);
try {
  rows.push(await measure('Redis (loopback)', redisStore));
} finally {
  await redisStore.close();
  await redis.stop();
}
process.stdout.write(
  `History load + append per turn, ${CONVERSATIONS} conversations of ${PREFILL} turns, Node ${process.version}:\n\n`,
);
process.stdout.write(
  `| store | p50 ms (one at a time) | p95 ms | turns/s (${CONCURRENCY} at a time) |\n|---|---|---|---|\n${rows.join('\n')}\n`,
);
