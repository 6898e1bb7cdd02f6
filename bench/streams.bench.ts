/**
 * Benchmark: streamed answers at the platforms' limits. The bot runs as its own process, as an
 * operator starts it (`npm start`, configured by environment variables),
 * against the project's fakes, which run in this process: FakeService streams each answer as
 * ~600 characters over ~6 s (60 pieces, 100 ms apart, each event written whole as production
 * servers flush them: the tests' cutting of events into 1–40-byte pieces would cost both
 * processes a write and a read per piece that no real service causes); FakeDiscord enforces one budget of 5
 * writes per 5 s per channel shared by every kind of write (the stricter, "shared" reading of
 * Discord's limits; one scenario uses the documented per-token and per-channel buckets instead);
 * FakeSlack enforces its tiers (chat.update 50 a minute, chat.startStream 20,
 * chat.appendStream 100, per workspace) and ~1 post a second per channel.
 *
 * Scenarios: 1, 10 and 50 concurrent /chat in one Discord channel; 10 concurrent mentions in one
 * Discord channel; 1,000 concurrent /chat in 1,000 Discord channels, under either reading of the
 * limits (SERVICE_MAX_CONCURRENCY=1024 so that the service is not the queue); 20 concurrent /chat in 20 channels of one Slack
 * workspace. For each: time to first visible text (p50 / p95, from the command to the first
 * write that shows answer text), visible updates per stream per second, the longest gap
 * between two updates of one stream, responses with status 429, whether every final text was
 * exact, the bot process's peak RSS (VmHWM) and its event-loop delay p99
 * (`nodejs_eventloop_lag_p99_seconds` of its /metrics: prom-client's monitorEventLoopDelay),
 * and for Discord commands the time to the fake receiving their acknowledgement (3 s allowed),
 * with the p50 / p95 of the acknowledgement, the service's request and the first write, from
 * the first command (where the time to first text goes).
 *
 * `floor`: the 1,000-channel scenario under the documented limits, run alternately by the floor
 * bot (bench/floor-bot.ts: the least a discord.js bot can do, on the same machine and fakes) and
 * by the bot, three pairs (BENCH_PAIRS), with the ratios bot / floor of the acknowledgement p95
 * and the first text p95 per pair and their medians (floor-pairs.ts). BENCH_FLOOR_INTENTS=messages
 * gives the floor the bot's message intents too (the same gateway traffic of its own messages);
 * BENCH_FLOOR_ALONE=1 runs the floor in both places of each pair (an A/A run: how far the ratios
 * move on this machine with nothing to tell apart).
 *
 * `shared-discord`, `shared-slack`, `shared-global` (shared-scenarios.ts): 3 bot processes on one
 * redis-server: 3 × 10 /chat in one Discord channel (shared mode, the interactions spread over the
 * processes' sessions); 3 × 10 /chat in one Slack channel, the requests spread over the 3 in turn;
 * 3 × 200 Discord channels of mentions under the documented limits and the bot token's global 50
 * a second (the bench prints the most bot-token requests in any second). Peak RSS and loop delay
 * are the highest of the 3 (each process's memory is printed).
 *
 * BENCH_GC=1 runs the bot and the floor with V8's `--trace-gc-nvp` and prints, for the Discord
 * scenarios, each process's collections from the first command to the last answer (gc-trace.ts:
 * scavenges, full collections, their pauses and helper-thread time, what was promoted).
 * BENCH_HEAP=1 has each answering process of the single-process Discord scenarios write a heap
 * snapshot 3 s into its burst (`--heapsnapshot-signal`) and prints what it holds (heap-census.ts:
 * objects, references, closures, ropes, suspended async functions, promises); the snapshot stops
 * the process for a second or two, so the run's latencies then say little.
 *
 * Run: `npm run bench:streams` (BENCH_SCENARIOS=one,ten,fifty,fifty-documented,mentions,thousand,thousand-documented,slack,floor,shared-discord,shared-slack,shared-global to choose).
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeService } from '../test/fakes/service.ts';
import { FakeSlack } from '../test/fakes/slack.ts';
import { freePort } from '../test/helpers/redis.ts';
import { ANSWER, CHUNK_DELAY_MS, discordScenario, PIECES } from './discord-scenario.ts';
import { type Figures, failuresOf, figuresOf, streamFigures } from './figures.ts';
import { floorPairs } from './floor-pairs.ts';
import { startBot } from './runners.ts';
import { discordShared, slackShared } from './shared-scenarios.ts';

async function slackScenario(name: string, streams: number): Promise<Figures> {
  const channels = Array.from({ length: streams }, (_, i) => ({ id: `C0BENCH${i}`, name: `bench-${i}` }));
  const service = await FakeService.start();
  const slack = await FakeSlack.start({ channels });
  const slackPort = await freePort();
  const bot = await startBot({
    SERVICE_BASE_URL: service.baseUrl,
    SERVICE_API_KEY: service.apiKey,
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: slack.signingSecret,
    SLACK_API_URL: slack.apiUrl,
    SLACK_PORT: String(slackPort),
  });
  const botUrl = `http://127.0.0.1:${slackPort}`;
  try {
    for (let i = 0; i < streams; i++)
      service.enqueue('chat', { stream: { pieces: PIECES, chunkDelayMs: CHUNK_DELAY_MS, wholeEvents: true } });
    const done = bot.finished('chat', streams);
    const startedAt = Date.now();
    await Promise.all(
      channels.map((c, i) =>
        slack.sendSlashCommand(botUrl, { command: '/chat', text: `question ${i}`, channel_id: c.id }),
      ),
    );
    const outcomes = await done;
    // The answer: the bot's message in the question's thread.
    const answers = channels.map((c) =>
      slack.messages(c.id).find((m) => m.user === slack.botUserId && m.threadTs !== undefined),
    );
    const per = answers.map((m) =>
      streamFigures(
        startedAt,
        (m?.revisions ?? []).map((r) => ({ at: r.at, content: r.text })),
      ),
    );
    const limited = slack.calls.filter((c) => c.status === 429 || c.error === 'ratelimited').length;
    return figuresOf(name, per, {
      status429: limited,
      exact: `${answers.filter((m) => m?.text === ANSWER).length}/${streams}`,
      failures: failuresOf(outcomes),
      ackP95Ms: undefined,
      peakRssMb: bot.peakRssMb(),
      eventLoopP99Ms: await bot.eventLoopP99Ms(),
    });
  } finally {
    await bot.stop();
    await slack.close();
    await service.close();
  }
}

const SCENARIOS: Record<string, () => Promise<Figures | Figures[]>> = {
  one: () => discordScenario('Discord, 1 /chat in 1 channel', { streams: 1, channels: 1 }),
  ten: () => discordScenario('Discord, 10 /chat in 1 channel', { streams: 10, channels: 1 }),
  fifty: () => discordScenario('Discord, 50 /chat in 1 channel', { streams: 50, channels: 1 }),
  'fifty-documented': () =>
    discordScenario('Discord, 50 /chat in 1 channel, documented limits', {
      streams: 50,
      channels: 1,
      rateLimitMode: 'documented',
    }),
  mentions: () => discordScenario('Discord, 10 mentions in 1 channel', { streams: 10, channels: 1, kind: 'mention' }),
  thousand: () => discordScenario('Discord, 1,000 /chat in 1,000 channels', { streams: 1000, channels: 1000 }),
  'thousand-documented': () =>
    discordScenario('Discord, 1,000 /chat in 1,000 channels, documented limits', {
      streams: 1000,
      channels: 1000,
      rateLimitMode: 'documented',
    }),
  slack: () => slackScenario('Slack, 20 /chat in 20 channels of 1 workspace', 20),
  floor: floorPairs,
  'shared-discord': () =>
    discordShared('Discord, 3 processes × 10 /chat in 1 channel (Redis)', { streams: 30, channels: 1 }),
  'shared-slack': () => slackShared('Slack, 3 processes × 10 /chat in 1 channel of 1 workspace (Redis)', 30),
  'shared-global': () =>
    discordShared('Discord, 3 processes × 200 channels of mentions, documented limits (Redis)', {
      streams: 600,
      channels: 600,
      kind: 'mention',
      rateLimitMode: 'documented',
    }),
};

if (process.env.BENCH_GC === '1')
  process.env.BENCH_BOT_FLAGS = `${process.env.BENCH_BOT_FLAGS ?? ''} --trace-gc-nvp`.trim();
if (process.env.BENCH_HEAP === '1') {
  // Each answering process writes a heap snapshot here when signalled (discord-scenario.ts, heap-census.ts).
  process.env.BENCH_HEAP_DIR = mkdtempSync(join(tmpdir(), 'bench-heap-'));
  process.env.BENCH_BOT_FLAGS =
    `${process.env.BENCH_BOT_FLAGS ?? ''} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${process.env.BENCH_HEAP_DIR}`.trim();
}
const chosen = (process.env.BENCH_SCENARIOS ?? Object.keys(SCENARIOS).join(',')).split(',').map((s) => s.trim());
const rows: Figures[] = [];
for (const name of chosen) {
  const run = SCENARIOS[name];
  if (!run) throw new Error(`unknown scenario ${name}; known: ${Object.keys(SCENARIOS).join(', ')}`);
  const figures = await run();
  for (const row of [figures].flat()) {
    rows.push(row);
    process.stdout.write(`${JSON.stringify(row)}\n`);
  }
}
process.stdout.write(
  `\n| scenario | first text p50 / p95 (ms) | updates per stream per s | longest gap (ms) | 429s | exact | ack p95 (ms) | bot peak RSS (MB) | bot loop delay p99 (ms) |\n|---|---|---|---|---|---|---|---|---|\n`,
);
for (const r of rows) {
  process.stdout.write(
    `| ${r.scenario} | ${r.firstTextP50Ms} / ${r.firstTextP95Ms} | ${r.updatesPerStreamPerSec} | ${r.longestGapMs} | ${r.status429} | ${r.exact} | ${r.ackP95Ms ?? '–'} | ${r.peakRssMb} | ${Number.isNaN(r.eventLoopP99Ms) ? '–' : r.eventLoopP99Ms} |\n`,
  );
}
process.exit(0);
