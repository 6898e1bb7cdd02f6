/**
 * `/forget`: clears the conversation's history here. Anyone in a DM; in a channel, admins and
 * members who may manage messages. `/forget me` (Discord `scope:me`): anyone, anywhere, erases
 * their own messages (and the bot's answers to them), votes and button states in every
 * conversation of this server or workspace (features/forget-me.ts), told to them alone.
 */
import type { Command } from '../src/core/command.ts';
import { choice, texts } from '../src/core/command-words.ts';
import { forget } from '../src/core/features/forget.ts';
import { forgetMe } from '../src/core/features/forget-me.ts';

export default {
  name: 'forget',
  ...texts('commands.command.forget'),
  options: [
    {
      name: 'scope',
      ...texts('commands.command.forget.options.scope'),
      type: 'string',
      choices: [choice('me', 'commands.command.forget.options.scope.choices.me')],
    },
  ],
  examples: ['', 'me'],
  async execute(ctx, core) {
    if (ctx.options.scope === 'me') await forgetMe(ctx, core);
    else await forget(ctx, core);
  },
} satisfies Command;
