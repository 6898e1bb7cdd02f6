/**
 * Listing keys by prefix (store.ts `scanKeys`), deleting them in batches (`deleteKeys`) and
 * purging a workspace (state/purge.ts), on both backends: SQLite (a file) and Redis (a real
 * redis-server on a free port, test/helpers/redis.ts). A purge of one Slack workspace deletes
 * every key naming it and every record its markers name, its catch-up entries and its states on
 * users' lists, and nothing of another workspace or of Discord; its quota and usage counters stay.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/core.ts';
import { listAnswerState } from '../../src/core/features/answer-index.ts';
import { quotaSubject, storeKeys, workspaceKeys } from '../../src/core/keys.ts';
import { castVote, type FeedbackRecord, keepFeedbackRecord } from '../../src/core/state/feedback.ts';
import { StoreHealth } from '../../src/core/state/health.ts';
import { ConversationStore } from '../../src/core/state/history.ts';
import { keepOwned } from '../../src/core/state/owned.ts';
import { purgeWorkspace } from '../../src/core/state/purge.ts';
import { SeenConversations } from '../../src/core/state/seen.ts';
import { SettingsStore } from '../../src/core/state/settings.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import { useStoreBackends } from '../helpers/store-backends.ts';

/** Each test a store of its own: a new SQLite file, or the Redis server emptied. */
const backends = useStoreBackends('genbot-purge-');

async function allKeys(store: StateStore, prefix = '', batchSize?: number): Promise<string[]> {
  const keys: string[] = [];
  for await (const batch of store.scanKeys(prefix, batchSize)) keys.push(...batch);
  return [...new Set(keys)].sort();
}

/** What a workspace's use leaves in the store, through the code that writes it; returns its records' keys. */
async function useWorkspace(store: StateStore, workspace: string, user: string): Promise<string[]> {
  const channel = `${workspace}:C1`;
  const thread = `${channel}:1700000000.000100`;
  const core = { store, storeHealth: new StoreHealth(), limits: { regenerateStatesPerUser: 10 } } as unknown as Core;
  const log = pino({ level: 'silent' });
  await new ConversationStore(store).append(thread, { role: 'user', content: 'secret question', at: 1 });
  await new SettingsStore(store.keyv).update(channel, { systemPrompt: 'Be brief.' });
  const id = `${workspace.replace(/\W/g, '')}answer`;
  await keepOwned(store, workspace, storeKeys.answerState(id), { version: 1, conversationId: thread }, 60_000);
  await listAnswerState(core, log, { id, requesterId: user, conversationId: thread, bytes: 10, mention: `${thread}` });
  await store.setIfAbsent(storeKeys.regenerating(id), 60_000);
  const record: FeedbackRecord = {
    version: 1,
    kind: 'chat',
    command: 'chat',
    model: 'm',
    platform: workspace.startsWith('slack') ? 'slack' : 'discord',
    channelKey: channel,
    conversationId: thread,
    requesterId: user,
    at: 1,
  };
  const feedback = `${id}fb`;
  await keepFeedbackRecord(store, feedback, record);
  await castVote(store, feedback, record, user, 'up');
  await keepOwned(store, workspace, storeKeys.imagineState(`${id}img`), { requesterId: user }, 60_000);
  await store.keyv.set(storeKeys.forgotten(thread), 1, 60_000);
  const platform = workspace.startsWith('slack') ? 'slack' : 'discord';
  await store.increment(storeKeys.quota('chat', quotaSubject(platform, user, channel)), 1, 60_000);
  await store.increment(storeKeys.usage('chat', channel), 1, 60_000);
  if (workspace.startsWith('slack')) {
    const team = workspace.split(':')[1]!;
    await store.keyv.set(storeKeys.viewedChannel(team, user), 'C1');
    await store.keyv.set(storeKeys.mentionAnswer(`${thread}`), { id }, 60_000);
    await store.setIfAbsent(storeKeys.claim(`slack:message:${team}:C1:1`), 60_000);
  }
  const seen = new SeenConversations(store, { ttlMs: 60_000, log });
  seen.see(workspace.startsWith('slack') ? 'slack' : 'discord', thread, '1700000000.000100');
  await seen.flush();
  return [
    storeKeys.answerState(id),
    storeKeys.regenerating(id),
    storeKeys.feedback(feedback),
    storeKeys.feedbackVote(feedback, user),
    storeKeys.imagineState(`${id}img`),
  ];
}

