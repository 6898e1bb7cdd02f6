/**
 * The image feature: prompt and options → image generation (§4.3) → the image posted as an
 * attachment, captioned with the prompt, model, style, size and the seed actually used.
 */
import type { Attachment, CommandContext } from '../platform.ts';
import type { Core } from '../core.ts';
import { ForbiddenError, InputError, OptionError } from '../command.ts';
import { InvalidResponseError } from '../service/errors.ts';
import { ImageTooLargeError, fitImageFile, imagesFromResult, prepareReferenceImage } from '../media/images.ts';
import { optionImage } from '../media/attachments.ts';
import { admit } from './usage.ts';
import type { AspectRatio, ImageGenerationRequest, ImageGenerationResult, ImageStyle } from '../service/schemas.ts';

/** An image request from a user (option names as in §4.3 where they map one to one). */
export interface ImagineRequest {
  prompt: string;
  aspectRatio?: AspectRatio;
  style?: ImageStyle;
  /** Image model display name (`user_selected_model`); the channel's, else the environment's, else the server's choice. */
  model?: string;
  negativePrompt?: string;
  /** 0 to 2³²−1; random when absent. */
  seed?: number;
  /** A user's image, sent as a PNG data URL (`reference_image`). */
  referenceImage?: Attachment;
  /** Passed as is (`reference_image_url`). */
  referenceImageUrl?: string;
  /** 0 to 1; only with a reference image. */
  denoisingStrength?: number;
  /** `force_prompt_enhancement`. */
  enhance?: boolean;
  /** `disable_safety_checker`: admins only, and only when the operator allows it. */
  disableSafetyChecker?: boolean;
}

/** File extension for a sharp format name. */
function extensionOf(format: string): string {
  return format === 'jpeg' ? 'jpg' : format;
}

/** The prompt as a caption: one paragraph, at most 1,500 characters (fits every platform). */
function caption(prompt: string): string {
  const flat = prompt.replace(/\s+/g, ' ').trim();
  return flat.length > 1500 ? `${flat.slice(0, 1499)}…` : flat;
}

/**
 * The seed the service reports having used, if it does: the response's shape beyond `data`
 * is not shown (§4.3), so `seed` at the top level or on the image item is read when present.
 */
function seedOf(result: ImageGenerationResult): number | undefined {
  const candidates = [(result as Record<string, unknown>).seed, (result.data[0] as Record<string, unknown> | undefined)?.seed];
  return candidates.find((v): v is number => typeof v === 'number' && Number.isInteger(v));
}

/**
 * Generates the image and posts it with a caption naming the prompt and settings.
 * @throws OptionError (both reference forms, an unusable reference image), ForbiddenError
 *   (`disable_safety_checker` without the right), ServiceError subclasses (runCommand tells the user).
 */
export async function imagine(ctx: CommandContext, core: Core, request: ImagineRequest): Promise<void> {
  if (request.disableSafetyChecker) {
    if (!core.limits.allowDisableSafetyChecker) throw new ForbiddenError('`disable_safety_checker` is turned off for this bot (the operator has not set ALLOW_DISABLE_SAFETY_CHECKER=true).');
    if (!(await ctx.user.isAdmin())) throw new ForbiddenError('`disable_safety_checker` is for admins only.');
  }
  if (request.referenceImage && request.referenceImageUrl) throw new OptionError('Give either `reference_image` or `reference_image_url`, not both.');
  await admit(ctx, core, 'image');
  await ctx.reply.defer();
  const notes: string[] = [];
  const hasReference = Boolean(request.referenceImage || request.referenceImageUrl);
  if (request.denoisingStrength !== undefined && !hasReference) {
    notes.push('`denoising_strength` was not used: it only applies with `reference_image` or `reference_image_url`.');
  }
  const reference = request.referenceImage
    ? await optionImage('reference_image', request.referenceImage, core.inputImages, ctx.signal, prepareReferenceImage)
    : undefined;
  const model = request.model ?? (await core.models.forChannel(ctx.channelKey, ctx.signal)).image.value;
  const aspectRatio = request.aspectRatio ?? 'square';
  const body: ImageGenerationRequest = {
    prompt: request.prompt,
    aspect_ratio: aspectRatio,
    ...(request.style ? { style: request.style } : {}),
    ...(model ? { user_selected_model: model } : {}),
    ...(request.negativePrompt ? { negative_prompt: request.negativePrompt } : {}),
    ...(request.seed !== undefined ? { seed: request.seed } : {}),
    ...(reference ? { reference_image: reference.url } : {}),
    ...(request.referenceImageUrl ? { reference_image_url: request.referenceImageUrl } : {}),
    ...(request.denoisingStrength !== undefined && hasReference ? { denoising_strength: request.denoisingStrength } : {}),
    ...(request.enhance ? { force_prompt_enhancement: true } : {}),
    ...(request.disableSafetyChecker ? { disable_safety_checker: true } : {}),
    // One round trip: the bytes come inline instead of through the view endpoint.
    response_format: 'b64_json',
  };
  const result = await core.service.images.generate(body, { signal: ctx.signal });
  const [image] = await imagesFromResult(result, core.service.images, { expected: aspectRatio, log: ctx.log, signal: ctx.signal });
  if (!image) throw new InvalidResponseError('the image result held no image (an empty data array)', 'The generation service returned no image for this prompt. Try again, perhaps with other words.');
  let fitted;
  try {
    fitted = await fitImageFile(image, ctx.reply.limits.maxFileBytes);
  } catch (error) {
    if (error instanceof ImageTooLargeError) throw new InputError(error.message);
    throw error;
  }
  if (fitted.reencoded) notes.push(`The image was ${fitted.reencoded}.`);
  const seed = request.seed ?? seedOf(result);
  const settings = [
    model ?? 'default model',
    request.style ?? 'vivid',
    `${fitted.width}×${fitted.height}`,
    `seed ${seed ?? 'random'}`,
    ...(reference || request.referenceImageUrl ? [`reference${request.denoisingStrength !== undefined ? `, denoising ${request.denoisingStrength}` : ''}`] : []),
  ].join(' · ');
  const lines = [`🎨 ${caption(request.prompt)}`, `_${settings}_`, ...notes.map((n) => `_⚠️ ${n}_`)];
  await ctx.reply.send({
    content: lines.join('\n'),
    files: [{ name: `imagine.${extensionOf(fitted.format)}`, data: fitted.data, mimeType: fitted.mimeType, description: request.prompt.slice(0, 1000) }],
  });
}
