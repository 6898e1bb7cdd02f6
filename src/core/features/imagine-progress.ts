/**
 * The progress line of one image generation (imagine-post.ts): while the request waits in the
 * service's fair queue (service/gate.ts), "⏳ Queued: N ahead of you." as /chat shows it
 * (answer-stream.ts `queuedLine`), at once and whenever the place changes; once it runs,
 * "🎨 Generating… N s" (seconds since its turn came), from 3 s on and rewritten every 3 s.
 * Every write goes through the write scheduler as an intermediate write (it yields to other
 * answers' final writes), one at a time, at most one a `minEditIntervalMs`.
 */
import { randomUUID } from 'node:crypto';
import type { Core } from '../core.ts';
import { queuedLine } from '../delivery/answer-session.ts';
import { editOnce } from '../delivery/one-off.ts';
import { ShownError, withReference } from '../errors.ts';
import type { CommandContext, MessageHandle } from '../platform.ts';
import { sentenceOf } from '../sentences.ts';
import { ServiceError } from '../service/errors.ts';
import type { QueueTicket } from '../service/gate.ts';

/** How often the progress line is rewritten while the service works, in ms. */
const PROGRESS_INTERVAL_MS = 3_000;

/** One generation's progress line: its message once posted, its place in the queue, its clock. */
class ProgressLine {
  /** The progress message, once posted. */
  handle: MessageHandle | undefined;
  /** The progress write submitted last (one at a time: the scheduler runs one write per key). */
  private writing: Promise<unknown> = Promise.resolve();
  private done = false;
  /** The place in the queue while the request waits there; undefined once it runs (or never waited). */
  private ahead: number | undefined;
  private started = Date.now();
  /** The text the message shows now. */
  private shown: string | undefined;
  /** The scheduler's key of this line's writes (and its stream, for fairness), as a StreamingReply's. */
  private readonly key = randomUUID();
  private readonly timer: NodeJS.Timeout;

  /** The request's line in the service's queue (the channel), telling this progress line of its place. */
  readonly ticket: QueueTicket;

  constructor(
    private readonly ctx: CommandContext,
    private readonly core: Core,
  ) {
    // A quick image needs no progress (and a quick failure stays the user's alone).
    this.timer = setInterval(() => this.write(), PROGRESS_INTERVAL_MS);
    this.ticket = {
      key: ctx.channelKey,
      onQueued: (ahead) => {
        this.ahead = ahead;
        this.write();
      },
      onStart: () => {
        this.ahead = undefined;
        this.started = Date.now();
        this.write();
      },
    };
  }

  /** The line to show now. */
  private line(): string {
    if (this.ahead !== undefined) return queuedLine(this.ahead);
    return `🎨 Generating… ${Math.round((Date.now() - this.started) / 1000)} s`;
  }

  /** Submits a write of the line (replacing one still pending); its failure is logged, not thrown. */
  private write(): void {
    this.writing = this.core.scheduler
      .submit({
        key: this.key,
        stream: this.key,
        buckets: this.ctx.reply.buckets?.(this.handle ? 'edit' : 'send', 0) ?? [],
        final: false,
        minIntervalMs: this.ctx.reply.limits.minEditIntervalMs,
        run: async () => {
          const text = this.line();
          if (this.done || text === this.shown) return;
          if (this.handle) await this.handle.edit({ content: text });
          else this.handle = await this.ctx.reply.send({ content: text });
          this.shown = text;
        },
      })
      .catch((error: unknown) => this.ctx.log.debug({ err: error }, 'progress write failed'));
  }

  /** Stops the line: no more writes; resolves once a write under way has ended (the result's writes never overlap it). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.done = true;
    await this.writing;
  }
}

/**
 * Runs `work` with a progress line in the reply (see the file comment). A ServiceError after the
 * line was shown becomes that line (a ShownError): nothing is left saying "Generating…".
 * @param work the generation, given the queue ticket to pass to the service client.
 * @returns the work's result and the progress message (to become the result where the platform edits files in).
 * @throws what `work` throws; a ShownError in place of a ServiceError the line now says.
 */
export async function withProgress<T>(
  ctx: CommandContext,
  core: Core,
  work: (queue: QueueTicket) => Promise<T>,
): Promise<{ result: T; progress: MessageHandle | undefined }> {
  const progress = new ProgressLine(ctx, core);
  let result: T;
  try {
    result = await work(progress.ticket);
  } catch (error) {
    await progress.stop();
    if (!progress.handle || !(error instanceof ServiceError)) throw error;
    try {
      const words = await core.languages.forPlace(ctx);
      const line = { content: `⚠️ ${words.say(withReference(sentenceOf(error), ctx.ref))}` };
      await editOnce(core.scheduler, ctx.reply, progress.handle, line);
    } catch {
      throw error;
    }
    throw new ShownError(error);
  }
  await progress.stop();
  return { result, progress: progress.handle };
}
