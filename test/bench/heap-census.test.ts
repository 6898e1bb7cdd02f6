/**
 * bench/heap-census.ts (BENCH_HEAP=1 in bench:streams): a heap snapshot written by a process
 * started with `--heapsnapshot-signal`, as the bench starts the bot and the floor, counted.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { censusLine, heapCensus } from '../../bench/heap-census.ts';

/** A process that keeps 20,000 closures, 5,000 async functions suspended at an await, and 5,000 ropes. */
const HOLDER = `
const closures = Array.from({ length: 20000 }, (_, i) => () => i);
const never = new Promise(() => {});
const suspended = Array.from({ length: 5000 }, async () => { await never; });
const ropes = Array.from({ length: 5000 }, (_, i) => 'a rope of two parts ' + String(i).padStart(20, '-'));
globalThis.kept = { closures, suspended, ropes };
process.stdout.write('READY\\n');
setInterval(() => {}, 1000);
`;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('heap-census', () => {
  it('counts the closures, suspended async functions and ropes a signalled process holds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'census-'));
    dirs.push(dir);
    const child = spawn(process.execPath, ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`, '-e', HOLDER], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve) => child.stdout!.on('data', (d: Buffer) => d.includes('READY') && resolve()));
      child.kill('SIGUSR2');
      let written: string | undefined;
      for (let i = 0; i < 200 && !written; i++) {
        await sleep(100);
        // Node names it Heap.<date>.<pid>.<thread>.<seq>.heapsnapshot (read below once whole).
        written = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot'));
      }
      expect(written).toBeDefined();
      let census: ReturnType<typeof heapCensus> | undefined;
      for (let i = 0; i < 100 && !census; i++) {
        try {
          census = heapCensus(join(dir, written!));
        } catch {
          await sleep(100); // still being written
        }
      }
      expect(census!.closures).toBeGreaterThanOrEqual(20_000);
      expect(census!.suspendedFunctions).toBeGreaterThanOrEqual(5_000);
      expect(census!.consStrings).toBeGreaterThanOrEqual(5_000);
      expect(census!.promises).toBeGreaterThanOrEqual(5_000);
      expect(census!.objects).toBeGreaterThan(census!.closures + census!.consStrings + census!.suspendedFunctions);
      expect(censusLine(census!)).toMatch(/^[\d,]+ objects \([\d.]+ M references, \d+ MB\): [\d,]+ closures, /);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
