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
 * Run: `npm run bench:streams` (BENCH_SCENARIOS=one,ten,fifty,fifty-documented,mentions,thousand,thousand-documented,slack to choose).
 */

import { FakeDiscord, type FakeWrite } from '../test/fakes/discord.ts';
import { FakeService } from '../test/fakes/service.ts';
import { FakeSlack } from '../test/fakes/slack.ts';
import { type BotProcess, spawnBot } from '../test/helpers/bot-process.ts';
import { freePort } from '../test/helpers/redis.ts';

const PIECES = Array.from({ length: 60 }, (_, i) => `word${String(i).padStart(4, '0')} `);
const ANSWER = PIECES.join('');
const CHUNK_DELAY_MS = 100;

/** The p-th percentile of the values that are numbers (a stream that never showed text has none). */
const percentile = (values: number[], p: number) => {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

/** The mean of the values that are numbers, to 2 decimals. */
const mean = (values: number[]) => {
  const known = values.filter((v) => !Number.isNaN(v));
  return Number((known.reduce((s, v) => s + v, 0) / Math.max(1, known.length)).toFixed(2));
};

/** What one scenario measured. */
interface Figures {
  scenario: string;
  streams: number;
  firstTextP50Ms: number;
  firstTextP95Ms: number;
  updatesPerStreamPerSec: number;
  longestGapMs: number;
  status429: number;
  exact: string;
  /** Commands that ended in an error, by code. */
  failures: Record<string, number>;
  /** Time from a Discord command to its acknowledgement reaching the fake, p95 (ms). */
  ackP95Ms: number | undefined;
  peakRssMb: number;
  eventLoopP99Ms: number;
}

/** The finished commands named `command` by outcome, from the bot's /metrics. */
function outcomesOf(metrics: string, command: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics.matchAll(/^genbot_commands_total\{([^}]*)\} (\d+)/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (labels.command === command) out[labels.outcome!] = (out[labels.outcome!] ?? 0) + Number(m[2]);
  }
  return out;
}

