/**
 * `/imagine prompt [aspect_ratio] [style]`: generate an image; it is posted as an attachment.
 */
import type { Command } from '../src/core/command.ts';
import { imagine } from '../src/core/features/imagine.ts';
import { ASPECT_RATIOS, IMAGE_STYLES, type AspectRatio, type ImageStyle } from '../src/core/service/schemas.ts';

export default {
  name: 'imagine',
  description: 'Generate an image from a prompt',
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
  ],
  async execute(ctx, core) {
    const { prompt, aspect_ratio, style } = ctx.options;
    await imagine(ctx, core, {
      prompt: String(prompt),
      ...(aspect_ratio ? { aspectRatio: aspect_ratio as AspectRatio } : {}),
      ...(style ? { style: style as ImageStyle } : {}),
    });
  },
} satisfies Command;
