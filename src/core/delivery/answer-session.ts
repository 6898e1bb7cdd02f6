/**
 * An answer about to be asked for: its Stop button, its reply, its place in the service's fair
 * queue ("⏳ Queued: N ahead of you."), and what the user reads when the request fails before
 * any text. answer-stream.ts then streams the text into the reply.
 */
import { ShownError, withReference } from '../errors.ts';
import { english, type Words } from '../i18n/words.ts';
import type { CommandContext, MessageHandle } from '../platform.ts';
import { StopRequest } from '../running.ts';
import { sentenceOf } from '../sentences.ts';
import { ServiceError } from '../service/errors.ts';
import type { QueueTicket } from '../service/gate.ts';
import type { WriteScheduler } from './scheduler.ts';
import type { OpenAnswer, StopButtons, StopHandle } from './stops.ts';
import { StreamingReply } from './streaming-reply.ts';

/**
 * What the user reads for a service failure in an answer: a stop says why; anything else carries
 * the reference. In the place's language (a public line under the answer: i18n/languages.ts).
 */
export function failureLine(
  error: ServiceError,
  ctx: Pick<CommandContext, 'ref' | 'conversationId' | 'isDirectMessage'>,
  words: Words,
): string {
  return error.code === 'aborted'
    ? words.say(sentenceOf(error))
    : words.say(withReference(sentenceOf(error, ctx), ctx.ref));
}

/**
 * A request that failed before any text: a status line already shown (the queue place) is
 * replaced by the sentence for a service failure.
 * @returns the error to throw: a ShownError when the sentence was shown, else `error` as is
 *   (the runner tells the user).
 * @throws what the platform throws for the write of the sentence.
 */
export async function toldBeforeText(
  ctx: CommandContext,
  reply: StreamingReply,
  error: unknown,
  words: Words,
): Promise<unknown> {
  if (!reply.showsStatusOnly || !(error instanceof ServiceError)) return error;
  await reply.finish(`⚠️ ${failureLine(error, ctx, words)}`);
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
   * When the user asked, in `performance.now()` ms: the invocation's `startedAt`, else when the
   * session began. How long the answer took is counted from it (features/answer-notice.ts).
   */
  readonly startedAt: number;
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
export function beginAnswer(ctx: CommandContext, deps: AnswerDeps): AnswerSession {
  return new Session(ctx, deps);
}

/** What {@link beginAnswer} needs besides the invocation. */
export interface AnswerDeps {
  scheduler: WriteScheduler;
  stops: StopButtons;
  over?: readonly MessageHandle[] | undefined;
  /** The place's words (public lines of the answer); English when absent. */
  words?: Words | undefined;
}

/**
 * {@link beginAnswer}'s session: one object that is the answer's queue ticket, the listener of
 * the command's abort and what Stop aborts (an answer lives as long as it streams, and a
 * thousand at once each kept a handful of closures for every collection to mark).
 */
class Session implements AnswerSession, QueueTicket, OpenAnswer {
  readonly reply: StreamingReply;
  readonly key: string;
  readonly requesterId: string;
  readonly startedAt: number;
  /** One controller for both the command's signal and Stop (AbortSignal.any would add a signal, weak references and a finalizer to each answer). */
  private readonly stopper = new AbortController();
  /** The place's words: the answer's public lines (queue, failure) are in them. */
  readonly words: Words;
  private readonly stop: StopHandle;

  constructor(
    private readonly ctx: CommandContext,
    deps: AnswerDeps,
  ) {
    this.words = deps.words ?? english;
    this.key = ctx.channelKey;
    this.startedAt = ctx.startedAt ?? performance.now();
    // The command's abort is passed on (the command's signal lives as long as the command, so
    // this listener needs no removal).
    if (ctx.signal.aborted) this.abort(ctx.signal.reason);
    else ctx.signal.addEventListener('abort', this, { once: true });
    this.requesterId = ctx.user.id;
    this.stop = deps.stops.register(this);
    // The platform's own stop control (Slack's, on a streaming message) works like the button.
    ctx.reply.onUserStop?.(() => this.abort(new StopRequest('user')));
    this.reply = new StreamingReply(ctx.reply, {
      log: ctx.log,
      scheduler: deps.scheduler,
      controls: [this.stop.button],
      // A reply someone deleted stops the answer, as Stop would: nobody reads the rest.
      onDeleted: () => this.abort(new StopRequest('user')),
      ...(deps.over?.length ? { over: deps.over } : {}),
    });
  }

  get signal(): AbortSignal {
    return this.stopper.signal;
  }

  get queue(): QueueTicket {
    return this;
  }

  /** Aborts the answer's request (Stop, or the command's abort passed on). */
  abort(reason: unknown): void {
    this.stopper.abort(reason);
  }

  /** The command's signal aborted (an EventListener object): passes its reason on. */
  handleEvent(): void {
    this.abort(this.ctx.signal.reason);
  }

  /** QueueTicket: shows the request's place in the queue. */
  onQueued(ahead: number): void {
    this.reply.status(queuedLine(ahead));
  }

  async fail(error: unknown): Promise<never> {
    throw await toldBeforeText(this.ctx, this.reply, error, this.words);
  }

  close(): void {
    this.stop.close();
  }
}
