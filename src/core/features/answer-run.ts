/**
 * One request to the service (a chat completion §4.1, or a legacy completion §4.2) streamed into
 * an answer's reply and counted: what /chat, /complete and mentions send, and what Regenerate
 * and an edited mention send again (answer-state.ts keeps the body as it was sent).
 */
import type { Core } from '../core.ts';
import type { AnswerSession } from '../delivery/answer-session.ts';
import {
  type AnswerEnding,
  type AnswerText,
  type FinalAnswer,
  type Note,
  type StreamAnswerOptions,
  streamAnswer,
} from '../delivery/answer-stream.ts';
import type { StreamingReply } from '../delivery/streaming-reply.ts';
import type { BotEvents } from '../events.ts';
import type { Words } from '../i18n/words.ts';
import type { Button, CommandContext } from '../platform.ts';
import { ImagesNotSupportedError } from '../sentences.ts';
import { BadRequestError } from '../service/errors.ts';
import { type Answered, askInTurn } from '../service/fallback.ts';
import { readFirstText } from '../service/first-text.ts';
import type { ChatCompletionChunk, CompletionChunk, Usage } from '../service/schemas.ts';
import type { Stream } from '../service/stream.ts';
import { textOf } from '../service/text-of.ts';
import type { FeedbackKind } from '../state/feedback.ts';
import type { TokenReservation } from '../state/quotas.ts';
import { noticeLongAnswer } from './answer-notice.ts';
import { type AnswerKeeper, type AnswerState, answerKeeper, type KeptRequest } from './answer-state.ts';
import { type Deferral, deferred } from './deferral.ts';
import { chainOf, fallbackNote, tellFallback } from './fallback.ts';
import { keepFeedback } from './feedback.ts';
import { showJson } from './json-answer.ts';
import { type Charge, chargeText } from './spend.ts';
import { countTokens } from './usage.ts';

/** A chunk of either stream, as far as this file reads it. */
type Chunk = ChatCompletionChunk | CompletionChunk;

/** How {@link runRequest} shows and counts the answer. */
export interface RunOptions {
  /** From beginAnswer: the reply (with Stop), the signal, the queue ticket. */
  session: AnswerSession;
  /** The reply's deferral under way, awaited once the stream is open. */
  deferral: Deferral;
  /** The tokens reserved for the request; settled with what it used. */
  reservation: TokenReservation;
  /** Lines under the answer (Sentences in the session's words: the place's). */
  notes: readonly Note[];
  /** JSON mode: the answer is shown pretty-printed (json-answer.ts). */
  json?: boolean;
  /** The request carries images: a refusal of them names DEFAULT_VISION_MODEL. */
  images?: boolean;
  /**
   * The state of an answer that ends well, kept under `id` for its Regenerate button
   * (answer-state.ts `answerKeeper`, with the refs of the answer's messages) just before its
   * final write, as streamAnswer's `finalControls`.
   */
  keep?: { id: string; state: () => AnswerState };
  /** Run just before the final write of an answer whose stream ended well (streamAnswer's `beforeFinal`). */
  beforeFinal?: (answer: string) => Promise<readonly Note[]>;
  /**
   * What the answer is, for its 👍 / 👎 (features/feedback.ts): an answer that ends well gets
   * them, its record kept (with the request's model) just before its final write.
   */
  feedback?: { kind: FeedbackKind; command: string };
}

/** What {@link runRequest} produced: the answer's text as shown (a completion's without its prompt) and its ending. */
export interface RunResult {
  text: string;
  ending: Exclude<AnswerEnding, 'failed'>;
  error?: unknown;
}

/**
 * Sends `request` (streamed), writes the answer into the session's reply, and counts its tokens
 * (every ending but `failed` costs the tokens shown). A completion's answer shows its prompt
 * first, continued. An answer that took longer than NOTIFY_AFTER_SECONDS ends with a notice that
 * mentions its asker (answer-notice.ts). When the model is unavailable before any text came, the
 * next of FALLBACK_CHAT_MODELS answers (service/fallback.ts), named in a note under the answer;
 * its money is reserved and settled at that model's prices, the first model's reservation given
 * back, and the feedback record and the kept state name it (`answeredBy`).
 * @throws what the request threw before any text (ImagesNotSupportedError for a model that
 *   refuses images), as the session's `fail` shows it; streamAnswer's `failed` error.
 */
