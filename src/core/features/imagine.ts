/**
 * The image feature: prompt and options → image generation (§4.3) → the image posted as an
 * attachment, captioned with the prompt, model, style, size and the seed actually used.
 * While the service works the reply shows the seconds elapsed (edited through the write
 * scheduler). The result carries Reroll (same options, a new seed), Upscale (style
 * `upscaled`, this image as `reference_image`) and Vary (this image as reference,
 * `denoising_strength` 0.6 by default) buttons, whose state (the options and the image) is
 * kept in the store under the button's id, so they work after a restart (their presses:
 * imagine-buttons.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Core } from '../core.ts';
import { ForbiddenError, InputError, OptionError, ShownError, withReference } from '../errors.ts';
import { storeKeys } from '../keys.ts';
import { optionImage } from '../media/attachments.ts';
import { type FittedImage, ImageTooLargeError, imagesFromResult } from '../media/images.ts';
import type { Attachment, Button, CommandContext, MessageHandle, OutgoingFile } from '../platform.ts';
import { sentenceOf } from '../sentences.ts';
import { InvalidResponseError, ServiceError } from '../service/errors.ts';
import type { AspectRatio, ImageGenerationRequest, ImageGenerationResult, ImageStyle } from '../service/schemas.ts';
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
  const candidates = [
    (result as Record<string, unknown>).seed,
    (result.data[0] as Record<string, unknown> | undefined)?.seed,
  ];
  return candidates.find((v): v is number => typeof v === 'number' && Number.isInteger(v));
}

/** What a generation needs, as kept for the follow-up buttons (no user files: a reference is a data URL). */
export interface ImagineJob {
  prompt: string;
  aspectRatio: AspectRatio;
  style?: ImageStyle | undefined;
  /** Display name (`user_selected_model`); undefined: the server's choice. */
  model?: string | undefined;
  negativePrompt?: string | undefined;
  seed?: number | undefined;
  /** `reference_image`: a PNG data URL. */
  referenceDataUrl?: string | undefined;
  referenceImageUrl?: string | undefined;
  denoisingStrength?: number | undefined;
  enhance?: boolean | undefined;
  disableSafetyChecker?: boolean | undefined;
}

/** What the store keeps under a result's button id (`imagine:<id>`). */
export interface ImagineState {
  requesterId: string;
  job: ImagineJob;
  /** The generated image, base64, for Upscale and Vary. */
  image: string;
}

/** How long a result's buttons keep working, in ms (the store forgets the state after it). */
export const IMAGINE_STATE_TTL_MS = 30 * 24 * 3_600_000;
/** How often the progress line is rewritten while the service works, in ms. */
const PROGRESS_INTERVAL_MS = 3_000;

/**
 * Generates the image and posts it with a caption naming the prompt and settings, and the
 * Reroll / Upscale / Vary buttons.
 * @throws OptionError (both reference forms, an unusable reference image), ForbiddenError
 *   (`disable_safety_checker` without the right), ServiceError subclasses (runCommand tells the user).
 */
export async function imagine(ctx: CommandContext, core: Core, request: ImagineRequest): Promise<void> {
  if (request.disableSafetyChecker) {
    if (!core.limits.allowDisableSafetyChecker)
      throw new ForbiddenError(
        '`disable_safety_checker` is turned off for this bot (the operator has not set ALLOW_DISABLE_SAFETY_CHECKER=true).',
      );
    if (!(await ctx.user.isAdmin())) throw new ForbiddenError('`disable_safety_checker` is for admins only.');
  }
  if (request.referenceImage && request.referenceImageUrl)
    throw new OptionError('Give either `reference_image` or `reference_image_url`, not both.');
  const giveBack = await admit(ctx, core, 'image');
  await counted(giveBack, () => generateRequested(ctx, core, request));
}

