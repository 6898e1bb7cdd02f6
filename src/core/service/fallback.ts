/**
 * Model fallback (FALLBACK_CHAT_MODELS, FALLBACK_IMAGE_MODELS; docs/service-api.md §10): when the
 * service says a model is unavailable before any of its answer arrived, the next model of the
 * request's chain is asked. The chain is the model asked, then the fallback models in their
 * order, each at most once; it shares the request's signal, so a Stop ends it.
 *
 * A model is unavailable when its request failed, after the client's own retries (http.ts), with:
 * - a 5xx (`ServerError`);
 * - no answer in time (`TimeoutError`: to connect, for the response headers, or for a whole
 *   body);
 * - a 404 (`NotFoundError`: on a generation path, the model is what is not found), or a 400 whose
 *   code is `model_not_found` or whose message says the model does not exist (OpenAI's conventions);
 * - or, for a stream that opened, a failure before its first text (first-text.ts reads it before
 *   anything is shown): no text within the idle limit (`StreamIdleError`), an error event or a
 *   body cut off (`StreamInterruptedError`).
 *
 * Nothing else falls back: the user's own errors (other 4xx, a context too long, images refused),
 * 401/403, 429 (the client's wait and retries stay as they were), an unreachable service, a Stop,
 * and above all a stream that showed text: its failure comes after the model answered, so an
 * answer cut in the middle is shown as cut and never asked again.
 */
import {
  BadRequestError,
  NotFoundError,
  ServerError,
  type ServiceError,
  StreamIdleError,
  StreamInterruptedError,
  TimeoutError,
} from './errors.ts';

/** Whether a 400's code or text says the model does not exist. */
function namesMissingModel(error: BadRequestError): boolean {
  return (
    error.serviceCode === 'model_not_found' ||
    /\bmodel\b[^.]*\b(does not exist|not found|is not available)|\b(unknown|no such) model\b/i.test(error.message)
  );
}

/**
 * Whether a model's failure lets the next model of the chain answer (see the file's comment).
 * @param error what the request to the model threw before any of its answer was shown (its
 *   request, or its stream's reading up to the first text).
 */
export function fallsBack(error: unknown): error is ServiceError {
  if (error instanceof ServerError || error instanceof NotFoundError || error instanceof TimeoutError) return true;
  if (error instanceof StreamIdleError || error instanceof StreamInterruptedError) return true;
  return error instanceof BadRequestError && (error.status === 400 || error.status === 404) && namesMissingModel(error);
}

/**
 * The models a request asks in turn: `asked` (undefined: the service's own choice, an image request
 * without `user_selected_model`), then `fallbacks` in order, each once (one equal to an earlier
 * one is skipped).
 */
export function modelChain<M extends string | undefined>(asked: M, fallbacks: readonly string[]): (M | string)[] {
  const chain: (M | string)[] = [asked];
  for (const model of fallbacks) if (!chain.includes(model)) chain.push(model);
  return chain;
}

/** One step down a chain: the model that failed, the next one asked, and why. */
export interface FallbackStep {
  /** The model that failed (`default` for the service's own choice). */
  from: string;
  /** The model asked next. */
  to: string;
  error: ServiceError;
}

/** What {@link askInTurn} got: the first answer, the model that gave it, and the model asked first when another answered. */
export interface Answered<T> {
  value: T;
  /** The model that answered (`default` for the service's own choice). */
  model: string;
  /** The model asked first, when a fallback answered instead (the note under the answer names both). */
  failed?: string;
}

/** The name of a chain's model in notes, logs and metrics: `default` for the service's own choice. */
export function modelName(model: string | undefined): string {
  return model ?? 'default';
}

/**
 * Asks each model of `chain` in turn until one answers: the next is asked only when the last
 * failed as {@link fallsBack} says, and while `signal` has not aborted. Bounded by the chain's
 * length (at most 1 + FALLBACK_*_MODELS' 5 asks).
 * @param ask sends the request to one model (`index` 0 is the model asked).
 * @param onFallback told of each step down the chain, before the next model is asked (log, metric).
 * @throws the first model's failure when every model was unavailable (what the user asked for is
 *   what they are told about); else the failure that ended the chain (one that does not fall back,
 *   a Stop).
 */
export async function askInTurn<T, M extends string | undefined>(
  chain: readonly M[],
  ask: (model: M, index: number) => Promise<T>,
  onFallback: (step: FallbackStep) => void,
  signal?: AbortSignal,
): Promise<Answered<T>> {
  let first: unknown;
  for (let index = 0; ; index++) {
    const model = chain[index] as M;
    try {
      const value = await ask(model, index);
      return index === 0
        ? { value, model: modelName(model) }
        : { value, model: modelName(model), failed: modelName(chain[0]) };
    } catch (error) {
      if (signal?.aborted || !fallsBack(error)) throw error;
      if (index === 0) first = error;
      if (index + 1 >= chain.length) throw first;
      onFallback({ from: modelName(model), to: modelName(chain[index + 1]), error });
    }
  }
}