export async function runRequest(
  ctx: CommandContext,
  core: Core,
  request: KeptRequest,
  options: RunOptions,
): Promise<RunResult> {
  // The worst case in money, reserved before the request is sent (features/spend.ts); given back unless settled.
  const held = { charge: await chargeText(ctx, core, request) };
  try {
    const opened = await openInTurn(ctx, core, request, options, held);
    return await streamRequest(ctx, core, opened, options, held.charge);
  } finally {
    await held.charge.release();
  }
}

/**
 * The stream of the model that answered, the request it was sent, and the model that failed
 * first; with its text read ahead up to the first (first-text.ts) when a fallback could still
 * have answered.
 */
type Opened = Answered<{ stream: Stream<Chunk>; request: KeptRequest; texts?: AsyncIterableIterator<string> }>;

/**
 * Opens the request's stream, with the model asked and then, while each is unavailable, with the
 * fallback models in turn (service/fallback.ts): a fallback's money is reserved at its prices
 * (held.charge replaced, the last one given back first).
 * @throws what the last model asked threw, as the session's `fail` shows it.
 */
async function openInTurn(
  ctx: CommandContext,
  core: Core,
  request: KeptRequest,
  options: RunOptions,
  held: { charge: Charge },
): Promise<Opened> {
  const { session } = options;
  let asked = request;
  const chain = chainOf(core, 'chat', request.body.model);
  try {
    return await askInTurn(
      chain,
      async (model, index) => {
        if (index > 0) {
          asked = withModel(request, model);
          await held.charge.release();
          held.charge = await chargeText(ctx, core, asked);
        }
        const stream = await openStream(core, asked, session);
        // Another model may still answer in its place: its first text is read now, before anything shows.
        if (index + 1 >= chain.length) return { stream, request: asked };
        const texts = await readFirstText(textsOf(core, asked, stream, session), promptOf(asked));
        return { stream, request: asked, texts };
      },
      (step) => tellFallback(ctx, core, 'chat', step),
      session.signal,
    );
  } catch (error) {
    if (options.images && refusesImages(error))
      return session.fail(new ImagesNotSupportedError(asked.body.model, error as BadRequestError));
    return session.fail(error);
  }
}

/** The request with another model. */
function withModel(request: KeptRequest, model: string): KeptRequest {
  return request.endpoint === 'chat'
    ? { endpoint: 'chat', body: { ...request.body, model } }
    : { endpoint: 'completions', body: { ...request.body, model } };
}

/** Sends one request, streamed, in the session's queue line and under its signal. @throws ServiceError subclasses. */
async function openStream(core: Core, request: KeptRequest, session: AnswerSession): Promise<Stream<Chunk>> {
  const options = { signal: session.signal, queue: session.queue };
  return (
    request.endpoint === 'chat'
      ? await core.service.chat.completions.create({ ...request.body, stream: true }, options)
      : await core.service.completions.create({ ...request.body, stream: true }, options)
  ) as Stream<Chunk>;
}

/** {@link runRequest} once its stream is open and its money reserved. */
async function streamRequest(
  ctx: CommandContext,
  core: Core,
  opened: Opened,
  options: RunOptions,
  charge: Charge,
): Promise<RunResult> {
  const { session } = options;
  const { stream, request } = opened.value;
  await deferred(options.deferral, stream);
  const prompt = promptOf(request);
  const answering = new Answering(ctx, core, request, options, stream, opened);
  const deltas = opened.value.texts ?? textsOf(core, request, stream, session, prompt);
  const { text, ending, error } = await streamAnswer(ctx, deltas, answering);
  // Nothing shown: nothing to count (the reservation is given back).
  if (ending === 'failed') throw error;
  const answer = text.slice(prompt.length);
  const sent = request.endpoint === 'chat' ? request.body.messages : prompt;
  await countTokens(ctx, core, options.reservation, sent, answer, stream.usage as Usage | undefined, charge);
  // A state kept for the final write is kept again when it posted more, and listed (answer-index.ts).
  await answering.keeper?.complete();
  // An answer that took long ends with a message that notifies its asker (an edit notifies nobody).
  await noticeLongAnswer(ctx, core, session, ending);
  return { text: answer, ending, ...(ending !== 'done' ? { error } : {}) };
}

