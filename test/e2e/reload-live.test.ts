/**
 * End-to-end, what a reload applies (issue 43 item 4): every variable config-reload.ts calls
 * `live` reaches the running bot, on the very objects the core reads per use, without a new
 * client, store or adapter; the price table is read again from the same path; spending turns on
 * with a reload; quotas hold from the next request; the agent view's prompts on Slack change.
 * The bot runs in this process with discord.js and @slack/bolt unmodified, against the fakes,
 * reloaded as its SIGHUP handler reloads it (helpers/reloading.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Bot } from '../../src/bot.ts';
import { RELOAD_KINDS } from '../../src/config-reload.ts';
import type { FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { DEFAULT_USERS, type FakeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import { type Reloading, startFromEnvFile } from '../helpers/reloading.ts';
import { discordEnv, slackEnv, type TestBot } from './harness.ts';

let service: FakeService;
let discord: FakeDiscord;
let slack: FakeSlack;

/** The Slack user of the agent view's test. */
const SLACK_USER = 'U0RELOAD';

useE2E(
  {
    discord: {},
    slack: { users: [...DEFAULT_USERS, { id: SLACK_USER, name: 'reloader' }] },
    resetServiceAfterEach: true,
  },
  (e2e) => {
    ({ service, discord, slack } = e2e);
  },
);

let running: TestBot | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** Starts the bot on Discord (or Slack) with `lines` in its `.env`. */
async function startFrom(lines: Record<string, string>, platform: 'discord' | 'slack' = 'discord'): Promise<Reloading> {
  const env = platform === 'discord' ? discordEnv(service, discord) : slackEnv(service, slack);
  const started = await startFromEnvFile(env, {}, lines);
  running = started.testBot;
  return started;
}

/** A price table file in `currency` (fake-chat priced). */
function priceFile(currency: string, path = join(mkdtempSync(join(tmpdir(), 'genbot-reload-prices-')), 'p.json')) {
  writeFileSync(path, JSON.stringify({ currency, chat: { 'fake-chat': { prompt: 1, completion: 2 } } }));
  return path;
}

/** What a variable reads as on the running bot, and the value of it the reload test sets. */
type Reading = { value: string; read: (bot: Bot) => unknown; expected: unknown };

