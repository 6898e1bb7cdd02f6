/**
 * `/complete prompt [model]`: continue a text with the legacy completion endpoint (§4.2);
 * the prompt and its continuation stream into the reply. No history.
 */
import type { Command } from '../src/core/command.ts';
import { complete } from '../src/core/features/chat.ts';

export default {
  name: 'complete',
  description: 'Continue a text (legacy completion); it streams in',
  options: [
    { name: 'prompt', description: 'The text to continue', type: 'string', required: true, maxLength: 6000 },
    { name: 'model', description: 'Model id (default: the configured chat model)', type: 'string', maxLength: 100 },
  ],
  async execute(ctx, core) {
    const { prompt, model } = ctx.options;
    await complete(ctx, core, { prompt: String(prompt), ...(typeof model === 'string' ? { model } : {}) });
  },
} satisfies Command;
