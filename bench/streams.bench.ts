/**
 * Benchmark: streamed answers at the platforms' limits. The whole bot (startBot, as an
 * operator starts it) runs in this process against the project's fakes: FakeService streams
 * each answer as ~600 characters over ~6 s (60 pieces, 100 ms apart); FakeDiscord enforces
 * one budget of 5 writes per 5 s per channel shared by every kind of write (the stricter,
 * "shared" reading of Discord's limits); FakeSlack enforces chat.update at 50 a minute per
 * workspace and ~1 post a second per channel.
 *
 * Scenarios: 1, 10 and 50 concurrent /chat in one Discord channel; 1,000 concurrent /chat in
 * 1,000 Discord channels (SERVICE_MAX_CONCURRENCY=1024 so that the service is not the
 * queue); 20 concurrent /chat in 20 channels of one Slack workspace. For each: time to first
 * visible text (p50 / p95, from the command to the first write that shows answer text),
 * visible updates per stream per second, the longest gap between two updates of one stream,
 * responses with status 429, whether every final text was exact, the process's peak RSS (bot
 * and fakes together) and the event-loop delay p99 (perf_hooks.monitorEventLoopDelay).
 *
 * Run: `npm run bench:streams` (BENCH_SCENARIOS=one,ten,fifty,thousand,slack to choose).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startBot, type Bot } from '../src/bot.ts';
import { FakeService } from '../test/fakes/service.ts';
import { FakeDiscord, type FakeWrite } from '../test/fakes/discord.ts';
import { FakeSlack } from '../test/fakes/slack.ts';

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
  peakRssMb: number;
  eventLoopP99Ms: number;
}

/** Samples RSS and event-loop delay while `work` runs. */
async function watched<T>(work: () => Promise<T>): Promise<{ result: T; peakRssMb: number; eventLoopP99Ms: number }> {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
  try {
    const result = await work();
    return { result, peakRssMb: Math.round(peak / 2 ** 20), eventLoopP99Ms: Number((delay.percentile(99) / 1e6).toFixed(1)) };
  } finally {
    clearInterval(timer);
    delay.disable();
  }
}

/** The bot's warnings and errors (their messages and error codes), to say why commands failed. */
const problems = new Map<string, number>();
const quietLog = new Writable({
  write: (chunk: Buffer, _e, done) => {
    for (const line of String(chunk).split('\n')) {
      if (!line) continue;
      const entry = JSON.parse(line) as { msg?: string; err?: { code?: unknown; message?: unknown } };
      const key = `${entry.msg} ${String(entry.err?.code ?? '')} ${String(entry.err?.message ?? '').slice(0, 80)}`;
      problems.set(key, (problems.get(key) ?? 0) + 1);
    }
    done();
  },
});

async function startQuietBot(env: Record<string, string>): Promise<Bot> {
  const storePath = join(mkdtempSync(join(tmpdir(), 'genbot-bench-')), 'state.sqlite');
  return startBot({ STORE_URL: `sqlite://${storePath}`, LOG_LEVEL: 'warn', ...env }, { logDestination: quietLog });
}

