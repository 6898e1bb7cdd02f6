/**
 * Every write in a budget on Discord (issue 20 item 2): a burst of /imagine in one channel, with
 * the fake enforcing Discord's documented buckets (5 writes per 2 s per interaction token, 5 per
 * 5 s per channel for bot-token writes). Each generation takes a few seconds, so each shows its
 * progress line ("🎨 Generating… N s", intermediate writes) before the image is put into that
 * message (a one-off write through the scheduler, delivery/one-off.ts): no response is a 429,
 * and every image arrives, with its buttons, in its own interaction's reply.
 */
import { describe, expect, it } from 'vitest';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import type { FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const BURST = 12;

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: {}, bot: {} }, async (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
  await deployCommands({ token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl });
});

describe('Discord: every write in a budget', () => {
  it(`${BURST} /imagine at once in one channel under the documented buckets: no 429, every image arrives`, async () => {
    discord.setRateLimitMode('documented');
    const channel = discord.addChannel('imagine-burst');
    // Long enough for the progress line to show ("Generating… 3 s") before the image.
    for (let i = 0; i < BURST; i++) service.enqueue('images', { delayHeadersMs: 3_500 });
    const requestsBefore = discord.requests.length;
    const conversationId = `discord:${discord.guildId}:${channel.id}`;
    const done = testBot.outcomes((o) => o.conversationId === conversationId, BURST, 60_000);
    const interactions = Array.from({ length: BURST }, (_, i) =>
      discord.dispatchInteraction({
        channelId: channel.id,
        command: 'imagine',
        options: { prompt: `picture ${i}` },
        user: { id: String(330000000000000000n + BigInt(i)) },
      }),
    );
    const outcomes = await done;
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);

    const responses = discord.requests.slice(requestsBefore);
    expect(responses.filter((r) => r.status === 429).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(discord.rateLimits.filter((r) => r.channelId === channel.id)).toEqual([]);
    for (const [i, interaction] of interactions.entries()) {
      const original = interaction.original!;
      expect(original.attachments.map((a) => a.filename)).toEqual(['imagine.png']);
      expect(original.text).toContain(`picture ${i}`);
      expect(original.buttons.length).toBeGreaterThan(0);
      // The progress line was shown first, then replaced by the image.
      expect(original.revisions.some((r) => r.content.startsWith('🎨 Generating…'))).toBe(true);
    }
  }, 90_000);
});
