/**
 * Records kept under random ids (`answer:<id>`, `feedback:<id>`, `imagine:<id>`…) with a marker
 * naming their workspace (keys.ts `storeKeys.owned`), so that an uninstall finds them by prefix
 * (purge.ts says why markers rather than reading the records).
 */
import { storeKeys } from '../keys.ts';
import { retainedTtl } from './retention.ts';
import type { StateStore } from './store.ts';

/**
 * Keeps `value` under `key` for `ttlMs` (ms; at most the store's retention, retention.ts
 * `retainedTtl`; none: the retention) with its marker for `workspace`
 * (keys.ts `storeKeys.owned`), so that an uninstall finds it. The two writes go together (neither
 * waits for the other); `workspace` undefined (a key that is no conversation's) writes the value alone.
 * @throws the store's error (the value may then be written without its marker: it expires with its TTL).
 */
export async function keepOwned(
  store: StateStore,
  workspace: string | undefined,
  key: string,
  value: unknown,
  ttlMs: number | undefined,
): Promise<void> {
  const ttl = retainedTtl(store, ttlMs);
  const writes: Array<Promise<unknown>> = [store.keyv.set(key, value, ttl)];
  if (workspace) writes.push(store.keyv.set(storeKeys.owned(workspace, key), 1, ttl));
  await Promise.all(writes);
}
