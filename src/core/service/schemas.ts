/**
 * zod schemas of the service's requests (strict: spec ranges and enums, checked before any
 * network call) and responses (tolerant: extra fields are kept, variants accepted).
 *
 * Defaults: the spec's defaults (temperature 0.7, max_tokens 1000, style "vivid", …) are LEFT
 * TO THE SERVER: a parameter the caller did not set is not sent. One rule, tested in
 * test/core/service-client.test.ts.
 */
import { z } from 'zod';
import { InvalidRequestError } from './errors.ts';

const range = (min: number, max: number) => `must be a number from ${min} to ${max}`;
/** An optional number from `min` to `max`, each refusal saying the range. */
const numberIn = (min: number, max: number) =>
  z
    .number({ error: range(min, max) })
    .min(min, range(min, max))
    .max(max, range(min, max))
    .optional();
/** An optional whole number of at least 1 (`max_tokens`). */
const wholeAtLeastOne = () =>
  z
    .number({ error: 'must be a whole number of at least 1' })
    .int('must be a whole number of at least 1')
    .min(1, 'must be a whole number of at least 1')
    .optional();

// ---------- requests ----------

/** §2.1 content part `text`. */
export const textPartSchema = z.object({ type: z.literal('text'), text: z.string() });

/** §2.1 content part `image_url`: a JPEG or PNG base64 data URL only (§4.1 image input rule 1). */
export const imagePartSchema = z.object({
  type: z.literal('image_url'),
  image_url: z.looseObject({
    url: z.string().regex(/^data:image\/(jpeg|png);base64,[A-Za-z0-9+/]+=*$/, {
      error: 'must be a data:image/jpeg or data:image/png base64 URL',
    }),
  }),
});

/** §2.1 Message. `assistant` is accepted so that history can be sent back. */
export const messageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant'], { error: 'must be "system", "user" or "assistant"' }),
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textPartSchema, imagePartSchema])).min(1)], {
    error: 'must be a string or a non-empty array of text and image_url parts',
  }),
});

/** §4.1 web_search values. */
export const WEB_SEARCH_MODES = ['auto', 'force', 'images'] as const;

/** §4.1 POST /v1/chat/completions request body. */
export const chatCompletionRequestSchema = z.strictObject({
  model: z
    .string({ error: 'is required (a model id from /v1/models)' })
    .min(1, 'is required (a model id from /v1/models)'),
  messages: z.array(messageSchema, { error: 'must be an array of messages' }).min(1, 'must hold at least one message'),
  temperature: numberIn(0, 2),
  max_tokens: wholeAtLeastOne(),
  stream: z.boolean({ error: 'must be true or false' }).optional(),
  top_p: numberIn(0, 1),
  frequency_penalty: numberIn(-2, 2),
  presence_penalty: numberIn(-2, 2),
  web_search: z
    .union([z.literal(false), z.enum(WEB_SEARCH_MODES)], { error: 'must be false, "auto", "force" or "images"' })
    .optional(),
  response_format: z.literal('json', { error: 'must be "json" (JSON mode) or left unset' }).optional(),
});

/** §4.2 POST /v1/completions request body. */
export const completionRequestSchema = z.strictObject({
  model: z.string({ error: 'is required' }).min(1, 'is required'),
  prompt: z.string({ error: 'is required (a string)' }),
  temperature: numberIn(0, 2),
  max_tokens: wholeAtLeastOne(),
  stream: z.boolean({ error: 'must be true or false' }).optional(),
});

/** §4.3 styles, aspect ratios and response formats. */
export const IMAGE_STYLES = ['vivid', 'natural', 'preview', 'upscaled'] as const;
export const ASPECT_RATIOS = ['square', 'portrait', 'landscape'] as const;
export const IMAGE_RESPONSE_FORMATS = ['url', 'b64_json', 'hxd'] as const;
export type ImageStyle = (typeof IMAGE_STYLES)[number];
export type AspectRatio = (typeof ASPECT_RATIOS)[number];
export type ImageResponseFormat = (typeof IMAGE_RESPONSE_FORMATS)[number];

/** §4.3 output size (px) by aspect ratio. */
export const ASPECT_RATIO_SIZES: Record<AspectRatio, { width: number; height: number }> = {
  square: { width: 1024, height: 1024 },
  portrait: { width: 832, height: 1216 },
  landscape: { width: 1216, height: 832 },
};

const formatSchema = z.enum(IMAGE_RESPONSE_FORMATS, { error: 'must be "url", "b64_json" or "hxd", or a list of them' });

