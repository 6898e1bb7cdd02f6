/**
 * The model fallback section of the configuration (its variables' schema, `fallbackEnv`, part of
 * config-env.ts's `envSchema`): the models that answer, in turn, when the model a request asked
 * for is unavailable (service/fallback.ts says when). Read per request (`core.models.fallbacks`),
 * so a reload applies them (config-reload.ts: `live`).
 */
import { z } from 'zod';

/** Models of one list, at most. */
export const MAX_FALLBACK_MODELS = 5;

/** Characters of one model id, at most. */
export const MAX_MODEL_ID_CHARS = 200;

/** What a list must be, said for any value that is not one (the variable's name comes first). */
const LIST_SHAPE = `must be a comma-separated list of at most ${MAX_FALLBACK_MODELS} model ids, each 1 to ${MAX_MODEL_ID_CHARS} characters without control characters (e.g. model-b,model-c)`;

/**
 * A comma-separated list of model ids (unset or empty: none). Each id is trimmed; ids may hold
 * spaces (an image model's `display_name`, §4.4). An empty id (`a,,b`, a trailing comma), an id
 * over {@link MAX_MODEL_ID_CHARS} characters or with a control character, and more than
 * {@link MAX_FALLBACK_MODELS} ids are refused.
 */
const modelList = z.preprocess(
  (v) => (v === undefined || v === '' ? [] : typeof v === 'string' ? v.split(',').map((id) => id.trim()) : v),
  z
    .array(
      z
        .string()
        .min(1, LIST_SHAPE)
        .max(MAX_MODEL_ID_CHARS, LIST_SHAPE)
        // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
        .regex(/^[^\u0000-\u001f\u007f]+$/, LIST_SHAPE),
      { error: LIST_SHAPE },
    )
    .max(MAX_FALLBACK_MODELS, LIST_SHAPE),
);

/**
 * FALLBACK_CHAT_MODELS: the chat models (ids of /v1/models, §4.5) that answer a chat completion or
 * completion, in this order, when the one asked is unavailable; FALLBACK_IMAGE_MODELS: the image
 * models (`display_name`s, §4.4) that make an image when the one asked is.
 */
export const fallbackEnv = z.object({
  FALLBACK_CHAT_MODELS: modelList,
  FALLBACK_IMAGE_MODELS: modelList,
});

/** The fallback models of a request kind, in the order they are asked. */
export interface FallbackModels {
  chat: readonly string[];
  image: readonly string[];
}

/** The section from the parsed variables. */
export function fallbacksOf(e: z.infer<typeof fallbackEnv>): FallbackModels {
  return { chat: e.FALLBACK_CHAT_MODELS, image: e.FALLBACK_IMAGE_MODELS };
}
