/**
 * What `bench:streams` computes from what the fakes saw: percentiles, per-stream figures from
 * the times of a stream's visible writes, and a scenario's row.
 */

/** The p-th percentile of the values that are numbers (a stream that never showed text has none). */
export const percentile = (values: number[], p: number) => {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

/** The median of the values (the middle one of an odd count, the mean of the two middle ones otherwise). */
export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The mean of the values that are numbers, to 2 decimals. */
const mean = (values: number[]) => {
  const known = values.filter((v) => !Number.isNaN(v));
  return Number((known.reduce((s, v) => s + v, 0) / Math.max(1, known.length)).toFixed(2));
};

/** What one scenario measured. */
export interface Figures {
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
  /** NaN when the process does not say (the floor bot has no /metrics). */
  eventLoopP99Ms: number;
  /** CPU time the answering process(es) used from the first command to the last answer, in ms (where measured). */
  cpuMs?: number;
}

/** One stream's figures. */
export interface StreamFigures {
  firstMs: number;
  updatesPerSec: number;
  gapMs: number;
}

/** Per-stream figures from the times of its visible writes (those that show answer text). */
export function streamFigures(started: number, writes: Array<{ at: number; content: string }>): StreamFigures {
  const visible = writes.filter((w) => w.content.includes('word'));
  if (visible.length === 0) return { firstMs: NaN, updatesPerSec: NaN, gapMs: NaN };
  const first = visible[0]!.at;
  let gap = 0;
  for (let i = 1; i < visible.length; i++) gap = Math.max(gap, visible[i]!.at - visible[i - 1]!.at);
  const span = (visible.at(-1)!.at - first) / 1000;
  return { firstMs: first - started, updatesPerSec: span > 0 ? visible.length / span : visible.length, gapMs: gap };
}

/** The figures of a scenario from its streams' figures. */
export function figuresOf(
  name: string,
  per: StreamFigures[],
  rest: Pick<Figures, 'status429' | 'exact' | 'failures' | 'ackP95Ms' | 'peakRssMb' | 'eventLoopP99Ms' | 'cpuMs'>,
): Figures {
  const firsts = per.map((p) => p.firstMs);
  return {
    scenario: name,
    streams: per.length,
    firstTextP50Ms: Math.round(percentile(firsts, 50)),
    firstTextP95Ms: Math.round(percentile(firsts, 95)),
    updatesPerStreamPerSec: mean(per.map((p) => p.updatesPerSec)),
    longestGapMs: Math.round(Math.max(0, ...per.map((p) => p.gapMs).filter((g) => !Number.isNaN(g)))),
    ...rest,
  };
}

/** Failed outcomes only. */
export const failuresOf = (outcomes: Record<string, number>) =>
  Object.fromEntries(Object.entries(outcomes).filter(([k]) => k !== 'ok'));
