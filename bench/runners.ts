/**
 * The processes `bench:streams` measures, behind one shape: the bot as an operator starts it
 * (test/helpers/bot-process.ts), and the floor bot (floor-bot.ts), the least a discord.js bot
 * can do, started the same way with the same environment.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { spawnBot } from '../test/helpers/bot-process.ts';
import { isGcTraceLine } from './gc-trace.ts';

/** A process answering the bench's commands. */
export interface Runner {
  /** `bot` or `floor`. */
  kind: 'bot' | 'floor';
  /** Waits until `count` invocations named `command` are over; resolves with their outcomes (`ok` or an error code). */
  finished(command: string, count: number): Promise<Record<string, number>>;
  /** Its peak resident set so far (VmHWM), in MB. */
  peakRssMb(): number;
  /** The CPU time it has used so far (user + system, every thread: GC helpers included), in ms. */
  cpuMs(): number;
  /** Its event-loop delay p99 over the run, in ms (NaN when it does not say). */
  eventLoopP99Ms(): Promise<number>;
  /** A line about its memory, for the bench's output. */
  memoryLine(): string;
  /** The most frequent problems it logged, for the bench's output. */
  problems(): Array<[string, number]>;
  /** V8's lines of its garbage collections so far (empty unless BENCH_GC=1 traces them: gc-trace.ts). */
  gcTrace(): readonly string[];
  /** Its node process's id (BENCH_HEAP=1 signals it for a heap snapshot: heap-census.ts); none for several processes. */
  pid?: number;
  stop(): Promise<void>;
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

/** Clock ticks a second of /proc's CPU times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * The CPU time process `pid` has used so far (utime + stime of /proc/<pid>/stat, all its
 * threads), in ms; NaN once it is gone.
 */
export function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // Fields 14 and 15 of stat (utime, stime); `fields` starts at field 3 (state).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const total = (outcomes: Record<string, number>) => Object.values(outcomes).reduce((s, n) => s + n, 0);

/** The bot (`npm start`) with `env`; its outcomes read from its /metrics once a second, as a scraper would. */
export async function startBot(env: Record<string, string>): Promise<Runner> {
  const bot = await spawnBot(env);
  return {
    kind: 'bot',
    finished: async (command, count) => {
      for (;;) {
        const outcomes = outcomesOf(await bot.metrics(), command);
        if (total(outcomes) >= count) return outcomes;
        await sleep(1000);
      }
    },
    peakRssMb: () => bot.peakRssMb(),
    cpuMs: () => cpuMsOf(bot.pid),
    eventLoopP99Ms: async () => {
      await bot.metrics();
      return bot.loopP99Ms;
    },
    memoryLine: () => `heap ${bot.heapMb} MB, external ${bot.externalMb} MB, peak RSS ${bot.peakRssMb()} MB`,
    problems: () => [...bot.problems].sort((a, b) => b[1] - a[1]).slice(0, 5),
    gcTrace: () => bot.gcTrace,
    pid: bot.pid,
    stop: () => bot.stop(),
  };
}

/**
 * The node options `npm start` gives the bot (its script's NODE_OPTIONS: the heap cap and the
 * young generation's size), for the floor bot to run under the same.
 */
function startNodeOptions(): string[] {
  const packageJson = JSON.parse(readFileSync(resolve(import.meta.dirname, '..', 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const options = /NODE_OPTIONS=\\?"([^"$\\]*)/.exec(packageJson.scripts.start)?.[1] ?? '';
  return options.split(' ').filter((o) => o.startsWith('--'));
}

/**
 * The floor bot (floor-bot.ts) with `env`, node started as `npm start` starts the bot (the same
 * node options; BENCH_BOT_FLAGS such as `--cpu-prof` apply to it too). Resolves once it is ready.
 * @throws Error when it exits or is not ready within 60 s.
 */
export async function startFloor(env: Record<string, string>): Promise<Runner> {
  const flags = (process.env.BENCH_BOT_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [...startNodeOptions(), ...flags, '--import', 'tsx', resolve(import.meta.dirname, 'floor-bot.ts')],
    {
      cwd: resolve(import.meta.dirname, '..'),
      env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const outcomes: Record<string, number> = {};
  const problems = new Map<string, number>();
  let ready: () => void;
  const isReady = new Promise<void>((r) => {
    ready = r;
  });
  const gcTrace: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (isGcTraceLine(line)) return void gcTrace.push(line);
    if (line === 'READY') ready();
    const done = /^DONE \S+ (.*)$/.exec(line);
    if (done) outcomes[done[1]!] = (outcomes[done[1]!] ?? 0) + 1;
  });
  createInterface({ input: child.stderr! }).on('line', (line) =>
    problems.set(line.slice(0, 120), (problems.get(line.slice(0, 120)) ?? 0) + 1),
  );
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const timeout = sleep(60_000).then(() => 'timeout' as const);
  const first = await Promise.race([isReady.then(() => 'ready' as const), exited.then(() => 'exit' as const), timeout]);
  if (first !== 'ready') {
    child.kill('SIGKILL');
    throw new Error(`the floor bot was not ready (${first}): ${[...problems.keys()].join(' | ')}`);
  }
  const peakRssMb = () =>
    Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024);
  return {
    kind: 'floor',
    finished: async (_command, count) => {
      while (total(outcomes) < count) await sleep(200);
      return { ...outcomes };
    },
    peakRssMb,
    cpuMs: () => cpuMsOf(child.pid!),
    eventLoopP99Ms: async () => NaN,
    memoryLine: () => `peak RSS ${peakRssMb()} MB`,
    problems: () => [...problems].sort((a, b) => b[1] - a[1]).slice(0, 5),
    gcTrace: () => gcTrace,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
