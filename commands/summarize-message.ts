/**
 * "Summarize": a message action (Discord: Apps → Summarize; Slack: More actions → Summarize)
 * that summarizes the message, its text, images and files, where a mention's answer would go
 * (Discord: a reply to the message; Slack: the message's thread).
 */
import { answerAboutMessage, SUMMARIZE_INSTRUCTION } from '../src/core/features/message-actions.ts';
import type { MessageAction } from '../src/core/message-action.ts';

export default {
  name: 'Summarize',
  id: 'summarize_message',
  description: 'Summarize this message (its text, images and files) in its thread',
  async execute(ctx, core, use) {
    await answerAboutMessage(ctx, core, use.message, SUMMARIZE_INSTRUCTION, 'summarize_message');
  },
} satisfies MessageAction;
