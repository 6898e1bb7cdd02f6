/**
 * Catch-up's parts in the core, on a SQLite store: where messages to the bot were seen
 * (state/seen.ts: notes in memory, written together, merged across instances with the newest
 * id winning, forgotten after their TTL), and one catch-up (core/catch-up.ts) over a scripted
 * platform: the age bound and count it reads with, the claims that let one answer win, one
 * read at a time, stopping.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CATCH_UP_PER_CONVERSATION,
  CatchUpRunner,
  type CatchUpSource,
  catchUp,
  claimAnswer,
} from '../../src/core/catch-up.ts';
import { closeCore, createCore } from '../../src/core/core.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import { openLocalStore } from '../../src/core/state/local-state.ts';
import { newerId, type SeenConversation, SeenConversations, seenTtlMs } from '../../src/core/state/seen.ts';
import type { StateStore } from '../../src/core/state/store.ts';

const log = pino({ level: 'silent' });
const stores: StateStore[] = [];
const cores: Array<ReturnType<typeof createCore>> = [];
afterAll(async () => {
  await Promise.allSettled(cores.map(closeCore));
  await Promise.allSettled(stores.map((s) => s.close()));
});

/** A new SQLite store in a folder of its own. */
function newStore(): StateStore {
  const store = openLocalStore(join(mkdtempSync(join(tmpdir(), 'genbot-catch-up-')), 'state.sqlite'));
  stores.push(store);
  return store;
}

/** A core on `store` with catch-up's age bound `minutes`. */
function coreOn(store: StateStore, minutes = 15) {
  const core = createCore({
    // Never called here: no request is sent.
    service: new ServiceClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'unused' }),
    store,
    log,
    defaults: { chat: undefined, image: undefined },
    limits: { catchUpMaxAgeMinutes: minutes },
  });
  cores.push(core);
  return core;
}

describe('newerId', () => {
  it('orders Discord snowflakes and Slack ts as numbers', () => {
    expect(newerId('1300000000000000000', '999999999999999999')).toBe(true);
    expect(newerId('999999999999999999', '1300000000000000000')).toBe(false);
    expect(newerId('1700000000.000200', '1700000000.000100')).toBe(true);
    expect(newerId('1700000000.000100', '1700000000.000100')).toBe(false);
  });
});

describe('SeenConversations', () => {
  it('keeps notes in memory until a flush (listed meanwhile), the newest id of a conversation winning', async () => {
    const store = newStore();
    const seen = new SeenConversations(store, { ttlMs: 60_000, log });
    seen.see('discord', 'discord:G1:C1', '200');
    seen.see('discord', 'discord:G1:C1', '100');
    seen.see('discord', 'discord:dm:D1', '150', { dm: true });
    seen.see('slack', 'slack:T1:C1', '1700000000.000100');
    // Nothing is written before the flush; this process lists its notes anyway.
    expect(await new SeenConversations(store, { ttlMs: 60_000, log }).list('discord')).toEqual([]);
    const listed = await seen.list('discord');
    expect(listed.map((e) => [e.conversation, e.last, e.dm])).toEqual(
      expect.arrayContaining([
        ['discord:G1:C1', '200', undefined],
        ['discord:dm:D1', '150', true],
      ]),
    );
    await seen.flush();
    const other = new SeenConversations(store, { ttlMs: 60_000, log });
    expect((await other.list('discord')).map((e) => e.conversation).sort()).toEqual(['discord:G1:C1', 'discord:dm:D1']);
    expect((await other.list('slack')).map((e) => e.last)).toEqual(['1700000000.000100']);
  });

  it('merges what two instances wrote: the newest id of each conversation, every conversation', async () => {
    const store = newStore();
    const a = new SeenConversations(store, { ttlMs: 60_000, log });
    const b = new SeenConversations(store, { ttlMs: 60_000, log });
    a.see('discord', 'discord:G1:C1', '500');
    b.see('discord', 'discord:G1:C1', '700');
    b.see('discord', 'discord:G1:C2', '10');
    a.see('discord', 'discord:G1:C2', '9');
    await Promise.all([a.flush(), b.flush()]);
    const merged = await new SeenConversations(store, { ttlMs: 60_000, log }).list('discord');
    expect(Object.fromEntries(merged.map((e) => [e.conversation, e.last]))).toEqual({
      'discord:G1:C1': '700',
      'discord:G1:C2': '10',
    });
  });

  it('forgets a conversation its TTL after its last note, and notes nothing when catch-up is off', async () => {
    const store = newStore();
    let now = 1_000_000;
    const seen = new SeenConversations(store, { ttlMs: 60_000, log, now: () => now });
    seen.see('slack', 'slack:T1:C1', '1.000001');
    await seen.flush();
    now += 30_000;
    seen.see('slack', 'slack:T1:C2', '1.000002');
    await seen.flush();
    now += 40_000;
    expect((await seen.list('slack')).map((e) => e.conversation)).toEqual(['slack:T1:C2']);
    const off = new SeenConversations(newStore(), { ttlMs: seenTtlMs(0), log });
    off.see('slack', 'slack:T1:C1', '1.000001');
    expect(off.enabled).toBe(false);
    expect(await off.list('slack')).toEqual([]);
  });
});

