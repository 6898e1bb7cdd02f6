/**
 * The image workers (src/core/media/image-pool.ts): every decode runs in a child process, never
 * on this process's libuv threads (which the SQLite store needs); a job past its deadline has
 * its worker killed; users take turns; what is not a raster image never reaches a worker.
 */

import { pbkdf2 } from 'node:crypto';
import sharp from 'sharp';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { english } from '../../src/core/i18n/words.ts';
import { ImagePool } from '../../src/core/media/image-pool.ts';
import { DEFAULT_IMAGE_INPUT_LIMITS, ImageInputError } from '../../src/core/media/images.ts';
import { InvalidResponseError } from '../../src/core/service/errors.ts';

const limits = DEFAULT_IMAGE_INPUT_LIMITS;
const pools: ImagePool[] = [];
const newPool = (options: ConstructorParameters<typeof ImagePool>[0] = {}) => {
  const pool = new ImagePool(options);
  pools.push(pool);
  return pool;
};

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

/** A noisy JPEG (or PNG) of `side` × `side` px (xorshift pixels: quick to make, ~0.6 s to convert at 4,000 px). */
function noisyJpeg(side: number, format: 'jpeg' | 'png' = 'jpeg'): Promise<Buffer> {
  const raw = Buffer.allocUnsafe(side * side * 3);
  let x = 2463534242;
  for (let i = 0; i < raw.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    raw[i] = 96 + ((x >>> 0) & 63);
  }
  const image = sharp(raw, { raw: { width: side, height: side, channels: 3 } });
  return (format === 'png' ? image.png() : image.jpeg({ quality: 85 })).toBuffer();
}

/** 4,000 × 4,000 px, 5.4 MB; and 64 × 64 px. */
let big: Buffer;
let small: Buffer;
beforeAll(async () => {
  big = await noisyJpeg(4000);
  small = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#123456' } })
    .png()
    .toBuffer();
});

/**
 * Starts the pool's workers with a small job each, then stops them (SIGSTOP): a job sent to
 * one then never answers, whatever this machine's speed. @returns their pids.
 */
async function stoppedWorkers(pool: ImagePool): Promise<number[]> {
  await Promise.all(
    Array.from({ length: pool.concurrency }, (_, i) =>
      pool.prepareInput(small, `warm-${i}.png`, limits, { key: `warm-${i}` }),
    ),
  );
  const pids = pidsOf(pool);
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  return pids;
}

/** The worker processes' pids. */
const pidsOf = (pool: ImagePool): number[] => pool.pids;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Time, in ms, of one call on libuv's thread pool (pbkdf2 of 1 iteration): what a SQLite query waits for a thread. */
const threadPoolWait = () =>
  new Promise<number>((resolve) => {
    const start = performance.now();
    pbkdf2('p', 's', 1, 32, 'sha256', () => resolve(performance.now() - start));
  });