/** {@link imagine} once admitted: the reference image, the model, the generation. */
async function generateRequested(ctx: CommandContext, core: Core, request: ImagineRequest): Promise<void> {
  await ctx.reply.defer();
  const notes: string[] = [];
  const hasReference = Boolean(request.referenceImage || request.referenceImageUrl);
  if (request.denoisingStrength !== undefined && !hasReference) {
    notes.push('`denoising_strength` was not used: it only applies with `reference_image` or `reference_image_url`.');
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
    notes,
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

/** The request body of a job (§4.3). */
function bodyOf(job: ImagineJob): ImageGenerationRequest {
  return {
    prompt: job.prompt,
    aspect_ratio: job.aspectRatio,
    ...(job.style ? { style: job.style } : {}),
    ...(job.model ? { user_selected_model: job.model } : {}),
    ...(job.negativePrompt ? { negative_prompt: job.negativePrompt } : {}),
    ...(job.seed !== undefined ? { seed: job.seed } : {}),
    ...(job.referenceDataUrl ? { reference_image: job.referenceDataUrl } : {}),
    ...(job.referenceImageUrl ? { reference_image_url: job.referenceImageUrl } : {}),
    ...(job.denoisingStrength !== undefined && (job.referenceDataUrl || job.referenceImageUrl)
      ? { denoising_strength: job.denoisingStrength }
      : {}),
    ...(job.enhance ? { force_prompt_enhancement: true } : {}),
    ...(job.disableSafetyChecker ? { disable_safety_checker: true } : {}),
    // One round trip: the bytes come inline instead of through the view endpoint.
    response_format: 'b64_json',
  };
}

/**
 * Shows "🎨 Generating… N s" in the reply while `work` runs, from 3 s on and rewritten every
 * 3 s through the write scheduler (intermediate writes: they yield to other answers' final
 * writes). A failure after the line was shown becomes that line (a ShownError).
 * @returns the work's result and the progress message (to become the result where the platform edits files in).
 */
async function withProgress<T>(
  ctx: CommandContext,
  core: Core,
  work: () => Promise<T>,
): Promise<{ result: T; progress: MessageHandle | undefined }> {
  const started = Date.now();
  const line = () => `🎨 Generating… ${Math.round((Date.now() - started) / 1000)} s`;
  let progress: MessageHandle | undefined;
  /** The progress write submitted last (one at a time: the scheduler runs one write per key). */
  let writing: Promise<unknown> = Promise.resolve();
  let done = false;
  const key = `imagine:${randomBytes(6).toString('hex')}`;
  const write = () => {
    writing = core.scheduler
      .submit({
        key,
        stream: key,
        buckets: ctx.reply.buckets?.(progress ? 'edit' : 'send', 0) ?? [],
        final: false,
        run: async () => {
          if (done) return;
          if (progress) await progress.edit({ content: line() });
          else progress = await ctx.reply.send({ content: line() });
        },
      })
      .catch((error: unknown) => ctx.log.debug({ err: error }, 'progress write failed'));
  };
  // A quick image needs no progress (and a quick failure stays the user's alone).
  const timer = setInterval(write, PROGRESS_INTERVAL_MS);
  let result: T;
  try {
    result = await work();
  } catch (error) {
    clearInterval(timer);
    done = true;
    // The result's writes never overlap a progress write still under way.
    await writing;
    if (!progress || !(error instanceof ServiceError)) throw error;
    // The progress line becomes the sentence: nothing is left saying "Generating…".
    try {
      await progress.edit({ content: `⚠️ ${withReference(sentenceOf(error), ctx.ref)}` });
    } catch {
      throw error;
    }
    throw new ShownError(error);
  }
  clearInterval(timer);
  done = true;
  await writing;
  return { result, progress };
}

/** Generates one image for `job`, posts it with the settings and buttons, and keeps the buttons' state. */
export async function generateAndPost(
  ctx: CommandContext,
  core: Core,
  job: ImagineJob,
  notes: string[],
): Promise<void> {
  const { result: generated, progress } = await withProgress(ctx, core, async () => {
    const result = await core.service.images.generate(bodyOf(job), {
      signal: ctx.signal,
      queue: { key: ctx.channelKey },
    });
    const work = { key: subjectOf(ctx), signal: ctx.signal };
    const describe = (data: Buffer, source: Parameters<typeof core.images.describe>[1]) =>
      core.images.describe(data, source, work);
    const [image] = await imagesFromResult(result, core.service.images, {
      describe,
      expected: job.aspectRatio,
      log: ctx.log,
      signal: ctx.signal,
    });
    if (!image)
      throw new InvalidResponseError(
        'the image result held no image (an empty data array)',
        'The generation service returned no image for this prompt. Try again, perhaps with other words.',
      );
    return { result, image };
  });
  const { result, image } = generated;
  let fitted: FittedImage;
  try {
    fitted = await core.images.fit(image, ctx.reply.limits.maxFileBytes, { key: subjectOf(ctx), signal: ctx.signal });
  } catch (error) {
    if (error instanceof ImageTooLargeError) throw new InputError(error.message);
    throw error;
  }
  if (fitted.reencoded) notes.push(`The image was ${fitted.reencoded}.`);
  const seed = job.seed ?? seedOf(result);
  const settings = [
    job.model ?? 'default model',
    job.style ?? 'vivid',
    `${fitted.width}×${fitted.height}`,
    `seed ${seed ?? 'random'}`,
    ...(job.referenceDataUrl || job.referenceImageUrl
      ? [`reference${job.denoisingStrength !== undefined ? `, denoising ${job.denoisingStrength}` : ''}`]
      : []),
  ].join(' · ');
  const lines = [`🎨 ${caption(job.prompt)}`, `_${settings}_`, ...notes.map((n) => `_⚠️ ${n}_`)];
  const id = randomBytes(9).toString('hex');
  let buttons: Button[] = [];
  try {
    const state: ImagineState = {
      requesterId: ctx.user.id,
      job: { ...job, seed },
      image: fitted.data.toString('base64'),
    };
    await core.store.keyv.set(storeKeys.imagineState(id), state, IMAGINE_STATE_TTL_MS);
    buttons = [
      { id: `imagine:reroll:${id}`, label: '🎲 Reroll' },
      { id: `imagine:upscale:${id}`, label: '🔍 Upscale' },
      { id: `imagine:vary:${id}`, label: '🌀 Vary' },
    ];
  } catch (error) {
    // Without the store the buttons could not work: the image is posted without them.
    core.storeHealth.failed(error, ctx.log);
  }
  const file: OutgoingFile = {
    name: `imagine.${extensionOf(fitted.format)}`,
    data: fitted.data,
    mimeType: fitted.mimeType,
    description: job.prompt.slice(0, 1000),
  };
  const content = lines.join('\n');
  if (ctx.reply.editsFiles) {
    if (progress) await progress.edit({ content, files: [file], buttons });
    else await ctx.reply.send({ content, files: [file], buttons });
    return;
  }
  // Slack: a file message carries no buttons, and a posted message takes no file. The image
  // comes with its caption; the buttons in a line of their own (the progress line, if shown).
  await ctx.reply.send({ content, files: [file] });
  if (buttons.length === 0) {
    if (progress) await progress.edit({ content: '🎨 Done: the image is below.' });
    return;
  }
  const line = {
    content: progress
      ? '🎨 Done: the image is below. Reroll, upscale or vary it:'
      : '🎨 Reroll, upscale or vary the image above:',
    buttons,
  };
  if (progress) await progress.edit(line);
  else await ctx.reply.send(line);
}
