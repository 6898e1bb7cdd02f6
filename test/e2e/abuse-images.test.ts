/**
 * One member cannot stall the bot for everyone with images (issue 16, item 1). The bot runs as
 * an operator runs it (`npm start`, its own process, environment variables only) against
 * FakeDiscord and FakeService in this process. A mention carries four crafted files: an SVG
 * whose filters render for minutes in librsvg (named .svg), the same disguised as a PNG (name
 * and content type), and two 40-megapixel interlaced PNGs (a format the bot reads, at the
 * largest size it accepts). While they are handled (from their download on), 20 other users'
 * /chat in 20 other channels must get their first text within 0.5 s of the same burst without
 * the attack, the attacking mention must end with a sentence within IMAGE_PREP_TIMEOUT_MS + 1 s,
 * and the bot's event-loop delay p99 (its /metrics) must stay under 50 ms: on a machine so busy
 * (other test files beside this one) that the same burst without the attack already comes near
 * that, within 50 ms of that burst's p99, measured the same way in the same run. A decoder on the
 * event loop would hold it for seconds either way.
 */
import { describe, expect, it } from 'vitest';
import type { FakeDiscord } from '../fakes/discord.ts';
import {
  chatBurst,
  craftedAttachments,
  DOWNLOADED_CRAFTED,
  downloaded,
  finishedReplyTo,
  heavyInterlacedPng,
} from '../helpers/abuse.ts';
import type { BotProcess } from '../helpers/bot-process.ts';
import { useE2E } from '../helpers/e2e.ts';

const IMAGE_PREP_TIMEOUT_MS = 5_000;
const CHATS = 20;

let discord: FakeDiscord;
let bot: BotProcess;
let heavyPng: Buffer;

useE2E(
  {
    discord: {
      guild: { channels: [...Array.from({ length: CHATS * 2 }, (_, i) => `chat-${i}`), 'attack'] },
      rateLimitMode: 'documented',
    },
    bot: {
      process: true,
      env: { DEFAULT_VISION_MODEL: 'fake-vision', IMAGE_PREP_TIMEOUT_MS: String(IMAGE_PREP_TIMEOUT_MS) },
    },
    timeoutMs: 120_000,
  },
  async (e2e) => {
    ({ discord, botProcess: bot } = e2e);
    heavyPng = await heavyInterlacedPng();
  },
);

/** The channel ids named `chat-<n>` from `from` on. */
const chatChannels = (from: number) =>
  discord.channelList
    .filter((c) => c.name?.startsWith('chat-'))
    .slice(from, from + CHATS)
    .map((c) => c.id);

/**
 * Runs `work` between two reads of the bot's /metrics: prom-client restarts its event-loop
 * delay histogram (10 ms resolution) at each read, so the second read's p99 is the p99 over
 * `work`. Resolves with its result and that p99, in ms.
 */
async function watchingLoop<T>(work: () => Promise<T>): Promise<{ result: T; loopP99Ms: number }> {
  await bot.metrics();
  const result = await work();
  bot.loopP99Ms = 0;
  await bot.metrics();
  return { result, loopP99Ms: bot.loopP99Ms };
}

describe('crafted images (bot as npm start runs it)', () => {
  it('20 /chat in other channels answer as fast as without the attack; the attacking mention ends with a sentence within IMAGE_PREP_TIMEOUT_MS + 1 s; loop delay p99 < 50 ms or within 50 ms of the burst without the attack', async () => {
    // Warm-up (first connections, JIT), then the baseline burst.
    await chatBurst(discord, chatChannels(0).slice(0, 2), 100000000000000000n);
    const { result: baseline, loopP99Ms: baselineLoopP99Ms } = await watchingLoop(() =>
      chatBurst(discord, chatChannels(0), 200000000000000000n),
    );

    const attackChannel = discord.channelList.find((c) => c.name === 'attack')!.id;
    const { result, loopP99Ms } = await watchingLoop(async () => {
      const postedAt = Date.now();
      const attack = discord.postUserMessage({
        channelId: attackChannel,
        content: `<@${discord.botUser.id}> what are these?`,
        author: { id: '300000000000000001' },
        attachments: craftedAttachments(heavyPng),
      });
      // The burst starts once the attack's files are downloaded and being decoded.
      await downloaded(discord, DOWNLOADED_CRAFTED, postedAt);
      await new Promise((r) => setTimeout(r, 200));
      const during = await chatBurst(discord, chatChannels(CHATS), 200000000000000100n);
      // The attacking mention's answer: finished (no Stop button left), with the line naming the files.
      const answer = await finishedReplyTo(discord, attackChannel, attack.id);
      return { during, answer, answerMs: answer ? answer.at - postedAt : NaN };
    });

    const worst = (values: number[]) => Math.max(...values);
    expect(worst(result.during)).toBeLessThanOrEqual(worst(baseline) + 500);
    expect(result.answer?.content).toMatch(/filter\.svg \(an SVG drawing/);
    expect(result.answer?.content).toMatch(/photo\.png \(an SVG drawing/);
    expect(result.answerMs).toBeLessThanOrEqual(IMAGE_PREP_TIMEOUT_MS + 1_000);
    // What this guards against held the loop for hundreds of ms (p99 ~200 ms with the files
    // decoded on the main thread). The p99 of two windows of a busy machine differ by up to ~30 ms
    // with nothing wrong (10 ms histogram buckets; a clean-clone CI run: 57.8 against 31.3).
    expect(loopP99Ms).toBeLessThan(Math.max(50, baselineLoopP99Ms + 50));
  }, 120_000);
});
