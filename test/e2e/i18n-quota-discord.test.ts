/**
 * A used-up quota refused in the Discord user's language (issue 42, "Done when": the German
 * refusal): the count and the wait worded and formatted the reader's way, the refusal to them
 * alone, no reference (the user's own to wait out).
 */
import { describe, expect, it } from 'vitest';
import type { FakeDiscord } from '../fakes/discord.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: {}, bot: { env: { QUOTA_CHAT_PER_MINUTE: '1' } } }, (e2e) => {
  ({ discord, bot: testBot } = e2e);
});

/** Two /chat in a row by one user whose client speaks `locale`; resolves with what the second one told them alone. */
async function twice(locale: string, id: string) {
  const channel = discord.addChannel(`quota-${locale}`);
  const user = { id, username: `u${locale}` };
  const results = [];
  for (const prompt of ['eins', 'zwei']) {
    const done = testBot.outcomes((o) => o.conversationId === `discord:${discord.guildId}:${channel.id}`);
    const interaction = discord.dispatchInteraction({
      command: 'chat',
      options: { prompt },
      channelId: channel.id,
      user,
      locale,
    });
    const [outcome] = await done;
    const ephemerals = [...interaction.messages, ...interaction.followUps]
      .filter((m) => m.ephemeral && !m.deleted)
      .map((m) => m.content ?? '');
    results.push({ outcome: outcome!, ephemerals: [...new Set(ephemerals)] });
  }
  expect(results.map((r) => r.outcome.ok)).toEqual([true, false]);
  expect(results[1]!.outcome.errorCode).toBe('quota_exceeded');
  return results[1]!.ephemerals;
}

describe('a used-up quota in the Discord user’s language', () => {
  it('locale de: German, the wait in German units, no reference', async () => {
    expect(await twice('de', '1290000000000000601')).toEqual([
      expect.stringMatching(
        /^Du hast dein Limit von 1 Chat-Anfrage pro Minute erreicht\. Versuche es in \d+ s erneut\.$/,
      ),
    ]);
  });

  it('locale ja: Japanese', async () => {
    expect(await twice('ja', '1290000000000000602')).toEqual([
      expect.stringMatching(
        /^1 分あたり 1 件のチャットリクエストの上限に達しました。\d+ 秒後にもう一度お試しください。$/,
      ),
    ]);
  });
});