/**
 * {@link runRequest}'s StreamAnswerOptions: the reply, limits and notes, and the answer's hooks
 * as methods of one object (an answer keeps them while it streams: a thousand answers at once
 * kept a dozen closures each for every collection to mark).
 */
class Answering implements StreamAnswerOptions {
  readonly reply: StreamingReply;
  readonly events: BotEvents;
  readonly maxChars: number;
  readonly notes: readonly Note[];
  /** The session's words (the place's): the answer's notes and buttons are in them. */
  readonly words: Words;
  /** Keeps the state of an answer that ends well, for its Regenerate button (`options.keep`). */
  readonly keeper: AnswerKeeper | undefined;
  /** JSON mode: the answer shown pretty-printed (json-answer.ts). */
  readonly finalize?: (answer: AnswerText) => FinalAnswer;

  constructor(
    private readonly ctx: CommandContext,
    private readonly core: Core,
    private readonly request: KeptRequest,
    private readonly options: RunOptions,
    private readonly stream: Stream<Chunk>,
    opened: Opened,
  ) {
    this.reply = options.session.reply;
    this.events = core.events;
    // A reply that may post only so many messages shows less, the rest in the answer's file.
    this.maxChars = Math.min(core.limits.maxAnswerChars, ctx.reply.limits.maxAnswerChars ?? Number.POSITIVE_INFINITY);
    // A fallback's answer names its model (a note of this answer only: the kept state's notes stay the caller's).
    this.notes = [...options.notes, ...fallbackNote(opened)];
    this.words = options.session.words;
    const { keep } = options;
    // The state keeps the request as asked (Regenerate asks the same models again) and the model that answered.
    const state =
      keep && opened.failed !== undefined ? () => ({ ...keep.state(), answeredBy: opened.model }) : keep?.state;
    this.keeper = keep && state && answerKeeper(core, ctx.log, keep.id, state, this.reply);
    if (options.json) this.finalize = (t) => showJson(ctx, t, this.maxChars, this.words);
  }

  finishReason(): string | undefined {
    return this.stream.finishReason;
  }

  finalControls(): Promise<Button[]> {
    return this.keeper ? this.keeper.controls() : Promise.resolve([]);
  }

  beforeFinal(answer: string): Promise<readonly Note[]> {
    return this.options.beforeFinal ? this.options.beforeFinal(answer) : Promise.resolve([]);
  }

  feedback(): Promise<Button[]> {
    const { feedback } = this.options;
    if (!feedback) return Promise.resolve([]);
    return keepFeedback(this.core, this.ctx, { ...feedback, model: this.request.body.model });
  }
}

/** A completion's prompt (its answer is shown after it, continued); '' for a chat completion. */
function promptOf(request: KeptRequest): string {
  return request.endpoint === 'completions' ? request.body.prompt : '';
}

/**
 * The stream's text (textOf), after `first` (a completion's prompt) when given. Once text is
 * shown, the stream is read once per write of the answer (StreamingReply.readWaitMs).
 */
function textsOf(
  core: Core,
  request: KeptRequest,
  stream: Stream<Chunk>,
  session: AnswerSession,
  first?: string,
): AsyncIterableIterator<string> {
  const pieceOf = request.endpoint === 'chat' ? deltaContent : choiceText;
  return textOf(stream, pieceOf, { idleMs: core.limits.streamIdleMs, first, pace: session.reply });
}

/** The text of a chat completion chunk (§4.1 streaming rule 2: `delta.content` may be absent or null). */
function deltaContent(chunk: Chunk): string | null | undefined {
  return (chunk.choices[0] as { delta?: { content?: string | null } } | undefined)?.delta?.content;
}

/** The text of a legacy completion chunk (§4.2: `text`). */
function choiceText(chunk: Chunk): string | undefined {
  return (chunk.choices[0] as { text?: string } | undefined)?.text;
}

/** Whether a service error says the model takes no image input (a 400 naming images or vision). */
function refusesImages(error: unknown): boolean {
  return (
    error instanceof BadRequestError &&
    error.status === 400 &&
    /\bimages?\b|image[_ ]input|image_url|vision/i.test(error.message)
  );
}
