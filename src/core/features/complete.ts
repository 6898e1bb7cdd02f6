/**
 * `/complete` (§4.2): a prompt continued by the legacy text completion endpoint, streamed into
 * the reply as /chat's answers are (answer-stream.ts), without history.
 */
import type { Core } from '../core.ts';
import { type AnswerSession, beginAnswer } from '../delivery/answer-session.ts';
import { ShownError } from '../errors.ts';
import type { CommandContext } from '../platform.ts';
import type { CompletionRequest } from '../service/schemas.ts';
import type { TokenReservation } from '../state/quotas.ts';
import { runRequest } from './answer-run.ts';
import { type AnswerState, type KeptRequest, newAnswerId } from './answer-state.ts';
import { type Deferral, startDeferral } from './deferral.ts';
import { admit, reserveTokens } from './usage.ts';

/**
 * Completes `prompt` with the legacy text completion endpoint (§4.2), streamed into the reply.
 * The prompt is shown, continued by the completion. No history.
 * @param request.model the channel's chat model when absent; `temperature` and `max_tokens` sent only when given.
 * @throws as answer-stream.ts `streamAnswer`.
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
    const [model, words] = await Promise.all([
      request.model ?? core.models.chatModel(ctx.signal, ctx.channelKey),
      // The answer's public lines (queue, notes, buttons) are in the place's words.
      core.languages.forPlace(ctx),
    ]);
    const { prompt, temperature, max_tokens } = request;
    const session = beginAnswer(ctx, { scheduler: core.scheduler, stops: core.stops, words });
    try {
      const asked = { prompt, model, temperature, max_tokens, channelModel: request.model === undefined };
      await answerCompletion(ctx, core, asked, { session, deferral, reservation });
    } finally {
      session.close();
    }
  } finally {
    await reservation.settle(0);
  }
}

/** The request to the service and the streamed answer of {@link complete}, ended by a Regenerate button. */
async function answerCompletion(
  ctx: CommandContext,
  core: Core,
  request: {
    prompt: string;
    model: string;
    temperature?: number | undefined;
    max_tokens?: number | undefined;
    /** The model is the channel's (none was given): Regenerate sends today's. */
    channelModel: boolean;
  },
  running: { session: AnswerSession; deferral: Deferral; reservation: TokenReservation },
): Promise<void> {
  const { prompt, model, temperature, max_tokens } = request;
  const body: KeptRequest = {
    endpoint: 'completions',
    body: {
      model,
      prompt,
      ...(temperature !== undefined ? { temperature } : {}),
      ...(max_tokens !== undefined ? { max_tokens } : {}),
    },
  };
  const id = newAnswerId();
  const state: AnswerState = {
    version: 1,
    requesterId: ctx.user.id,
    conversationId: ctx.conversationId,
    channelKey: ctx.channelKey,
    kind: 'complete',
    request: body,
    notes: [],
    at: Date.now(),
    ...(request.channelModel ? { channelModel: 'chat' as const } : {}),
  };
  const { ending, error } = await runRequest(ctx, core, body, {
    ...running,
    notes: [],
    keep: { id, state: () => state },
    feedback: { kind: 'complete', command: 'complete' },
  });
  if (ending !== 'done') throw new ShownError(error);
}
