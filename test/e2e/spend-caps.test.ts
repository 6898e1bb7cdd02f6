/**
 * Spending caps end to end (issue 41 items 1-2), Discord and Slack on one bot sharing Redis:
 * a user's /chat answers are charged at the price table's figures until their daily cap is
 * reached, the 80 % notice comes once, privately, the next /chat is refused privately naming the
 * cap, what is left and when it resets, before any service call; /usage shows the spend and
 * /metrics carries it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { DEFAULT_USERS, type FakeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = { spend: 'C0SPEND' };
const SLACK_USER = 'U0SPENDER';

/** fake-chat at 4 EUR a million prompt tokens and 25 a million completion tokens. */
const PRICES = join(mkdtempSync(join(tmpdir(), 'genbot-e2e-prices-')), 'prices.json');
writeFileSync(PRICES, JSON.stringify({ currency: 'EUR', chat: { 'fake-chat': { prompt: 4, completion: 25 } } }));

let service: FakeService;
let discord: FakeDiscord;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    discord: {},
    slack: { channels: slackChannels(CHANNELS), users: [...DEFAULT_USERS, { id: SLACK_USER, name: 'spender' }] },
    redis: true,
    bot: {
      env: {
        PRICES_FILE: PRICES,
        SPEND_CAP_USER_DAY: '0.07',
        MAX_TOKENS_LIMIT: '1000',
        DEFAULT_CHAT_MODEL: 'fake-chat',
      },
    },
  },
  (e2e) => {
    ({ service, discord, slack, bot: testBot, botUrl } = e2e);
    // Each answer: 250 × 4 + 1,000 × 25 micro-units = 0.026 EUR.
    service.setStreamUsage({ prompt_tokens: 250, completion_tokens: 1_000 });
  },
);

const REFUSAL =
  /^This request would go past your daily spending cap of 0\.07 EUR: 0\.00 EUR left\. It resets in (\d+ s|\d+ min|\d+ h \d+ min) \([A-Z][a-z]{2} \d{1,2}, \d{4}, 00:00 UTC\)\.$/;

/** The bot's spend metric for fake-chat, in EUR. */
async function metric(): Promise<number> {
  const text = await testBot.bot.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith('genbot_spend_total{model="fake-chat",currency="EUR"}'));
  return Number(line?.split(' ').at(-1) ?? 0);
}

describe('spending caps on Discord and Slack', () => {
  it('Discord: three answers within 0.07 EUR a day (0.026 each), one notice, the fourth /chat refused ephemerally with the cap and reset; /usage shows the spend', async () => {
    const channel = discord.addChannel('spend');
    const user = { id: '1290000000000000777', username: 'spender' };
    const results: Array<{ ok: boolean; ephemerals: string[] }> = [];
    for (let i = 0; i < 4; i++) {
      const done = testBot.outcomes((o) => o.conversationId === `discord:${discord.guildId}:${channel.id}`);
      const interaction = discord.dispatchInteraction({
        command: 'chat',
        options: { prompt: `q${i}` },
        channelId: channel.id,
        user,
      });
      const [outcome] = await done;
      const ephemerals = [...interaction.messages, ...interaction.followUps]
        .filter((m) => m.ephemeral && !m.deleted)
        .map((m) => m.content ?? '');
      results.push({ ok: outcome!.ok, ephemerals: [...new Set(ephemerals)] });
    }
    expect(results.map((r) => r.ok)).toEqual([true, true, true, false]);
    expect(results[0]!.ephemerals).toEqual([]);
    // 0.052 after the second is under 80 % of 0.07 (0.056); the third (0.078) passes it, and the cap.
    expect(results.map((r) => r.ephemerals.filter((e) => e.startsWith('Heads-up')).length)).toEqual([0, 0, 1, 0]);
    expect(results[2]!.ephemerals).toEqual([
      expect.stringMatching(
        /^Heads-up: your daily spending cap is used up \(0\.078 EUR of 0\.07 EUR\): more requests are refused\. It resets in /,
      ),
    ]);
    expect(results[3]!.ephemerals).toEqual([expect.stringMatching(REFUSAL)]);
    expect(service.chatRequests().filter((b) => b.messages.at(-1)?.content === 'q3')).toEqual([]);
    expect(await metric()).toBeCloseTo(0.078, 6);

    const done = testBot.outcomes((o) => o.conversationId === `discord:${discord.guildId}:${channel.id}`);
    const usage = discord.dispatchInteraction({ command: 'usage', channelId: channel.id, user });
    await done;
    const card = usage.messages.find((m) => m.ephemeral && !m.deleted)!;
    const fields = card.embeds[0]!.fields as Array<{ name: string; value: string }>;
    const field = fields.find((f) => f.name === 'spend today');
    expect(field!.value).toMatch(/^0\.078 EUR of 0\.07 EUR today, resets in /);
  });

  it('Slack: the same cap holds, and the refusal goes to the user alone', async () => {
    for (let i = 0; i < 4; i++) {
      const done = testBot.outcomes((o) => o.conversationId.endsWith(`:${CHANNELS.spend}`));
      const ack = await slack.sendSlashCommand(botUrl, {
        command: '/chat',
        text: `s${i}`,
        channel_id: CHANNELS.spend,
        user_id: SLACK_USER,
      });
      expect(ack.ackedInTime).toBe(true);
      await done;
    }
    const posts = slack.responsePosts().filter((p) => p.channel === CHANNELS.spend && p.user === SLACK_USER);
    const refusal = posts.find((p) => REFUSAL.test(p.text));
    expect(refusal).toMatchObject({ responseType: 'ephemeral' });
    expect(posts.filter((p) => /^Heads-up: /.test(p.text))).toHaveLength(1);
    expect(service.chatRequests().filter((b) => JSON.stringify(b.messages.at(-1)).includes('s3'))).toEqual([]);
    expect(await metric()).toBeCloseTo(0.156, 6);
  });
});
