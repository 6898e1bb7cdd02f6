/**
 * Store spans (docs/architecture.md "Tracing"): with tracing on, every call of the state store
 * (its own operations and its keyv's reads and writes) is a span `store.<operation>` in the
 * trace of the invocation that made it, with the backend (`db.system.name`: sqlite or redis)
 * and the key's family (`genbot.store.key_family`: `history`, `claim`…; never the whole key,
 * which names users). Applied by `openStore` only when tracing is on: off, the store is the
 * backend's own object, untouched.
 */
import type { Attributes } from '@opentelemetry/api';
import type Keyv from 'keyv';
import { inSpan } from '../../ops/tracing.ts';
import type { StateStore } from './store.ts';

/** The keyv methods the bot calls (each one store round trip), as deadline.ts patches them. */
const KEYV_CALLS = ['get', 'getMany', 'set', 'delete', 'has'] as const;

/** The part of a key before its first `:` (keys.ts writes every key as `<family>:…`). */
function familyOf(key: unknown): string | undefined {
  const first = Array.isArray(key) ? key[0] : key;
  return typeof first === 'string' ? first.split(':', 1)[0] : undefined;
}

/**
 * `store` with a span around each call: its own operations and its keyv's (patched on the
 * instance, which stays the same object, as deadline.ts does). `scanKeys`, `close` and the
 * shared write budgets are left as they are (a purge's listing, not a user's action).
 */
export function withSpans(store: StateStore): StateStore {
  const system = store.kind;
  const traced = <T>(operation: string, key: unknown, call: () => Promise<T>): Promise<T> => {
    const attributes: Attributes = { 'db.system.name': system, 'db.operation.name': operation };
    const family = familyOf(key);
    if (family) attributes['genbot.store.key_family'] = family;
    return inSpan(`store.${operation}`, attributes, call);
  };
  const keyv = store.keyv as unknown as Record<(typeof KEYV_CALLS)[number], (...args: unknown[]) => Promise<unknown>>;
  for (const name of KEYV_CALLS) {
    const call = keyv[name].bind(store.keyv);
    keyv[name] = (...args: unknown[]) => traced(name, args[0], () => call(...args));
  }
  return {
    kind: store.kind,
    keyv: store.keyv as Keyv,
    ...(store.budgets ? { budgets: store.budgets } : {}),
    setIfAbsent: (key, ttlMs) => traced('setIfAbsent', key, () => store.setIfAbsent(key, ttlMs)),
    release: (key) => traced('release', key, () => store.release(key)),
    increment: (key, by, ttlMs) => traced('increment', key, () => store.increment(key, by, ttlMs)),
    counter: (key) => traced('counter', key, () => store.counter(key)),
    withLock: (key, fn, ttlMs) => traced('withLock', key, () => store.withLock(key, fn, ttlMs)),
    scanKeys: (prefix, batchSize) => store.scanKeys(prefix, batchSize),
    deleteKeys: (keys) => traced('deleteKeys', keys, () => store.deleteKeys(keys)),
    ping: () => traced('ping', undefined, () => store.ping()),
    close: () => store.close(),
  };
}
