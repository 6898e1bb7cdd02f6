/**
 * Per-user quotas on both state backends: the N+1th request in a window is refused with the
 * time to wait, the window rolls over, two instances sharing Redis enforce one quota, admins
 * are exempt unless QUOTA_ADMINS, and tokens come from the service's usage or an estimate.
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import chatCommand from '../../commands/chat.ts';
import imagineCommand from '../../commands/imagine.ts';
import usageCommand from '../../commands/usage.ts';
import { runCommand } from '../../src/core/command.ts';
import { type Core, closeCore, createCore } from '../../src/core/core.ts';
import { english } from '../../src/core/i18n/words.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import { openLocalStore } from '../../src/core/state/local-state.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import { COUNT_FLUSH_MS, QuotaError, type QuotaLimits, Quotas, waitIn } from '../../src/core/state/quotas.ts';
import { openRedisStore } from '../../src/core/state/redis-state.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import { FakeService } from '../fakes/service.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { recorder } from './recorder.ts';

const silent = pino({ level: 'silent' });
let redis: TestRedis;
let fake: FakeService;
let service: ServiceClient;
const stores: StateStore[] = [];
beforeAll(async () => {
  redis = await startRedis();
  fake = await FakeService.start();
  service = new ServiceClient({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, backoffBaseMs: 1 });
});
beforeEach(() => fake.reset());
afterAll(async () => {
  await Promise.allSettled(stores.map((s) => s.close()));
  await service.close();
  await fake.close();
  await redis.stop();
});

const user = (admin = false) => ({
  id: 'u1',
  name: 'ada',
  isAdmin: async () => admin,
  canManageMessages: async () => admin,
});
const limits = (over: Partial<QuotaLimits>): QuotaLimits => ({
  chatPerMinute: 0,
  imagesPerDay: 0,
  tokensPerDay: 0,
  admins: false,
  ...over,
});

function sqlite(): StateStore {
  const store = openLocalStore(join(mkdtempSync(join(tmpdir(), 'genbot-quota-')), 's.sqlite'));
  stores.push(store);
  return store;
}
function redisStore(): StateStore {
  const store = openRedisStore(redis.url);
  stores.push(store);
  return store;
}

describe('Quotas', () => {
  it.each([
    ['SQLite', sqlite],
    ['Redis', redisStore],
  ])(
    'on %s refuses the N+1th chat request in the window with the wait, and lets one through when it rolls over',
    async (_name, open) => {
      const quotas = new Quotas(open(), limits({ chatPerMinute: 3 }), silent, { minuteMs: 400 });
      const subject = `discord:${Math.random()}`;
      for (let i = 0; i < 3; i++) await quotas.admit('chat', subject, user(), 'discord:g:c');
      const refused = await quotas.admit('chat', subject, user(), 'discord:g:c').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(QuotaError);
      expect((refused as QuotaError).message).toMatch(
        /^You have reached your limit of 3 chat requests a minute\. Try again in 1 s\.$/,
      );
      expect((refused as QuotaError).retryInMs).toBeLessThanOrEqual(400);
      // Refusals are not counted: the count stays at the limit.
      expect((await quotas.usageOf(subject)).chat).toMatchObject({ used: 3, limit: 3, window: 'minute' });
      await new Promise((resolve) => setTimeout(resolve, 500));
      await expect(quotas.admit('chat', subject, user(), 'discord:g:c')).resolves.toBeTypeOf('function');
    },
  );

  it('is one quota for two instances sharing Redis', async () => {
    const a = new Quotas(redisStore(), limits({ imagesPerDay: 5 }), silent);
    const b = new Quotas(redisStore(), limits({ imagesPerDay: 5 }), silent);
    const subject = `slack:${Math.random()}`;
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).admit('image', subject, user(), 'slack:T:C')),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    const reasons = results
      .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      .map((r) => (r.reason as Error).message);
    expect(reasons).toHaveLength(3);
    expect(reasons[0]).toMatch(
      /^You have reached your limit of 5 images a day\. Try again in (23 h 59 min|24 h 0 min)\.$/,
    );
  });

  it("lets admins through unless QUOTA_ADMINS, and refuses chat once the day's tokens are used", async () => {
    const exempt = new Quotas(sqlite(), limits({ chatPerMinute: 1 }), silent);
    for (let i = 0; i < 3; i++) await exempt.admit('chat', 'discord:admin', user(true), 'c');
    const held = new Quotas(sqlite(), limits({ chatPerMinute: 1, admins: true }), silent);
    await held.admit('chat', 'discord:admin', user(true), 'c');
    await expect(held.admit('chat', 'discord:admin', user(true), 'c')).rejects.toBeInstanceOf(QuotaError);
    const tokens = new Quotas(sqlite(), limits({ tokensPerDay: 100 }), silent);
    await (await tokens.reserveTokens('discord:t', user(), 10)).settle(120);
    await expect(tokens.admit('chat', 'discord:t', user(), 'c')).rejects.toThrow(
      /^You have used your 100 tokens for today\. Try again in /,
    );
  });

  it.each([
    ['SQLite', sqlite],
    ['Redis', redisStore],
  ])(
    'on %s, 20 parallel token reservations of 300 against 1,000 a day: those admitted reserve at most 1,000 + one reservation, the rest are refused with the wait, and settling leaves the real count',
    async (_name, open) => {
      const store = open();
      const quotas = new Quotas(store, limits({ tokensPerDay: 1_000 }), silent);
      const subject = `discord:${Math.random()}`;
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, () => quotas.reserveTokens(subject, user(), 300)),
      );
      const admitted = results
        .filter(
          (r): r is PromiseFulfilledResult<Awaited<ReturnType<Quotas['reserveTokens']>>> => r.status === 'fulfilled',
        )
        .map((r) => r.value);
      const refused = results
        .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
        .map((r) => r.reason as Error);
      expect(admitted).toHaveLength(4);
      expect((await store.counter(`quota:tokens:${subject}`)).value).toBe(1_200);
      expect(
        refused.every(
          (e) => e instanceof QuotaError && /^You have used your 1000 tokens for today\. Try again in /.test(e.message),
        ),
      ).toBe(true);
      await Promise.all(admitted.map((r) => r.settle(250)));
      expect((await store.counter(`quota:tokens:${subject}`)).value).toBe(1_000);
      await expect(quotas.reserveTokens(subject, user(), 1)).rejects.toBeInstanceOf(QuotaError);
    },
  );

  it('a reservation settled with 0 (no answer came) gives its tokens back; an image not generated is given back', async () => {
    const store = sqlite();
    const quotas = new Quotas(store, limits({ tokensPerDay: 1_000, imagesPerDay: 1 }), silent);
    const reservation = await quotas.reserveTokens('discord:r', user(), 900);
    await reservation.extend(50);
    expect((await store.counter('quota:tokens:discord:r')).value).toBe(950);
    await reservation.settle(0);
    await reservation.settle(500);
    expect((await store.counter('quota:tokens:discord:r')).value).toBe(0);
    const giveBack = await quotas.admit('image', 'discord:r', user(), 'c');
    await expect(quotas.admit('image', 'discord:r', user(), 'c')).rejects.toBeInstanceOf(QuotaError);
    await giveBack();
    await expect(quotas.admit('image', 'discord:r', user(), 'c')).resolves.toBeTypeOf('function');
  });

  it('adds up counts nothing waits for and writes them together: this process reads them at once, the store within COUNT_FLUSH_MS, and a clean stop writes the rest', async () => {
    const store = redisStore();
    const quotas = new Quotas(store, limits({}), silent);
    const other = new Quotas(store, limits({}), silent);
    const subject = `discord:${Math.random()}`;
    for (let i = 0; i < 3; i++) await quotas.admit('chat', subject, user(), 'discord:g:burst');
    await (await quotas.reserveTokens(subject, user(), 10)).settle(250);
    await quotas.recordChannelTokens('discord:g:burst', 250);
    // Nothing written yet: this process counts it, another instance does not see it yet.
    expect(await store.counter(`quota:chat:${subject}`)).toEqual({ value: 0, resetInMs: 0 });
    expect((await quotas.usageOf(subject)).chat.used).toBe(3);
    expect((await quotas.usageOfChannel('discord:g:burst')).tokens.used).toBe(250);
    expect((await other.usageOf(subject)).chat.used).toBe(0);
    // Written together within COUNT_FLUSH_MS, one increment a key.
    await expect
      .poll(async () => (await store.counter(`quota:chat:${subject}`)).value, {
        timeout: COUNT_FLUSH_MS + 2_000,
        interval: 100,
      })
      .toBe(3);
    expect((await other.usageOf(subject)).tokens.used).toBe(250);
    expect((await other.usageOfChannel('discord:g:burst')).chat.used).toBe(3);
    expect((await quotas.usageOf(subject)).chat.used).toBe(3);
    // A count made just before a stop is written by closeCore before the store closes.
    const path = join(mkdtempSync(join(tmpdir(), 'genbot-quota-')), 's.sqlite');
    const core = createCore({
      service,
      store: await openStore(`sqlite://${path}`),
      log: silent,
      defaults: { chat: undefined, image: undefined },
    });
    await (await core.quotas.reserveTokens(subject, user(), 5)).settle(42);
    await closeCore(core);
    const reopened = await openStore(`sqlite://${path}`);
    stores.push(reopened);
    expect((await reopened.counter(`quota:tokens:${subject}`)).value).toBe(42);
  });

  it('lets requests through when the store does not answer', async () => {
    const own = await startRedis();
    const store = await openStore(own.url);
    try {
      const quotas = new Quotas(store, limits({ chatPerMinute: 1 }), silent);
      await quotas.admit('chat', 's', user(), 'c');
      await own.kill();
      await expect(quotas.admit('chat', 's', user(), 'c')).resolves.toBeTypeOf('function');
    } finally {
      await store.close();
      await own.stop();
    }
  });

  it('says waits in seconds, minutes, or hours and minutes', () => {
    expect([1, 42_000, 150_000, 3 * 3_600_000 + 5 * 60_000].map((ms) => english.say(waitIn(ms)))).toEqual([
      'in 1 s',
      'in 42 s',
      'in 3 min',
      'in 3 h 5 min',
    ]);
  });
});

describe('quotas in the commands', () => {
  let core: Core;
  beforeAll(() => {
    core = createCore({
      service,
      store: sqlite(),
      log: silent,
      defaults: { chat: 'fake-chat', image: undefined },
      quotas: limits({ chatPerMinute: 2, imagesPerDay: 1, tokensPerDay: 1_000_000 }),
      // A cold image worker on a loaded machine can pass the product's 5 s: not what this file checks.
      imageWorkers: { timeoutMs: 30_000 },
    });
  });
  afterAll(() => closeCore(core));

  it('a /chat over the quota is refused before any service call, with the wait, and /usage shows the counts and estimated tokens', async () => {
    fake.setChatReply('Twelve characters.');
    for (let i = 0; i < 2; i++)
      expect(await runCommand(chatCommand, recorder('discord:g:q', { prompt: 'count me' }).ctx, core)).toMatchObject({
        ok: true,
      });
    const refused = recorder('discord:g:q', { prompt: 'one more' });
    expect(await runCommand(chatCommand, refused.ctx, core)).toMatchObject({ ok: false, errorCode: 'quota_exceeded' });
    expect(refused.ephemerals[0]).toMatch(
      /^You have reached your limit of 2 chat requests a minute\. Try again in \d+ s\.$/,
    );
    expect(fake.chatRequests()).toHaveLength(2);
    expect(refused.deferred()).toBe(0);

    const shown = recorder('discord:g:q', {});
    await runCommand(usageCommand, shown.ctx, core);
    const fields = shown.ephemeralMessages[0]!.cards![0]!.fields;
    expect(fields.find((f) => f.name === 'chat requests')!.value).toMatch(/^2 of 2 this minute \(resets in \d+ s\)$/);
    // Estimated (the fake sends no usage): 4 a message + 1 per 4 characters. First: "count me" (6) +
    // the 18-character answer (5) = 11; second: the first exchange (6 + 9) + "count me" (6) + 5 = 26.
    expect(fields.find((f) => f.name === 'tokens')!.value).toMatch(/^37 of 1,000,000 today/);
  });

  it("20 parallel /chat by one user against 1,000 tokens a day: the tokens counted stay within 1,000 + one request's reservation, the rest are refused with when to try again", async () => {
    const held = createCore({
      service,
      store: sqlite(),
      log: silent,
      defaults: { chat: 'fake-chat', image: undefined },
      quotas: limits({ tokensPerDay: 1_000 }),
    });
    try {
      fake.setChatReply('x'.repeat(400)); // ~100 tokens an answer
      const runs = Array.from({ length: 20 }, (_, i) =>
        recorder(`discord:g:tok${i}`, { prompt: `question ${i}` }, { userId: 'greedy' }),
      );
      const outcomes = await Promise.all(runs.map((r) => runCommand(chatCommand, r.ctx, held)));
      const ok = outcomes.filter((o) => o.ok).length;
      const refused = runs.filter((_, i) => outcomes[i]!.errorCode === 'quota_exceeded');
      expect(ok).toBeGreaterThanOrEqual(1);
      expect(refused.length).toBeGreaterThanOrEqual(18);
      expect(ok + refused.length).toBe(20);
      for (const r of refused)
        expect(r.ephemerals[0]).toMatch(/^You have used your 1000 tokens for today\. Try again in \d+ h \d+ min\.$/);
      expect(fake.chatRequests()).toHaveLength(ok);
      // One request's reservation: its prompt (~5) + MAX_TOKENS_LIMIT (4,096).
      const counted = (await held.store.counter('quota:tokens:discord:greedy')).value;
      expect(counted).toBeGreaterThan(0);
      expect(counted).toBeLessThanOrEqual(1_000 + 4_096 + 10);
    } finally {
      fake.setChatReply(undefined);
      await closeCore(held);
    }
  });

  it("/imagine counts images a day; a channel's use is for admins", async () => {
    expect(await runCommand(imagineCommand, recorder('discord:g:img', { prompt: 'a fox' }).ctx, core)).toMatchObject({
      ok: true,
    });
    const second = recorder('discord:g:img', { prompt: 'another fox' });
    expect(await runCommand(imagineCommand, second.ctx, core)).toMatchObject({
      ok: false,
      errorCode: 'quota_exceeded',
    });
    const member = recorder('discord:g:img', { channel: true });
    expect(await runCommand(usageCommand, member.ctx, core)).toMatchObject({ ok: false, errorCode: 'forbidden' });
    const admin = recorder('discord:g:img', { channel: true }, { admin: true });
    await runCommand(usageCommand, admin.ctx, core);
    expect(admin.ephemeralMessages[0]!.cards![0]!.fields.find((f) => f.name === 'images')!.value).toMatch(/^2 today/);
  });
});
