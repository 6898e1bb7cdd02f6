/**
 * `/export`: the history of the conversation here (the channel, thread or DM where it runs) as
 * `conversation.md` and `conversation.json`, to the asker alone: Discord, an ephemeral reply with
 * the files; Slack, the files in the asker's DM with the bot and an ephemeral line saying so
 * (features/export.ts). Anyone, anywhere; no service call, no chat quota.
 */
import type { Command } from '../src/core/command.ts';
import { texts } from '../src/core/command-words.ts';
import { exportConversation } from '../src/core/features/export.ts';

export default {
  name: 'export',
  ...texts('commands.command.export'),
  options: [],
  examples: [''],
  answersPrivately: true,
  async execute(ctx, core) {
    await exportConversation(ctx, core);
  },
} satisfies Command;