/** Waits until the bot has finished `count` invocations named `command` (its /metrics read once a second, as a scraper would, not more often); resolves with their outcomes. */
async function finished(bot: BotProcess, command: string, count: number): Promise<Record<string, number>> {
  for (;;) {
    const outcomes = outcomesOf(await bot.metrics(), command);
    if (Object.values(outcomes).reduce((s, n) => s + n, 0) >= count) return outcomes;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** The bot's event-loop delay p99 over the run (the worst scrape, one more taken now), in ms. */
async function eventLoopP99(bot: BotProcess): Promise<number> {
  await bot.metrics();
  return bot.loopP99Ms;
}

/** Per-stream figures from the times of its visible writes. */
function streamFigures(started: number, writes: Array<{ at: number; content: string }>) {
  const visible = writes.filter((w) => w.content.includes('word'));
  if (visible.length === 0) return { firstMs: NaN, updatesPerSec: NaN, gapMs: NaN };
  const first = visible[0]!.at;
  let gap = 0;
  for (let i = 1; i < visible.length; i++) gap = Math.max(gap, visible[i]!.at - visible[i - 1]!.at);
  const span = (visible.at(-1)!.at - first) / 1000;
  return { firstMs: first - started, updatesPerSec: span > 0 ? visible.length / span : visible.length, gapMs: gap };
}

/** The figures of a scenario from its streams' writes. */
function figuresOf(
  name: string,
  per: Array<{ firstMs: number; updatesPerSec: number; gapMs: number }>,
  rest: Pick<Figures, 'status429' | 'exact' | 'failures' | 'ackP95Ms' | 'peakRssMb' | 'eventLoopP99Ms'>,
): Figures {
  return {
    scenario: name,
    streams: per.length,
    firstTextP50Ms: Math.round(
      percentile(
        per.map((p) => p.firstMs),
        50,
      ),
    ),
    firstTextP95Ms: Math.round(
      percentile(
        per.map((p) => p.firstMs),
        95,
      ),
    ),
    updatesPerStreamPerSec: mean(per.map((p) => p.updatesPerSec)),
    longestGapMs: Math.round(Math.max(0, ...per.map((p) => p.gapMs).filter((g) => !Number.isNaN(g)))),
    ...rest,
  };
}

/** Failed outcomes only. */
const failuresOf = (outcomes: Record<string, number>) =>
  Object.fromEntries(Object.entries(outcomes).filter(([k]) => k !== 'ok'));

/**
 * Records, from the fakes' events: each answer's writes (by the interaction's id, or by the
 * message a mention's answer replies to), the time from each command to its acknowledgement
 * (ms), and when the service got each chat request. `startedAt` is filled by the caller.
 */
function recordDiscord(discord: FakeDiscord, service: FakeService) {
  // Writes by what they answer: an interaction's id, or the message a mention answer replies to.
  const writes = new Map<string, FakeWrite[]>();
  const replyTo = new Map<string, string>();
  discord.events.on('write', (w) => {
    const key = w.interactionId ?? replyTo.get(w.messageId) ?? discord.message(w.messageId)?.reference?.messageId;
    if (!key) return;
    if (!w.interactionId) replyTo.set(w.messageId, key);
    const list = writes.get(key) ?? [];
    list.push(w);
    writes.set(key, list);
  });
  const acks: number[] = [];
  const acked = new Set<string>();
  const startedAt = new Map<string, number>();
  discord.events.on('callback', (interaction, callback) => {
    const at = startedAt.get(interaction.id);
    if (at !== undefined && callback.type !== undefined && !acked.has(interaction.id)) {
      acked.add(interaction.id);
      acks.push(callback.at - at);
    }
  });
  // When the service got each question (its prompt names the stream): how much of the time to first text is before the answer's request.
  const requested: number[] = [];
  service.events.on('request', (r) => {
    if (r.route === 'chat') requested.push(r.receivedAt);
  });
  return { writes, acks, requested, startedAt };
}

async function discordScenario(
  name: string,
  streams: number,
  channels: number,
  kind: 'chat' | 'mention' = 'chat',
  rateLimitMode: 'shared' | 'documented' = 'shared',
): Promise<Figures> {
  const service = await FakeService.start();
  const discord = await FakeDiscord.start({
    guild: { channels: Array.from({ length: channels }, (_, i) => `bench-${i}`) },
    rateLimitMode,
  });
  const bot = await spawnBot({
    SERVICE_BASE_URL: service.baseUrl,
    SERVICE_API_KEY: service.apiKey,
    DISCORD_TOKEN: discord.token,
    DISCORD_APPLICATION_ID: discord.applicationId,
    DISCORD_API_URL: discord.apiUrl,
    SERVICE_MAX_CONCURRENCY: String(Math.max(256, streams + 24)),
  });
  try {
    for (let i = 0; i < streams; i++)
      service.enqueue('chat', { stream: { pieces: PIECES, chunkDelayMs: CHUNK_DELAY_MS, wholeEvents: true } });
    const { writes, acks, requested, startedAt } = recordDiscord(discord, service);
    const channelIds = discord.channelList.filter((c) => c.name?.startsWith('bench-')).map((c) => c.id);
    const done = finished(bot, kind, streams);
    for (let i = 0; i < streams; i++) {
      const channelId = channelIds[i % channelIds.length]!;
      const user = { id: String(100000000000000000n + BigInt(i)) };
      const id =
        kind === 'chat'
          ? discord.dispatchInteraction({ command: 'chat', options: { prompt: `question ${i}` }, channelId, user }).id
          : discord.postUserMessage({ channelId, content: `<@${discord.botUser.id}> question ${i}`, author: user }).id;
      startedAt.set(id, Date.now());
    }
    const outcomes = await done;
    const t0 = Math.min(...startedAt.values());
    const firstWrites = [...startedAt].map(([id, at]) => (writes.get(id)?.[0]?.at ?? NaN) - at);
    process.stdout.write(
      `  p50 / p95 from the first command (ms): acknowledged ${percentile(acks, 50)} / ${percentile(acks, 95)}, service request ${percentile(
        requested.map((t) => t - t0),
        50,
      )} / ${percentile(
        requested.map((t) => t - t0),
        95,
      )}, first write ${percentile(firstWrites, 50)} / ${percentile(firstWrites, 95)}\n`,
    );
    process.stdout.write(
      `  bot memory at most: heap ${bot.heapMb} MB, external ${bot.externalMb} MB, peak RSS ${bot.peakRssMb()} MB\n`,
    );
    const per = [...startedAt].map(([id, at]) => streamFigures(at, writes.get(id) ?? []));
    const exact = [...startedAt.keys()].filter(
      (id) => discord.message(writes.get(id)?.at(-1)?.messageId ?? '')?.content === ANSWER,
    ).length;
    const failures = failuresOf(outcomes);
    if (Object.keys(failures).length)
      process.stdout.write(`  logged: ${JSON.stringify([...bot.problems].sort((a, b) => b[1] - a[1]).slice(0, 5))}\n`);
    return figuresOf(name, per, {
      status429: discord.rateLimits.length,
      exact: `${exact}/${streams}`,
      failures,
      ackP95Ms: kind === 'chat' ? Math.round(percentile(acks, 95)) : undefined,
      peakRssMb: bot.peakRssMb(),
      eventLoopP99Ms: await eventLoopP99(bot),
    });
  } finally {
    await bot.stop();
    await discord.close();
    await service.close();
  }
}

async function slackScenario(name: string, streams: number): Promise<Figures> {
  const channels = Array.from({ length: streams }, (_, i) => ({ id: `C0BENCH${i}`, name: `bench-${i}` }));
  const service = await FakeService.start();
  const slack = await FakeSlack.start({ channels });
  const slackPort = await freePort();
  const bot = await spawnBot({
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
    const done = finished(bot, 'chat', streams);
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
      eventLoopP99Ms: await eventLoopP99(bot),
    });
  } finally {
    await bot.stop();
    await slack.close();
    await service.close();
  }
}

const SCENARIOS: Record<string, () => Promise<Figures>> = {
  one: () => discordScenario('Discord, 1 /chat in 1 channel', 1, 1),
  ten: () => discordScenario('Discord, 10 /chat in 1 channel', 10, 1),
  fifty: () => discordScenario('Discord, 50 /chat in 1 channel', 50, 1),
  'fifty-documented': () =>
    discordScenario('Discord, 50 /chat in 1 channel, documented limits', 50, 1, 'chat', 'documented'),
  mentions: () => discordScenario('Discord, 10 mentions in 1 channel', 10, 1, 'mention'),
  thousand: () => discordScenario('Discord, 1,000 /chat in 1,000 channels', 1000, 1000),
  'thousand-documented': () =>
    discordScenario('Discord, 1,000 /chat in 1,000 channels, documented limits', 1000, 1000, 'chat', 'documented'),
  slack: () => slackScenario('Slack, 20 /chat in 20 channels of 1 workspace', 20),
};

const chosen = (process.env.BENCH_SCENARIOS ?? Object.keys(SCENARIOS).join(',')).split(',').map((s) => s.trim());
const rows: Figures[] = [];
for (const name of chosen) {
  const run = SCENARIOS[name];
  if (!run) throw new Error(`unknown scenario ${name}; known: ${Object.keys(SCENARIOS).join(', ')}`);
  const figures = await run();
  rows.push(figures);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}
process.stdout.write(
  `\n| scenario | first text p50 / p95 (ms) | updates per stream per s | longest gap (ms) | 429s | exact | ack p95 (ms) | bot peak RSS (MB) | bot loop delay p99 (ms) |\n|---|---|---|---|---|---|---|---|---|\n`,
);
for (const r of rows) {
  process.stdout.write(
    `| ${r.scenario} | ${r.firstTextP50Ms} / ${r.firstTextP95Ms} | ${r.updatesPerStreamPerSec} | ${r.longestGapMs} | ${r.status429} | ${r.exact} | ${r.ackP95Ms ?? '–'} | ${r.peakRssMb} | ${r.eventLoopP99Ms} |\n`,
  );
}
process.exit(0);
