/**
 * Model fallback as the features use it (the rule and the chain: service/fallback.ts): each step
 * down a chain logged once (English, at warn: the models, the status, never the service's text)
 * and reported (`model.fallback`: /metrics' `genbot_fallbacks_total{from,to}`); the note under an
 * answer a fallback gave, naming the model that answered and the one that was unavailable.
 */
import type { Core } from '../core.ts';
import { type Sentence, sentence } from '../i18n/words.ts';
import type { CommandContext } from '../platform.ts';
import { type Answered, type FallbackStep, modelChain } from '../service/fallback.ts';

/**
 * The models a request of `kind` asks in turn: `asked`, then the fallback models of the
 * configuration now (FALLBACK_CHAT_MODELS or FALLBACK_IMAGE_MODELS), each once.
 */
export function chainOf<M extends string | undefined>(core: Core, kind: 'chat' | 'image', asked: M): (M | string)[] {
  return modelChain(asked, core.models.fallbacks[kind]);
}

/** Logs one step down a chain (warn) and reports it (`model.fallback`). */
export function tellFallback(ctx: Pick<CommandContext, 'log'>, core: Core, kind: 'chat' | 'image', step: FallbackStep) {
  const status = step.error.status ?? step.error.code;
  ctx.log.warn(
    { fallback: kind, from: step.from, to: step.to, status, code: step.error.code },
    'model unavailable: the next fallback model is asked',
  );
  core.events.emit('model.fallback', { kind, from: step.from, to: step.to, status });
}

/** The note under an answer a fallback model gave ("Answered by B: A is unavailable."), or none. */
export function fallbackNote(answered: Pick<Answered<unknown>, 'model' | 'failed'>): Sentence[] {
  if (answered.failed === undefined) return [];
  return [sentence('answers.fallback.answered_by', { model: answered.model, failed: answered.failed })];
}
