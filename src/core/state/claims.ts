/**
 * "First one wins" markers with an expiry, in the shared state store: Slack delivers an event
 * again when it thinks the first delivery was not acked (`X-Slack-Retry-Num`), and a message
 * may arrive both as `app_mention` and as `message.im`; whoever claims its key first answers,
 * the others drop it. On Redis a claim is one `SET NX PX`, so instances behind one load
 * balancer agree; on SQLite it is atomic within the one process.
 */

import { storeKeys } from '../keys.ts';
import type { StateStore } from './store.ts';

/** Claims of keys, e.g. `slack:event:<event_id>`. */
export class Claims {
  constructor(private readonly state: StateStore) {}

  /**
   * Claims `key` for `ttlMs`.
   * @returns true for the first claim of a key within its lifetime, false for every later one.
   * @throws the store's error (callers decide whether to answer anyway).
   */
  claim(key: string, ttlMs: number): Promise<boolean> {
    return this.state.setIfAbsent(storeKeys.claim(key), ttlMs);
  }
}
