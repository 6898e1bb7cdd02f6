/**
 * `/chat prompt [model] [web_search] [json]`: ask the language model; the answer streams into
 * the reply, and the exchange joins the channel's (or thread's) history.
 */
import type { Command } from '../src/core/command.ts';
import { chat } from '../src/core/features/chat.ts';
import { WEB_SEARCH_MODES } from '../src/core/service/schemas.ts';

type WebSearch = (typeof WEB_SEARCH_MODES)[number];

export default {
  name: 'chat',
  description: 'Ask the language model; the answer streams in',
  options: [
    { name: 'prompt', description: 'What to ask or say', type: 'string', required: true, maxLength: 6000 },
    { name: 'model', description: 'Model id (default: the configured chat model)', type: 'string', maxLength: 100 },
    {
      name: 'web_search',
      description: 'Search the web: auto (model decides), force, images (image results), off (default)',
      type: 'string',
      choices: [{ name: 'off', value: 'off' }, ...WEB_SEARCH_MODES.map((value) => ({ name: value, value }))],
    },
    { name: 'json', description: 'Ask for a JSON answer (say the shape you want in the prompt)', type: 'boolean' },
  ],
  async execute(ctx, core) {
    const { prompt, model, web_search, json } = ctx.options;
    await chat(ctx, core, {
      prompt: String(prompt),
      ...(typeof model === 'string' ? { model } : {}),
      ...(typeof web_search === 'string' && web_search !== 'off' ? { webSearch: web_search as WebSearch } : {}),
      ...(json === true ? { json: true } : {}),
    });
  },
} satisfies Command;
