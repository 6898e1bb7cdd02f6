/**
 * `/forget`: clears the conversation's history here. Anyone in a DM; in a channel, admins and
 * members who may manage messages. `/forget me` (Discord `scope:me`): anyone, anywhere, erases
 * their own messages (and the bot's answers to them), votes and button states in every
 * conversation of this server or workspace (features/forget-me.ts), told to them alone.
 */
import type { Command } from '../src/core/command.ts';
import { forget } from '../src/core/features/forget.ts';
import { forgetMe } from '../src/core/features/forget-me.ts';

export default {
  name: 'forget',
  description: "Clear the bot's conversation history here (me: your own messages everywhere here)",
  options: [
    {
      name: 'scope',
      description: 'me: forget your own messages, votes and buttons in every conversation of this server',
      type: 'string',
      choices: [{ name: 'me: my own messages everywhere here', value: 'me' }],
    },
  ],
  examples: ['', 'me'],
  async execute(ctx, core) {
    if (ctx.options.scope === 'me') await forgetMe(ctx, core);
    else await forget(ctx, core);
  },
} satisfies Command;