describe('ImagePool', () => {
  it("converts in a worker process: while four large images convert, this process's libuv threads stay free", async () => {
    const pool = newPool({ concurrency: 2, timeoutMs: 60_000 });
    const started = performance.now();
    const converting = Promise.all(
      Array.from({ length: 4 }, (_, i) => pool.prepareInput(big, `photo-${i}.png`, limits, { key: `user-${i}` })),
    );
    // Sampled while the conversions run: a thread-pool call is never held behind them.
    const waits: number[] = [];
    let done = false;
    void converting.finally(() => (done = true));
    while (!done) waits.push(await threadPoolWait());
    const images = await converting;
    const convertingMs = performance.now() - started;
    expect(images.map((i) => [i.mimeType, i.width, i.height])).toEqual(
      Array.from({ length: 4 }, () => ['image/jpeg', 1024, 1024]),
    );
    expect(pidsOf(pool).every((pid) => pid !== process.pid)).toBe(true);
    expect(pool.processes).toBeGreaterThanOrEqual(1);
    expect(pool.processes).toBeLessThanOrEqual(2);
    expect(waits.length).toBeGreaterThan(5);
    // Held behind conversions on this process's threads, a call would wait about as long as one of
    // them (most of `convertingMs`); free threads answer within 100 ms, or, on a machine so busy
    // that the conversions themselves crawl, within a quarter of their time.
    // A reduce, not Math.max(...waits): a slow conversion samples hundreds of thousands of waits
    // (a clean-clone CI run overflowed the call stack spreading them).
    const longestWait = waits.reduce((longest, wait) => Math.max(longest, wait), 0);
    expect(longestWait).toBeLessThan(Math.max(100, convertingMs / 4));
  });

  it('kills the worker of a job past its deadline: the file is named as taking too long, and the next job gets a new worker', async () => {
    const pool = newPool({ concurrency: 1, timeoutMs: 60_000 });
    const [pid] = await stoppedWorkers(pool);
    const started = Date.now();
    const refused = pool.prepareInput(small, 'huge.png', limits, { key: 'u', deadline: Date.now() + 150 });
    await expect(refused).rejects.toBeInstanceOf(ImageInputError);
    await expect(refused).rejects.toThrow(/^huge\.png took too long to process/);
    expect(Date.now() - started).toBeLessThan(1_000);
    // SIGKILL (it ends a stopped process too), then reaped by this process's event loop.
    for (let waited = 0; alive(pid!) && waited < 2_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    expect(alive(pid!)).toBe(false);
    const again = await pool.prepareInput(small, 'after.png', limits, { key: 'u' });
    expect(again.width).toBe(64);
    expect(pidsOf(pool)).not.toContain(pid);
  });

  it('a job still waiting at its deadline leaves the line without a worker', async () => {
    const pool = newPool({ concurrency: 1, timeoutMs: 60_000 });
    const pids = await stoppedWorkers(pool);
    const first = pool.prepareInput(small, 'first.png', limits, { key: 'a' });
    const waiting = pool.prepareInput(small, 'second.png', limits, { key: 'b', deadline: Date.now() + 100 });
    await expect(waiting).rejects.toThrow(/^second\.png took too long to process/);
    for (const pid of pids) process.kill(pid, 'SIGCONT');
    await expect(first).resolves.toMatchObject({ name: 'first.png' });
    expect(pidsOf(pool)).toEqual(pids);
  });

  it("users take turns: one user's queued images do not hold another's behind all of them", async () => {
    const pool = newPool({ concurrency: 1, timeoutMs: 60_000 });
    const order: string[] = [];
    const job = (key: string, name: string) =>
      pool.prepareInput(big, name, limits, { key }).then(() => order.push(name));
    const all = [
      job('attacker', 'a1'),
      job('attacker', 'a2'),
      job('attacker', 'a3'),
      job('attacker', 'a4'),
      job('member', 'm1'),
    ];
    await Promise.all(all);
    // a1 had started; m1 is served at the member's first turn, before the attacker's remaining three.
    expect(order.indexOf('m1')).toBeLessThanOrEqual(2);
  });

  it('refuses an SVG (also under a .png name) and other non-raster bytes from their first bytes, without starting a worker', async () => {
    const pool = newPool();
    const svg = Buffer.from(
      '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="6000" height="6000"><filter id="f"><feTurbulence numOctaves="10"/></filter></svg>',
    );
    await expect(pool.prepareInput(svg, 'photo.png', limits, { key: 'u' })).rejects.toThrow(
      'photo.png is an SVG drawing, which the bot does not read (JPEG, PNG, WebP, GIF, AVIF and TIFF work).',
    );
    await expect(pool.prepareReference(Buffer.from('%PDF-1.7'), 'doc.png', limits, { key: 'u' })).rejects.toThrow(
      'doc.png is not an image the bot can read',
    );
    await expect(pool.describe(svg, 'b64_json', { key: 'u' })).rejects.toBeInstanceOf(InvalidResponseError);
    expect(pool.processes).toBe(0);
  });

  it('a stopped command cancels its job (the worker is killed); a worker that dies names the file as damaged', async () => {
    const pool = newPool({ concurrency: 1, timeoutMs: 60_000 });
    const [pid] = await stoppedWorkers(pool);
    const controller = new AbortController();
    const stopped = pool.prepareInput(small, 'a.png', limits, { key: 'u', signal: controller.signal });
    await new Promise((r) => setTimeout(r, 50));
    controller.abort(new Error('stopped by the user'));
    await expect(stopped).rejects.toThrow('stopped by the user');
    for (let waited = 0; alive(pid!) && waited < 2_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    expect(alive(pid!)).toBe(false);

    const [next] = await stoppedWorkers(pool);
    const crashing = pool.prepareInput(small, 'b.png', limits, { key: 'u' });
    await new Promise((r) => setTimeout(r, 50));
    process.kill(next!, 'SIGKILL');
    await expect(crashing).rejects.toThrow('b.png could not be converted (the file may be damaged).');
  });

  it('fits a generated image to a byte limit in a worker, and close() ends every worker', async () => {
    const pool = newPool();
    const generated = await noisyJpeg(1216, 'png');
    const described = await pool.describe(generated, 'b64_json', { key: 'u' });
    expect([described.format, described.width, described.height]).toEqual(['png', 1216, 1216]);
    expect(generated.byteLength).toBeGreaterThan(1_000_000);
    const fitted = await pool.fit(described, 1_000_000, { key: 'u' });
    expect(fitted.data.byteLength).toBeLessThanOrEqual(1_000_000);
    expect(english.say(fitted.reencoded!)).toMatch(
      /^The image was re-encoded as JPEG \(\d+%\) to fit this server's 1\.0 MB limit\.$/,
    );
    const pids = pidsOf(pool);
    expect(pids.length).toBeGreaterThan(0);
    await pool.close();
    expect(pids.some(alive)).toBe(false);
    await expect(pool.prepareInput(big, 'late.png', limits, { key: 'u' })).rejects.toThrow(/closed/);
  });
});
