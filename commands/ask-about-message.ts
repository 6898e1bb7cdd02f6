/**
 * "Ask about this message": a message action (Discord: Apps → Ask about this message; Slack:
 * More actions → Ask about this message). A form asks for the question; the answer, with the
 * message's text, images and files as its context, goes where a mention's would (Discord: a
 * reply to the message; Slack: the message's thread).
 */

import { actionTexts } from '../src/core/command-words.ts';
import { answerAboutMessage } from '../src/core/features/message-actions.ts';
import type { MessageAction } from '../src/core/message-action.ts';

export default {
  ...actionTexts('commands.action.ask_about_message'),
  id: 'ask_about_message',
  question: {
    title: 'Ask about a message',
    label: 'Your question',
    placeholder: 'What does this mean? Is this right? …',
    submit: 'Ask',
    maxLength: 2000,
  },
  async execute(ctx, core, use) {
    await answerAboutMessage(ctx, core, use.message, use.question ?? '', 'ask_about_message');
  },
} satisfies MessageAction;
