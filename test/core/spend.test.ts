/**
 * Spending caps in money (issue 41 items 1-2) through the commands and the fake service, on
 * SQLite and Redis: 20 parallel /chat by one user against a daily cap spend at most the cap plus
 * one request's reservation and the rest are refused naming the cap, what is left and the reset;
 * a settled request costs exactly its `usage` at the table's prices (its own count, marked as an
 * estimate, without one); the 80 % notice comes once; /metrics, /usage and the admins' card
 * carry the spend; an image is priced per image (and by style); a model the table does not price
 * is refused while caps are on.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import chatCommand from '../../commands/chat.ts';
import imagineCommand from '../../commands/imagine.ts';
import usageCommand from '../../commands/usage.ts';
import { priceFileSchema } from '../../src/config-prices.ts';
import { runCommand } from '../../src/core/command.ts';
import { type Core, closeCore, createCore } from '../../src/core/core.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import { openLocalStore } from '../../src/core/state/local-state.ts';
import { openRedisStore } from '../../src/core/state/redis-state.ts';
import { periodOf, Spend, SpendCapError, type SpendConfig } from '../../src/core/state/spend.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { FakeService } from '../fakes/service.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { recorder } from './recorder.ts';

const silent = pino({ level: 'silent' });
let redis: TestRedis;
let fake: FakeService;
let service: ServiceClient;
const cores: Core[] = [];
beforeAll(async () => {
  redis = await startRedis();
  fake = await FakeService.start();
  service = new ServiceClient({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, backoffBaseMs: 1 });
});
beforeEach(() => fake.reset());
afterAll(async () => {
  await Promise.allSettled(cores.map((c) => closeCore(c)));
  await service.close();
  await fake.close();
  await redis.stop();
});

/** fake-chat at 10 USD a million prompt tokens and 20 a million completion tokens; images 0.04, upscaled 0.01. */
const TABLE = priceFileSchema.parse({
  currency: 'USD',
  chat: { 'fake-chat': { prompt: 10, completion: 20 } },
  images: { 'Fake Image': { perImage: 0.04, styles: { upscaled: 0.01 } } },
});
const NO_CAPS = { day: 0, month: 0 };

function sqlite(): StateStore {
  return openLocalStore(join(mkdtempSync(join(tmpdir(), 'genbot-spend-')), 's.sqlite'));
}

/** A core with the table, a daily user cap in micro-units, MAX_TOKENS_LIMIT 1,000. */
function coreWith(store: StateStore, userDay: number, over: Partial<SpendConfig> = {}): Core {
  const core = createCore({
    service,
    store,
    log: silent,
    defaults: { chat: 'fake-chat', image: 'Fake Image' },
    limits: { maxTokens: 1_000 },
    spend: { prices: TABLE, caps: { user: { day: userDay, month: 0 }, channel: NO_CAPS, server: NO_CAPS }, ...over },
    imageWorkers: { timeoutMs: 30_000 },
  });
  cores.push(core);
  return core;
}

const today = () => periodOf('day', Date.now()).id;

