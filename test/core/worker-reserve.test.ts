/**
 * The workers' kernel cap (image-processes.ts): RLIMIT_DATA is the pool's memory cap above what the
 * runtime reserves before any job (V8's code range and cages: ~0.1 GiB on Node 20, ~0.6 GiB per
 * isolate on Node 24, where a 512 MiB limit alone kept Node from starting at all).
 */
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { runtimeReserveKiB, WorkerProcesses } from '../../src/core/media/image-processes.ts';

const pools: WorkerProcesses[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe.runIf(process.platform === 'linux')('the workers’ memory cap', () => {
  it('runs a job under a cap smaller than what the runtime reserves, and measures that reserve', async () => {
    // 128 MiB is below a loaded worker's own VmData (Node 20 running the source: ~140 MiB; Node 24: ~600 MiB), so a cap of 128 MiB alone
    // (the old limit) ends the worker as it starts; above the measured reserve, the job runs.
    const pool = new WorkerProcesses({ idleMs: 1_000, nice: 10, memoryMb: 128 });
    pools.push(pool);
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } })
      .png()
      .toBuffer();
    const reply = await pool.send('describe', [png, 'b64_json'] as never, Date.now() + 30_000, undefined);
    expect(reply).toMatchObject({ ok: true, value: { format: 'png', width: 8, height: 8 } });
    const reserve = runtimeReserveKiB();
    expect(reserve).toBeGreaterThan(128 * 1024);
    expect(reserve).toBeLessThan(2 * 1024 * 1024);
  });
});