/** Every live variable but ASSISTANT_PROMPTS (Slack's: its own test below). */
function liveReadings(prices: string): Record<string, Reading> {
  const channel = (bot: Bot) => bot.core.models.forChannel(undefined);
  return {
    DEFAULT_CHAT_MODEL: {
      value: 'fake-vision',
      read: async (b) => (await channel(b)).chat.value,
      expected: 'fake-vision',
    },
    DEFAULT_IMAGE_MODEL: {
      value: 'fake-image-xl',
      read: async (b) => (await channel(b)).image.value,
      expected: 'fake-image-xl',
    },
    DEFAULT_VISION_MODEL: {
      value: 'fake-vision',
      read: async (b) => (await channel(b)).vision.value,
      expected: 'fake-vision',
    },
    FALLBACK_CHAT_MODELS: {
      value: 'fake-vision,fake-chat',
      read: (b) => b.core.models.fallbacks.chat,
      expected: ['fake-vision', 'fake-chat'],
    },
    FALLBACK_IMAGE_MODELS: {
      value: 'Fake Image XL',
      read: (b) => b.core.models.fallbacks.image,
      expected: ['Fake Image XL'],
    },
    MAX_INPUT_IMAGES: { value: '7', read: (b) => b.core.inputImages.maxCount, expected: 7 },
    MAX_INPUT_IMAGE_BYTES: { value: '2048', read: (b) => b.core.inputImages.maxBytes, expected: 2048 },
    MAX_TOKENS_LIMIT: { value: '1234', read: (b) => b.core.limits.maxTokens, expected: 1234 },
    MAX_ANSWER_CHARS: { value: '3000', read: (b) => b.core.limits.maxAnswerChars, expected: 3000 },
    STREAM_IDLE_TIMEOUT_MS: { value: '5000', read: (b) => b.core.limits.streamIdleMs, expected: 5000 },
    HISTORY_TOKEN_BUDGET: { value: '700', read: (b) => b.core.limits.historyTokenBudget, expected: 700 },
    MAX_FILE_CHARS: { value: '1000', read: (b) => b.core.limits.files.maxChars, expected: 1000 },
    MAX_FILES_PER_MESSAGE: { value: '3', read: (b) => b.core.limits.files.maxFiles, expected: 3 },
    MAX_FILE_BYTES_PER_MESSAGE: { value: '4096', read: (b) => b.core.limits.files.maxMessageBytes, expected: 4096 },
    MAX_PDF_PAGES: { value: '9', read: (b) => b.core.limits.files.maxPdfPages, expected: 9 },
    REPLY_CHAIN_MAX: { value: '7', read: (b) => b.core.limits.replyChainMax, expected: 7 },
    EDIT_REANSWER_MINUTES: { value: '3', read: (b) => b.core.limits.editReanswerMinutes, expected: 3 },
    NOTIFY_AFTER_SECONDS: { value: '0', read: (b) => b.core.limits.notifyAfterSeconds, expected: 0 },
    SWEEP_MINUTES: { value: '2.5', read: (b) => b.core.limits.sweepMinutes, expected: 2.5 },
    EVENT_SILENCE_MINUTES: { value: '0', read: (b) => b.core.limits.eventSilenceMinutes, expected: 0 },
    REGENERATE_STATES_PER_USER: { value: '4', read: (b) => b.core.limits.regenerateStatesPerUser, expected: 4 },
    DEFAULT_LOCALE: { value: 'de', read: (b) => b.core.languages.defaultLocale, expected: 'de' },
    ALLOW_DISABLE_SAFETY_CHECKER: {
      value: 'true',
      read: (b) => b.core.limits.allowDisableSafetyChecker,
      expected: true,
    },
    IMAGINE_BUTTONS: { value: 'everyone', read: (b) => b.core.limits.imagineButtons, expected: 'everyone' },
    IMAGINE_STATE_MAX_BYTES: { value: '1000', read: (b) => b.core.limits.imagineStateMaxBytes, expected: 1000 },
    VARY_DENOISING_STRENGTH: { value: '0.3', read: (b) => b.core.limits.varyDenoisingStrength, expected: 0.3 },
    QUOTA_CHAT_PER_MINUTE: { value: '5', read: (b) => b.core.quotas.limits.chatPerMinute, expected: 5 },
    QUOTA_IMAGES_PER_DAY: { value: '6', read: (b) => b.core.quotas.limits.imagesPerDay, expected: 6 },
    QUOTA_TOKENS_PER_DAY: { value: '7000', read: (b) => b.core.quotas.limits.tokensPerDay, expected: 7000 },
    QUOTA_ADMINS: { value: 'true', read: (b) => b.core.quotas.limits.admins, expected: true },
    PRICES_FILE: { value: prices, read: (b) => b.core.spend?.currency, expected: 'USD' },
    SPEND_CAP_USER_DAY: { value: '0.5', read: (b) => b.core.spend?.config.caps.user.day, expected: 500_000 },
    SPEND_CAP_USER_MONTH: { value: '1.5', read: (b) => b.core.spend?.config.caps.user.month, expected: 1_500_000 },
    SPEND_CAP_CHANNEL_DAY: { value: '2', read: (b) => b.core.spend?.config.caps.channel.day, expected: 2_000_000 },
    SPEND_CAP_CHANNEL_MONTH: { value: '3', read: (b) => b.core.spend?.config.caps.channel.month, expected: 3_000_000 },
    SPEND_CAP_SERVER_DAY: { value: '4', read: (b) => b.core.spend?.config.caps.server.day, expected: 4_000_000 },
    SPEND_CAP_SERVER_MONTH: { value: '5', read: (b) => b.core.spend?.config.caps.server.month, expected: 5_000_000 },
    ADMIN_USER_IDS: { value: '111,U0ADMIN', read: (b) => [...b.core.admins.userIds], expected: ['111', 'U0ADMIN'] },
    ADMIN_ROLE_IDS: { value: '333', read: (b) => [...b.core.admins.roleIds], expected: ['333'] },
    LOG_LEVEL: { value: 'warn', read: (b) => b.log.level, expected: 'warn' },
  };
}

