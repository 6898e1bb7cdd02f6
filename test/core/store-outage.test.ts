/**
 * A store that goes away (Redis killed mid-run): answers go on without history, the user is
 * told once, nothing crashes; when the store is back, the turns answered meanwhile are stored
 * (they waited in memory) and new turns are stored again.
 */

import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import chatCommand from '../../commands/chat.ts';
import { runCommand } from '../../src/core/command.ts';
import { type Core, closeCore, createCore } from '../../src/core/core.ts';
import { english } from '../../src/core/i18n/words.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import { STORE_DOWN_NOTE as DOWN } from '../../src/core/state/health.ts';

import { openStore } from '../../src/core/state/open-store.ts';
import { FakeService } from '../fakes/service.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { recorder } from './recorder.ts';

const STORE_DOWN_NOTE = english.say(DOWN);

let fake: FakeService;
let service: ServiceClient;
let redis: TestRedis;
let core: Core;

beforeAll(async () => {
  fake = await FakeService.start();
  service = new ServiceClient({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, backoffBaseMs: 1 });
  redis = await startRedis();
  core = createCore({
    service,
    store: await openStore(redis.url),
    log: pino({ level: 'silent' }),
    defaults: { chat: 'fake-chat', image: undefined },
  });
});
afterAll(async () => {
  await closeCore(core);
  await service.close();
  await fake.close();
  await redis.stop();
});

describe('the store going away', () => {
  it('answers without history and says so once while Redis is down, then stores the turns answered meanwhile and new ones when it is back', async () => {
    const id = 'slack:T:C:outage';
    fake.setChatReply('Noted.');
    expect(await runCommand(chatCommand, recorder(id, { prompt: 'my name is Ada' }).ctx, core)).toMatchObject({
      ok: true,
    });
    expect(await core.history.get(id)).toHaveLength(2);

    await redis.kill();
    const first = recorder(id, { prompt: 'what is my name?' });
    expect(await runCommand(chatCommand, first.ctx, core)).toMatchObject({ ok: true });
    expect(first.messages[0]!.content).toBe(`Noted.\n\n_⚠️ ${STORE_DOWN_NOTE}_`);
    expect(fake.chatRequests().at(-1)!.messages).toEqual([{ role: 'user', content: 'what is my name?' }]);
    const second = recorder(id, { prompt: 'still there?' });
    expect(await runCommand(chatCommand, second.ctx, core)).toMatchObject({ ok: true });
    expect(second.messages[0]!.content).toBe('Noted.');

    await redis.restart();
    await expect
      .poll(
        () =>
          core.store.ping().then(
            () => true,
            () => false,
          ),
        { timeout: 10_000, interval: 100 },
      )
      .toBe(true);
    const after = recorder(id, { prompt: 'remember this' });
    expect(await runCommand(chatCommand, after.ctx, core)).toMatchObject({ ok: true });
    expect(after.messages[0]!.content).toBe('Noted.');
    // The turns answered while it was down waited in memory: they were sent with the question, and are stored in their place.
    expect(
      fake
        .chatRequests()
        .at(-1)!
        .messages.map((m) => m.content),
    ).toEqual(['what is my name?', 'Noted.', 'still there?', 'Noted.', 'remember this']);
    await expect
      .poll(async () => (await core.history.get(id)).map((m) => m.content), { timeout: 10_000 })
      .toEqual(['what is my name?', 'Noted.', 'still there?', 'Noted.', 'remember this', 'Noted.']);
  });
});
