/**
 * The image workers of the bot: every decode and encode of an image (a user's attachment, a
 * reference image, a generated image) runs in a child process (image-worker.ts), never in the
 * bot's process. sharp does its work on libuv's threads, and the bot's SQLite store needs the
 * same four threads for every history read: four crafted images decoding there held another
 * user's /chat for many seconds (bench:abuse). A decode also runs as long as its input makes it
 * (a pixel limit does not bound an SVG filter's render), and native work cannot be
 * interrupted: a child process can be killed.
 *
 * - At most `concurrency` jobs run at once (one per worker process, started when needed and
 *   ended after `idleMs` unused); beyond it jobs wait in a line per key (the user), served in
 *   turn (FairGate), so one user's images never queue another's behind all of them.
 * - A job has a deadline (one request's images share one: {@link ImagePool.deadline}); a job
 *   still waiting then leaves the line, one still running has its worker killed (SIGKILL). Either
 *   way the caller gets the sentence for its file and the bot goes on.
 * - Workers run at a lower scheduling priority than the bot (nice 10; a pool's `nice`).
 * - A worker's whole memory is held to `memoryMb` (image-processes.ts): one past it is ended,
 *   and its file named as needing more memory than the bot gives one.
 *
 * The bot has two pools (core.ts): one for images and one for PDFs, with workers of their own,
 * so that PDFs (a deadline of `PDF_TIMEOUT_MS` each) never hold a slot an image waits for.
 */

import { CONFIG_DEFAULTS } from '../../config.ts';
import type { Logger } from '../../log.ts';
import { type Sentence, sentence } from '../i18n/words.ts';
import { InvalidResponseError } from '../service/errors.ts';
import { FairGate, type Release } from '../service/gate.ts';
import type { ImageResponseFormat } from '../service/schemas.ts';
import { WorkerProcesses } from './image-processes.ts';
import type { WorkerOps } from './image-worker.ts';
import {
  checkRasterInput,
  type FittedImage,
  type GeneratedImage,
  ImageInputError,
  type ImageInputLimits,
  ImageTooLargeError,
  type PreparedImage,
  sniffRasterFormat,
  unchangedFit,
  WORKER_MEMORY_MB,
  WORKER_NICE,
} from './images.ts';
import type { PdfText, PdfTextLimits } from './pdf-text.ts';
import { reason } from './reasons.ts';
import { FileInputError } from './text-files.ts';

/** Options of an {@link ImagePool}. */
export interface ImagePoolOptions {
  /** Jobs running at once, each in a process of its own (`IMAGE_PREP_CONCURRENCY`, default 2). */
  concurrency?: number;
  /** The longest time the images of one request may take, waiting included, in ms (`IMAGE_PREP_TIMEOUT_MS`, default 5,000). */
  timeoutMs?: number;
  /** A worker unused this long ends, in ms (default 60,000). */
  idleMs?: number;
  /** The workers' scheduling priority (nice; default 10, images.ts WORKER_NICE). */
  nice?: number;
  /** The most memory one worker may hold, in MiB (`WORKER_MEMORY_MB`, default 512). */
  memoryMb?: number;
  log?: Logger;
}

/** Where a job waits and until when. */
export interface ImageJobOptions {
  /** The line it waits in: the user (`<platform>:<user id>`), so users take turns. */
  key: string;
  /** When it must be done, in ms since the epoch (default: now + `timeoutMs`). */
  deadline?: number;
  /** Cancels it (the command was stopped): the signal's reason is thrown. */
  signal?: AbortSignal;
}

/** How a job failed, for the caller's sentence: past its deadline, past the memory cap, or its worker crashed. */
type Failure = 'timeout' | 'memory' | 'crash';

/** Runs image operations in worker processes. One per bot; `close()` ends the workers. */
export class ImagePool {
  readonly concurrency: number;
  readonly timeoutMs: number;
  /** The most memory one worker may hold, in MiB. */
  readonly memoryMb: number;
  private readonly gate: FairGate;
  private readonly workers: WorkerProcesses;
  private closed = false;

  constructor(private readonly options: ImagePoolOptions = {}) {
    this.concurrency = options.concurrency ?? CONFIG_DEFAULTS.imageWorkers.concurrency;
    this.timeoutMs = options.timeoutMs ?? CONFIG_DEFAULTS.imageWorkers.timeoutMs;
    this.memoryMb = options.memoryMb ?? WORKER_MEMORY_MB;
    this.workers = new WorkerProcesses({
      idleMs: options.idleMs ?? 60_000,
      nice: options.nice ?? WORKER_NICE,
      memoryMb: this.memoryMb,
    });
    this.gate = new FairGate(this.concurrency);
  }

