/**
 * The factory of the state store: a URL names the backend (store.ts describes what each
 * guarantees), every call of it bounded by a deadline (deadline.ts). Beside the two
 * implementations, so that the interface module imports neither.
 */
import type { StateStore } from './store.ts';

/**
 * Opens the store named by a URL; each of its calls fails with StoreDeadlineError when the
 * backend has not answered within STORE_DEADLINE_MS (deadline.ts). Only the named backend's
 * module is loaded (SQLite's native driver, or the Redis client: ~420 modules), so a
 * deployment does not carry the other in its heap.
 * @param url `sqlite://<path>` (relative paths from the working directory; the folder is
 *   created; `sqlite://:memory:` for a throwaway store) or `redis://host:port` / `rediss://…`.
 * @param options.onError told of background errors (a Redis connection lost), for logs.
 * @throws Error for another scheme.
 */
export async function openStore(
  url: string,
  options: { onError?: (error: unknown) => void } = {},
): Promise<StateStore> {
  if (url.startsWith('sqlite://'))
    return (await import('./local-state.ts')).openLocalStore(url.slice('sqlite://'.length), options);
  if (url.startsWith('redis://') || url.startsWith('rediss://'))
    return (await import('./redis-state.ts')).openRedisStore(url, options);
  throw new Error(`unsupported STORE_URL scheme: ${url.split(':')[0]}`);
}
