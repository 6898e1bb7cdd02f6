/**
 * Benchmark (issue 3 item 12): the same local stream of 100,000 chat chunks consumed by
 *   (a) this project's core (`service.chat.completions.create({ stream: true })`), read as the
 *       product reads it (`stream.batches()`) and also chunk by chunk,
 *   (b) the `openai` npm SDK pointed at the same server,
 *   (c) a bare undici request + split-on-blank-line + JSON.parse loop: the floor.
 * The server and each consumer run in processes of their own (bench/stream-server.ts,
 * bench/consumers.ts); this one only conducts: warm-up rounds, then measured rounds in which
 * every consumer reads the stream once, in alternating order. Reports each consumer's CPU time
 * (user + system of its process, during the consumption) per chunk, and its ratio to the
 * floor's CPU time in the same round, both as medians over the rounds. Run: `npm run bench`.
 * Environment: BENCH_CHUNKS (100000), BENCH_ROUNDS (15), BENCH_WARMUP (5).
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { CONSUMER_NAMES } from './consumers.ts';

const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
/** Unmeasured rounds first: a bot runs for days, so the steady state (JIT done) is what counts. */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);

async function startServer(): Promise<{ baseUrl: string; stop: () => void }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./stream-server.ts', import.meta.url)), String(CHUNKS)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  let out = '';
  for await (const data of child.stdout) {
    out += String(data);
    const match = /PORT (\d+)/.exec(out);
    if (match) return { baseUrl: `http://127.0.0.1:${match[1]}`, stop: () => child.kill() };
  }
  throw new Error('benchmark server did not start');
}

interface Round {
  cpuMicros: number;
  wallMs: number;
  chars: number;
}

/** A consumer process: `run()` has it read the stream once and resolves with its figures. */
function startConsumer(name: string, baseUrl: string): { run: () => Promise<Round>; stop: () => void } {
  const child: ChildProcessByStdio<Writable, Readable, null> = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', fileURLToPath(new URL('./consumers.ts', import.meta.url)), name, baseUrl],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    run: async () => {
      child.stdin.write('run\n');
      const line = await lines.next();
      if (line.done) throw new Error(`consumer ${name} exited`);
      return JSON.parse(line.value) as Round;
    },
    stop: () => child.stdin.end(),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const server = await startServer();
  const names = [...CONSUMER_NAMES];
  const consumers = Object.fromEntries(names.map((name) => [name, startConsumer(name, server.baseUrl)]));
  const rounds: Record<string, Round[]> = Object.fromEntries(names.map((n) => [n, []]));
  let expected: number | undefined;
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const result = await consumers[name]!.run();
      expected ??= result.chars;
      if (result.chars !== expected) throw new Error(`${name} read ${result.chars} characters, expected ${expected}`);
      if (round >= WARMUP) rounds[name]!.push(result);
    }
  }
  for (const c of Object.values(consumers)) c.stop();
  server.stop();

  const cpu = (name: string) => rounds[name]!.map((r) => r.cpuMicros);
  const perChunk = (name: string) => median(cpu(name)) / CHUNKS;
  // The ratio to the floor of the same round, then the median: drifts of the machine between
  // rounds cancel out of each ratio.
  const vsFloor = (name: string) => median(cpu(name).map((c, round) => c / cpu('floor')[round]!));
  const rows = names.map((name) => ({
    consumer: name,
    'CPU µs/chunk': perChunk(name).toFixed(3),
    'wall ms (median)': median(rounds[name]!.map((r) => r.wallMs)).toFixed(0),
    'vs floor': vsFloor(name).toFixed(2),
  }));
  console.log(
    `node ${process.version}, ${CHUNKS} chunks, ${WARMUP} warm-up + ${ROUNDS} measured rounds, one process per consumer`,
  );
  console.table(rows);
  console.log(
    `core/floor = ${vsFloor('core').toFixed(2)} (target ≤ 1.15), core/openai = ${(perChunk('core') / perChunk('openai')).toFixed(2)} (target < 1)`,
  );
  // The same figures as a Markdown table, for docs/benchmarks.md.
  console.log('\n| consumer | CPU µs/chunk | vs floor |\n|---|---|---|');
  for (const row of rows) console.log(`| ${row.consumer} | ${row['CPU µs/chunk']} | ${row['vs floor']} |`);
}

await main();
