/**
 * `/imagine prompt [aspect_ratio] [style] [model] [negative_prompt] [seed] [reference_image]
 * [reference_image_url] [denoising_strength] [enhance] [disable_safety_checker]`: generate an
 * image (§4.3); it is posted as an attachment with a caption naming the settings and the seed.
 */
import type { Command } from '../src/core/command.ts';
import { choice, texts } from '../src/core/command-words.ts';
import { OptionError } from '../src/core/errors.ts';
import { imagine } from '../src/core/features/imagine.ts';
import { imagineFollowUp } from '../src/core/features/imagine-buttons.ts';
import { MAX_SEED, stringOption } from '../src/core/features/options.ts';
import { checkForwardableUrl, DownloadError } from '../src/core/media/download.ts';
import { ASPECT_RATIOS, type AspectRatio, IMAGE_STYLES, type ImageStyle } from '../src/core/service/schemas.ts';

export default {
  name: 'imagine',
  ...texts('commands.command.imagine'),
  defersAtOnce: true,
  options: [
    {
      name: 'prompt',
      ...texts('commands.command.imagine.options.prompt'),
      type: 'string',
      required: true,
      maxLength: 4000,
    },
    {
      name: 'aspect_ratio',
      ...texts('commands.command.imagine.options.aspect_ratio'),
      type: 'string',
      choices: ASPECT_RATIOS.map((value) =>
        choice(value, `commands.command.imagine.options.aspect_ratio.choices.${value}`),
      ),
    },
    {
      name: 'style',
      ...texts('commands.command.imagine.options.style'),
      type: 'string',
      choices: IMAGE_STYLES.map((value) => choice(value, `commands.command.imagine.options.style.choices.${value}`)),
    },
    {
      name: 'model',
      ...texts('commands.command.imagine.options.model'),
      type: 'string',
      maxLength: 100,
      autocomplete: 'image_models',
    },
    {
      name: 'negative_prompt',
      ...texts('commands.command.imagine.options.negative_prompt'),
      type: 'string',
      maxLength: 2000,
    },
    {
      name: 'seed',
      ...texts('commands.command.imagine.options.seed', { max: String(MAX_SEED) }),
      type: 'integer',
      minValue: 0,
      maxValue: MAX_SEED,
    },
    { name: 'reference_image', ...texts('commands.command.imagine.options.reference_image'), type: 'attachment' },
    {
      name: 'reference_image_url',
      ...texts('commands.command.imagine.options.reference_image_url'),
      type: 'string',
      maxLength: 2000,
    },
    {
      name: 'denoising_strength',
      ...texts('commands.command.imagine.options.denoising_strength'),
      type: 'number',
      minValue: 0,
      maxValue: 1,
    },
    { name: 'enhance', ...texts('commands.command.imagine.options.enhance'), type: 'boolean' },
    {
      name: 'disable_safety_checker',
      ...texts('commands.command.imagine.options.disable_safety_checker'),
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
      throw new OptionError('commands.imagine.reference_url_invalid');
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
              // The reason is the download guard's (media/download.ts), as it words it.
              throw new OptionError('commands.imagine.reference_url_refused', { reason: error.message });
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