describe('spending caps', () => {
  it.each([
    ['SQLite', sqlite],
    ['Redis', () => openRedisStore(redis.url)],
  ])(
    'on %s, 20 parallel /chat by one user against 0.10 USD a day spend at most the cap plus one reservation; the rest are refused naming the cap, what is left and the reset',
    async (_name, open) => {
      const core = coreWith(open(), 100_000);
      // Each answer costs 100 × 10 + 900 × 20 micro-units = 19,000 (0.019 USD).
      fake.setStreamUsage({ prompt_tokens: 100, completion_tokens: 900 });
      const user = `greedy${Math.random()}`.replace('.', '');
      const runs = Array.from({ length: 20 }, (_, i) =>
        recorder(`discord:g:spend${i}`, { prompt: `question ${i}` }, { userId: user }),
      );
      const outcomes = await Promise.all(runs.map((r) => runCommand(chatCommand, r.ctx, core)));
      const ok = outcomes.filter((o) => o.ok).length;
      const refused = runs.filter((_, i) => outcomes[i]!.errorCode === 'quota_exceeded');
      expect(ok + refused.length).toBe(20);
      expect(refused.length).toBeGreaterThanOrEqual(10);
      for (const r of refused)
        expect(r.ephemerals.at(-1)).toMatch(
          /^This request would go past your daily spending cap of 0\.10 USD: \d+\.\d{2,4} USD left\. It resets in (\d+ s|\d+ min|\d+ h \d+ min) \([A-Z][a-z]{2} \d{1,2}, \d{4}, 00:00 UTC\)\.$/,
        );
      expect(fake.chatRequests()).toHaveLength(ok);
      const spent = (await core.store.counter(`spend:user:${today()}:discord:${user}`)).value;
      // Settled: exactly the requests answered at their usage's price.
      expect(spent).toBe(ok * 19_000);
      // One reservation: the prompt's estimate (under 20 tokens × 10) + 1,000 tokens × 20.
      expect(spent).toBeLessThanOrEqual(100_000 + 20_000 + 200);
      expect(spent).toBeGreaterThanOrEqual(80_000);
    },
  );

  it('a settled request costs exactly its usage at the prices; without usage its own count, marked as an estimate; /usage and /metrics show it', async () => {
    const core = coreWith(sqlite(), 0);
    const metrics = createMetrics(core.events);
    fake.setStreamUsage({ prompt_tokens: 1_234, completion_tokens: 567 });
    expect(
      await runCommand(chatCommand, recorder('discord:g:exact', { prompt: 'hi' }, { userId: 'ex' }).ctx, core),
    ).toMatchObject({ ok: true });
    // 1,234 × 10 + 567 × 20 = 23,680 micro-units.
    await core.spend!.flush();
    expect((await core.store.counter(`spend:user:${today()}:discord:ex`)).value).toBe(23_680);
    fake.setStreamUsage(undefined);
    fake.setChatReply('x'.repeat(40)); // 10 tokens by the bot's count
    await runCommand(chatCommand, recorder('discord:g:exact', { prompt: 'hi' }, { userId: 'ex' }).ctx, core);
    const shown = recorder('discord:g:exact', {}, { userId: 'ex' });
    await runCommand(usageCommand, shown.ctx, core);
    const fields = shown.ephemeralMessages[0]!.cards![0]!.fields;
    // Estimated: the prompt (the first exchange and "hi") ~ 17 tokens × 10 + 10 × 20 = 370 micro-units.
    const day = fields.find((f) => f.name === 'spend today')!.value;
    expect(day).toMatch(/^0\.024\d? USD today \(0\.000[34] USD of it estimated: the service sent no usage\)$/);
    expect(fields.find((f) => f.name === 'tokens')).toBeDefined();
    const text = await metrics.registry.metrics();
    const line = text.split('\n').find((l) => l.startsWith('genbot_spend_total{model="fake-chat",currency="USD"}'));
    expect(Number(line!.split(' ').at(-1))).toBeCloseTo(0.02368 + (await estimatedPart(core)), 6);
    metrics.close();
  });

  it('tells a user once when a request takes them past 80 % of a cap', async () => {
    const core = coreWith(sqlite(), 100_000);
    fake.setStreamUsage({ prompt_tokens: 0, completion_tokens: 1_000 }); // 0.02 USD each
    const seen: string[][] = [];
    for (let i = 0; i < 5; i++) {
      const r = recorder('discord:g:notice', { prompt: 'q' }, { userId: 'n' });
      expect(await runCommand(chatCommand, r.ctx, core)).toMatchObject({ ok: true });
      seen.push(r.ephemerals);
    }
    // 0.02, 0.04, 0.06, then 0.08 (80 %: told), then 0.10 (no second notice).
    expect(seen.slice(0, 3)).toEqual([[], [], []]);
    expect(seen[3]).toEqual([
      expect.stringMatching(
        /^Heads-up: 80 % of your daily spending cap is used \(0\.08 USD of 0\.10 USD\)\. It resets in /,
      ),
    ]);
    expect(seen[4]).toEqual([]);
  });

  it('prices an image per image and by style, and the admins see the server per model', async () => {
    const core = coreWith(sqlite(), 0);
    await runCommand(imagineCommand, recorder('slack:T1:C1', { prompt: 'a fox' }, { userId: 'img' }).ctx, core);
    await runCommand(
      imagineCommand,
      recorder('slack:T1:C1', { prompt: 'a fox', style: 'upscaled' }, { userId: 'img' }).ctx,
      core,
    );
    await core.spend!.flush();
    expect((await core.store.counter(`spend:user:${today()}:discord:img`)).value).toBe(50_000);
    const admin = recorder('slack:T1:C1', { spend: true }, { admin: true });
    await runCommand(usageCommand, admin.ctx, core);
    const card = admin.ephemeralMessages[0]!.cards![0]!;
    expect(card.fields.find((f) => f.name === 'Fake Image')!.value).toBe('0.05 USD this month');
    const member = recorder('slack:T1:C1', { spend: true });
    expect(await runCommand(usageCommand, member.ctx, core)).toMatchObject({ ok: false, errorCode: 'forbidden' });
  });

  it.each([
    ['SQLite', sqlite],
    ['Redis', () => openRedisStore(redis.url)],
  ])(
    "on %s, a server's cap holds across its users and channels, a Discord DM has no server counter, and a refusal takes its other reservations back",
    async (_name, open) => {
      const store = open();
      const server = `discord:${Math.random()}`.replace('0.', 'g');
      const spend = new Spend(
        store,
        {
          prices: TABLE,
          caps: { user: { day: 0, month: 300_000 }, channel: NO_CAPS, server: { day: 50_000, month: 0 } },
        },
        silent,
      );
      const first = await spend.reserve({ user: 'discord:a', channel: `${server}:c1`, server }, 'fake-chat', 40_000);
      await first.settle(60_000, false);
      const refused = await spend
        .reserve({ user: 'discord:b', channel: `${server}:c2`, server }, 'fake-chat', 10_000)
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(SpendCapError);
      expect((refused as Error).message).toMatch(
        /^This request would go past this server's daily spending cap of 0\.05 USD: 0\.00 USD left\. It resets in /,
      );
      // b's monthly user counter got its reservation back.
      expect((await store.counter(`spend:user:${periodOf('month', Date.now()).id}:discord:b`)).value).toBe(0);
      const dm = await spend.reserve(
        { user: 'discord:b', channel: 'discord:dm:d1', server: undefined },
        'fake-chat',
        10_000,
      );
      await dm.settle(5_000, false);
      expect((await store.counter(`spend:user:${periodOf('month', Date.now()).id}:discord:b`)).value).toBe(5_000);
    },
  );

  it('names the default models the table does not price at start, and refuses them while a cap is on, before any service call', async () => {
    const lines: Array<{ msg: string; model?: string }> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const core = createCore({
      service,
      store: sqlite(),
      log,
      defaults: { chat: 'fake-chat', vision: 'fake-vision', image: 'Fake Image XL' },
      spend: { prices: TABLE, caps: { user: NO_CAPS, channel: { day: 0, month: 5_000_000 }, server: NO_CAPS } },
    });
    cores.push(core);
    expect(lines.map((l) => l.model)).toEqual(['fake-vision', 'Fake Image XL']);
    expect(lines[0]!.msg).toBe(
      'model not in PRICES_FILE and no default row: requests to it are refused while spending caps are on',
    );
    const r = recorder('discord:g:unpriced', { prompt: 'q', model: 'fake-vision' });
    expect(await runCommand(chatCommand, r.ctx, core)).toMatchObject({ ok: false });
    expect(r.ephemerals.at(-1)).toBe(
      "The model `fake-vision` has no price in this bot's price table, and spending caps are on, so it cannot be used. Choose another model, or ask the operator to price it (PRICES_FILE).",
    );
    expect(fake.chatRequests()).toHaveLength(0);
    // Logged once per model.
    expect(lines).toHaveLength(2);
  });
});

/** The metric's part of the second (estimated) request: what the user's counter holds beyond the first. */
async function estimatedPart(core: Core): Promise<number> {
  await core.spend!.flush();
  return ((await core.store.counter(`spend:user:${today()}:discord:ex`)).value - 23_680) / 1_000_000;
}
