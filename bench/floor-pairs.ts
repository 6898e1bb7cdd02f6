/**
 * The bot beside the floor (floor-bot.ts) in `bench:streams`: the 1,000-channel scenario under
 * Discord's documented limits, run alternately by the floor bot and by the bot (each pair on the
 * machine as it is at that moment, which other work moves by tenths of a second; the order
 * within a pair alternates too: floor then bot, bot then floor, …), after one run that is not
 * counted (this process's fakes are slower on their first burst, before V8 has optimized them:
 * the first pair's floor came out ~1.4× slower than the next pairs'), and per pair the bot's
 * acknowledgement p95 and first text p95 over the floor's. The figure that counts is the median of the pairs' ratios (issue 20: at most 1.15).
 * BENCH_FLOOR_ALONE=1 puts the floor in the bot's place too (an A/A run): how far the ratios move
 * on this machine with nothing to tell apart.
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
  // BENCH_FLOOR_INTENTS=messages: the floor subscribes to the bot's message intents too (floor-bot.ts).
  const floorIntents = process.env.BENCH_FLOOR_INTENTS === 'messages' ? 'messages' : undefined;
  const name = `Discord, 1,000 /chat in 1,000 channels, documented limits${floorIntents ? ' (the floor with the message intents)' : ''}`;
  // Both told the model (the floor cannot ask the service which to use; the bot would, once, on the burst's first /chat).
  const scenario = {
    streams: 1000,
    channels: 1000,
    rateLimitMode: 'documented' as const,
    env: { DEFAULT_CHAT_MODEL: 'fake-chat' },
  };
  const floorScenario = {
    ...scenario,
    env: { ...scenario.env, ...(floorIntents ? { FLOOR_INTENTS: floorIntents } : {}) },
    start: startFloor,
  };
  // BENCH_FLOOR_ALONE=1: the floor in the bot's place too (an A/A run).
  const alone = process.env.BENCH_FLOOR_ALONE === '1';
  const other = alone ? { label: 'floor bot again', scenario: floorScenario } : { label: 'bot', scenario };
  await discordScenario(`${name}: warm-up (not counted)`, floorScenario);
  const runs: Pair[] = [];
  for (let i = 1; i <= pairs; i++) {
    const runFloor = () => discordScenario(`${name}: floor bot, pair ${i}`, floorScenario);
    const runBot = () => discordScenario(`${name}: ${other.label}, pair ${i}`, other.scenario);
    const [first, second] = i % 2 === 1 ? [runFloor, runBot] : [runBot, runFloor];
    const a = await first();
    process.stdout.write(`${JSON.stringify(a)}\n`);
    const b = await second();
    process.stdout.write(`${JSON.stringify(b)}\n`);
    runs.push(i % 2 === 1 ? { floor: a, bot: b } : { floor: b, bot: a });
  }
  const acks = runs.map((p) => ratio(p.bot.ackP95Ms, p.floor.ackP95Ms));
  const firsts = runs.map((p) => ratio(p.bot.firstTextP95Ms, p.floor.firstTextP95Ms));
  const cpus = runs.map((p) => ratio(p.bot.cpuMs, p.floor.cpuMs));
  process.stdout.write(
    `\n${name}, ${alone ? 'the floor against itself (A/A)' : 'floor and bot alternating'}:\n\n| pair | ack p95 floor / bot (ms) | ratio | first text p95 floor / bot (ms) | ratio | CPU floor / bot (ms) | ratio | exact floor / bot |\n|---|---|---|---|---|---|---|---|\n`,
  );
  runs.forEach((p, i) => {
    process.stdout.write(
      `| ${i + 1} | ${p.floor.ackP95Ms} / ${p.bot.ackP95Ms} | ${acks[i]} | ${p.floor.firstTextP95Ms} / ${p.bot.firstTextP95Ms} | ${firsts[i]} | ${p.floor.cpuMs} / ${p.bot.cpuMs} | ${cpus[i]} | ${p.floor.exact} / ${p.bot.exact} |\n`,
    );
  });
  const mid = (ratios: number[]) => median(ratios).toFixed(2);
  process.stdout.write(`| median | | ${mid(acks)} | | ${mid(firsts)} | | ${mid(cpus)} | |\n`);
  return runs.flatMap((p) => [p.floor, p.bot]);
}
