/**
 * The bot as an operator runs it, for benchmarks and the tests that must see it as one:
 * `npm start` in a process of its own, configured by environment variables only, with its
 * /healthz, /metrics (event-loop delay, memory) and peak RSS readable from outside.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { isGcTraceLine } from '../../bench/gc-trace.ts';
import { freePort } from './redis.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** The bot as a process of its own. */
export interface BotProcess {
  child: ChildProcess;
  /** The bot's own process id (node's, not npm's): for its resource limits (`prlimit --pid`). */
  pid: number;
  /** Its /healthz and /metrics. */
  httpPort: number;
  /** Warnings and errors it logged, by message and error code. */
  problems: Map<string, number>;
  /** V8's lines of each garbage collection, when it runs with `--trace-gc-nvp` (BENCH_GC=1: bench/gc-trace.ts). */
  gcTrace: string[];
  /**
   * Its /metrics text. prom-client restarts its event-loop delay histogram at each scrape, so
   * the p99 of every scrape is kept: {@link loopP99Ms} is the worst of them.
   */
  metrics(): Promise<string>;
  /** The worst event-loop delay p99 seen in a scrape so far, in ms. */
  loopP99Ms: number;
  /** The most V8 heap in use and external memory (buffers) seen in a scrape, in MB. */
  heapMb: number;
  externalMb: number;
  /** Its peak resident set so far (VmHWM), in MB. */
  peakRssMb(): number;
  stop(): Promise<void>;
}

/**
 * Starts the bot as an operator does, `npm start` (whose `node` keeps npm's place: its script
 * execs it), with `env` only (no .env), and waits until /healthz says every platform is
 * connected. BENCH_NODE_OPTIONS are added to the bot's NODE_OPTIONS after npm start's own;
 * BENCH_BOT_FLAGS, node flags that NODE_OPTIONS refuses (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`
 * to see where its time goes), run npm start's script with them and without npm.
 * @param attempt the how-many-th start this is: a bot that could not listen on the port chosen for
 *   it (EADDRINUSE) is started again on another, three times at most.
 * @throws Error when it exits or is not healthy within 60 s.
 */
export async function spawnBot(env: Record<string, string>, attempt = 1): Promise<BotProcess> {
  const cwd = mkdtempSync(join(tmpdir(), 'genbot-bench-'));
  const httpPort = await freePort();
  const childEnv = {
    PATH: process.env.PATH!,
    HOME: process.env.HOME!,
    ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
    STORE_URL: `sqlite://${join(cwd, 'state.sqlite')}`,
    LOG_LEVEL: 'warn',
    HTTP_PORT: String(httpPort),
    ...env,
  };
  // Flags Node refuses in NODE_OPTIONS (--cpu-prof): node itself, started as npm start's script starts it.
  const flags = (process.env.BENCH_BOT_FLAGS ?? '').split(' ').filter(Boolean);
  const start = /"start": "(.*)"/.exec(readFileSync(join(ROOT, 'package.json'), 'utf8'))![1]!.replace(/\\"/g, '"');
  // Started in an empty folder: npm's INIT_CWD points there, so no .env is read.
  const child = flags.length
    ? spawn('sh', ['-c', start.replace('exec node', `exec node ${flags.join(' ')}`)], {
        cwd: ROOT,
        env: { ...childEnv, INIT_CWD: cwd },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn('npm', ['--prefix', ROOT, '--silent', 'start'], { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const problems = new Map<string, number>();
  const gcTrace: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => {
      if (isGcTraceLine(line)) return void gcTrace.push(line);
      let key = line.slice(0, 120);
      try {
        const entry = JSON.parse(line) as { msg?: string; err?: { code?: unknown; message?: unknown } };
        key = `${entry.msg} ${String(entry.err?.code ?? '')} ${String(entry.err?.message ?? '').slice(0, 80)}`.trim();
      } catch {
        // Not a log line: kept as it is.
      }
      problems.set(key, (problems.get(key) ?? 0) + 1);
    });
  }
  const exited = new Promise<number | null>((done) => child.once('exit', done));
  const url = `http://127.0.0.1:${httpPort}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      const why = [...problems.keys()].join(' | ');
      // The port found free was taken before the bot listened (another test's server on port 0): another one.
      if (/EADDRINUSE/.test(why) && env.HTTP_PORT === undefined && attempt < 3) return spawnBot(env, attempt + 1);
      throw new Error(`the bot exited (${child.exitCode}): ${why}`);
    }
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error('the bot was not healthy within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  // The bot's own process: npm's child whose command is node running the bot (the script's shell
  // became node; npm may have other children), or the shell itself.
  const botPid = flags.length ? child.pid! : nodeChildOf(child.pid!);
  const bot: BotProcess = {
    child,
    pid: botPid,
    httpPort,
    problems,
    gcTrace,
    loopP99Ms: 0,
    heapMb: 0,
    externalMb: 0,
    metrics: async () => {
      // A scrape reuses a kept-alive connection: one the bot's server closed just as it was reused
      // (ECONNRESET; seen when the bot stood still writing a heap snapshot, BENCH_HEAP) is retried once.
      const scrape = () => fetch(`${url}/metrics`).then((r) => r.text());
      const text = await scrape().catch(scrape);
      const p99 = /^(?:genbot_)?nodejs_eventloop_lag_p99_seconds (\S+)/m.exec(text);
      if (p99) bot.loopP99Ms = Math.max(bot.loopP99Ms, Number((Number(p99[1]) * 1000).toFixed(1)));
      for (const [name, key] of [
        ['heap_size_used_bytes', 'heapMb'],
        ['external_memory_bytes', 'externalMb'],
      ] as const) {
        const m = new RegExp(`^(?:genbot_)?nodejs_${name} (\\S+)`, 'm').exec(text);
        if (m) bot[key] = Math.max(bot[key], Math.round(Number(m[1]) / 2 ** 20));
      }
      return text;
    },
    peakRssMb: () => {
      const status = readFileSync(`/proc/${botPid}/status`, 'utf8');
      return Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024);
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      // npm may exit before the bot it started: wait for the bot's own process (10 s), then kill it,
      // so that no bot outlives its test or bench run.
      for (let i = 0; i < 100 && alive(botPid); i++) await new Promise((r) => setTimeout(r, 100));
      if (alive(botPid)) {
        problems.set('still running 10 s after SIGTERM: killed', 1);
        process.kill(botPid, 'SIGKILL');
      }
    },
  };
  return bot;
}

/** The child of `parent` running the bot (`node … main.js`), else its first child. @throws Error when it has none. */
function nodeChildOf(parent: number): number {
  const children = readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').trim().split(/\s+/).map(Number);
  const command = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return '';
    }
  };
  const bot = children.find((pid) => /main\.js/.test(command(pid))) ?? children[0];
  if (!bot) throw new Error(`npm (pid ${parent}) has no child process`);
  return bot;
}

/** Whether a process is still running (and not a zombie). */
function alive(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z');
  } catch {
    return false;
  }
}
