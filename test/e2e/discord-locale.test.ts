/**
 * End-to-end on Discord, the adapter's own words in the interaction's user's language (issue 42):
 * Discord sends every interaction its user's client language (`locale`); what only that user
 * sees — Discord's refusal of a write put in words (errors.ts `explainDiscordError`), the answer
 * to an interaction that named no invoker — is in it. The same actions with `en-US` stay English.
 */
import { describe, expect, it } from 'vitest';
import type { FakeDiscord, FakeInteraction } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: {}, bot: {}, resetServiceAfterEach: true }, (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
});

/** A /chat in a channel of its own by a user of `locale`, whose every write of the answer Discord refuses with 50013. */
async function refusedChat(
  name: string,
  locale: string,
): Promise<{ interaction: FakeInteraction; errorCode?: string }> {
  const channel = discord.addChannel(name);
  service.enqueue('chat', { stream: { text: 'An answer Discord will not show.', chunkDelayMs: 0 } });
  discord.failNext({
    method: 'PATCH',
    path: /^\/api\/v10\/webhooks\/\d+\/[^/]+\/messages\/@original$/,
    status: 403,
    body: { message: 'Missing Permissions', code: 50013 },
    times: 20,
  });
  const done = testBot.outcomes((o) => o.conversationId === `discord:${discord.guildId}:${channel.id}`);
  const interaction = discord.dispatchInteraction({
    command: 'chat',
    options: { prompt: 'hello' },
    channelId: channel.id,
    locale,
  });
  try {
    const [outcome] = await done;
    return { interaction, errorCode: outcome!.errorCode };
  } finally {
    discord.clearFaults();
  }
}

/** What the interaction's user alone was shown (ephemeral messages), in order. */
const ephemerals = (interaction: FakeInteraction) =>
  interaction.messages.filter((m) => m.ephemeral).map((m) => m.content);

describe("Discord's refusals in the interaction's locale", () => {
  it('tells a user with locale de that the bot lacks a permission in German, one with en-US in English, each with the reference', async () => {
    const de = await refusedChat('locale-de', 'de');
    expect(de.errorCode).toBe('platform_refused');
    expect(ephemerals(de.interaction).at(-1)).toMatch(
      /^Mir fehlt eine Berechtigung in diesem Kanal \(Nachrichten senden, Links einbetten oder Dateien anhängen\): Ein Server-Admin kann sie in den Kanaleinstellungen erteilen\. \(Ref\. [2-9A-Z]{6}\)$/,
    );

    const en = await refusedChat('locale-en', 'en-US');
    expect(en.errorCode).toBe('platform_refused');
    expect(ephemerals(en.interaction).at(-1)).toMatch(
      /^I lack a permission in this channel \(Send Messages, Embed Links or Attach Files\): a server admin can grant it in the channel's settings\. \(ref [2-9A-Z]{6}\)$/,
    );
  });

  it('answers an interaction that names no invoker in its locale (es-419 → Spanish)', async () => {
    const channel = discord.addChannel('locale-malformed');
    const interaction = discord.dispatchInteraction({
      command: 'chat',
      options: { prompt: 'who am I?' },
      channelId: channel.id,
      withoutInvoker: true,
      locale: 'es-419',
    });
    await expect.poll(() => interaction.messages.length, { timeout: 3_000 }).toBe(1);
    expect(interaction.messages.map((m) => [m.content, m.ephemeral])).toEqual([
      ['Discord no indicó quién envió esto, así que no pude ejecutarlo. Vuelve a intentarlo.', true],
    ]);
  });
});