  /** Worker processes alive now (running a job or idle). */
  get processes(): number {
    return this.workers.count;
  }

  /** The process ids of the worker processes alive now (for signals in tests and for operators). */
  get pids(): number[] {
    return this.workers.pids;
  }

  /**
   * Starts a worker ahead of a job if none is idle (and a slot is left), so that its start
   * (~0.4 s: Node, the TypeScript loader, sharp) overlaps the download of the file. Never throws.
   */
  warm(): void {
    if (this.closed || this.workers.anyIdle || this.workers.count >= this.concurrency) return;
    try {
      this.workers.startIdle();
    } catch (error) {
      this.options.log?.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'could not start an image worker',
      );
    }
  }

  /** The deadline of a request's images starting now, in ms since the epoch (now + `timeoutMs`). */
  deadline(): number {
    return Date.now() + this.timeoutMs;
  }

  /**
   * A user's image → the data URL of a chat completion (image-ops.ts prepareImageInput). A
   * file that is not a raster image (SVG…) is refused from its first bytes, here.
   * @throws ImageInputError naming the file (not a raster image, too large, damaged, took too
   *   long); the abort reason of `job.signal`.
   */
  async prepareInput(
    data: Uint8Array,
    name: string,
    limits: ImageInputLimits,
    job: ImageJobOptions,
  ): Promise<PreparedImage> {
    checkRasterInput(data, name);
    return this.run(
      'prepareInput',
      [data, name, { maxBytes: limits.maxBytes, maxPixels: limits.maxPixels }],
      job,
      (failure) => inputFailure(name, failure, this),
    );
  }

  /** A user's image → a §4.3 reference image (image-ops.ts prepareReferenceImage). @throws as {@link prepareInput}. */
  async prepareReference(
    data: Uint8Array,
    name: string,
    limits: ImageInputLimits,
    job: ImageJobOptions,
  ): Promise<PreparedImage> {
    checkRasterInput(data, name);
    return this.run(
      'prepareReference',
      [data, name, { maxBytes: limits.maxBytes, maxPixels: limits.maxPixels }],
      job,
      (failure) => inputFailure(name, failure, this),
    );
  }

  /**
   * A generated image's format and size (image-ops.ts describeImage).
   * @throws InvalidResponseError (not an image, or not read in time); the abort reason of `job.signal`.
   */
  async describe(data: Buffer, source: ImageResponseFormat, job: ImageJobOptions): Promise<GeneratedImage> {
    if (!sniffRasterFormat(data))
      throw new InvalidResponseError(`the ${source} image is not a raster image the bot reads`);
    const described = await this.run('describe', [data, source], job, (failure) => generatedFailure(failure));
    return { ...described, data };
  }

  /**
   * A generated image made to fit `maxBytes` (image-ops.ts fitImageFile).
   * @throws ImageTooLargeError; InvalidResponseError (not read in time); the abort reason of `job.signal`.
   */
  async fit(
    image: Pick<GeneratedImage, 'data' | 'format' | 'mimeType' | 'width' | 'height'>,
    maxBytes: number | undefined,
    job: ImageJobOptions,
  ): Promise<FittedImage> {
    if (maxBytes === undefined || image.data.byteLength <= maxBytes) return unchangedFit(image);
    const fitted = await this.run(
      'fit',
      [
        { data: image.data, format: image.format, mimeType: image.mimeType, width: image.width, height: image.height },
        maxBytes,
      ],
      job,
      (failure) => generatedFailure(failure),
    );
    return { ...fitted, data: Buffer.from(fitted.data.buffer, fitted.data.byteOffset, fitted.data.byteLength) };
  }

  /**
   * A user's PDF → its first pages' text (pdf-text.ts: unpdf, at most `limits.maxPages` pages
   * and `limits.maxChars` characters), in a worker, done by `job.deadline` or its worker killed.
   * @throws FileInputError naming the file (not a PDF pdf.js opens, took too long, needed more
   *   memory than `memoryMb`, ended its worker); the abort reason of `job.signal`.
   */
  async pdfText(data: Uint8Array, name: string, limits: PdfTextLimits, job: ImageJobOptions): Promise<PdfText> {
    try {
      return await this.run('pdfText', [data, limits], job, (failure) =>
        FileInputError.of(
          name,
          failure === 'timeout'
            ? reason('media.reason.pdf_timeout')
            : failure === 'memory'
              ? reason('media.reason.pdf_memory', { mb: this.memoryMb })
              : reason('media.reason.pdf_crashed'),
        ),
      );
    } catch (error) {
      if (error instanceof FileInputError || job.signal?.aborted) throw error;
      throw FileInputError.of(name, reason('media.reason.pdf_unreadable'));
    }
  }

  /** Ends every worker (running jobs fail) and refuses new jobs. */
  async close(): Promise<void> {
    this.closed = true;
    await this.workers.close();
  }

  /**
   * Runs one job in a worker: waits for a slot (in the key's line) until the deadline, sends
   * the job, and waits for its reply until the deadline; a worker past it is killed.
   * @throws the operation's own errors, rebuilt; `failed(…)` for a timeout or a worker that
   *   ended; the abort reason of `job.signal`.
   */
  private async run<K extends keyof WorkerOps>(
    op: K,
    args: WorkerOps[K]['args'],
    job: ImageJobOptions,
    failed: (failure: Failure) => Error,
  ): Promise<WorkerOps[K]['result']> {
    if (this.closed) throw new Error('the image workers are closed');
    const deadline = job.deadline ?? this.deadline();
    const remaining = deadline - Date.now();
    if (job.signal?.aborted) throw job.signal.reason;
    if (remaining <= 0) throw failed('timeout');
    const expiry = AbortSignal.timeout(remaining);
    const waiting = job.signal ? AbortSignal.any([job.signal, expiry]) : expiry;
    let release: Release;
    try {
      release = await this.gate.acquire({ key: job.key }, waiting);
    } catch (error) {
      if (job.signal?.aborted) throw job.signal.reason;
      if (expiry.aborted) {
        this.options.log?.info({ op, key: job.key }, 'image job waited past its deadline');
        throw failed('timeout');
      }
      throw error;
    }
    try {
      const reply = await this.workers.send(op, args, deadline, job.signal);
      if ('exit' in reply) {
        this.options.log?.info(
          { op, key: job.key, why: reply.exit },
          reply.exit === 'timeout'
            ? 'worker job ran past its deadline: worker killed'
            : reply.exit === 'memory'
              ? 'worker job ran past the memory cap: worker ended'
              : 'worker ended during a job',
        );
        if (reply.exit === 'aborted') throw job.signal!.reason;
        throw failed(reply.exit === 'timeout' || reply.exit === 'memory' ? reply.exit : 'crash');
      }
      if (!reply.ok) {
        if (reply.error.memory) {
          this.options.log?.info({ op, key: job.key }, 'worker job refused memory past the cap');
          throw failed('memory');
        }
        throw rebuild(reply.error);
      }
      return reply.value as WorkerOps[K]['result'];
    } finally {
      release();
    }
  }
}

