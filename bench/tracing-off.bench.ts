/**
 * Benchmark (issue 43, item 1): what tracing costs an answer when it is off (no
 * OTEL_EXPORTER_OTLP_ENDPOINT: no SDK loaded). Each seam an answer passes through is timed in a
 * loop against the bare call it wraps, in this process, and the difference per call is reported
 * in ns, then summed for one answer's calls: the root span (`traceInvocation`) and its hold
 * (`holdInvocation`), the reference (`noteReference`), the deferral or ack (`inSpan`), the
 * service request's span (start and end: the API's non-recording span), and the scheduler's
 * writes (`submitTraced`; WRITES a answer). The store is not wrapped at all when tracing is off
 * (open-store.ts), so its calls cost nothing extra. `npm run bench` (sse.bench.ts) measures the
 * service stream's reading, which now notes each chunk's `model`.
 * Run: `node --import tsx bench/tracing-off.bench.ts` (`npm run bench:tracing`).
 * Environment: BENCH_ITERATIONS (2,000,000), BENCH_WRITES (20 writes an answer).
 */

import { systemClock } from '../src/core/delivery/clock.ts';
import type { WriteRequest, WriteResult } from '../src/core/delivery/write-request.ts';
import { submitTraced } from '../src/core/delivery/write-spans.ts';
import { endGenerationSpan, startGenerationSpan } from '../src/core/service/spans.ts';
import { holdInvocation, inSpan, isTracingStarted, noteReference, traceInvocation } from '../src/ops/tracing.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 2_000_000);
const WRITES = Number(process.env.BENCH_WRITES ?? 20);

if (isTracingStarted()) throw new Error('tracing must be off for this benchmark');

let sink = 0;
const resolved: Promise<WriteResult> = Promise.resolve('written');
const request: WriteRequest = { key: 'k', stream: 's', buckets: [], final: false, run: async () => {} };
const submit = (r: WriteRequest) => {
  sink += r.key.length;
  return resolved;
};
const work = () => {
  sink += 1;
  return resolved;
};

/** ns per call of `fn`, the best of 5 runs of ITERATIONS calls. */
function nsPerCall(fn: () => unknown): number {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 5; run++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < ITERATIONS; i++) fn();
    best = Math.min(best, Number(process.hrtime.bigint() - start) / ITERATIONS);
  }
  return best;
}

const seams: Array<{ name: string; perAnswer: number; bare: () => unknown; traced: () => unknown }> = [
  { name: 'root span (traceInvocation)', perAnswer: 1, bare: work, traced: () => traceInvocation('x', {}, work) },
  { name: 'hold of the root (holdInvocation)', perAnswer: 1, bare: () => undefined, traced: () => holdInvocation() },
  {
    name: 'reference on the root (noteReference)',
    perAnswer: 1,
    bare: () => undefined,
    traced: () => noteReference('ABCDEF'),
  },
  { name: 'deferral / ack span (inSpan)', perAnswer: 1, bare: work, traced: () => inSpan('x', {}, work) },
  {
    name: 'service request span (start + end)',
    perAnswer: 1,
    bare: () => undefined,
    traced: () => endGenerationSpan(startGenerationSpan('chat', 'model'), undefined),
  },
  {
    name: 'scheduler write (submitTraced)',
    perAnswer: WRITES,
    bare: () => submit(request),
    traced: () => submitTraced(request, submit, systemClock),
  },
];

let total = 0;
console.log(`tracing off; ${ITERATIONS.toLocaleString('en')} calls a run, best of 5`);
for (const seam of seams) {
  const bare = nsPerCall(seam.bare);
  const traced = nsPerCall(seam.traced);
  const extra = Math.max(0, traced - bare);
  total += extra * seam.perAnswer;
  console.log(
    `${seam.name.padEnd(40)} bare ${bare.toFixed(1).padStart(6)} ns  traced ${traced.toFixed(1).padStart(6)} ns  +${extra.toFixed(1)} ns × ${seam.perAnswer}`,
  );
}
console.log(`per answer (${WRITES} writes): +${total.toFixed(0)} ns (${(total / 1000).toFixed(2)} µs)`);
if (sink < 0) console.log(sink);
