/**
 * `bench:streams`'s Discord scenarios: N /chat (or mentions) dispatched at once into M channels
 * of FakeDiscord, answered by a process of its own (the bot, or the floor bot: runners.ts), each
 * answer streamed by FakeService; the figures read from what the fakes saw.
 */

import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { countsGlobally } from '../test/fakes/discord/global-limit.ts';
import { FakeDiscord, type FakeWrite } from '../test/fakes/discord.ts';
import { FakeService } from '../test/fakes/service.ts';
import { type Figures, failuresOf, figuresOf, percentile, streamFigures } from './figures.ts';
import { type GcFigures, gcFigures, gcLine, gcSince } from './gc-trace.ts';
import { censusLine, type HeapCensus, heapCensus } from './heap-census.ts';
import { type Runner, startBot } from './runners.ts';

/** Each answer: 60 pieces of ~10 characters, 100 ms apart, each event written whole. */
export const PIECES = Array.from({ length: 60 }, (_, i) => `word${String(i).padStart(4, '0')} `);
export const ANSWER = PIECES.join('');
export const CHUNK_DELAY_MS = 100;

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

/** The most bot-token requests the fake counted in any second (interactions and webhooks are exempt), and its global 429s. */
function globalLine(discord: FakeDiscord, since: number): string {
  const times = discord.requests
    .filter((r) => r.at >= since && countsGlobally(r))
    .map((r) => r.at)
    .sort((a, b) => a - b);
  let peak = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= 1_000) j++;
    peak = Math.max(peak, i - j + 1);
  }
  if (process.env.BENCH_DEBUG) {
    const counted = discord.requests.filter((r) => r.at >= since && countsGlobally(r)).sort((a, b) => a.at - b.at);
    const busiest = counted.findIndex((r, i) => (counted[i + peak - 1]?.at ?? Infinity) - r.at < 1_000);
    const routesOf = new Map<string, number>();
    for (const r of counted.slice(busiest, busiest + peak)) {
      const route = `${r.method} ${r.path.replace(/\d{17,}/g, ':id')}`;
      routesOf.set(route, (routesOf.get(route) ?? 0) + 1);
    }
    process.stdout.write(
      `  busiest second from ${(counted[busiest]?.at ?? since) - since} ms: ${JSON.stringify([...routesOf])}\n`,
    );
  }
  const global = discord.rateLimits.filter((r) => r.bucket === 'global');
  const when = global.map((r) => r.at - since);
  const routes = [...new Set(global.map((r) => `${r.method} ${r.path.replace(/\d{17,}/g, ':id')}`))];
  return `bot-token requests from the first command: ${times.length}, at most ${peak} in any second (Discord allows 50); global 429s ${global.length} (ms from the first command: ${when.slice(0, 5).join(', ')}${when.length > 5 ? ', …' : ''}; routes: ${routes.join(', ')})`;
}

/**
 * The answering process's memory and CPU time, the CPU time of this process (the fakes: they
 * share the machine) since `from.harness`, and with BENCH_GC=1 the collections since `from.gc`.
 */
function processLine(runner: Runner, cpuMs: number, from: { harness: NodeJS.CpuUsage; gc: GcFigures }): string {
  const harness = process.cpuUsage(from.harness);
  const harnessMs = Math.round((harness.user + harness.system) / 1000);
  const line = `memory at most: ${runner.memoryLine()}; CPU from the first command to the last answer: ${cpuMs} ms (the fakes: ${harnessMs} ms)`;
  // BENCH_GC=1: V8's account of the collections over the same window (gc-trace.ts).
  if (runner.gcTrace().length === 0) return line;
  const gc = gcSince(gcFigures(runner.gcTrace()), from.gc);
  return `${line}\n  ${runner.kind} garbage collection over the same window: ${gcLine(gc)}`;
}

/** Sends the burst: `streams` /chat (or mentions) spread over the channels, each one's time kept by its id. */
function dispatchBurst(
  discord: FakeDiscord,
  burst: { kind: 'chat' | 'mention'; streams: number; channelIds: string[]; startedAt: Map<string, number> },
): void {
  const { kind, streams, channelIds, startedAt } = burst;
  for (let i = 0; i < streams; i++) {
    const channelId = channelIds[i % channelIds.length]!;
    const user = { id: String(100000000000000000n + BigInt(i)) };
    const id =
      kind === 'chat'
        ? discord.dispatchInteraction({ command: 'chat', options: { prompt: `question ${i}` }, channelId, user }).id
        : discord.postUserMessage({ channelId, content: `<@${discord.botUser.id}> question ${i}`, author: user }).id;
    startedAt.set(id, Date.now());
  }
}

/** When BENCH_HEAP=1 has the answering process write a heap snapshot: ms after the burst's commands were sent. */
const HEAP_AT_MS = 3_000;

/**
 * BENCH_HEAP=1 (streams.bench.ts starts the processes with `--heapsnapshot-signal=SIGUSR2` and
 * `--diagnostic-dir`): signals `runner` {@link HEAP_AT_MS} from now, and resolves to the census of
 * the snapshot it writes (the file is removed); undefined without BENCH_HEAP or a single process.
 * Writing the snapshot stops the process for a second or two: a run's latencies then say little.
 */