/** The sentence for a user's file that took too long, too much memory, or crashed its worker. */
function inputFailure(
  name: string,
  failure: Failure,
  pool: Pick<ImagePool, 'timeoutMs' | 'memoryMb'>,
): ImageInputError {
  if (failure === 'timeout')
    return new ImageInputError(
      name,
      reason('media.reason.image_timeout', { seconds: Math.round(pool.timeoutMs / 100) / 10 }),
    );
  if (failure === 'memory')
    return new ImageInputError(name, reason('media.reason.image_memory', { mb: pool.memoryMb }));
  return new ImageInputError(name, reason('media.reason.damaged'));
}

/** The error for a generated image that took too long or crashed its worker. */
function generatedFailure(failure: Failure): InvalidResponseError {
  if (failure === 'memory')
    return new InvalidResponseError('the generated image needed more memory than an image worker may hold');
  return failure === 'timeout'
    ? new InvalidResponseError(
        'the generated image was not read in time',
        sentence('errors.service.image_not_processed'),
      )
    : new InvalidResponseError('the image worker ended while reading the generated image');
}

/** The error a worker reported, as the class the callers catch. */
function rebuild(error: {
  name: string;
  message: string;
  reason?: Sentence;
  file?: string;
  sentence?: Sentence;
}): Error {
  if (error.name === 'ImageInputError')
    return new ImageInputError(error.file ?? '', error.reason ?? reason('media.reason.damaged'));
  if (error.name === 'ImageTooLargeError')
    return new ImageTooLargeError(error.sentence ?? sentence('errors.service.image_not_processed'));
  if (error.name === 'InvalidResponseError') return new InvalidResponseError(error.message);
  return new Error(`image worker: ${error.message}`);
}
