/**
 * History retention (HISTORY_RETENTION_DAYS; state/retention.ts) on both backends, SQLite (a file)
 * and Redis (a real redis-server, test/helpers/redis.ts), read back from the store itself: the
 * sweep drops turns older than the retention from a history still in use (and again later, from a
 * history not written since), deletes a history all of whose turns are old, marks the histories
 * written before markers existed (a turn without a time kept, given the sweep's), and records
 * under random ids are written with an expiry within the retention. Times are written in the past
 * and the sweep is told its `now`: nothing waits.
 */
import { describe, expect, it } from 'vitest';
import { storeKeys } from '../../src/core/keys.ts';
import { type FeedbackRecord, keepFeedbackRecord } from '../../src/core/state/feedback.ts';
import { ConversationStore, type StoredMessage } from '../../src/core/state/history.ts';
import { keepOwned } from '../../src/core/state/owned.ts';
import { INDEXED_KEY, setRetention, sweepHistories } from '../../src/core/state/retention.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import { useStoreBackends } from '../helpers/store-backends.ts';

const DAY = 24 * 3_600_000;
const RETENTION = 10 * DAY;

/** Each test a store of its own: a new SQLite file, or the Redis server emptied. */
const backends = useStoreBackends('genbot-retention-');

/** A conversation's turns as the store holds them (its raw value), their texts. */
async function storedTexts(store: StateStore, conversationId: string): Promise<string[] | undefined> {
  const stored = (await store.keyv.get(storeKeys.history(conversationId))) as { messages: StoredMessage[] } | undefined;
  return stored?.messages.map((m) => m.content);
}

async function keysUnder(store: StateStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const batch of store.scanKeys(prefix)) keys.push(...batch);
  return [...new Set(keys)].sort();
}

const turn = (content: string, at: number, role: StoredMessage['role'] = 'user'): StoredMessage => ({
  role,
  content,
  at,
  ...(role === 'user' ? { userId: 'U1' } : {}),
});

describe.each(backends)('retention sweep on %s', (_name, open) => {
  it('drops the turns older than the retention from a history in use, deletes a history all old, marks one written before markers, and trims again later without a write', async () => {
    const store = await open();
    const history = new ConversationStore(store, { retentionMs: RETENTION });
    const now = Date.now();
    const active = 'discord:1001:2001';
    const stale = 'slack:T1:C1';
    const legacy = 'discord:1001:2002';
    await history.append(active, turn('old question', now - 20 * DAY), turn('old answer', now - 20 * DAY, 'assistant'));
    await history.append(active, turn('new question', now - DAY), turn('new answer', now - DAY, 'assistant'));
    await history.append(
      stale,
      turn('stale question', now - 15 * DAY),
      turn('stale answer', now - 15 * DAY, 'assistant'),
    );
    // Written before retention existed: no marker, one turn without a time.
    await store.keyv.set(storeKeys.history(legacy), {
      version: 1,
      messages: [
        turn('ancient', now - 30 * DAY),
        { role: 'user', content: 'timeless', userId: 'U2' },
        turn('recent', now - 3_600_000),
      ],
    });
    expect(await storedTexts(store, active)).toEqual(['old question', 'old answer', 'new question', 'new answer']);

    const counts = await sweepHistories(store, history, { now, batchSize: 2 });
    expect(await storedTexts(store, active)).toEqual(['new question', 'new answer']);
    expect(await storedTexts(store, stale)).toBeUndefined();
    expect(await storedTexts(store, legacy)).toEqual(['timeless', 'recent']);
    expect(counts).toMatchObject({ histories: 3, turns: 5, indexed: 3 });
    expect(counts.batches).toBeGreaterThan(1);
    expect(await store.keyv.get(INDEXED_KEY)).toBe(now);
    // One marker a history left, each naming when its oldest turn passes the retention.
    expect(await keysUnder(store, 'history-due:')).toEqual(
      [
        storeKeys.historyDue(active, now - DAY + RETENTION),
        storeKeys.historyDue(legacy, now - 3_600_000 + RETENTION),
      ].sort(),
    );

    // 9.5 days on, with no write since: the exchange of a day ago is past the retention, the recent turns are not.
    const later = now + 9.5 * DAY;
    const again = await sweepHistories(store, history, { now: later });
    expect(again).toMatchObject({ histories: 1, turns: 2, indexed: 0, markers: 1 });
    expect(await storedTexts(store, active)).toBeUndefined();
    expect(await storedTexts(store, legacy)).toEqual(['timeless', 'recent']);
    // The turn without a time was given the first sweep's: it goes a retention after it.
    const final = await sweepHistories(store, history, { now: now + RETENTION + 1 });
    expect(final.turns).toBe(2);
    expect(await storedTexts(store, legacy)).toBeUndefined();
    expect(await keysUnder(store, 'history-due:')).toEqual([]);
  });

  it('writes histories, feedback records and button states with an expiry within the retention', async () => {
    const store = await open();
    setRetention(store, 2 * DAY);
    const history = new ConversationStore(store, { retentionMs: 2 * DAY });
    const now = Date.now();
    await history.append('discord:1001:2003', turn('hello', now));
    const record: FeedbackRecord = {
      version: 1,
      kind: 'chat',
      command: 'chat',
      model: 'm',
      platform: 'discord',
      channelKey: 'discord:1001:2003',
      conversationId: 'discord:1001:2003',
      requesterId: 'U1',
      at: now,
    };
    await keepFeedbackRecord(store, 'f1', record); // 90 days without a retention
    await keepOwned(store, 'discord:1001', storeKeys.imagineState('i1'), { prompt: 'p' }, 30 * DAY);
    for (const key of [
      storeKeys.history('discord:1001:2003'),
      storeKeys.feedback('f1'),
      storeKeys.owned('discord:1001', storeKeys.feedback('f1')),
      storeKeys.imagineState('i1'),
    ]) {
      const raw = await store.keyv.getRaw(key);
      expect(raw?.expires, key).toBeGreaterThan(now);
      expect(raw?.expires, key).toBeLessThanOrEqual(Date.now() + 2 * DAY);
    }
  });
});
