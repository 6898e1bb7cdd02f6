/**
 * "Summarize": a message action (Discord: Apps → Summarize; Slack: More actions → Summarize)
 * that summarizes the message, its text, images and files, where a mention's answer would go
 * (Discord: a reply to the message; Slack: the message's thread).
 */

import { actionTexts } from '../src/core/command-words.ts';
import { answerAboutMessage, SUMMARIZE_INSTRUCTION } from '../src/core/features/message-actions.ts';
import type { MessageAction } from '../src/core/message-action.ts';

export default {
  ...actionTexts('commands.action.summarize_message'),
  id: 'summarize_message',
  async execute(ctx, core, use) {
    await answerAboutMessage(ctx, core, use.message, SUMMARIZE_INSTRUCTION, 'summarize_message');
  },
} satisfies MessageAction;
