/**
 * One image generation and its post (§4.3): the request body of a job, the progress line while
 * the request waits and the service works (imagine-progress.ts), the image fitted to the
 * platform's upload size, posted with a caption naming the prompt and settings, and the
 * Reroll / Upscale / Vary buttons, whose state (the job, references to the images) the store
 * keeps under the button's id (imagine-state.ts), then the image's 👍 / 👎 (feedback.ts). Used
 * by /imagine (imagine.ts) and by the buttons' presses (imagine-buttons.ts).
 */
import type { Core } from '../core.ts';
import { type Note, noteText } from '../delivery/answer-stream.ts';
import { editOnce, sendOnce } from '../delivery/one-off.ts';
import { InputError } from '../errors.ts';
import { sentence, type Words } from '../i18n/words.ts';
import { type FittedImage, ImageTooLargeError, imagesFromResult } from '../media/images.ts';
import type { Button, CommandContext, MessageHandle, OutgoingFile, OutgoingMessage } from '../platform.ts';
import { InvalidResponseError } from '../service/errors.ts';
import { askInTurn } from '../service/fallback.ts';
import type { QueueTicket } from '../service/gate.ts';
import type { ImageGenerationRequest, ImageGenerationResult } from '../service/schemas.ts';
import type { Deferral } from './deferral.ts';
import { chainOf, fallbackNote, tellFallback } from './fallback.ts';
import { keepFeedback } from './feedback.ts';
import { withProgress } from './imagine-progress.ts';
import { type ImagineJob, type ImagineState, type KeptImage, keepButtonState, keptImage } from './imagine-state.ts';
import { type Charge, chargeImage } from './spend.ts';
import { subjectOf } from './usage.ts';

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

/** How a generation is posted, besides its job. */
export interface PostOptions {
  /** Notes shown under the image (options not used, the safety checker on…), in the place's words. */
  notes: Note[];
  /**
   * The reply's deferral when the caller started it without waiting: awaited once the image is
   * generated, before anything is posted.
   */
  deferral?: Deferral | undefined;
  /**
   * How the state keeps the job's reference image (a press's: where the pressed image is);
   * default: the bytes of `referenceDataUrl`, within IMAGINE_STATE_MAX_BYTES.
   */
  reference?: KeptImage | undefined;
}

/** The bytes of a `data:` URL (a prepared reference image). */
function dataUrlBytes(url: string): Buffer {
  return Buffer.from(url.slice(url.indexOf(',') + 1), 'base64');
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
 * Generates one image for `job`, posts it with the settings and buttons, and keeps the buttons'
 * state (the image by reference where the platform names it when posted: MessageHandle.fileRefs).
 * Its progress line, caption, notes and buttons are in the place's words (they are public).
 * @throws what the deferral threw (nobody would see the image); as {@link generate}.
 */
export async function generateAndPost(
  ctx: CommandContext,
  core: Core,
  job: ImagineJob,
  options: PostOptions,
): Promise<void> {
  const words = await core.languages.forPlace(ctx);
  // One image at its model's and style's price, reserved before it is asked for (features/spend.ts).
  const held = { charge: await chargeImage(ctx, core, job.model, job.style) };
  const { result: generated, progress } = await withProgress(
    ctx,
    core,
    async (queue) => {
      try {
        const made = await generate(ctx, core, job, queue, held);
        const failed = await options.deferral;
        if (failed) throw failed.error;
        return made;
      } finally {
        await held.charge.release();
      }
    },
    words,
  );
  const { result, image, answered } = generated;
  let fitted: FittedImage;
  try {
    fitted = await core.images.fit(image, ctx.reply.limits.maxFileBytes, { key: subjectOf(ctx), signal: ctx.signal });
  } catch (error) {
    if (error instanceof ImageTooLargeError) throw new InputError(error.sentence);
    throw error;
  }
  // A fallback's image names its model, in the settings line and in a note.
  const notes = [...fallbackNote(answered), ...options.notes];
  if (fitted.reencoded) notes.push(fitted.reencoded);
  const seed = job.seed ?? seedOf(result);
  const made: ImagineJob = answered.failed === undefined ? job : { ...job, model: answered.model };
  const lines = [
    `🎨 ${caption(job.prompt)}`,
    `_${settingsLine(made, fitted, seed, words)}_`,
    ...notes.map((n) => `_⚠️ ${noteText(n, words)}_`),
  ];
  const { referenceDataUrl, ...kept } = job;
  const reference =
    options.reference ?? (referenceDataUrl ? keptImage(core, undefined, dataUrlBytes(referenceDataUrl)) : undefined);
  // The buttons' state keeps the job as asked (a press asks the same models again) and the model that made the image.
  const state = (ref: string | undefined): ImagineState => ({
    requesterId: ctx.user.id,
    job: { ...kept, seed },
    ...(reference ? { reference } : {}),
    image: keptImage(core, ref, fitted.data),
    ...(answered.failed === undefined ? {} : { answeredBy: answered.model }),
  });
  const file: OutgoingFile = {
    name: `imagine.${extensionOf(fitted.format)}`,
    data: fitted.data,
    mimeType: fitted.mimeType,
    description: job.prompt.slice(0, 1000),
  };
  // Reroll, Upscale, Vary, then 👍 / 👎 (features/feedback.ts): five, a Discord row's most.
  const buttons = async (ref: string | undefined) => {
    const feedback = { kind: 'image' as const, command: 'imagine', model: answered.model };
    const [own, rating] = await Promise.all([
      keepButtonState(ctx, core, state(ref), words),
      keepFeedback(core, ctx, feedback),
    ]);
    return [...own, ...rating];
  };
  await post(ctx, core, { content: lines.join('\n'), file, buttons, words }, progress);
}

/**
 * Asks the service for the job's image, with the job's model and then, while each is unavailable,
 * the fallback models of FALLBACK_IMAGE_MODELS in turn (service/fallback.ts; a fallback's image
 * reserved at its price, `held.charge` replaced), and reads the first image of the result
 * (decoded in the image workers).
 * @param queue the request's line in the service's fair queue (the progress line's ticket).
 * @param held the image's money, settled once the service answered (none made: nothing).
 * @throws ServiceError subclasses; InvalidResponseError for a result with no image.
 */
async function generate(
  ctx: CommandContext,
  core: Core,
  job: ImagineJob,
  queue: QueueTicket,
  held: { charge: Charge },
) {
  const answered = await askInTurn(
    chainOf(core, 'image', job.model),
    async (model, index) => {
      if (index > 0) {
        await held.charge.release();
        held.charge = await chargeImage(ctx, core, model, job.style);
      }
      return core.service.images.generate(bodyOf({ ...job, model }), { signal: ctx.signal, queue });
    },
    (step) => tellFallback(ctx, core, 'image', step),
    ctx.signal,
  );
  const result = answered.value;
  // The service made (and bills) the image once it answered with one.
  await held.charge.settleImage(result.data.length > 0);
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
      sentence('errors.service.no_image'),
    );
  return { result, image, answered };
}

