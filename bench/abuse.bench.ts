/**
 * Benchmark: what one member's crafted files cost everyone else (issues 16 and 38). The bot runs
 * as an operator runs it (`npm start`, its own process), against FakeDiscord (documented
 * limits) and FakeService in this process. Each round runs, for each attack, a burst of 20 /chat
 * in 20 channels alone (the floor), then the same burst while one mention carries the attack,
 * the burst starting once its first file is downloaded. The attacks:
 * - `images`: four crafted images (an SVG whose filters render for minutes, the same under a
 *   .png name, two 40-megapixel interlaced PNGs);
 * - `pdfs`: ten 1 MB PDFs whose content streams inflate to 1 GiB of blanks each;
 * - `files`: ten 20 MiB text logs.
 * Per round and attack: the burst's first-text p50 and worst (from each command to the first
 * write showing answer text), the worst's ratio to the floor's of the same pair, the bot's
 * event-loop delay p99 over the burst (its /metrics, read before and after), and how long the
 * attacking mention took to end with its sentence.
 *
 * Run: `npm run bench:abuse` (BENCH_ROUNDS, default 3; BENCH_ATTACKS, default `images,pdfs,files`).
 */

import { discordEnv } from '../test/e2e/harness.ts';
import { FakeDiscord, type UserAttachmentOptions } from '../test/fakes/discord.ts';
import { FakeService } from '../test/fakes/service.ts';
import {
  bigLogAttachments,
  chatBurst,
  craftedAttachments,
  DOWNLOADED_CRAFTED,
  downloaded,
  finishedReplyTo,
  heavyInterlacedPng,
  pdfBombAttachments,
} from '../test/helpers/abuse.ts';
import { spawnBot } from '../test/helpers/bot-process.ts';
import { inflatingPdf } from '../test/helpers/pdf.ts';

const CHATS = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ATTACKS = (process.env.BENCH_ATTACKS ?? 'images,pdfs,files').split(',').map((a) => a.trim());

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const p = (values: number[], q: number) => sorted(values)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

const service = await FakeService.start();
const discord = await FakeDiscord.start({
  guild: { channels: [...Array.from({ length: CHATS }, (_, i) => `chat-${i}`), 'attack'] },
  rateLimitMode: 'documented',
});
const bot = await spawnBot({ ...discordEnv(service, discord), DEFAULT_VISION_MODEL: 'fake-vision' });
/** Each attack's files, and the files whose download starts the burst. */
const attacks: Record<string, { files: UserAttachmentOptions[]; downloaded: string[] }> = {
  images: { files: craftedAttachments(await heavyInterlacedPng()), downloaded: DOWNLOADED_CRAFTED },
  pdfs: { files: pdfBombAttachments(await inflatingPdf(1024 ** 3, 'blank')), downloaded: ['bomb-0.pdf'] },
  files: { files: bigLogAttachments(), downloaded: ['server-0.log'] },
};
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

/** Posts an attack and resolves once its first files are downloaded; `ended` resolves with the ms to its final answer. */
async function attack(kind: string): Promise<{ ended: Promise<number> }> {
  const { files, downloaded: first } = attacks[kind]!;
  const postedAt = Date.now();
  users += 1n;
  const message = discord.postUserMessage({
    channelId: attackChannel,
    content: `<@${discord.botUser.id}> what are these?`,
    author: { id: String(500000000000000000n + users) },
    attachments: files,
  });
  await downloaded(discord, first, postedAt);
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
    for (const kind of ATTACKS) {
      const floor = await measured(burst);
      const { ended } = await attack(kind);
      const attacked = await measured(burst);
      const attackMs = await ended;
      rows.push(
        `| ${round} | ${kind} | ${p(floor.firsts, 0.5)} / ${Math.max(...floor.firsts)} | ${p(attacked.firsts, 0.5)} / ${Math.max(...attacked.firsts)} | ${(Math.max(...attacked.firsts) / Math.max(...floor.firsts)).toFixed(2)} | ${floor.loopP99Ms} | ${attacked.loopP99Ms} | ${attackMs} |`,
      );
      process.stdout.write(`${rows.at(-1)}\n`);
    }
  }
  process.stdout.write(
    `\n| round | attack | floor first text p50 / worst (ms) | under attack p50 / worst (ms) | worst vs floor | floor loop p99 (ms) | attack loop p99 (ms) | attacking mention ended (ms) |\n|---|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
  );
} finally {
  await bot.stop();
  await discord.close();
  await service.close();
}
process.exit(0);