/** §4.3 POST /v1/images/generations request body. */
export const imageGenerationRequestSchema = z.strictObject({
  prompt: z.string({ error: 'is required' }).min(1, 'is required'),
  style: z.enum(IMAGE_STYLES, { error: 'must be one of vivid, natural, preview, upscaled' }).optional(),
  aspect_ratio: z.enum(ASPECT_RATIOS, { error: 'must be one of square, portrait, landscape' }).optional(),
  response_format: z
    .union([formatSchema, z.array(formatSchema).min(1, 'must list at least one format')], {
      error: 'must be "url", "b64_json" or "hxd", or a list of them',
    })
    .optional(),
  user_selected_model: z.string().min(1, 'must be a display name from /v1/images/available-models').optional(),
  negative_prompt: z.string({ error: 'must be a string' }).optional(),
  seed: z.number({ error: 'must be a whole number' }).int('must be a whole number').optional(),
  disable_safety_checker: z.boolean({ error: 'must be true or false' }).optional(),
  force_prompt_enhancement: z.boolean({ error: 'must be true or false' }).optional(),
  reference_image_url: z.url({ error: 'must be an http(s) URL' }).optional(),
  reference_image: z
    .string()
    .regex(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/, 'must be a data:image/png;base64 URL')
    .optional(),
  denoising_strength: numberIn(0, 1),
});

export type ChatMessage = z.infer<typeof messageSchema>;
export type ContentPart = z.infer<typeof textPartSchema> | z.infer<typeof imagePartSchema>;
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;
export type CompletionRequest = z.infer<typeof completionRequestSchema>;
export type ImageGenerationRequest = z.infer<typeof imageGenerationRequestSchema>;

/**
 * Validates a request body against its schema.
 * @returns the body, unchanged in meaning (no defaults are added).
 * @throws InvalidRequestError naming the first offending field (dotted path) and the allowed values.
 */
export function validateRequest<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.length ? issue.path.join('.') : 'request';
  const message =
    issue.code === 'unrecognized_keys'
      ? `has fields the service does not accept: ${issue.keys.join(', ')}`
      : issue.message;
  throw new InvalidRequestError(issue.code === 'unrecognized_keys' ? 'request' : field, message);
}

// ---------- responses (tolerant) ----------

/** §2.2/§2.3 usage. */
export const usageSchema = z.looseObject({
  prompt_tokens: z.number().optional(),
  completion_tokens: z.number().optional(),
  total_tokens: z.number().optional(),
});

/** §2.2 chat completion. */
export const chatCompletionSchema = z.looseObject({
  id: z.string().optional(),
  object: z.string().optional(),
  created: z.number().optional(),
  model: z.string().optional(),
  choices: z
    .array(
      z.looseObject({
        index: z.number().optional(),
        message: z.looseObject({ role: z.string().optional(), content: z.string().nullable().optional() }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: usageSchema.optional(),
});

/** §2.3 text completion. */
export const completionSchema = z.looseObject({
  id: z.string().optional(),
  object: z.string().optional(),
  model: z.string().optional(),
  choices: z
    .array(
      z.looseObject({
        text: z.string().nullable().optional(),
        index: z.number().optional(),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: usageSchema.optional(),
});

/** §2.4 image generation result. `hxd`'s shape is not shown: any string is accepted. */
export const imageGenerationSchema = z.looseObject({
  created: z.number().optional(),
  data: z.array(
    z.looseObject({
      url: z.string().optional(),
      b64_json: z.string().optional(),
      hxd: z.string().optional(),
      revised_prompt: z.string().optional(),
    }),
  ),
});

/** §2.5 model record (other fields not shown: kept). */
export const modelSchema = z.looseObject({
  id: z.string(),
  type: z.string().optional(),
  object: z.string().optional(),
});

/** §4.5 listing: `{ data: [...] }` (OpenAI) or a bare array. */
export const modelListSchema = z.union([z.looseObject({ data: z.array(modelSchema) }), z.array(modelSchema)]);

/** §4.4 image model record. */
export const imageModelSchema = z.looseObject({ display_name: z.string(), description: z.string().optional() });

/** §4.4 listing: bare array or `{ data: [...] }` (the envelope is not shown). */
export const imageModelListSchema = z.union([
  z.array(imageModelSchema),
  z.looseObject({ data: z.array(imageModelSchema) }),
]);

export type ChatCompletion = z.infer<typeof chatCompletionSchema>;
export type Completion = z.infer<typeof completionSchema>;
export type ImageGenerationResult = z.infer<typeof imageGenerationSchema>;
export type Model = z.infer<typeof modelSchema>;
export type ImageModel = z.infer<typeof imageModelSchema>;
export type Usage = z.infer<typeof usageSchema>;

/** One streamed chat chunk (OpenAI `chat.completion.chunk`); only `choices` is relied on. */
export interface ChatCompletionChunk {
  id?: string;
  object?: string;
  model?: string;
  choices: Array<{
    index?: number;
    delta?: { role?: string; content?: string | null; [key: string]: unknown };
    finish_reason?: string | null;
  }>;
  usage?: Usage | null;
  [key: string]: unknown;
}

/** One streamed text-completion chunk. */
export interface CompletionChunk {
  choices: Array<{ index?: number; text?: string | null; finish_reason?: string | null }>;
  [key: string]: unknown;
}
