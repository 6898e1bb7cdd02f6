/**
 * An image worker: a child process that runs the image operations (image-ops.ts) and the
 * extraction of a user's PDF's text (pdf-text.ts) for the bot,
 * one at a time, so that sharp decodes on this process's threads and CPU share, never on the
 * bot's. Started by ImagePool (image-pool.ts) with an IPC channel using Node's "advanced"
 * serialization (buffers cross as bytes, not JSON), at a lower scheduling priority than the
 * bot, and killed by it when a job runs past its deadline.
 *
 * Messages: the pool sends {@link WorkerJob}; the worker answers one {@link WorkerReply} per job.
 */

import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import sharp from 'sharp';
import { isSentence, type Sentence } from '../i18n/words.ts';
import { describeImage, fitImageFile, prepareImageInput, prepareReferenceImage } from './image-ops.ts';
import { MEASURE_RESERVE_ARG, WORKER_NICE } from './images.ts';
import type { PdfText, PdfTextLimits } from './pdf-text.ts';

/** The operations a worker runs, with their arguments and results. */
export interface WorkerOps {
  prepareInput: {
    args: [data: Uint8Array, name: string, limits: { maxBytes: number; maxPixels: number }];
    result: Awaited<ReturnType<typeof prepareImageInput>>;
  };
  prepareReference: {
    args: [data: Uint8Array, name: string, limits: { maxBytes: number; maxPixels: number }];
    result: Awaited<ReturnType<typeof prepareReferenceImage>>;
  };
  /** The image's format and size only: its bytes are the caller's already (not sent back). */
  describe: { args: Parameters<typeof describeImage>; result: Omit<Awaited<ReturnType<typeof describeImage>>, 'data'> };
  fit: { args: Parameters<typeof fitImageFile>; result: Awaited<ReturnType<typeof fitImageFile>> };
  /** A user's PDF → its text (pdf-text.ts; unpdf is loaded by the first such job only). */
  pdfText: { args: [data: Uint8Array, limits: PdfTextLimits]; result: PdfText };
}

/** One job: `id` is the pool's, echoed in the reply. */
export interface WorkerJob<K extends keyof WorkerOps = keyof WorkerOps> {
  id: number;
  op: K;
  args: WorkerOps[K]['args'];
}

/**
 * What a worker answers: the result, or the error's class name, message and (ImageInputError)
 * reason (a Sentence: media/reasons.ts) and file name, (ImageTooLargeError) its sentence; `memory` when the operation failed for want of memory (an allocation refused at the
 * worker's cap, image-processes.ts: V8's "Array buffer allocation failed", which pdf.js passes on).
 */
export type WorkerReply =
  | { id: number; ok: true; value: unknown }
  | {
      id: number;
      ok: false;
      error: { name: string; message: string; reason?: Sentence; file?: string; sentence?: Sentence; memory?: boolean };
    };

/** An error's message that says an allocation was refused (the worker's memory cap). */
const OUT_OF_MEMORY = /allocation failed|out of memory/i;

/** Bytes that crossed the IPC channel as a Uint8Array, as a Buffer over the same memory. */
const asBuffer = (data: Uint8Array): Buffer =>
  Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);

/** Runs one job. @throws what the operation throws. */
async function run(job: WorkerJob): Promise<unknown> {
  switch (job.op) {
    case 'prepareInput': {
      const [data, name, limits] = job.args as WorkerOps['prepareInput']['args'];
      return prepareImageInput(asBuffer(data), name, limits);
    }
    case 'prepareReference': {
      const [data, name, limits] = job.args as WorkerOps['prepareReference']['args'];
      return prepareReferenceImage(asBuffer(data), name, limits);
    }
    case 'describe': {
      const [data, source] = job.args as WorkerOps['describe']['args'];
      const { data: _bytes, ...described } = await describeImage(asBuffer(data), source);
      return described;
    }
    case 'fit': {
      const [image, maxBytes] = job.args as WorkerOps['fit']['args'];
      return fitImageFile({ ...image, data: asBuffer(image.data) }, maxBytes);
    }
    case 'pdfText': {
      const [data, limits] = job.args as WorkerOps['pdfText']['args'];
      // pdf.js inflates a page's content stream whole through DecompressionStream where there is
      // one (a 1 MB PDF can ask for a GiB); without it, it inflates as its parser reads, so that
      // reading stops at the text budget (pdf-text.ts). Nothing else in a worker uses it.
      delete (globalThis as { DecompressionStream?: unknown }).DecompressionStream;
      const { extractPdfText } = await import('./pdf-text.ts');
      return extractPdfText(data, limits);
    }
    default:
      throw new Error(`unknown image operation ${String((job as { op: unknown }).op)}`);
  }
}

if (process.argv[2] === MEASURE_RESERVE_ARG) {
  // What this process holds once loaded, before any job: Node's, V8's, the loader's and sharp's.
  process.stdout.write(/VmData:\s*(\d+)/.exec(readFileSync('/proc/self/status', 'latin1'))?.[1] ?? '');
} else if (process.send) {
  // Below the bot: a long decode takes the CPU the bot does not need (the pool's level, its first
  // argument: image workers 10, PDF workers 12; raising is not allowed, lowering is).
  try {
    setPriority(Number(process.argv[2]) || WORKER_NICE);
  } catch {
    // Some containers refuse it; the process boundary is what keeps the bot's threads free.
  }
  // One job at a time, on one libvips thread, without libvips' operation cache (nothing repeats).
  sharp.concurrency(1);
  sharp.cache(false);
  process.on('message', (job: WorkerJob) => {
    run(job).then(
      (value) => process.send!({ id: job.id, ok: true, value } satisfies WorkerReply),
      (error: unknown) => {
        const e = error instanceof Error ? error : new Error(String(error));
        process.send!({
          id: job.id,
          ok: false,
          error: {
            name: e.name,
            message: e.message,
            ...('reason' in e && isSentence(e.reason) ? { reason: e.reason } : {}),
            ...('file' in e && typeof e.file === 'string' ? { file: e.file } : {}),
            ...(e.name === 'ImageTooLargeError' && 'sentence' in e && isSentence(e.sentence)
              ? { sentence: e.sentence }
              : {}),
            ...(OUT_OF_MEMORY.test(e.message) ? { memory: true } : {}),
          },
        } satisfies WorkerReply);
      },
    );
  });
  // The pool closing the channel (or dying) ends the worker.
  process.on('disconnect', () => process.exit(0));
}
