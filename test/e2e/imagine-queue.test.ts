/**
 * /imagine and its buttons queued behind SERVICE_MAX_CONCURRENCY (the fair gate): while they
 * wait, their progress line shows their place ("⏳ Queued: N ahead of you.", as /chat's does),
 * not "🎨 Generating… N s"; once their turn comes, the line goes on to the image. On Discord,
 * the whole bot against FakeDiscord and FakeService, with one generation at a time.
 */

import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import type { FakeDiscord, FakeInteraction, FakeMessage } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: {}, bot: { env: { SERVICE_MAX_CONCURRENCY: '1' } } }, async (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
  await deployCommands({ token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl });
});

/** Resolves with the next `count` outcomes (commands and presses) in a channel's conversation. */
function outcomesIn(channelId: string, count = 1): Promise<CommandOutcome[]> {
  const conversationId = `discord:${discord.guildId}:${channelId}`;
  return testBot.outcomes((o) => o.conversationId === conversationId, count, 30_000);
}

/** Resolves once the service has received `count` more image requests than it had. */
function imageRequests(count: number): Promise<void> {
  const target = service.requests.filter((r) => r.route === 'images').length + count;
  return new Promise((resolve) => {
    const check = () => {
      if (service.requests.filter((r) => r.route === 'images').length < target) return;
      service.events.off('request', check);
      resolve();
    };
    service.events.on('request', check);
    check();
  });
}

/** Every text a message showed, in order. */
const shown = (message: FakeMessage | undefined) => (message?.revisions ?? []).map((r) => r.content);

/** The custom id of a message's button whose id starts with `prefix`. */
const buttonOf = (message: FakeMessage, prefix: string) =>
  message.buttons.map((b) => String(b.custom_id)).find((id) => id.startsWith(prefix))!;

describe('/imagine queued behind SERVICE_MAX_CONCURRENCY=1', () => {
  it('shows its place while it waits, "⏳ Queued: N ahead of you." as /chat does, then the image', async () => {
    const busy = discord.addChannel('imagine-busy');
    const waiting = discord.addChannel('imagine-waiting');
    // The first generation holds the only slot for 4 s.
    service.enqueue('images', { delayHeadersMs: 4_000 });
    const first = outcomesIn(busy.id);
    const started = imageRequests(1);
    discord.dispatchInteraction({ channelId: busy.id, command: 'imagine', options: { prompt: 'a slow castle' } });
    await started;

    const done = outcomesIn(waiting.id, 2);
    const next = discord.dispatchInteraction({
      channelId: waiting.id,
      command: 'imagine',
      options: { prompt: 'a patient cat' },
    });
    // Dispatched one after the other, so that their places are known.
    await discord.waitFor('callback', (i) => i.id === next.id);
    const after = discord.dispatchInteraction({
      channelId: waiting.id,
      command: 'imagine',
      options: { prompt: 'a patient dog' },
    });
    await expect.poll(() => shown(after.original), { timeout: 3_000 }).toContain('⏳ Queued: 1 ahead of you.');
    expect(shown(next.original)).toContain('⏳ Queued: you are next.');
    expect(shown(next.original).some((c) => c.startsWith('🎨 Generating…'))).toBe(false);

    expect((await first)[0]!.ok).toBe(true);
    expect((await done).map((o) => o.ok)).toEqual([true, true]);
    for (const interaction of [next, after] as FakeInteraction[]) {
      expect(interaction.original!.attachments.map((a) => a.filename)).toEqual(['imagine.png']);
      expect(interaction.original!.text).not.toContain('Queued');
    }
    expect(after.original!.text).toContain('a patient dog');
  }, 40_000);

  it("a Reroll press queued behind another generation shows its place in the press's reply", async () => {
    const channel = discord.addChannel('reroll-waiting');
    const made = outcomesIn(channel.id);
    const result = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'imagine',
      options: { prompt: 'a lighthouse' },
    });
    await made;
    const reroll = buttonOf(result.original!, 'imagine:reroll:');

    service.enqueue('images', { delayHeadersMs: 4_000 });
    const busy = discord.addChannel('reroll-busy');
    const started = imageRequests(1);
    const first = outcomesIn(busy.id);
    discord.dispatchInteraction({ channelId: busy.id, command: 'imagine', options: { prompt: 'a slow storm' } });
    await started;

    const pressed = outcomesIn(channel.id);
    const press = discord.pressButton({ messageId: result.original!.id, customId: reroll });
    await expect.poll(() => shown(press.original), { timeout: 3_000 }).toContain('⏳ Queued: you are next.');
    expect((await first)[0]!.ok).toBe(true);
    expect((await pressed)[0]).toMatchObject({ command: 'imagine:button', ok: true });
    expect(press.original!.attachments.map((a) => a.filename)).toEqual(['imagine.png']);
  }, 40_000);
});