/** A scripted platform: conversations' messages by conversation key, ids as numbers in strings. */
function scripted(
  messages: Record<string, Array<{ id: string; addressed: boolean }>>,
  options: { stopAfter?: number } = {},
) {
  const reads: Array<{ conversation: string; after: string; sinceMs: number; limit: number }> = [];
  const answered: string[] = [];
  const reading = { now: 0, most: 0 };
  const source: CatchUpSource<{ conversation: string; id: string }> = {
    platform: 'discord',
    readSpacingMs: 5,
    owns: (entry) => !entry.conversation.endsWith(':elsewhere'),
    read: async (entry: SeenConversation, sinceMs, limit) => {
      reads.push({ conversation: entry.conversation, after: entry.last, sinceMs, limit });
      reading.now += 1;
      reading.most = Math.max(reading.most, reading.now);
      await new Promise((done) => setImmediate(done));
      reading.now -= 1;
      if (entry.conversation.endsWith(':broken')) throw new Error('missing access');
      const after = (messages[entry.conversation] ?? []).filter((m) => newerId(m.id, entry.last));
      return {
        messages: after.filter((m) => m.addressed).map((m) => ({ conversation: entry.conversation, id: m.id })),
        ...(after.length ? { newest: after.at(-1)!.id } : {}),
      };
    },
    claimKey: (m) => `test:${m.conversation}:${m.id}`,
    answer: async (m) => {
      answered.push(m.id);
    },
    stopping: () => options.stopAfter !== undefined && answered.length >= options.stopAfter,
  };
  return { source, reads, answered, reading };
}

describe('catchUp', () => {
  it('reads each owned conversation after its newest seen id within the age bound and count, and answers what addresses the bot, once across instances', async () => {
    const store = newStore();
    const core = coreOn(store, 15);
    for (const [conversation, last] of [
      ['discord:G1:C1', '10'],
      ['discord:G1:C2', '20'],
      ['discord:G1:broken', '1'],
      ['discord:G1:elsewhere', '1'],
    ] as const)
      core.seen.see('discord', conversation, last);
    const script = {
      'discord:G1:C1': [
        { id: '9', addressed: true },
        { id: '11', addressed: true },
        { id: '12', addressed: false },
        { id: '13', addressed: true },
      ],
      'discord:G1:C2': [{ id: '21', addressed: true }],
      'discord:G1:elsewhere': [{ id: '2', addressed: true }],
    };
    const first = scripted(script);
    const now = Date.now();
    const result = await catchUp(core, first.source, log, () => now);
    expect(first.answered.sort()).toEqual(['11', '13', '21']);
    expect(result).toEqual({ conversations: 3, answered: 3, claimedElsewhere: 0, failedReads: 1 });
    expect(first.reads.map((r) => r.conversation).sort()).toEqual([
      'discord:G1:C1',
      'discord:G1:C2',
      'discord:G1:broken',
    ]);
    expect(first.reads.every((r) => r.sinceMs === now - 15 * 60_000 && r.limit === CATCH_UP_PER_CONVERSATION)).toBe(
      true,
    );
    // One read at a time.
    expect(first.reading.most).toBe(1);
    // The newest id read is remembered: a later catch-up reads after it.
    expect((await core.seen.list('discord')).find((e) => e.conversation === 'discord:G1:C1')!.last).toBe('13');

    // Another instance on the same store, its own notes as old as the first's: every message is claimed.
    const other = coreOn(store, 15);
    other.seen.see('discord', 'discord:G1:C1', '10');
    const second = scripted(script);
    const again = await catchUp(other, second.source, log);
    expect(second.answered).toEqual([]);
    expect(again.claimedElsewhere).toBe(2);
    // The live path claims the same key: a message answered by catch-up is not answered live.
    expect(await claimAnswer(core, log, 'test:discord:G1:C1:11')).toBe(false);
  });

  it('stops starting answers once the adapter stops, and does nothing with the age bound at 0', async () => {
    const core = coreOn(newStore(), 15);
    core.seen.see('discord', 'discord:G1:C1', '0');
    const stopping = scripted(
      { 'discord:G1:C1': ['1', '2', '3'].map((id) => ({ id, addressed: true })) },
      { stopAfter: 1 },
    );
    await catchUp(core, stopping.source, log);
    expect(stopping.answered).toEqual(['1']);

    const off = coreOn(newStore(), 0);
    off.seen.see('discord', 'discord:G1:C1', '0');
    const none = scripted({ 'discord:G1:C1': [{ id: '1', addressed: true }] });
    expect(await catchUp(off, none.source, log)).toMatchObject({ conversations: 0, answered: 0 });
    expect(none.reads).toEqual([]);
  });
});

describe('CatchUpRunner', () => {
  it('runs one catch-up at a time: requests while one runs start one more after it', async () => {
    let runs = 0;
    let release: () => void = () => undefined;
    const runner = new CatchUpRunner(async () => {
      runs += 1;
      await new Promise<void>((done) => {
        release = done;
      });
    });
    runner.request();
    runner.request();
    runner.request();
    expect(runs).toBe(1);
    release();
    await expect.poll(() => runs).toBe(2);
    release();
    await runner.idle();
    expect(runs).toBe(2);
  });
});
