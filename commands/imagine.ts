/**
 * `/imagine prompt [aspect_ratio] [style] [model] [negative_prompt] [seed] [reference_image]
 * [reference_image_url] [denoising_strength] [enhance] [disable_safety_checker]`: generate an
 * image (§4.3); it is posted as an attachment with a caption naming the settings and the seed.
 */
import type { Command } from '../src/core/command.ts';
import { OptionError } from '../src/core/errors.ts';
import { imagine } from '../src/core/features/imagine.ts';
import { imagineFollowUp } from '../src/core/features/imagine-buttons.ts';
import { MAX_SEED, stringOption } from '../src/core/features/options.ts';
import { checkForwardableUrl, DownloadError } from '../src/core/media/download.ts';
import { ASPECT_RATIOS, type AspectRatio, IMAGE_STYLES, type ImageStyle } from '../src/core/service/schemas.ts';

export default {
  name: 'imagine',
  description: 'Generate an image from a prompt',
  defersAtOnce: true,
  options: [
    { name: 'prompt', description: 'What the image should show', type: 'string', required: true, maxLength: 4000 },
    {
      name: 'aspect_ratio',
      description: 'square 1024×1024 (default), portrait 832×1216, landscape 1216×832',
      type: 'string',
      choices: ASPECT_RATIOS.map((value) => ({ name: value, value })),
    },
    {
      name: 'style',
      description: 'Rendering style (default: vivid)',
      type: 'string',
      choices: IMAGE_STYLES.map((value) => ({ name: value, value })),
    },
    {
      name: 'model',
      description: "Image model (default: the channel's, else the service's choice)",
      type: 'string',
      maxLength: 100,
      autocomplete: 'image_models',
    },
    { name: 'negative_prompt', description: 'What the image should not show', type: 'string', maxLength: 2000 },
    {
      name: 'seed',
      description: `Seed for a reproducible image, 0 to ${MAX_SEED} (default: random)`,
      type: 'integer',
      minValue: 0,
      maxValue: MAX_SEED,
    },
    { name: 'reference_image', description: 'An image to start from (image to image)', type: 'attachment' },
    {
      name: 'reference_image_url',
      description: 'The address of an image to start from',
      type: 'string',
      maxLength: 2000,
    },
    {
      name: 'denoising_strength',
      description: 'How far from the reference, 0 to 1 (default 0.75)',
      type: 'number',
      minValue: 0,
      maxValue: 1,
    },
    { name: 'enhance', description: 'Let a language model enhance the prompt first', type: 'boolean' },
    {
      name: 'disable_safety_checker',
      description: 'Turn off the safety checker (admins, where allowed)',
      type: 'boolean',
    },
  ],
  examples: [
    'a red fox in the snow --aspect_ratio landscape --style natural',
    'a lighthouse at dusk --seed 42 --negative_prompt people',
  ],
  async execute(ctx, core) {
    const o = ctx.options;
    const typedReferenceUrl = stringOption(o, 'reference_image_url');
    if (typedReferenceUrl !== undefined && !/^https?:\/\/[^\s]+$/i.test(typedReferenceUrl)) {
      throw new OptionError('answers.imagine.reference_url_form');
    }
    // The service fetches this link itself: never one to a private or local address (the same
    // guard as the bot's own downloads, with the same resolver), and passed on as checked.
    const referenceImageUrl =
      typedReferenceUrl === undefined
        ? undefined
        : await checkForwardableUrl(typedReferenceUrl, {
            name: '`reference_image_url`',
            lookup: core.downloader.lookup,
          }).catch((error: unknown) => {
            if (error instanceof DownloadError)
              throw new OptionError('answers.imagine.reference_url_refused', { reason: error.message });
            throw error;
          });
    const model = stringOption(o, 'model');
    const negativePrompt = stringOption(o, 'negative_prompt');
    await imagine(ctx, core, {
      prompt: String(o.prompt),
      ...(o.aspect_ratio ? { aspectRatio: o.aspect_ratio as AspectRatio } : {}),
      ...(o.style ? { style: o.style as ImageStyle } : {}),
      ...(model ? { model } : {}),
      ...(negativePrompt ? { negativePrompt } : {}),
      ...(typeof o.seed === 'number' ? { seed: o.seed } : {}),
      ...(ctx.files.reference_image ? { referenceImage: ctx.files.reference_image } : {}),
      ...(referenceImageUrl ? { referenceImageUrl } : {}),
      ...(typeof o.denoising_strength === 'number' ? { denoisingStrength: o.denoising_strength } : {}),
      ...(o.enhance === true ? { enhance: true } : {}),
      ...(o.disable_safety_checker === true ? { disableSafetyChecker: true } : {}),
    });
  },
  /** Reroll, Upscale and Vary of a posted image (`imagine:<action>:<id>`). */
  onComponent: imagineFollowUp,
} satisfies Command;