/** The caption's settings line in `words`: model · style · size (px) · seed [· reference, denoising]. */
function settingsLine(job: ImagineJob, fitted: FittedImage, seed: number | undefined, words: Words): string {
  const reference =
    job.denoisingStrength !== undefined
      ? words.t('answers.imagine.reference_denoising', { strength: String(job.denoisingStrength) })
      : words.t('answers.imagine.reference');
  return [
    job.model ?? words.t('answers.imagine.default_model'),
    job.style ?? 'vivid',
    `${fitted.width}×${fitted.height}`,
    seed === undefined
      ? words.t('answers.imagine.seed_random')
      : words.t('answers.imagine.seed', { seed: String(seed) }),
    ...(job.referenceDataUrl || job.referenceImageUrl ? [reference] : []),
  ].join(' · ');
}

/**
 * Posts the image with its caption and buttons, asked for as a gallery (OutgoingMessage.gallery:
 * on Discord one Components V2 message): where the platform edits files in, into the progress
 * message (or a new one); elsewhere (Slack: a file message carries no buttons, and a posted
 * message takes no file) the image with its caption, then the buttons in a line of their own
 * (the progress line, if shown).
 * @param image.buttons keeps the buttons' state and returns them (none when the store failed),
 *   given the posted image's reference when the platform named one on posting (the image is
 *   then posted first).
 * Every write spends the reply's buckets in the write scheduler (one-off.ts): a burst of
 * /imagine in one channel stays within its budgets.
 */
async function post(
  ctx: CommandContext,
  core: Core,
  image: {
    content: string;
    file: OutgoingFile;
    buttons: (ref: string | undefined) => Promise<Button[]>;
    /** The place's words, of the line that carries the buttons. */
    words: Words;
  },
  progress: MessageHandle | undefined,
): Promise<void> {
  const { content, file, words } = image;
  const { scheduler } = core;
  const edit = (handle: MessageHandle, message: OutgoingMessage) => editOnce(scheduler, ctx.reply, handle, message);
  if (ctx.reply.editsFiles) {
    const buttons = await image.buttons(undefined);
    const message: OutgoingMessage = { content, files: [file], buttons, gallery: true };
    if (progress) await edit(progress, message);
    else await sendOnce(scheduler, ctx.reply, message);
    return;
  }
  const posted = await sendOnce(scheduler, ctx.reply, { content, files: [file], gallery: true }, progress ? 1 : 0);
  const buttons = await image.buttons(posted.fileRefs?.[0]);
  if (buttons.length === 0) {
    if (progress) await edit(progress, { content: words.t('answers.imagine.done') });
    return;
  }
  const line = {
    content: words.t(progress ? 'answers.imagine.done_buttons' : 'answers.imagine.buttons_above'),
    buttons,
  };
  if (progress) await edit(progress, line);
  else await sendOnce(scheduler, ctx.reply, line, 1);
}
