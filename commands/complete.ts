/**
 * `/complete prompt [model] [temperature] [max_tokens]`: continue a text with the legacy
 * completion endpoint (§4.2); the prompt and its continuation stream into the reply. No history.
 */
import type { Command } from '../src/core/command.ts';
import { texts } from '../src/core/command-words.ts';
import { complete } from '../src/core/features/complete.ts';
import {
  MAX_TOKENS_OPTION,
  samplingFrom,
  stringOption,
  TEMPERATURE_OPTION,
  TEXT_MODEL_OPTION,
} from '../src/core/features/options.ts';

export default {
  name: 'complete',
  ...texts('commands.command.complete'),
  defersAtOnce: true,
  options: [
    {
      name: 'prompt',
      ...texts('commands.command.complete.options.prompt'),
      type: 'string',
      required: true,
      maxLength: 6000,
    },
    TEXT_MODEL_OPTION,
    TEMPERATURE_OPTION,
    MAX_TOKENS_OPTION,
  ],
  examples: ['Once upon a time', 'def fibonacci(n): --temperature 0.2 --max_tokens 200'],
  async execute(ctx, core) {
    const { temperature, max_tokens } = samplingFrom(ctx.options, core);
    const model = stringOption(ctx.options, 'model');
    // Returned, not awaited: this frame is not kept for as long as the answer streams.
    return complete(ctx, core, {
      prompt: String(ctx.options.prompt),
      ...(model ? { model } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(max_tokens !== undefined ? { max_tokens } : {}),
    });
  },
} satisfies Command;
