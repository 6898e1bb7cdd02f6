/**
 * End-to-end (issue 41, item 4), on SQLite and on Redis: a bot started with
 * HISTORY_RETENTION_DAYS=2 over a store holding histories written before (turns of three days
 * ago and of an hour ago, no retention markers) sweeps at start: the old turns are gone from the
 * store, read directly, the recent ones stay, a history of old turns only is deleted, and the next
 * /chat sends the model only what is within the retention. Then the turns stored by the bot pass
 * the retention without being written again, and a later sweep (told its time: nothing waits)
 * removes them. The whole bot (startTestBot), real discord.js, against the fakes.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { storeKeys } from '../../src/core/keys.ts';
import type { StoredMessage } from '../../src/core/state/history.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import { sweepHistories } from '../../src/core/state/retention.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import type { FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const DAY = 24 * 3_600_000;

describe.each(['SQLite', 'Redis'] as const)('history retention through the bot on %s', (backend) => {
  const file = join(mkdtempSync(join(tmpdir(), 'genbot-retention-e2e-')), 'state.sqlite');
  let service: FakeService;
  let discord: FakeDiscord;
  let testBot: TestBot;
  let active = '';
  let stale = '';
  const written = Date.now();

  useE2E(
    {
      discord: {},
      redis: backend === 'Redis',
      bot: { env: { HISTORY_RETENTION_DAYS: '2', ...(backend === 'SQLite' ? { STORE_URL: `sqlite://${file}` } : {}) } },
      timeoutMs: 30_000,
      beforeBot: async (e2e) => {
        // Written before the bot starts, as an older version left them: no markers, no expiry.
        active = `discord:${e2e.discord.guildId}:${e2e.discord.addChannel('active').id}`;
        stale = `discord:${e2e.discord.guildId}:${e2e.discord.addChannel('stale').id}`;
        const store = await openStore(backend === 'Redis' ? e2e.redis.url : `sqlite://${file}`);
        const turn = (role: 'user' | 'assistant', content: string, at: number): StoredMessage => ({
          role,
          content,
          at,
        });
        await store.keyv.set(storeKeys.history(active), {
          version: 1,
          messages: [
            turn('user', 'three days ago', written - 3 * DAY),
            turn('assistant', 'an old answer', written - 3 * DAY),
            turn('user', 'an hour ago', written - 3_600_000),
            turn('assistant', 'a recent answer', written - 3_600_000),
          ],
        });
        await store.keyv.set(storeKeys.history(stale), {
          version: 1,
          messages: [turn('user', 'long ago', written - 5 * DAY)],
        });
        await store.close();
        return undefined;
      },
    },
    async (e2e) => {
      ({ service, discord, bot: testBot } = e2e);
      await deployCommands({ token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl });
    },
  );

  const stored = async (conversationId: string) =>
    (
      (await testBot.bot.core.store.keyv.get(storeKeys.history(conversationId))) as
        | { messages: StoredMessage[] }
        | undefined
    )?.messages.map((m) => m.content);

  it('sweeps at start (old turns gone, recent ones kept, an all-old history deleted), sends only what is retained, and a later sweep removes turns that aged since', async () => {
    await vi.waitFor(
      () => expect(testBot.logs.find((l) => l.msg === 'history retention swept')).toMatchObject({ turns: 3 }),
      { timeout: 10_000, interval: 50 },
    );
    expect(await stored(active)).toEqual(['an hour ago', 'a recent answer']);
    expect(await stored(stale)).toBeUndefined();

    service.enqueue('chat', { stream: { text: 'Still here.' } });
    const channelId = active.split(':')[2]!;
    const done = testBot.outcomes((o) => o.conversationId === active && o.command === 'chat', 1, 30_000);
    discord.dispatchInteraction({ channelId, command: 'chat', options: { prompt: 'And now?' } });
    expect((await done)[0]!.ok).toBe(true);
    expect(
      service
        .chatRequests()
        .at(-1)!
        .messages.map((m) => m.content),
    ).toEqual(['an hour ago', 'a recent answer', 'And now?']);
    expect(await stored(active)).toEqual(['an hour ago', 'a recent answer', 'And now?', 'Still here.']);

    // Nothing written since. Two hours before the turns of an hour ago are two days old, a sweep keeps them; at
    // two days from the start, they are past the retention and the new ones are not.
    const { store, history } = testBot.bot.core;
    expect((await sweepHistories(store, history, { now: written + 2 * DAY - 2 * 3_600_000 })).turns).toBe(0);
    expect(await stored(active)).toHaveLength(4);
    expect((await sweepHistories(store, history, { now: written + 2 * DAY })).turns).toBe(2);
    expect(await stored(active)).toEqual(['And now?', 'Still here.']);
  });
});
