/**
 * `/complete` (§4.2): a prompt continued by the legacy text completion endpoint, streamed into
 * the reply as /chat's answers are (answer-stream.ts), without history.
 */
import type { Core } from '../core.ts';
import { type AnswerSession, beginAnswer } from '../delivery/answer-session.ts';
import { streamAnswer } from '../delivery/answer-stream.ts';
import { ShownError } from '../errors.ts';
import type { CommandContext } from '../platform.ts';
import type { CompletionChunk, CompletionRequest, Usage } from '../service/schemas.ts';
import type { Stream } from '../service/stream.ts';
import { textOf } from '../service/text-of.ts';
import type { TokenReservation } from '../state/quotas.ts';
import { type Deferral, deferred, startDeferral } from './deferral.ts';
import { admit, countTokens, reserveTokens } from './usage.ts';

/**
 * Completes `prompt` with the legacy text completion endpoint (§4.2), streamed into the reply.
 * The prompt is shown, continued by the completion. No history.
 * @param request.model the channel's chat model when absent; `temperature` and `max_tokens` sent only when given.
 * @throws as {@link streamAnswer}.
 */
export async function complete(
  ctx: CommandContext,
  core: Core,
  request: { prompt: string; model?: string } & Partial<Pick<CompletionRequest, 'temperature' | 'max_tokens'>>,
): Promise<void> {
  await admit(ctx, core, 'chat');
  const reservation = await reserveTokens(ctx, core, request.prompt, { maxTokens: request.max_tokens });
  try {
    const deferral = startDeferral(ctx);
    const model = request.model ?? (await core.models.chatModel(ctx.signal, ctx.channelKey));
    const { prompt, temperature, max_tokens } = request;
    const session = beginAnswer(ctx, { scheduler: core.scheduler, stops: core.stops });
    try {
      await answerCompletion(ctx, core, { prompt, model, temperature, max_tokens }, { session, deferral, reservation });
    } finally {
      session.close();
    }
  } finally {
    await reservation.settle(0);
  }
}

/** The request to the service and the streamed answer of {@link complete}. */
async function answerCompletion(
  ctx: CommandContext,
  core: Core,
  request: { prompt: string; model: string; temperature?: number | undefined; max_tokens?: number | undefined },
  running: { session: AnswerSession; deferral: Deferral; reservation: TokenReservation },
): Promise<void> {
  const { prompt, model, temperature, max_tokens } = request;
  const { session, deferral, reservation } = running;
  let stream: Stream<CompletionChunk>;
  try {
    stream = await core.service.completions.create(
      {
        model,
        prompt,
        stream: true,
        ...(temperature !== undefined ? { temperature } : {}),
        ...(max_tokens !== undefined ? { max_tokens } : {}),
      },
      { signal: session.signal, queue: session.queue },
    );
  } catch (error) {
    return session.fail(error);
  }
  await deferred(deferral, stream);
  let usage: Usage | undefined;
  async function* deltas() {
    yield prompt;
    yield* textOf(
      stream,
      (chunk) => {
        usage = (chunk.usage as Usage | undefined) ?? usage;
        return chunk.choices[0]?.text;
      },
      {
        idleMs: core.limits.streamIdleMs,
      },
    );
  }
  const {
    text: shown,
    ending,
    error,
  } = await streamAnswer(ctx, deltas(), {
    events: core.events,
    finishReason: () => stream.finishReason,
    maxChars: core.limits.maxAnswerChars,
    reply: session.reply,
  });
  if (ending === 'failed') throw error;
  await countTokens(ctx, core, reservation, prompt, shown.slice(prompt.length), usage);
  if (ending !== 'done') throw new ShownError(error);
}
