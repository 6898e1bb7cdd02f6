/**
 * The factory of the state store: a URL names the backend (store.ts describes what each
 * guarantees), every call of it bounded by a deadline (deadline.ts). Beside the two
 * implementations, so that the interface module imports neither.
 */
import { isTracingStarted } from '../../ops/tracing.ts';
import type { StateStore } from './store.ts';
import { withSpans } from './traced-store.ts';

/**
 * Opens the store named by a URL; each of its calls fails with StoreDeadlineError when the
 * backend has not answered within STORE_DEADLINE_MS (deadline.ts). Only the named backend's
 * module is loaded (SQLite's native driver, or the Redis client: ~420 modules), so a
 * deployment does not carry the other in its heap.
 * @param url `sqlite://<path>` (relative paths from the working directory; the folder is
 *   created; `sqlite://:memory:` for a throwaway store) or `redis://host:port` / `rediss://…`.
 * With tracing on (ops/tracing.ts), each call is also a span (traced-store.ts); off, the store is
 * the backend's own.
 * @param options.onError told of background errors (a Redis connection lost), for logs.
 * @throws Error for another scheme.
 */
export async function openStore(
  url: string,
  options: { onError?: (error: unknown) => void } = {},
): Promise<StateStore> {
  const store = await openBackend(url, options);
  return isTracingStarted() ? withSpans(store) : store;
}

/** The backend a URL names (see {@link openStore}). */
async function openBackend(url: string, options: { onError?: (error: unknown) => void }): Promise<StateStore> {
  if (url.startsWith('sqlite://'))
    return (await import('./local-state.ts')).openLocalStore(url.slice('sqlite://'.length), options);
  if (url.startsWith('redis://') || url.startsWith('rediss://'))
    return (await import('./redis-state.ts')).openRedisStore(url, options);
  throw new Error(`unsupported STORE_URL scheme: ${url.split(':')[0]}`);
}
