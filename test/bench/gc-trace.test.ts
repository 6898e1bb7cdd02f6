/**
 * bench/gc-trace.ts: V8's `--trace-gc-nvp` lines summed (BENCH_GC=1 in bench:streams), from lines
 * of the shape Node 20's V8 writes (trimmed to the fields read and a few others).
 */
import { describe, expect, it } from 'vitest';
import { gcFigures, gcLine, gcSince, isGcTraceLine } from '../../bench/gc-trace.ts';

const SCAVENGE =
  '[5278:0x2d3a3d10]      124 ms: pause=3.0 mutator=110.4 gc=s reduce_memory=0 scavenge=2.46 background.scavenge.parallel=2.11 promoted=433080 semi_space_copied=1200';
const FULL =
  '[5278:0x2d3a3d10]     2310 ms: pause=13.9 mutator=20.0 gc=mc reduce_memory=0 mark=10.1 background.mark=33.1 background.sweep=2.9 promoted=3068424';

describe('gc-trace', () => {
  it("tells V8's trace lines from the process's other output", () => {
    expect(isGcTraceLine(SCAVENGE)).toBe(true);
    expect(isGcTraceLine(FULL)).toBe(true);
    expect(isGcTraceLine('READY')).toBe(false);
    expect(isGcTraceLine('{"level":40,"msg":"pause=1 gc=s"}')).toBe(false);
  });

  it('sums scavenges and full collections apart: pauses, helper threads, what scavenges promoted', () => {
    const f = gcFigures([SCAVENGE, 'DONE 1 ok', SCAVENGE, FULL]);
    expect(f).toEqual({
      scavenges: 2,
      scavengePauseMs: 6,
      scavengeHelpersMs: 4.22,
      promotedMb: 0.86616,
      fullCollections: 1,
      fullPauseMs: 13.9,
      fullHelpersMs: 36,
    });
    expect(gcLine(f)).toBe(
      '2 scavenges (pauses 6 ms, helpers 4 ms, promoted 1 MB), 1 full (pauses 14 ms, helpers 36 ms): 60 ms of CPU in all',
    );
  });

  it('gives the collections of a window: the figures at its end less those at its start', () => {
    const start = gcFigures([SCAVENGE]);
    const end = gcFigures([SCAVENGE, SCAVENGE, FULL]);
    const window = gcSince(end, start);
    expect(window.scavenges).toBe(1);
    expect(window.fullCollections).toBe(1);
    expect(window.scavengePauseMs).toBeCloseTo(3);
  });
});
