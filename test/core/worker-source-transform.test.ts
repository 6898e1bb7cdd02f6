/**
 * The workers as the tests run them: from the TypeScript source, through tsx's loader
 * (image-processes.ts). tsx turns a file it has not cached yet into JavaScript when it is first
 * imported, as a worker's first PDF imports pdf-text.ts. By default esbuild's synchronous API,
 * which tsx uses for that, starts a worker thread: a second V8 isolate. On Node 24 an isolate
 * reserves ~0.55 GiB, past the worker's cap above the measured reserve, so the worker died
 * ("Failed to reserve virtual memory for CodeRange") and every PDF of a fresh run on Node 24 was
 * "too large". On Node 20 an isolate reserves little, and this passes with or without the fix.
 * A file of its own: the reserve is measured once per process, here with the cache in this state.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerProcesses } from '../../src/core/media/image-processes.ts';
import { MEASURE_RESERVE_ARG } from '../../src/core/media/images.ts';
import { textPdf } from '../helpers/pdf.ts';

const WORKER_FILE = resolve(import.meta.dirname, '../../src/core/media/image-worker.ts');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

const savedTmpdir = process.env.TMPDIR;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.runIf(process.platform === 'linux')('a worker run from the TypeScript source', () => {
  it('reads its first PDF when tsx has not cached pdf-text.ts yet, under the default 512 MB cap', async () => {
    // tsx keeps its cache in the temporary folder: a new one for the workers of this test.
    const cache = mkdtempSync(join(tmpdir(), 'genbot-tsx-cache-'));
    cleanups.push(() => rmSync(cache, { recursive: true, force: true }));
    process.env.TMPDIR = cache;
    cleanups.push(() => {
      if (savedTmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmpdir;
    });
    // What a worker loads as it starts is cached (as after any earlier image job): the pool's
    // measured reserve is then that of one isolate, and pdf-text.ts alone is left to turn.
    execFileSync(process.execPath, ['--import', TSX, WORKER_FILE, MEASURE_RESERVE_ARG], { timeout: 60_000 });
    const pool = new WorkerProcesses({ idleMs: 1_000, nice: 12, memoryMb: 512 });
    cleanups.push(() => pool.close());
    const pdf = textPdf(['The first page.', 'The second page.']);
    const reply = await pool.send('pdfText', [pdf, { maxPages: 5, maxChars: 1_000 }], Date.now() + 60_000, undefined);
    expect(reply).toEqual({
      id: expect.any(Number),
      ok: true,
      value: { text: 'The first page.\n\nThe second page.', pages: 2, totalPages: 2, cut: false },
    });
  });
});
