/**
 * `/help`: every command with its options (ranges, choices), the message actions and the service's models, shown to
 * the user alone (Discord: ephemeral messages; Slack: through the command's response_url). On
 * Slack, `/<command> help` shows one command.
 */
import type { Command } from '../src/core/command.ts';
import { texts } from '../src/core/command-words.ts';
import { showHelp } from '../src/core/features/help.ts';
import type { MessageAction } from '../src/core/message-action.ts';

/**
 * The /help command over a list of commands (itself included) and the message actions: index.ts
 * makes it with its own lists, read when /help runs, so that this file imports no list (no import cycle).
 * @param list every command of the bot, in registration order.
 * @param actions every message action, in menu order.
 */
export function helpCommand(list: () => readonly Command[], actions: () => readonly MessageAction[]): Command {
  return {
    name: 'help',
    ...texts('commands.command.help'),
    options: [],
    examples: [''],
    async execute(ctx, core) {
      await showHelp(ctx, core, list(), actions());
    },
  };
}
