/**
 * `/chat prompt [model]`: ask the language model; the answer streams into the reply, and the
 * exchange joins the channel's (or thread's) history.
 */
import type { Command } from '../src/core/command.ts';
import { chat } from '../src/core/chat.ts';

export default {
  name: 'chat',
  description: 'Ask the language model; the answer streams in',
  options: [
    { name: 'prompt', description: 'What to ask or say', type: 'string', required: true, maxLength: 6000 },
    { name: 'model', description: 'Model id (default: the configured chat model)', type: 'string', maxLength: 100 },
  ],
  async execute(ctx, core) {
    const { prompt, model } = ctx.options;
    await chat(ctx, core, { prompt: String(prompt), ...(typeof model === 'string' ? { model } : {}) });
  },
} satisfies Command;
