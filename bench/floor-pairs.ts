/**
 * The bot beside the floor (floor-bot.ts) in `bench:streams`: the 1,000-channel scenario under
 * Discord's documented limits, run alternately by the floor bot and by the bot (floor, bot,
 * floor, bot, …: each pair on the machine as it is at that moment, which other work moves by
 * tenths of a second), and per pair the bot's acknowledgement p95 and first text p95 over the
 * floor's. The figure that counts is the median of the pairs' ratios (issue 20: at most 1.15).
 * Both are given DEFAULT_CHAT_MODEL: without it the bot asks the service for its model list on
 * the first /chat of the burst (and every /chat of the burst waits for that one request).
 */
import { discordScenario } from './discord-scenario.ts';
import { type Figures, median } from './figures.ts';
import { startFloor } from './runners.ts';

/** One pair's figures: the floor's run and the bot's, one after the other. */
interface Pair {
  floor: Figures;
  bot: Figures;
}

const ratio = (bot: number | undefined, floor: number | undefined) =>
  Number(((bot ?? NaN) / (floor ?? NaN)).toFixed(2));

/**
 * Runs `pairs` alternating pairs (BENCH_PAIRS, default 3) and prints each pair's figures, the
 * ratios bot / floor and their medians.
 * @returns every run's figures, floor and bot in the order they ran.
 */
export async function floorPairs(pairs = Number(process.env.BENCH_PAIRS ?? 3)): Promise<Figures[]> {
  const name = 'Discord, 1,000 /chat in 1,000 channels, documented limits';
  // Both told the model (the floor cannot ask the service which to use; the bot would, once, on the burst's first /chat).
  const scenario = {
    streams: 1000,
    channels: 1000,
    rateLimitMode: 'documented' as const,
    env: { DEFAULT_CHAT_MODEL: 'fake-chat' },
  };
  const runs: Pair[] = [];
  for (let i = 1; i <= pairs; i++) {
    const floor = await discordScenario(`${name}: floor bot, pair ${i}`, { ...scenario, start: startFloor });
    process.stdout.write(`${JSON.stringify(floor)}\n`);
    const bot = await discordScenario(`${name}: bot, pair ${i}`, scenario);
    process.stdout.write(`${JSON.stringify(bot)}\n`);
    runs.push({ floor, bot });
  }
  const acks = runs.map((p) => ratio(p.bot.ackP95Ms, p.floor.ackP95Ms));
  const firsts = runs.map((p) => ratio(p.bot.firstTextP95Ms, p.floor.firstTextP95Ms));
  const cpus = runs.map((p) => ratio(p.bot.cpuMs, p.floor.cpuMs));
  process.stdout.write(
    `\n${name}, floor and bot alternating:\n\n| pair | ack p95 floor / bot (ms) | ratio | first text p95 floor / bot (ms) | ratio | CPU floor / bot (ms) | ratio | exact floor / bot |\n|---|---|---|---|---|---|---|---|\n`,
  );
  runs.forEach((p, i) => {
    process.stdout.write(
      `| ${i + 1} | ${p.floor.ackP95Ms} / ${p.bot.ackP95Ms} | ${acks[i]} | ${p.floor.firstTextP95Ms} / ${p.bot.firstTextP95Ms} | ${firsts[i]} | ${p.floor.cpuMs} / ${p.bot.cpuMs} | ${cpus[i]} | ${p.floor.exact} / ${p.bot.exact} |\n`,
    );
  });
  process.stdout.write(`| median | | ${median(acks)} | | ${median(firsts)} | | ${median(cpus)} | |\n`);
  return runs.flatMap((p) => [p.floor, p.bot]);
}
