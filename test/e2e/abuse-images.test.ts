/**
 * One member cannot stall the bot for everyone with images (issue 16, item 1). The bot runs as
 * an operator runs it (`npm start`, its own process, environment variables only) against
 * FakeDiscord and FakeService in this process. A mention carries four crafted files: an SVG
 * whose filters render for minutes in librsvg (named .svg), the same disguised as a PNG (name
 * and content type), and two 40-megapixel interlaced PNGs (a format the bot reads, at the
 * largest size it accepts). While they are handled (from their download on), 20 other users'
 * /chat in 20 other channels must get their first text within 0.5 s of the same burst without
 * the attack, the attacking
 * mention must end with a sentence within IMAGE_PREP_TIMEOUT_MS + 1 s, and the bot's event-loop
 * delay p99 (its /metrics) must stay under 50 ms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { FakeService } from '../fakes/service.ts';
import { FakeDiscord, type FakeWrite } from '../fakes/discord.ts';
import { spawnBot, type BotProcess } from '../helpers/bot-process.ts';

const IMAGE_PREP_TIMEOUT_MS = 5_000;
const CHATS = 20;

/** ~230 bytes of SVG: turbulence and a wide blur over 36 megapixels (under the 40 MP limit). */
const SLOW_SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="6000" height="6000"><filter id="f"><feTurbulence baseFrequency="0.9" numOctaves="10"/><feGaussianBlur stdDeviation="400"/></filter><rect width="6000" height="6000" filter="url(#f)"/></svg>',
);

let service: FakeService;
let discord: FakeDiscord;
let bot: BotProcess;
let heavyPng: Buffer;

beforeAll(async () => {
  service = await FakeService.start();
  discord = await FakeDiscord.start({ guild: { channels: [...Array.from({ length: CHATS * 2 }, (_, i) => `chat-${i}`), 'attack'] }, rateLimitMode: 'documented' });
  bot = await spawnBot({
    SERVICE_BASE_URL: service.baseUrl,
    SERVICE_API_KEY: service.apiKey,
    DISCORD_TOKEN: discord.token,
    DISCORD_APPLICATION_ID: discord.applicationId,
    DISCORD_API_URL: discord.apiUrl,
    DEFAULT_VISION_MODEL: 'fake-vision',
    IMAGE_PREP_TIMEOUT_MS: String(IMAGE_PREP_TIMEOUT_MS),
  });
  // 6,300 × 6,300 (39.7 MP), Adam7-interlaced, two colours of noise: a 5 MB file that decodes to 119 MB.
  heavyPng = await sharp({ create: { width: 6300, height: 6300, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 2 } } })
    .png({ progressive: true, compressionLevel: 9, palette: true, colours: 2 })
    .toBuffer();
}, 120_000);

afterAll(async () => {
  await bot?.stop();
  await discord?.close();
  await service?.close();
});

/** The channel ids named `chat-<n>` from `from` on. */
const chatChannels = (from: number) => discord.channelList.filter((c) => c.name?.startsWith('chat-')).slice(from, from + CHATS).map((c) => c.id);

/** Runs one /chat per channel at once; resolves with each one's time to its first answer text, in ms. */
async function burst(channelIds: string[]): Promise<number[]> {
  const startedAt = new Map<string, number>();
  const firstText = new Map<string, number>();
  const onWrite = (w: FakeWrite) => {
    if (w.interactionId && startedAt.has(w.interactionId) && !firstText.has(w.interactionId) && w.content.includes('Echo:')) firstText.set(w.interactionId, w.at);
  };
  discord.events.on('write', onWrite);
  try {
    channelIds.forEach((channelId, i) => {
      const user = { id: String(200000000000000000n + BigInt(i)) };
      const interaction = discord.dispatchInteraction({ command: 'chat', options: { prompt: `question ${i}` }, channelId, user });
      startedAt.set(interaction.id, Date.now());
    });
    const deadline = Date.now() + 30_000;
    while (firstText.size < startedAt.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(firstText.size).toBe(startedAt.size);
    return [...startedAt].map(([id, at]) => firstText.get(id)! - at);
  } finally {
    discord.events.off('write', onWrite);
  }
}

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
  it('20 /chat in other channels answer as fast as without the attack; the attacking mention ends with a sentence within IMAGE_PREP_TIMEOUT_MS + 1 s; loop delay p99 < 50 ms', async () => {
    // Warm-up (first connections, JIT), then the baseline burst.
    await burst(chatChannels(0).slice(0, 2));
    const baseline = await burst(chatChannels(0));

    const attackChannel = discord.channelList.find((c) => c.name === 'attack')!.id;
    const { result, loopP99Ms } = await watchingLoop(async () => {
      const postedAt = Date.now();
      const attack = discord.postUserMessage({
        channelId: attackChannel,
        content: `<@${discord.botUser.id}> what are these?`,
        author: { id: '300000000000000001' },
        attachments: [
          { filename: 'filter.svg', contentType: 'image/svg+xml', data: SLOW_SVG },
          { filename: 'photo.png', contentType: 'image/png', data: SLOW_SVG },
          { filename: 'big-1.png', contentType: 'image/png', data: heavyPng },
          { filename: 'big-2.png', contentType: 'image/png', data: heavyPng },
        ],
      });
      // The burst starts once the attack's files are downloaded and being decoded (the bot downloads
      // every file it might read; filter.svg may be refused by its name alone).
      const names = new Set(['photo.png', 'big-1.png', 'big-2.png']);
      while (discord.downloads.filter((d) => names.has(d.filename) && d.completed).length < names.size && Date.now() < postedAt + 10_000) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 200));
      const during = await burst(chatChannels(CHATS));
      // The attacking mention's answer: the bot's reply to it, finished (no Stop button left) with the line naming the files.
      const deadline = postedAt + 30_000;
      let answer: { content: string; at: number } | undefined;
      while (!answer && Date.now() < deadline) {
        const reply = discord.messagesIn(attackChannel).find((m) => m.reference?.messageId === attack.id && m.author.id === discord.botUser.id);
        const last = reply ? discord.writes.filter((w) => w.messageId === reply.id).at(-1) : undefined;
        if (reply && last && /Not used: /.test(reply.content) && (reply.components ?? []).length === 0) answer = { content: reply.content, at: last.at };
        else await new Promise((r) => setTimeout(r, 50));
      }
      return { during, answer, answerMs: answer ? answer.at - postedAt : NaN };
    });

    const worst = (values: number[]) => Math.max(...values);
    expect(worst(result.during)).toBeLessThanOrEqual(worst(baseline) + 500);
    expect(result.answer?.content).toMatch(/filter\.svg \(an SVG drawing/);
    expect(result.answer?.content).toMatch(/photo\.png \(an SVG drawing/);
    expect(result.answerMs).toBeLessThanOrEqual(IMAGE_PREP_TIMEOUT_MS + 1_000);
    expect(loopP99Ms).toBeLessThan(50);
  }, 120_000);
});
