/**
 * "First one wins" markers with an expiry, in the shared keyv store: Slack delivers an event
 * again when it thinks the first delivery was not acked (`X-Slack-Retry-Num`), and a message
 * may arrive both as `app_mention` and as `message.im`; whoever claims its key first answers,
 * the others drop it. The key lives in the store, so instances sharing a Redis store agree.
 *
 * Claims made in this process are serialised per key (no two concurrent claims of one key
 * both win). Across processes the check and the write are two store calls, so two instances
 * receiving the same event within a few milliseconds could both win; Slack's retries come
 * seconds apart. (An atomic Redis `SET NX` arrives with the multi-instance work.)
 */
import type Keyv from 'keyv';

/** Claims of keys, e.g. `slack:event:<event_id>`. */
export class Claims {
  private readonly pending = new Map<string, Promise<boolean>>();

  constructor(private readonly keyv: Keyv) {}

  /**
   * Claims `key` for `ttlMs`.
   * @returns true for the first claim of a key within its lifetime, false for every later one.
   * @throws what the store throws (callers decide whether to answer anyway).
   */
  claim(key: string, ttlMs: number): Promise<boolean> {
    const storeKey = `claim:${key}`;
    const previous = this.pending.get(storeKey);
    const attempt = (previous ?? Promise.resolve(false)).catch(() => false).then(async () => {
      if ((await this.keyv.get(storeKey)) !== undefined) return false;
      await this.keyv.set(storeKey, Date.now(), ttlMs);
      return true;
    });
    this.pending.set(storeKey, attempt);
    void attempt.finally(() => {
      if (this.pending.get(storeKey) === attempt) this.pending.delete(storeKey);
    }).catch(() => undefined);
    return attempt;
  }
}
