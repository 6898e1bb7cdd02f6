/**
 * The image feature: prompt and options → image generation (§4.3) → the image posted as an
 * attachment, captioned with the prompt, model, style, size and the seed actually used.
 * While the service works the reply shows the seconds elapsed (edited through the write
 * scheduler). The result carries Reroll (same options, a new seed), Upscale (style
 * `upscaled`, this image as `reference_image`) and Vary (this image as reference,
 * `denoising_strength` 0.6 by default) buttons, whose state (the options, and where the image
 * is: imagine-state.ts) is kept in the store under the button's id, so they work after a
 * restart (their presses: imagine-buttons.ts).
 */
import type { Core } from '../core.ts';
import type { Note } from '../delivery/answer-stream.ts';
import { ForbiddenError, OptionError } from '../errors.ts';
import { sentence } from '../i18n/words.ts';
import { optionImage } from '../media/attachments.ts';
import type { Attachment, CommandContext } from '../platform.ts';
import type { AspectRatio, ImageStyle } from '../service/schemas.ts';
import { startDeferral } from './deferral.ts';
import { generateAndPost } from './imagine-post.ts';
import { admit, subjectOf } from './usage.ts';

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

/**
 * Generates the image and posts it with a caption naming the prompt and settings, and the
 * Reroll / Upscale / Vary buttons.
 * @throws OptionError (both reference forms, an unusable reference image), ForbiddenError
 *   (`disable_safety_checker` without the right), ServiceError subclasses (runCommand tells the user).
 */
export async function imagine(ctx: CommandContext, core: Core, request: ImagineRequest): Promise<void> {
  if (request.disableSafetyChecker) {
    if (!core.limits.allowDisableSafetyChecker) throw new ForbiddenError('answers.imagine.safety_disabled_for_bot');
    if (!(await ctx.user.isAdmin())) throw new ForbiddenError('answers.imagine.safety_admins_only');
  }
  if (request.referenceImage && request.referenceImageUrl) throw new OptionError('answers.imagine.both_references');
  const giveBack = await admit(ctx, core, 'image');
  await counted(giveBack, () => generateRequested(ctx, core, request));
}

/** {@link imagine} once admitted: the reference image, the model, the generation. */
async function generateRequested(ctx: CommandContext, core: Core, request: ImagineRequest): Promise<void> {
  // Under way while the reference image is read and the service generates; awaited before the image is posted.
  const deferral = startDeferral(ctx);
  const notes: Note[] = [];
  const hasReference = Boolean(request.referenceImage || request.referenceImageUrl);
  if (request.denoisingStrength !== undefined && !hasReference) {
    notes.push(sentence('answers.imagine.denoising_unused'));
  }
  const reference = request.referenceImage
    ? await optionImage(
        'reference_image',
        request.referenceImage,
        core.inputImages,
        { images: core.images, key: subjectOf(ctx), signal: ctx.signal },
        'reference',
      )
    : undefined;
  const model = request.model ?? (await core.models.forChannel(ctx.channelKey, ctx.signal)).image.value;
  await generateAndPost(
    ctx,
    core,
    {
      prompt: request.prompt,
      aspectRatio: request.aspectRatio ?? 'square',
      style: request.style,
      model,
      negativePrompt: request.negativePrompt,
      seed: request.seed,
      referenceDataUrl: reference?.url,
      referenceImageUrl: request.referenceImageUrl,
      denoisingStrength: hasReference ? request.denoisingStrength : undefined,
      enhance: request.enhance,
      disableSafetyChecker: request.disableSafetyChecker,
    },
    { notes, deferral },
  );
}

/** Runs a generation admitted by the image quota; when it fails, the image is given back (it was reserved, not made). @throws what `work` throws. */
export async function counted(giveBack: () => Promise<void>, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    await giveBack();
    throw error;
  }
}
