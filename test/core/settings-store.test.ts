/**
 * Channel settings kept in memory: one store read serves repeated and concurrent callers for
 * the cache time, this instance's updates apply at once, another instance's after the cache
 * time, updates merge onto what the store holds, and a read that raced an update is not kept.
 * The index: with each workspace's list complete, a channel not listed costs no read of its own;
 * a store written before the lists were kept is scanned once (SQLite and Redis); a list that
 * overflowed is not trusted.
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { storeKeys } from '../../src/core/keys.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import { LISTED_CHANNELS, SettingsStore } from '../../src/core/state/settings.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

const stores: StateStore[] = [];
afterAll(async () => {
  await Promise.allSettled(stores.map((s) => s.close()));
});

function store(): StateStore {
  const opened = openStore(`sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-settings-')), 's.sqlite')}`);
  stores.push(opened);
  return opened;
}

describe('SettingsStore', () => {
  it('reads a channel once for repeated and concurrent callers within the cache time, then again', async () => {
    const state = store();
    await state.keyv.set('settings:c1', { chatModel: 'm1' });
    const reads = vi.spyOn(state.keyv, 'get');
    const settings = new SettingsStore(state.keyv, 200);
    const all = await Promise.all(Array.from({ length: 5 }, () => settings.get('c1')));
    expect(all).toEqual(Array(5).fill({ chatModel: 'm1' }));
    expect(await settings.get('c1')).toEqual({ chatModel: 'm1' });
    expect(reads).toHaveBeenCalledTimes(1);
    await new Promise((resolve) => setTimeout(resolve, 250));
    await settings.get('c1');
    expect(reads).toHaveBeenCalledTimes(2);
    // What a caller does with its copy does not change what others get.
    const copy = await settings.get('c1');
    copy.chatModel = 'changed';
    expect(await settings.get('c1')).toEqual({ chatModel: 'm1' });
  });

  it("applies its own update at once, another instance's after the cache time, and merges updates onto what the store holds", async () => {
    const state = store();
    const a = new SettingsStore(state.keyv, 200);
    const b = new SettingsStore(state.keyv, 200);
    expect(await a.get('c2')).toEqual({});
    expect(await b.get('c2')).toEqual({});
    await b.update('c2', { chatModel: 'from-b' });
    expect(await b.get('c2')).toEqual({ chatModel: 'from-b' });
    expect(await a.get('c2')).toEqual({});
    // A's update starts from the store (B's model), not from what A remembers.
    expect(await a.update('c2', { systemPrompt: 'Be brief.' })).toEqual({
      chatModel: 'from-b',
      systemPrompt: 'Be brief.',
    });
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await b.get('c2')).toEqual({ chatModel: 'from-b', systemPrompt: 'Be brief.' });
  });

  it('does not keep a read that was under way when the settings changed', async () => {
    const state = store();
    await state.keyv.set('settings:c3', { chatModel: 'old' });
    const settings = new SettingsStore(state.keyv, 60_000);
    const get = state.keyv.get.bind(state.keyv);
    // The first read is slow: the update lands while it is under way.
    const slowRead = async (key: string) => {
      const value = await get(key);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return value;
    };
    vi.spyOn(state.keyv, 'get').mockImplementationOnce(slowRead as typeof state.keyv.get);
    const racing = settings.get('c3');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await settings.update('c3', { chatModel: 'new' });
    expect(await racing).toEqual({ chatModel: 'old' });
    expect(await settings.get('c3')).toEqual({ chatModel: 'new' });
  });

  it("lists each workspace's channels that hold settings, newest change last, and drops a channel reset to nothing", async () => {
    const settings = new SettingsStore(store().keyv);
    await settings.update('slack:T1:C1', { chatModel: 'm1' });
    await settings.update('slack:T1:C2', { systemPrompt: 'Be brief.' });
    await settings.update('slack:T2:C3', { imageModel: 'img' });
    await settings.update('discord:G1:42', { chatModel: 'm2' });
    // A second change of a listed channel keeps its place.
    await settings.update('slack:T1:C1', { visionModel: 'v1' });
    expect(await settings.channelsWithSettings('slack:T1')).toEqual(['slack:T1:C1', 'slack:T1:C2']);
    expect(await settings.channelsWithSettings('slack:T2')).toEqual(['slack:T2:C3']);
    expect(await settings.channelsWithSettings('discord:G1')).toEqual(['discord:G1:42']);
    await settings.update('slack:T1:C1', { chatModel: undefined, visionModel: undefined });
    expect(await settings.channelsWithSettings('slack:T1')).toEqual(['slack:T1:C2']);
    expect(await settings.channelsWithSettings('slack:T9')).toEqual([]);
  });
});

describe('SettingsStore index', () => {
  let redis: TestRedis | undefined;
  afterAll(async () => {
    await redis?.stop();
  });

  it('a channel not in its complete workspace list has no settings and costs no read of its own; a listed one is read', async () => {
    const state = store();
    const settings = new SettingsStore(state.keyv, 10_000, state);
    await settings.indexing;
    await settings.update('discord:G1:1', { chatModel: 'm1' });
    const fresh = new SettingsStore(state.keyv, 10_000, state);
    await fresh.indexing;
    const reads = vi.spyOn(state.keyv, 'get');
    const channels = Array.from({ length: 200 }, (_, i) => `discord:G1:${i + 2}`);
    const all = await Promise.all(channels.map((c) => fresh.get(c)));
    expect(all).toEqual(Array(200).fill({}));
    // One read of the guild's list for 200 channels.
    expect(reads.mock.calls.map(([key]) => key)).toEqual([storeKeys.settingsChannels('discord:G1')]);
    expect(await fresh.get('discord:G1:1')).toEqual({ chatModel: 'm1' });
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it('another instance: a channel it lists, and settings it clears, are seen after the cache time', async () => {
    const state = store();
    const a = new SettingsStore(state.keyv, 200, state);
    const b = new SettingsStore(state.keyv, 200, state);
    await Promise.all([a.indexing, b.indexing]);
    expect(await b.get('slack:T1:C1')).toEqual({});
    await a.update('slack:T1:C1', { systemPrompt: 'Be brief.' });
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await b.get('slack:T1:C1')).toEqual({ systemPrompt: 'Be brief.' });
    await a.update('slack:T1:C1', { systemPrompt: undefined });
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await b.get('slack:T1:C1')).toEqual({});
  });

  it('two instances listing channels of one workspace at once keep both', async () => {
    const state = store();
    const a = new SettingsStore(state.keyv, 10_000, state);
    const b = new SettingsStore(state.keyv, 10_000, state);
    await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => a.update(`slack:T1:A${i}`, { chatModel: 'm' })),
      ...Array.from({ length: 10 }, (_, i) => b.update(`slack:T1:B${i}`, { chatModel: 'm' })),
    ]);
    expect((await a.channelsWithSettings('slack:T1')).length).toBe(20);
  });

  it.each([
    ['SQLite', async () => store()],
    [
      'Redis',
      async () => {
        redis ??= await startRedis();
        const opened = openStore(redis.url);
        stores.push(opened);
        return opened;
      },
    ],
  ])(
    '%s: a store written before the lists were kept is scanned once; its channels keep their settings',
    async (_name, open) => {
      const state = await open();
      const tag = `G${Date.now()}`;
      // Settings as an older bot wrote them: no list, no index mark.
      await state.keyv.set(storeKeys.settings(`discord:${tag}:1`), { chatModel: 'old' });
      await state.keyv.set(storeKeys.settings(`slack:${tag}:C9`), { imageModel: 'img' });
      await state.keyv.delete(storeKeys.settingsIndexed());
      expect(await state.listKeys(storeKeys.settings(`discord:${tag}:`))).toEqual([
        storeKeys.settings(`discord:${tag}:1`),
      ]);
      const settings = new SettingsStore(state.keyv, 10_000, state);
      await settings.indexing;
      expect(await settings.channelsWithSettings(`discord:${tag}`)).toEqual([`discord:${tag}:1`]);
      expect(await settings.get(`discord:${tag}:1`)).toEqual({ chatModel: 'old' });
      expect(await settings.get(`slack:${tag}:C9`)).toEqual({ imageModel: 'img' });
      expect(await settings.get(`discord:${tag}:2`)).toEqual({});
      expect(await state.keyv.get(storeKeys.settingsIndexed())).toBe(true);
    },
  );

  it('a list that overflowed is not trusted: every channel of that workspace is read', async () => {
    const state = store();
    const settings = new SettingsStore(state.keyv, 10_000, state);
    await settings.indexing;
    const many = Array.from({ length: LISTED_CHANNELS + 1 }, (_, i) => `discord:G7:${i}`);
    await state.keyv.set(storeKeys.settingsChannels('discord:G7'), many.slice(1));
    // The oldest channel drops out of the list as the next is added.
    await state.keyv.set(storeKeys.settings(many[0]!), { chatModel: 'dropped' });
    await settings.update(`discord:G7:${LISTED_CHANNELS + 5}`, { chatModel: 'new' });
    const fresh = new SettingsStore(state.keyv, 10_000, state);
    await fresh.indexing;
    expect((await fresh.channelsWithSettings('discord:G7')).length).toBe(LISTED_CHANNELS);
    expect(await fresh.get(many[0]!)).toEqual({ chatModel: 'dropped' });
  });
});
