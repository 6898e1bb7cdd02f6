/**
 * Benchmark: purging an uninstalled workspace (core/state/purge.ts) with BENCH_PURGE_KEYS keys of
 * its own (default 100,000: histories, settings, mention links, and records under random ids with
 * their markers, a quarter each) beside BENCH_OTHER_KEYS keys of another workspace (100,000), on
 * SQLite (a file) and on Redis (a redis-server started here, as the tests do). While the purge
 * runs, another workspace's history is read and appended to every 5 ms (what an answer elsewhere
 * does), and the event loop's delay is sampled (`monitorEventLoopDelay`, 10 ms resolution).
 * Reports the purge's time and keys a second, the loop delay's p50 / p99 / max, and the latency of
 * the other workspace's turns meanwhile (p50 / p95 / max). Run: `npm run bench:purge`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeKeys } from '../src/core/keys.ts';
import { ConversationStore } from '../src/core/state/history.ts';
import { openStore } from '../src/core/state/open-store.ts';
import { keepOwned } from '../src/core/state/owned.ts';
import { purgeWorkspace } from '../src/core/state/purge.ts';
import type { StateStore } from '../src/core/state/store.ts';
import { startRedis } from '../test/helpers/redis.ts';
import { BENCH_TURN_TEXT, besideTurns } from './beside-turns.ts';

const PURGE_KEYS = Number(process.env.BENCH_PURGE_KEYS ?? 100_000);
const OTHER_KEYS = Number(process.env.BENCH_OTHER_KEYS ?? 100_000);

/** Writes `count` keys of `team`'s workspace, 256 at a time. */
async function fill(store: StateStore, team: string, count: number): Promise<void> {
  const workspace = `slack:${team}`;
  for (let i = 0; i < count; i += 256) {
    const writes: Array<Promise<unknown>> = [];
    for (let j = i; j < Math.min(count, i + 256); j++) {
      const conversation = `${workspace}:C${j % 500}:${j}.000100`;
      const kind = j % 4;
      if (kind === 0)
        writes.push(store.keyv.set(storeKeys.history(conversation), [{ role: 'user', content: BENCH_TURN_TEXT }]));
      else if (kind === 1) writes.push(store.keyv.set(storeKeys.settings(`${workspace}:C${j}`), { notify: false }));
      else if (kind === 2)
        writes.push(store.keyv.set(storeKeys.mentionAnswer(conversation), { id: `${j}` }, 3_600_000));
      // A record and its marker: two keys.
      else
        writes.push(
          keepOwned(store, workspace, storeKeys.feedback(`${team}${j}`), { channelKey: conversation }, 3_600_000),
        );
    }
    await Promise.all(writes);
  }
}

async function measure(name: string, store: StateStore): Promise<string> {
  await fill(store, 'TGONE', PURGE_KEYS);
  await fill(store, 'TSTAYS', OTHER_KEYS);
  const history = new ConversationStore(store);
  const { result: counts, line } = await besideTurns(history, 'TSTAYS', () => purgeWorkspace(store, 'slack:TGONE'));
  return [
    `${name}: purged ${counts.keys} keys (${counts.records} records) in ${counts.ms} ms`,
    `(${Math.round((counts.keys / Math.max(1, counts.ms)) * 1000)} keys/s, ${counts.batches} batches);`,
    line,
  ].join(' ');
}

const lines: string[] = [];
const sqlite = await openStore(`sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-bench-purge-')), 'state.sqlite')}`);
lines.push(await measure('SQLite', sqlite));
await sqlite.close();
const redis = await startRedis();
try {
  const store = await openStore(redis.url);
  lines.push(await measure('Redis', store));
  await store.close();
} finally {
  await redis.stop();
}
console.log(`purge bench: ${PURGE_KEYS} keys of the uninstalled workspace, ${OTHER_KEYS} of another`);
for (const line of lines) console.log(line);
