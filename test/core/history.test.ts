import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Keyv from 'keyv';
import { ConversationStore } from '../../src/core/state/history.ts';
import { openStore } from '../../src/core/state/store.ts';

const stores: Keyv[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.disconnect()));
});

/** A history on a SQLite file; each also has `close()` for the restart tests. */
function sqliteStore(path: string, maxMessages?: number): ConversationStore & { close(): Promise<void> } {
  const keyv = openStore(`sqlite://${path}`);
  stores.push(keyv);
  return Object.assign(new ConversationStore(keyv, maxMessages ? { maxMessages } : {}), { close: () => keyv.disconnect() });
}

describe('ConversationStore (keyv + SQLite)', () => {
  it('creates the database folder and keeps each conversation apart, across a restart', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'genbot-history-')), 'nested', 'history.sqlite');
    const first = sqliteStore(path);
    await first.append('discord:1:a', { role: 'user', content: 'hi', at: 1 }, { role: 'assistant', content: 'hello', at: 2 });
    await first.append('discord:1:b', { role: 'user', content: 'other', at: 3 });
    await first.close();
    stores.length = 0;
    expect(existsSync(path)).toBe(true);
    const second = sqliteStore(path);
    expect(await second.asChatMessages('discord:1:a')).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ]);
    expect((await second.get('discord:1:b')).map((m) => m.content)).toEqual(['other']);
    expect(await second.get('discord:1:c')).toEqual([]);
  });

  it('serialises concurrent appends to one conversation (none is lost)', async () => {
    const store = sqliteStore(join(mkdtempSync(join(tmpdir(), 'genbot-history-')), 'h.sqlite'));
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.append('c', { role: 'user', content: String(i), at: i })));
    expect((await store.get('c')).map((m) => m.content).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
  });

  it('keeps only the newest maxMessages', async () => {
    const store = sqliteStore(join(mkdtempSync(join(tmpdir(), 'genbot-history-')), 'h.sqlite'), 3);
    for (let i = 0; i < 5; i++) await store.append('c', { role: 'user', content: String(i), at: i });
    expect((await store.get('c')).map((m) => m.content)).toEqual(['2', '3', '4']);
  });

  it('refuses an unknown store scheme', () => {
    expect(() => openStore('mysql://db')).toThrow(/unsupported STORE_URL scheme: mysql/);
  });
});
