/**
 * The consumers of the SSE benchmark, one per process: `node --expose-gc --import tsx
 * bench/consumers.ts <name> <baseUrl>` reads a line `run` on stdin, consumes one stream, and
 * answers one JSON line `{ cpuMicros, wallMs, chars }` (CPU time of this process, user +
 * system, during the consumption only). Each consumer having its own process keeps the
 * others' heap and JIT state (the openai SDK's above all) out of its figures.
 */
import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import { Agent, request } from 'undici';
import { ServiceClient } from '../src/core/service/client.ts';

const API_KEY = 'bench-key';
const body = { model: 'bench-model', messages: [{ role: 'user' as const, content: 'go' }], stream: true as const };

/** Consumes one stream; resolves with the number of content characters read. */
type Consumer = () => Promise<number>;

/**
 * The consumers by name.
 * - `core`: as the product reads a stream (chat.ts `textOf`): `stream.batches()`, one async
 *   step per network read;
 * - `core per chunk`: `for await (const chunk of stream)`, openai-node's shape;
 * - `openai`: the openai SDK pointed at the same server;
 * - `floor`: a bare undici request + split on blank lines + `JSON.parse`.
 */
function consumers(baseUrl: string): Record<string, Consumer> {
  const service = new ServiceClient({ baseUrl, apiKey: API_KEY, maxRetries: 0 });
  const dispatcher = new Agent();
  return {
    core: async () => {
      let chars = 0;
      const stream = await service.chat.completions.create(body);
      for await (const chunks of stream.batches())
        for (const chunk of chunks) chars += chunk.choices[0]?.delta?.content?.length ?? 0;
      return chars;
    },
    'core per chunk': async () => {
      let chars = 0;
      const stream = await service.chat.completions.create(body);
      for await (const chunk of stream) chars += chunk.choices[0]?.delta?.content?.length ?? 0;
      return chars;
    },
    openai: async () => {
      const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: API_KEY, maxRetries: 0 });
      let chars = 0;
      const stream = await client.chat.completions.create(body);
      for await (const chunk of stream) chars += chunk.choices[0]?.delta?.content?.length ?? 0;
      return chars;
    },
    floor: async () => {
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
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
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
  };
}

/** The names, in the order the benchmark reports them. */
export const CONSUMER_NAMES = ['core', 'core per chunk', 'openai', 'floor'] as const;

if (process.argv[1]?.endsWith('consumers.ts')) {
  const [name, baseUrl] = process.argv.slice(2);
  const run = consumers(baseUrl!)[name!];
  if (!run) throw new Error(`unknown consumer ${name}`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line !== 'run') break;
    globalThis.gc?.();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const chars = await run();
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    process.stdout.write(`${JSON.stringify({ cpuMicros: cpu.user + cpu.system, wallMs, chars })}\n`);
  }
  process.exit(0);
}
