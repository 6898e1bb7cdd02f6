/**
 * The factory of the state store: a URL names the backend (store.ts describes what each
 * guarantees), every call of it bounded by a deadline (deadline.ts). Beside the two
 * implementations, so that the interface module imports neither.
 */
import { withDeadlines } from './deadline.ts';
import { LocalState } from './local-state.ts';
import { RedisState } from './redis-state.ts';
import type { StateStore } from './store.ts';

/**
 * Opens the store named by a URL; each of its calls fails with StoreDeadlineError when the
 * backend has not answered within STORE_DEADLINE_MS (deadline.ts).
 * @param url `sqlite://<path>` (relative paths from the working directory; the folder is
 *   created; `sqlite://:memory:` for a throwaway store) or `redis://host:port` / `rediss://…`.
 * @param options.onError told of background errors (a Redis connection lost), for logs.
 * @throws Error for another scheme.
 */
export function openStore(url: string, options: { onError?: (error: unknown) => void } = {}): StateStore {
  if (url.startsWith('sqlite://')) return withDeadlines(new LocalState(url.slice('sqlite://'.length), options));
  if (url.startsWith('redis://') || url.startsWith('rediss://')) return withDeadlines(new RedisState(url, options));
  throw new Error(`unsupported STORE_URL scheme: ${url.split(':')[0]}`);
}
