/**
 * Channel settings kept in memory: one store read serves repeated and concurrent callers for
 * the cache time, this instance's updates apply at once, another instance's after the cache
 * time, updates merge onto what the store holds, and a read that raced an update is not kept.
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openLocalStore } from '../../src/core/state/local-state.ts';
import { SettingsStore } from '../../src/core/state/settings.ts';
import type { StateStore } from '../../src/core/state/store.ts';

const stores: StateStore[] = [];
afterAll(async () => {
  await Promise.allSettled(stores.map((s) => s.close()));
});

function store(): StateStore {
  const opened = openLocalStore(join(mkdtempSync(join(tmpdir(), 'genbot-settings-')), 's.sqlite'));
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
