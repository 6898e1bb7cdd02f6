/**
 * An answer about to be asked for: its Stop button, its reply, its place in the service's fair
 * queue ("⏳ Queued: N ahead of you."), and what the user reads when the request fails before
 * any text. answer-stream.ts then streams the text into the reply.
 */
import { ShownError, withReference } from '../errors.ts';
import type { CommandContext, MessageHandle } from '../platform.ts';
import { StopRequest } from '../running.ts';
import { sentenceOf } from '../sentences.ts';
import { ServiceError } from '../service/errors.ts';
import type { QueueTicket } from '../service/gate.ts';
import type { WriteScheduler } from './scheduler.ts';
import type { StopButtons } from './stops.ts';
import { StreamingReply } from './streaming-reply.ts';

/** What the user reads for a service failure in an answer: a stop says why; anything else carries the reference. */
export function failureLine(
  error: ServiceError,
  ctx: Pick<CommandContext, 'ref' | 'conversationId' | 'isDirectMessage'>,
): string {
  return error.code === 'aborted' ? sentenceOf(error) : withReference(sentenceOf(error, ctx), ctx.ref);
}

/**
 * A request that failed before any text: a status line already shown (the queue place) is
 * replaced by the sentence for a service failure.
 * @returns the error to throw: a ShownError when the sentence was shown, else `error` as is
 *   (the runner tells the user).
 * @throws what the platform throws for the write of the sentence.
 */
export async function toldBeforeText(ctx: CommandContext, reply: StreamingReply, error: unknown): Promise<unknown> {
  if (!reply.showsStatusOnly || !(error instanceof ServiceError)) return error;
  await reply.finish(`⚠️ ${failureLine(error, ctx)}`);
  return new ShownError(error);
}

/** The line shown while a request waits for the service (gate.ts). */
export function queuedLine(ahead: number): string {
  return ahead === 0 ? '⏳ Queued: you are next.' : `⏳ Queued: ${ahead} ahead of you.`;
}

/** An answer about to be asked for: its reply, its signal (Stop aborts it) and its place in the queue. */
export interface AnswerSession {
  /** Carries a Stop button until the final write; shows the queue place before the first text. */
  reply: StreamingReply;
  /** The command's signal, also aborted by a press of Stop (reason: a user StopRequest). */
  signal: AbortSignal;
  /** The request's line in the service's fair queue (the channel) and the place shown. */
  queue: QueueTicket;
  /**
   * For a request that failed before any text: a status line already shown (the queue place)
   * is replaced by the sentence for the error, and a ShownError thrown; otherwise `error` is
   * rethrown as is. Always throws.
   */
  fail(error: unknown): Promise<never>;
  /** Unregisters the Stop button (the answer is over). Idempotent. */
  close(): void;
}

/**
 * Starts an answer: registers its Stop button (the requester and admins may press it), makes
 * its reply, and the queue ticket that shows "⏳ Queued: N ahead of you." while the service is busy.
 * `deps.over`: the messages of an earlier answer the reply writes over (StreamingReply's `over`).
 */
export function beginAnswer(
  ctx: CommandContext,
  deps: { scheduler: WriteScheduler; stops: StopButtons; over?: readonly MessageHandle[] | undefined },
): AnswerSession {
  // One controller for both the command's signal and Stop (AbortSignal.any would add a signal,
  // weak references and a finalizer to each answer): the command's abort is passed on (the
  // command's signal lives as long as the command, so its listener needs no removal).
  const stopper = new AbortController();
  const signal = stopper.signal;
  const passOn = () => stopper.abort(ctx.signal.reason);
  if (ctx.signal.aborted) passOn();
  else ctx.signal.addEventListener('abort', passOn, { once: true });
  const stop = deps.stops.register({ requesterId: ctx.user.id, abort: (reason) => stopper.abort(reason) });
  // The platform's own stop control (Slack's, on a streaming message) works like the button.
  ctx.reply.onUserStop?.(() => stopper.abort(new StopRequest('user')));
  const reply = new StreamingReply(ctx.reply, {
    log: ctx.log,
    scheduler: deps.scheduler,
    controls: [stop.button],
    ...(deps.over?.length ? { over: deps.over } : {}),
  });
  return {
    reply,
    signal,
    queue: { key: ctx.channelKey, onQueued: (ahead) => reply.status(queuedLine(ahead)) },
    fail: async (error) => {
      throw await toldBeforeText(ctx, reply, error);
    },
    close: () => stop.close(),
  };
}