async function heapCensusLater(runner: Runner): Promise<HeapCensus | undefined> {
  const dir = process.env.BENCH_HEAP_DIR;
  if (process.env.BENCH_HEAP !== '1' || !dir || runner.pid === undefined) return undefined;
  await sleep(HEAP_AT_MS);
  process.kill(runner.pid, 'SIGUSR2');
  const named = (f: string) => f.endsWith('.heapsnapshot') && f.split('.').includes(String(runner.pid));
  for (let waited = 0; waited < 120_000; waited += 500) {
    await sleep(500);
    const file = readdirSync(dir).find(named);
    if (!file) continue;
    try {
      const census = heapCensus(join(dir, file));
      rmSync(join(dir, file));
      return census;
    } catch {
      // Still being written: not whole JSON yet.
    }
  }
  throw new Error(`no heap snapshot of process ${runner.pid} in ${dir}`);
}

/** How a Discord scenario runs. */
export interface DiscordScenario {
  streams: number;
  channels: number;
  kind?: 'chat' | 'mention';
  rateLimitMode?: 'shared' | 'documented';
  /** Which process answers (default the bot). */
  start?: (env: Record<string, string>) => Promise<Runner>;
  /** More environment for the process. */
  env?: Record<string, string>;
  /** FakeDiscord hands each interaction or message to one of the bot's sessions in turn (several processes on one token). */
  spreadEvents?: boolean;
}

/** Runs one Discord scenario; prints where the time to first text goes and the answering process's memory. */
export async function discordScenario(name: string, options: DiscordScenario): Promise<Figures> {
  const { streams, channels, kind = 'chat', rateLimitMode = 'shared', start = startBot } = options;
  const service = await FakeService.start();
  const discord = await FakeDiscord.start({
    guild: { channels: Array.from({ length: channels }, (_, i) => `bench-${i}`) },
    rateLimitMode,
    spreadEvents: options.spreadEvents ?? false,
  });
  const bot = await start({
    SERVICE_BASE_URL: service.baseUrl,
    SERVICE_API_KEY: service.apiKey,
    DISCORD_TOKEN: discord.token,
    DISCORD_APPLICATION_ID: discord.applicationId,
    DISCORD_API_URL: discord.apiUrl,
    SERVICE_MAX_CONCURRENCY: String(Math.max(256, streams + 24)),
    ...options.env,
  });
  try {
    for (let i = 0; i < streams; i++)
      service.enqueue('chat', { stream: { pieces: PIECES, chunkDelayMs: CHUNK_DELAY_MS, wholeEvents: true } });
    const { writes, acks, requested, startedAt } = recordDiscord(discord, service);
    const channelIds = discord.channelList.filter((c) => c.name?.startsWith('bench-')).map((c) => c.id);
    const done = bot.finished(kind, streams);
    const before = { cpu: bot.cpuMs(), harness: process.cpuUsage(), gc: gcFigures(bot.gcTrace()) };
    dispatchBurst(discord, { kind, streams, channelIds, startedAt });
    const census = heapCensusLater(bot);
    const outcomes = await done;
    const cpuMs = Math.round(bot.cpuMs() - before.cpu);
    const t0 = Math.min(...startedAt.values());
    const firstWrites = [...startedAt].map(([id, at]) => (writes.get(id)?.[0]?.at ?? NaN) - at);
    const fromFirst = requested.map((t) => t - t0);
    process.stdout.write(
      `  ${bot.kind}: p50 / p95 from the first command (ms): acknowledged ${percentile(acks, 50)} / ${percentile(acks, 95)}, service request ${percentile(fromFirst, 50)} / ${percentile(fromFirst, 95)}, first write ${percentile(firstWrites, 50)} / ${percentile(firstWrites, 95)}\n`,
    );
    if (process.env.BENCH_ACK_HISTOGRAM)
      process.stdout.write(
        `  acks p80..p99: ${[80, 85, 90, 92, 94, 95, 96, 98, 99].map((p) => percentile(acks, p)).join(' ')}\n`,
      );
    process.stdout.write(`  ${bot.kind} ${processLine(bot, cpuMs, before)}\n  ${globalLine(discord, t0)}\n`);
    const heap = await census;
    if (heap) process.stdout.write(`  ${bot.kind} heap ${HEAP_AT_MS / 1000} s into the burst: ${censusLine(heap)}\n`);
    const per = [...startedAt].map(([id, at]) => streamFigures(at, writes.get(id) ?? []));
    const exact = [...startedAt.keys()].filter(
      (id) => discord.message(writes.get(id)?.at(-1)?.messageId ?? '')?.content === ANSWER,
    ).length;
    const failures = failuresOf(outcomes);
    if (Object.keys(failures).length || process.env.BENCH_DEBUG)
      process.stdout.write(`  logged: ${JSON.stringify(bot.problems())}\n`);
    return figuresOf(name, per, {
      status429: discord.rateLimits.length,
      exact: `${exact}/${streams}`,
      failures,
      ackP95Ms: kind === 'chat' ? Math.round(percentile(acks, 95)) : undefined,
      peakRssMb: bot.peakRssMb(),
      eventLoopP99Ms: await bot.eventLoopP99Ms(),
      cpuMs,
    });
  } finally {
    await bot.stop();
    await discord.close();
    await service.close();
  }
}
