/**
 * What a store-wide job (an uninstall's purge, a retention sweep) costs everyone else while it
 * runs: turns of other conversations stored meanwhile (each a history read and an append, one
 * every 5 ms, in conversations `slack:<team>:C0`…`C49`) and the event loop's delay, in ms.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { ConversationStore } from '../src/core/state/history.ts';

/** The text of each turn stored beside the job. */
export const BENCH_TURN_TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(4);

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : 0;

/**
 * Runs `job` while turns of `team`'s conversations are stored beside it.
 * @returns the job's result and a line: loop delay p50 / p99 / max, and the turns' p50 / p95 / max.
 */
export async function besideTurns<T>(
  history: ConversationStore,
  team: string,
  job: () => Promise<T>,
): Promise<{ result: T; line: string }> {
  const turns: number[] = [];
  let running = true;
  const elsewhere = (async () => {
    for (let i = 0; running; i++) {
      const started = performance.now();
      const id = `slack:${team}:C${i % 50}`;
      await history.asChatMessages(id);
      await history.append(id, { role: 'user', content: BENCH_TURN_TEXT, at: Date.now() });
      turns.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let result: T;
  try {
    result = await job();
  } finally {
    delay.disable();
    running = false;
    await elsewhere;
  }
  turns.sort((a, b) => a - b);
  const ms = (ns: number) => (ns / 1e6).toFixed(1);
  const line = [
    `loop delay p50 ${ms(delay.percentile(50))} / p99 ${ms(delay.percentile(99))} / max ${ms(delay.max)} ms;`,
    `${turns.length} turns elsewhere meanwhile: p50 ${percentile(turns, 50).toFixed(2)} / p95`,
    `${percentile(turns, 95).toFixed(2)} / max ${(turns.at(-1) ?? 0).toFixed(2)} ms`,
  ].join(' ');
  return { result, line };
}
