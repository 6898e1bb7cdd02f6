/**
 * `/help`: every command with its options (ranges, choices) and the service's models, shown to
 * the user alone (Discord: ephemeral messages; Slack: through the command's response_url). On
 * Slack, `/<command> help` shows one command.
 */
import type { Command } from '../src/core/command.ts';
import { showHelp } from '../src/core/features/help.ts';
// index.ts lists this command too: its list is read when /help runs, once every module is loaded.
import { commands } from './index.ts';

export default {
  name: 'help',
  description: 'List every command of the bot, its options and the models',
  options: [],
  examples: [''],
  async execute(ctx, core) {
    await showHelp(ctx, core, commands);
  },
} satisfies Command;
