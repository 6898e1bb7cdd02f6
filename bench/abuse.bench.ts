/**
 * Benchmark: what one member's crafted images cost everyone else. The bot runs as an operator
 * runs it (`npm start`, its own process), against FakeDiscord (documented limits) and
 * FakeService in this process. Rounds alternate: a burst of 20 /chat in 20 channels alone (the
 * floor), then the same burst while one mention carries four crafted files (an SVG whose
 * filters render for minutes, the same under a .png name, two 40-megapixel interlaced PNGs),
 * the burst starting once those files are downloaded. Per round: the burst's first-text p50 and
 * worst (from each command to the first write showing answer text), its ratio to the floor of
 * the same round pair, the bot's event-loop delay p99 over the burst (its /metrics, read before
 * and after), and how long the attacking mention took to end with its sentence.
 *
 * Run: `npm run bench:abuse` (BENCH_ROUNDS, default 5).
 */
import sharp from 'sharp';
import { FakeService } from '../test/fakes/service.ts';
import { FakeDiscord, type FakeWrite } from '../test/fakes/discord.ts';
import { spawnBot } from '../test/helpers/bot-process.ts';

const CHATS = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SLOW_SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="6000" height="6000"><filter id="f"><feTurbulence baseFrequency="0.9" numOctaves="10"/><feGaussianBlur stdDeviation="400"/></filter><rect width="6000" height="6000" filter="url(#f)"/></svg>',
);

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const p = (values: number[], q: number) => sorted(values)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

const service = await FakeService.start();
const discord = await FakeDiscord.start({ guild: { channels: [...Array.from({ length: CHATS }, (_, i) => `chat-${i}`), 'attack'] }, rateLimitMode: 'documented' });
const bot = await spawnBot({
  SERVICE_BASE_URL: service.baseUrl,
  SERVICE_API_KEY: service.apiKey,
  DISCORD_TOKEN: discord.token,
  DISCORD_APPLICATION_ID: discord.applicationId,
  DISCORD_API_URL: discord.apiUrl,
  DEFAULT_VISION_MODEL: 'fake-vision',
});
const heavyPng = await sharp({ create: { width: 6300, height: 6300, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 2 } } })
  .png({ progressive: true, compressionLevel: 9, palette: true, colours: 2 })
  .toBuffer();
const channels = discord.channelList.filter((c) => c.name?.startsWith('chat-')).map((c) => c.id);
const attackChannel = discord.channelList.find((c) => c.name === 'attack')!.id;
let users = 0;

/** One /chat per channel at once; each one's time to first answer text, in ms. */
async function burst(): Promise<number[]> {
  const startedAt = new Map<string, number>();
  const first = new Map<string, number>();
  const onWrite = (w: FakeWrite) => {
    if (w.interactionId && startedAt.has(w.interactionId) && !first.has(w.interactionId) && w.content.includes('Echo:')) first.set(w.interactionId, w.at);
  };
  discord.events.on('write', onWrite);
  for (const channelId of channels) {
    const user = { id: String(400000000000000000n + BigInt(users++)) };
    startedAt.set(discord.dispatchInteraction({ command: 'chat', options: { prompt: 'a question' }, channelId, user }).id, Date.now());
  }
  while (first.size < startedAt.size) await new Promise((r) => setTimeout(r, 10));
  discord.events.off('write', onWrite);
  return [...startedAt].map(([id, at]) => first.get(id)! - at);
}

/** The burst between two reads of /metrics: its first texts and the loop delay p99 over it (ms). */
async function measured(run: () => Promise<number[]>): Promise<{ firsts: number[]; loopP99Ms: number }> {
  await bot.metrics();
  const firsts = await run();
  bot.loopP99Ms = 0;
  await bot.metrics();
  return { firsts, loopP99Ms: bot.loopP99Ms };
}

/** Posts the attack and resolves once its files are downloaded; `ended` resolves with the ms to its final answer. */
async function attack(): Promise<{ ended: Promise<number> }> {
  const postedAt = Date.now();
  const message = discord.postUserMessage({
    channelId: attackChannel,
    content: `<@${discord.botUser.id}> what are these?`,
    author: { id: String(500000000000000000n + BigInt(users++)) },
    attachments: [
      { filename: 'filter.svg', contentType: 'image/svg+xml', data: SLOW_SVG },
      { filename: 'photo.png', contentType: 'image/png', data: SLOW_SVG },
      { filename: 'big-1.png', contentType: 'image/png', data: heavyPng },
      { filename: 'big-2.png', contentType: 'image/png', data: heavyPng },
    ],
  });
  const names = new Set(['photo.png', 'big-1.png', 'big-2.png']);
  const downloaded = () => discord.downloads.filter((d) => names.has(d.filename) && d.completed && d.at >= postedAt).length >= names.size;
  while (!downloaded() && Date.now() < postedAt + 10_000) await new Promise((r) => setTimeout(r, 10));
  const ended = (async () => {
    for (;;) {
      const reply = discord.messagesIn(attackChannel).find((m) => m.reference?.messageId === message.id && m.author.id === discord.botUser.id);
      if (reply && /Not used: /.test(reply.content) && (reply.components ?? []).length === 0) return discord.writes.filter((w) => w.messageId === reply.id).at(-1)!.at - postedAt;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return { ended };
}

try {
  await burst(); // warm-up
  const rows: string[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const floor = await measured(burst);
    const { ended } = await attack();
    const attacked = await measured(burst);
    const attackMs = await ended;
    rows.push(
      `| ${round} | ${p(floor.firsts, 0.5)} / ${Math.max(...floor.firsts)} | ${p(attacked.firsts, 0.5)} / ${Math.max(...attacked.firsts)} | ${(Math.max(...attacked.firsts) / Math.max(...floor.firsts)).toFixed(2)} | ${floor.loopP99Ms} | ${attacked.loopP99Ms} | ${attackMs} |`,
    );
    process.stdout.write(`${rows.at(-1)}\n`);
  }
  process.stdout.write(`\n| round | floor first text p50 / worst (ms) | under attack p50 / worst (ms) | worst vs floor | floor loop p99 (ms) | attack loop p99 (ms) | attacking mention ended (ms) |\n|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`);
} finally {
  await bot.stop();
  await discord.close();
  await service.close();
}
process.exit(0);
