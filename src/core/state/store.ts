/**
 * The one keyv store behind all state (history, event de-duplication, and later channel
 * settings, button state and quotas): SQLite by default, Redis when several instances share it.
 * Each kind of state keeps its own key prefix (`history:`, `claim:`, …) in the `genbot` namespace.
 */
import Keyv from 'keyv';
import KeyvSqlite from '@keyv/sqlite';
import KeyvRedis from '@keyv/redis';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Opens the keyv store named by a URL.
 * @param url `sqlite://<path>` (relative paths from the working directory; the folder is
 *   created; `sqlite://:memory:` for a throwaway store) or `redis://host:port` / `rediss://…`.
 * @throws Error for another scheme.
 */
export function openStore(url: string): Keyv {
  if (url.startsWith('sqlite://')) {
    const path = url.slice('sqlite://'.length);
    if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
    return new Keyv({ store: new KeyvSqlite({ uri: `sqlite://${path}` }), namespace: 'genbot' });
  }
  if (url.startsWith('redis://') || url.startsWith('rediss://')) {
    return new Keyv({ store: new KeyvRedis(url), namespace: 'genbot' });
  }
  throw new Error(`unsupported STORE_URL scheme: ${url.split(':')[0]}`);
}
