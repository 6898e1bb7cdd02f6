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

import { discordEnv } from '../test/e2e/harness.ts';
import { FakeDiscord } from '../test/fakes/discord.ts';
import { FakeService } from '../test/fakes/service.ts';
import {
  chatBurst,
  craftedAttachments,
  DOWNLOADED_CRAFTED,
  downloaded,
  finishedReplyTo,
  heavyInterlacedPng,
} from '../test/helpers/abuse.ts';
import { spawnBot } from '../test/helpers/bot-process.ts';

const CHATS = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const p = (values: number[], q: number) => sorted(values)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

const service = await FakeService.start();
const discord = await FakeDiscord.start({
  guild: { channels: [...Array.from({ length: CHATS }, (_, i) => `chat-${i}`), 'attack'] },
  rateLimitMode: 'documented',
});
const bot = await spawnBot({ ...discordEnv(service, discord), DEFAULT_VISION_MODEL: 'fake-vision' });
const heavyPng = await heavyInterlacedPng();
const channels = discord.channelList.filter((c) => c.name?.startsWith('chat-')).map((c) => c.id);
const attackChannel = discord.channelList.find((c) => c.name === 'attack')!.id;
let users = 0n;

/** One /chat per channel at once, each by a new user; each one's time to first answer text, in ms. */
function burst(): Promise<number[]> {
  users += BigInt(CHATS);
  return chatBurst(discord, channels, 400000000000000000n + users);
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
  users += 1n;
  const message = discord.postUserMessage({
    channelId: attackChannel,
    content: `<@${discord.botUser.id}> what are these?`,
    author: { id: String(500000000000000000n + users) },
    attachments: craftedAttachments(heavyPng),
  });
  await downloaded(discord, DOWNLOADED_CRAFTED, postedAt);
  return {
    ended: finishedReplyTo(discord, attackChannel, message.id, 60_000).then((answer) =>
      answer ? answer.at - postedAt : NaN,
    ),
  };
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
  process.stdout.write(
    `\n| round | floor first text p50 / worst (ms) | under attack p50 / worst (ms) | worst vs floor | floor loop p99 (ms) | attack loop p99 (ms) | attacking mention ended (ms) |\n|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
  );
} finally {
  await bot.stop();
  await discord.close();
  await service.close();
}
process.exit(0);