/** Waits until `count` commands have finished; failures are counted by error code in `failures`. */
function finished(bot: Bot, count: number, failures: Record<string, number> = {}): Promise<void> {
  return new Promise((resolve) => {
    let done = 0;
    const listener = (outcome: { ok: boolean; errorCode?: string }) => {
      if (!outcome.ok) failures[outcome.errorCode ?? 'unknown'] = (failures[outcome.errorCode ?? 'unknown'] ?? 0) + 1;
      if (++done < count) return;
      bot.core.events.off('command.done', listener);
      resolve();
    };
    bot.core.events.on('command.done', listener);
  });
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

async function discordScenario(name: string, streams: number, channels: number): Promise<Figures> {
  const service = await FakeService.start();
  const discord = await FakeDiscord.start({ guild: { channels: Array.from({ length: channels }, (_, i) => `bench-${i}`) } });
  const bot = await startQuietBot({
    SERVICE_BASE_URL: service.baseUrl,
    SERVICE_API_KEY: service.apiKey,
    DISCORD_TOKEN: discord.token,
    DISCORD_APPLICATION_ID: discord.applicationId,
    DISCORD_API_URL: discord.apiUrl,
    SERVICE_MAX_CONCURRENCY: String(Math.max(256, streams + 24)),
  });
  try {
    await discord.waitForReady();
    for (let i = 0; i < streams; i++) service.enqueue('chat', { stream: { pieces: PIECES, chunkDelayMs: CHUNK_DELAY_MS } });
    const writes = new Map<string, FakeWrite[]>();
    discord.events.on('write', (w) => {
      if (!w.interactionId) return;
      const list = writes.get(w.interactionId) ?? [];
      list.push(w);
      writes.set(w.interactionId, list);
    });
    // Time from the command's dispatch to the fake receiving its acknowledgement (the 3 s window).
    const acks: number[] = [];
    const dispatchedAt = new Map<string, number>();
    const received: number[] = [];
    discord.events.on('callback', (interaction, callback) => {
      const at = dispatchedAt.get(interaction.id);
      if (at !== undefined && callback.type !== undefined) acks.push(callback.at - at);
      dispatchedAt.delete(interaction.id);
    });
    bot.discord!.client.on('interactionCreate', (interaction) => {
      const at = startedAtOf.get(interaction.id);
      if (at !== undefined) received.push(Date.now() - at);
    });
    const startedAtOf = new Map<string, number>();
    const channelIds = discord.channelList.filter((c) => c.name?.startsWith('bench-')).map((c) => c.id);
    const failures: Record<string, number> = {};
    const done = finished(bot, streams, failures);
    const { result: started, peakRssMb, eventLoopP99Ms } = await watched(async () => {
      const startedAt = new Map<string, number>();
      const loopStarted = performance.now();
      for (let i = 0; i < streams; i++) {
        const interaction = discord.dispatchInteraction({ command: 'chat', options: { prompt: `question ${i}` }, channelId: channelIds[i % channelIds.length]!, user: { id: String(100000000000000000n + BigInt(i)) } });
        startedAt.set(interaction.id, Date.now());
        dispatchedAt.set(interaction.id, Date.now());
        startedAtOf.set(interaction.id, Date.now());
      }
      process.stdout.write(`  dispatching ${streams} interactions took ${Math.round(performance.now() - loopStarted)} ms\n`);
      await done;
      return startedAt;
    });
    const per = [...started].map(([id, at]) => streamFigures(at, writes.get(id) ?? []));
    process.stdout.write(`  received by discord.js: p50 ${Math.round(percentile(received, 50))} ms, p95 ${Math.round(percentile(received, 95))} ms\n`);
    process.stdout.write(`  first acknowledgements: ${acks.length}, p50 ${Math.round(percentile(acks, 50))} ms, p95 ${Math.round(percentile(acks, 95))} ms, max ${Math.round(Math.max(...acks))} ms\n`);
    const exact = [...started.keys()].filter((id) => discord.message(writes.get(id)?.at(-1)?.messageId ?? '')?.content === ANSWER).length;
    return {
      scenario: name,
      streams,
      firstTextP50Ms: Math.round(percentile(per.map((p) => p.firstMs), 50)),
      firstTextP95Ms: Math.round(percentile(per.map((p) => p.firstMs), 95)),
      updatesPerStreamPerSec: mean(per.map((p) => p.updatesPerSec)),
      longestGapMs: Math.round(Math.max(...per.map((p) => p.gapMs).filter((g) => !Number.isNaN(g)))),
      status429: discord.rateLimits.length,
      exact: `${exact}/${streams}`,
      failures,
      peakRssMb,
      eventLoopP99Ms,
    };
  } finally {
    await bot.stop(0);
    await discord.close();
    await service.close();
  }
}

async function slackScenario(name: string, streams: number): Promise<Figures> {
  const channels = Array.from({ length: streams }, (_, i) => ({ id: `C0BENCH${i}`, name: `bench-${i}` }));
  const service = await FakeService.start();
  const slack = await FakeSlack.start({ channels });
  const bot = await startQuietBot({
    SERVICE_BASE_URL: service.baseUrl,
    SERVICE_API_KEY: service.apiKey,
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: slack.signingSecret,
    SLACK_API_URL: slack.apiUrl,
    SLACK_PORT: '0',
  });
  const botUrl = `http://127.0.0.1:${bot.slack!.port}`;
  try {
    for (let i = 0; i < streams; i++) service.enqueue('chat', { stream: { pieces: PIECES, chunkDelayMs: CHUNK_DELAY_MS } });
    const failures: Record<string, number> = {};
    const done = finished(bot, streams, failures);
    const { result: startedAt, peakRssMb, eventLoopP99Ms } = await watched(async () => {
      const at = Date.now();
      await Promise.all(channels.map((c, i) => slack.sendSlashCommand(botUrl, { command: '/chat', text: `question ${i}`, channel_id: c.id })));
      await done;
      return at;
    });
    const per = channels.map((c) => {
      const message = slack.messages(c.id)[0];
      return { figures: streamFigures(startedAt, (message?.revisions ?? []).map((r) => ({ at: r.at, content: r.text }))), exact: message?.text === ANSWER };
    });
    const limited = slack.calls.filter((c) => c.status === 429 || (c as { error?: string }).error === 'ratelimited').length;
    return {
      scenario: name,
      streams,
      firstTextP50Ms: Math.round(percentile(per.map((p) => p.figures.firstMs), 50)),
      firstTextP95Ms: Math.round(percentile(per.map((p) => p.figures.firstMs), 95)),
      updatesPerStreamPerSec: mean(per.map((p) => p.figures.updatesPerSec)),
      longestGapMs: Math.round(Math.max(...per.map((p) => p.figures.gapMs).filter((g) => !Number.isNaN(g)))),
      status429: limited,
      exact: `${per.filter((p) => p.exact).length}/${streams}`,
      failures,
      peakRssMb,
      eventLoopP99Ms,
    };
  } finally {
    await bot.stop(0);
    await slack.close();
    await service.close();
  }
}

const SCENARIOS: Record<string, () => Promise<Figures>> = {
  one: () => discordScenario('Discord, 1 stream in 1 channel', 1, 1),
  ten: () => discordScenario('Discord, 10 streams in 1 channel', 10, 1),
  fifty: () => discordScenario('Discord, 50 streams in 1 channel', 50, 1),
  thousand: () => discordScenario('Discord, 1,000 streams in 1,000 channels', 1000, 1000),
  hundreds: () => discordScenario('Discord, 300 streams in 300 channels', 300, 300),
  slack: () => slackScenario('Slack, 20 streams in 20 channels of 1 workspace', 20),
};

const chosen = (process.env.BENCH_SCENARIOS ?? Object.keys(SCENARIOS).join(',')).split(',').map((s) => s.trim());
const rows: Figures[] = [];
for (const name of chosen) {
  const run = SCENARIOS[name];
  if (!run) throw new Error(`unknown scenario ${name}; known: ${Object.keys(SCENARIOS).join(', ')}`);
  const figures = await run();
  rows.push(figures);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  if (Object.keys(figures.failures).length) process.stdout.write(`  logged: ${JSON.stringify([...problems].sort((a, b) => b[1] - a[1]).slice(0, 5))}\n`);
  problems.clear();
}
process.stdout.write('\n| scenario | first text p50 / p95 (ms) | updates per stream per s | longest gap (ms) | 429s | exact | peak RSS (MB) | loop delay p99 (ms) |\n|---|---|---|---|---|---|---|---|\n');
for (const r of rows) {
  process.stdout.write(`| ${r.scenario} | ${r.firstTextP50Ms} / ${r.firstTextP95Ms} | ${r.updatesPerStreamPerSec} | ${r.longestGapMs} | ${r.status429} | ${r.exact} | ${r.peakRssMb} | ${r.eventLoopP99Ms} |\n`);
}
process.exit(0);
