/**
 * `/models [public]` (admins): the service's text and image models in one view, paged to the
 * platform's limits; only the admin sees it unless `public` is true.
 */
import type { Command } from '../src/core/command.ts';
import { texts } from '../src/core/command-words.ts';
import { showModels, turnModelsPage } from '../src/core/features/models.ts';

export default {
  name: 'models',
  ...texts('commands.command.models'),
  adminOnly: true,
  options: [{ name: 'public', ...texts('commands.command.models.options.public'), type: 'boolean' }],
  examples: ['', '--public'],
  async execute(ctx, core) {
    await showModels(ctx, core, ctx.options.public === true);
  },
  async onComponent(ctx, core) {
    await turnModelsPage(ctx, core);
  },
} satisfies Command;
