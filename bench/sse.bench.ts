/**
 * Benchmark (issue 3 item 12): the same local stream of 100,000 chat chunks consumed by
 *   (a) this project's core (`service.chat.completions.create({ stream: true })`), read as the
 *       product reads it (`stream.batches()`) and also chunk by chunk,
 *   (b) the `openai` npm SDK pointed at the same server,
 *   (c) a bare undici request + split-on-blank-line + JSON.parse loop: the floor.
 * Reports CPU time (user + system of this process; the server runs in another) per chunk,
 * the median of several interleaved rounds, and the ratios. Run: `npm run bench`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { request, Agent } from 'undici';
import OpenAI from 'openai';
import { ServiceClient } from '../src/core/service/client.ts';

const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const API_KEY = 'bench-key';
const body = { model: 'bench-model', messages: [{ role: 'user' as const, content: 'go' }], stream: true as const };

async function startServer(): Promise<{ baseUrl: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./stream-server.ts', import.meta.url)), String(CHUNKS)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  for await (const data of child.stdout) {
    out += String(data);
    const match = /PORT (\d+)/.exec(out);
    if (match) return { baseUrl: `http://127.0.0.1:${match[1]}`, stop: () => child.kill() };
  }
  throw new Error('benchmark server did not start');
}

type Consumer = () => Promise<number>;

/**
 * The core as the product reads it (chat.ts `textOf`): `stream.batches()`, one async step per
 * network read; and chunk by chunk (`for await (const chunk of stream)`, openai-node's shape).
 */
function core(baseUrl: string, mode: 'batches' | 'chunks'): { run: Consumer; close: () => Promise<void> } {
  const service = new ServiceClient({ baseUrl, apiKey: API_KEY, maxRetries: 0 });
  return {
    run: async () => {
      let chars = 0;
      const stream = await service.chat.completions.create(body);
      if (mode === 'batches') {
        for await (const chunks of stream.batches()) for (const chunk of chunks) chars += chunk.choices[0]?.delta?.content?.length ?? 0;
      } else {
        for await (const chunk of stream) chars += chunk.choices[0]?.delta?.content?.length ?? 0;
      }
      return chars;
    },
    close: () => service.close(),
  };
}

function openaiSdk(baseUrl: string): { run: Consumer; close: () => Promise<void> } {
  const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: API_KEY, maxRetries: 0 });
  return {
    run: async () => {
      let chars = 0;
      const stream = await client.chat.completions.create(body);
      for await (const chunk of stream) chars += chunk.choices[0]?.delta?.content?.length ?? 0;
      return chars;
    },
    close: async () => undefined,
  };
}

function floor(baseUrl: string): { run: Consumer; close: () => Promise<void> } {
  const dispatcher = new Agent();
  return {
    run: async () => {
      let chars = 0;
      const response = await request(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        dispatcher,
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const bytes of response.body) {
        buffer += decoder.decode(bytes, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!event.startsWith('data: ')) continue;
          const data = event.slice(6);
          if (data === '[DONE]') continue;
          const chunk = JSON.parse(data) as { choices: Array<{ delta?: { content?: string } }> };
          chars += chunk.choices[0]?.delta?.content?.length ?? 0;
        }
      }
      return chars;
    },
    close: () => dispatcher.close(),
  };
}

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const server = await startServer();
  const consumers = {
    core: core(server.baseUrl, 'batches'),
    'core per chunk': core(server.baseUrl, 'chunks'),
    openai: openaiSdk(server.baseUrl),
    floor: floor(server.baseUrl),
  };
  const names = Object.keys(consumers) as Array<keyof typeof consumers>;
  const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const wall: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  let expected: number | undefined;
  // One warm-up round each (JIT, connections), then interleaved measured rounds.
  for (const name of names) await consumers[name].run();
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      globalThis.gc?.();
      const c0 = cpuMicros();
      const t0 = performance.now();
      const chars = await consumers[name].run();
      wall[name]!.push(performance.now() - t0);
      cpu[name]!.push(cpuMicros() - c0);
      expected ??= chars;
      if (chars !== expected) throw new Error(`${name} read ${chars} characters, expected ${expected}`);
    }
  }
  for (const c of Object.values(consumers)) await c.close();
  server.stop();

  const perChunk = (name: string) => median(cpu[name]!) / CHUNKS;
  const rows = names.map((name) => ({
    consumer: name,
    'CPU µs/chunk': perChunk(name).toFixed(3),
    'wall ms (median)': median(wall[name]!).toFixed(0),
    'vs floor': (perChunk(name) / perChunk('floor')).toFixed(2),
  }));
  console.log(`node ${process.version}, ${CHUNKS} chunks, ${ROUNDS} rounds, median CPU time of this process per chunk`);
  console.table(rows);
  const coreVsFloor = perChunk('core') / perChunk('floor');
  const coreVsSdk = perChunk('core') / perChunk('openai');
  console.log(`core/floor = ${coreVsFloor.toFixed(2)} (target ≤ 1.15), core/openai = ${coreVsSdk.toFixed(2)} (target < 1)`);
  // The same figures as a Markdown table, for the README.
  console.log('\n| consumer | CPU µs/chunk | vs floor |\n|---|---|---|');
  for (const row of rows) console.log(`| ${row.consumer} | ${row['CPU µs/chunk']} | ${row['vs floor']} |`);
}

await main();