describe('what a reload applies', () => {
  it('every live variable reaches the running bot, on the objects it had (no client, store or adapter made again)', async () => {
    const readings = liveReadings(priceFile('USD'));
    const live = Object.entries(RELOAD_KINDS)
      .filter(([, kind]) => kind === 'live')
      .map(([name]) => name);
    expect(Object.keys(readings).sort()).toEqual(live.filter((name) => name !== 'ASSISTANT_PROMPTS').sort());

    const { testBot, write, reload } = await startFrom({ PRICES_FILE: priceFile('EUR') });
    const { bot } = testBot;
    const partsOf = (b: Bot) => [b.core, b.core.service, b.core.store, b.core.limits, b.core.spend, b.discord, b.log];
    const parts = partsOf(bot);
    for (const [name, { read, expected }] of Object.entries(readings))
      expect(await read(bot), `${name} before the reload`).not.toEqual(expected);

    write(Object.fromEntries(Object.entries(readings).map(([name, r]) => [name, r.value])));
    const outcome = await reload();
    expect(outcome.result).toBe('applied');
    expect([...outcome.changed].sort()).toEqual(Object.keys(readings).sort());
    expect(outcome.needRestart).toEqual([]);
    for (const [name, { read, expected }] of Object.entries(readings))
      expect(await read(bot), `${name} after the reload`).toEqual(expected);
    partsOf(bot).forEach((part, i) => expect(part, `part ${i}`).toBe(parts[i]));
  });

  it('the price table is read again from the same path, and a reload turns spending on', async () => {
    const prices = priceFile('EUR');
    const { testBot, write, reload } = await startFrom({});
    expect(testBot.bot.core.spend).toBeUndefined();
    write({ PRICES_FILE: prices });
    expect((await reload()).changed).toEqual(['PRICES_FILE']);
    expect(testBot.bot.core.spend?.currency).toBe('EUR');

    priceFile('CHF', prices);
    expect((await reload()).changed).toEqual([]);
    expect(testBot.bot.core.spend?.currency).toBe('CHF');
  });

  it('a quota set by a reload counts the uses before it and refuses the request past it', async () => {
    const { testBot, write, reload } = await startFrom({ DEFAULT_CHAT_MODEL: 'fake-chat' });
    const channel = discord.addChannel('reload-quota');
    discord.setMessageBudget(channel.id, { limit: 1000, windowMs: 1000 });
    const chat = async (prompt: string) => {
      const done = testBot.outcomes((o) => o.command === 'chat');
      discord.dispatchInteraction({ command: 'chat', channelId: channel.id, options: { prompt } });
      return (await done)[0]!;
    };
    expect((await chat('one')).ok).toBe(true);
    expect((await chat('two')).ok).toBe(true);
    // Uses are counted with quotas off too (for /usage): written now, not with the next batch.
    await testBot.bot.core.quotas.flush();
    write({ DEFAULT_CHAT_MODEL: 'fake-chat', QUOTA_CHAT_PER_MINUTE: '3' });
    expect((await reload()).result).toBe('applied');
    expect((await chat('three')).ok).toBe(true);
    expect(await chat('four')).toMatchObject({ ok: false, errorCode: 'quota_exceeded' });
  });

  it("Slack's agent view shows the prompts of ASSISTANT_PROMPTS as reloaded", async () => {
    const first = [{ title: 'Before', message: 'the reload' }];
    const second = [{ title: 'After', message: 'the reload' }];
    const { testBot, write, reload } = await startFrom({ ASSISTANT_PROMPTS: JSON.stringify(first) }, 'slack');
    const url = `http://127.0.0.1:${testBot.bot.slack!.port}`;
    const user = SLACK_USER;
    const dm = slack.openIm(user).id;
    const shown = () => slack.suggestedPrompts.filter((p) => p.channel === dm).map((p) => p.prompts);
    await slack.sendEvent(url, slack.appHomeOpenedEvent({ user, tab: 'messages' }));
    await vi.waitFor(() => expect(shown()).toEqual([first]), { timeout: 10_000 });

    write({ ASSISTANT_PROMPTS: JSON.stringify(second) });
    expect((await reload()).changed).toEqual(['ASSISTANT_PROMPTS']);
    await slack.sendEvent(url, slack.appHomeOpenedEvent({ user, tab: 'messages' }));
    await vi.waitFor(() => expect(shown()).toEqual([first, second]), { timeout: 10_000 });
  });
});
