/**
 * `/forget`: clears the conversation's history here. Anyone in a DM; in a channel, admins and
 * members who may manage messages.
 */
import type { Command } from '../src/core/command.ts';
import { forget } from '../src/core/features/forget.ts';

export default {
  name: 'forget',
  description: "Clear the bot's conversation history here",
  options: [],
  examples: [''],
  async execute(ctx, core) {
    await forget(ctx, core);
  },
} satisfies Command;
