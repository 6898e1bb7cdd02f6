/**
 * Both state backends for tests that must hold on each: `[name, open]` pairs for `describe.each`,
 * each `open()` giving a store of its own (a new SQLite file, or a real redis-server, started once
 * for the file, emptied), every store closed and the server stopped after the file's tests.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { openLocalStore } from '../../src/core/state/local-state.ts';
import { openRedisStore } from '../../src/core/state/redis-state.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import { startRedis, type TestRedis } from './redis.ts';

/** Registers the file's hooks; @returns the SQLite and Redis openers, named. */
export function useStoreBackends(prefix: string): Array<[string, () => Promise<StateStore>]> {
  let redis: TestRedis | undefined;
  const opened: StateStore[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.allSettled(opened.map((s) => s.close()));
    await redis?.stop();
  });
  const track = (store: StateStore): StateStore => {
    opened.push(store);
    return store;
  };
  return [
    ['SQLite', async () => track(openLocalStore(join(mkdtempSync(join(tmpdir(), prefix)), 'state.sqlite')))],
    [
      'Redis',
      async () => {
        const store = track(openRedisStore(redis!.url));
        await store.ping();
        for await (const keys of store.scanKeys('')) await store.deleteKeys(keys);
        return store;
      },
    ],
  ];
}