describe.each(backends)('%s store', (_name, open) => {
  it('scanKeys lists every key with the prefix, in batches, values and claims alike, the prefix read literally', async () => {
    const store = await open();
    for (let i = 0; i < 25; i++) await store.keyv.set(`history:slack:T1:C${String(i).padStart(2, '0')}`, [i]);
    await store.setIfAbsent('claim:slack:message:T1:C:1', 60_000);
    await store.keyv.set('history:slack:T1', 'the prefix itself');
    await store.keyv.set('history:slack:T10:C1', 'another team');
    await store.keyv.set('a*b', 1);
    await store.keyv.set('axxb', 1);
    const batches: string[][] = [];
    for await (const batch of store.scanKeys('history:slack:T1:', 4)) batches.push(batch);
    expect(batches.length).toBeGreaterThan(1);
    const listed = [...new Set(batches.flat())].sort();
    expect(listed).toHaveLength(25);
    expect(listed.every((k) => k.startsWith('history:slack:T1:'))).toBe(true);
    expect(await allKeys(store, 'history:slack:T1')).toContain('history:slack:T1');
    expect(await allKeys(store, 'claim:')).toEqual(['claim:slack:message:T1:C:1']);
    expect(await allKeys(store, 'a*')).toEqual(['a*b']);
    expect(await allKeys(store, 'nothing:')).toEqual([]);
    await store.deleteKeys(['claim:slack:message:T1:C:1', 'history:slack:T1:C00', 'never:written']);
    expect(await store.setIfAbsent('claim:slack:message:T1:C:1', 60_000)).toBe(true);
    expect(await store.keyv.get('history:slack:T1:C00')).toBeUndefined();
  });

  it("purges one Slack workspace's keys and records, its catch-up entries and its states on users' lists; keeps its counters, another workspace's and Discord's keys", async () => {
    const store = await open();
    const records = await useWorkspace(store, 'slack:T1', 'U1');
    await useWorkspace(store, 'slack:T2', 'U2');
    await useWorkspace(store, 'discord:G1', 'U3');
    const before = await allKeys(store);
    const mine = before.filter((k) => k.includes('T1') && !/^(quota|usage):/.test(k));
    expect(mine.length).toBeGreaterThan(8);
    expect(before).toEqual(expect.arrayContaining(records));

    const counts = await purgeWorkspace(store, 'slack:T1', { batchSize: 3 });
    expect(counts).toMatchObject({ records: 4, seen: 1 });
    expect(counts.batches).toBeGreaterThan(3);
    const after = await allKeys(store);
    expect(after.filter((k) => k.includes('T1') && !/^(quota|usage):/.test(k))).toEqual([]);
    expect(after.filter((k) => records.includes(k))).toEqual([]);
    // Everything else is as it was (the user list of U1 is gone with its one state; the seen map stays for the others).
    expect(after).toEqual(
      before.filter(
        (k) => !mine.includes(k) && !records.includes(k) && k !== storeKeys.userAnswerStates('slack:T1:U1'),
      ),
    );
    expect(await store.counter(storeKeys.quota('chat', 'slack:T1:U1'))).toMatchObject({ value: 1 });
    expect(await store.counter(storeKeys.usage('chat', 'slack:T1:C1'))).toMatchObject({ value: 1 });
    const seen = await store.keyv.get<{ conversations: Record<string, unknown> }>(storeKeys.seenConversations('slack'));
    expect(Object.keys(seen!.conversations).sort()).toEqual(['slack:T2:C1:1700000000.000100']);
    expect(
      (await store.keyv.get<{ states: unknown[] }>(storeKeys.userAnswerStates('slack:T2:U2')))?.states,
    ).toHaveLength(1);

    // Idempotent: a second purge finds nothing.
    expect(await purgeWorkspace(store, 'slack:T1')).toMatchObject({ records: 0, seen: 0 });
    expect(await allKeys(store)).toEqual(after);
  });
});

describe('workspaceKeys', () => {
  it("names a Slack workspace's prefixes and nothing of its counters, another team or Discord", () => {
    const { prefixes, keys } = workspaceKeys('slack:T1');
    const of = (key: string) => prefixes.some((p) => key.startsWith(p)) || keys.includes(key);
    expect(of(storeKeys.history('slack:T1:C1:1.2'))).toBe(true);
    expect(of(storeKeys.settingsChannels('slack:T1'))).toBe(true);
    expect(of(storeKeys.owned('slack:T1', storeKeys.feedback('x')))).toBe(true);
    expect(of(storeKeys.claim('edit:slack:T1:C1:1.2:5'))).toBe(true);
    expect(of(storeKeys.quota('chat', 'slack:T1:U1'))).toBe(false);
    expect(of(storeKeys.usage('chat', 'slack:T1:C1'))).toBe(false);
    expect(of(storeKeys.history('slack:T10:C1'))).toBe(false);
    expect(of(storeKeys.history('discord:T1:C1'))).toBe(false);
  });
});
