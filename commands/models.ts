/**
 * `/models [public]` (admins): the service's text and image models in one view, paged to the
 * platform's limits; only the admin sees it unless `public` is true.
 */
import type { Command } from '../src/core/command.ts';
import { showModels, turnModelsPage } from '../src/core/features/models.ts';

export default {
  name: 'models',
  description: 'List the text and image models of the service (admins)',
  adminOnly: true,
  options: [{ name: 'public', description: 'Show the list to the whole channel (default: only you)', type: 'boolean' }],
  examples: ['', '--public'],
  async execute(ctx, core) {
    await showModels(ctx, core, ctx.options.public === true);
  },
  async onComponent(ctx, core) {
    await turnModelsPage(ctx, core);
  },
} satisfies Command;
