/**
 * What the message actions do (commands/ask-about-message.ts, commands/summarize-message.ts):
 * answer an instruction about one chosen message, the message's text, images and files being
 * the context, as a mention's answer (mention.ts `answerMention`: images looked at, files read,
 * the answer streamed where the adapter's reply puts it, the exchange joining the conversation's
 * history).
 *
 * The question sent is one user turn: the instruction, then the message quoted with its author
 * (`Message by alice:` and the text between `"""` lines), its files as text parts and its images
 * as `image_url` parts. The history keeps that turn as text (the quoted message included, so that
 * a mention afterwards can refer to it) with a note of the files, never their content.
 */

import type { Core } from '../core.ts';
import { InputError } from '../errors.ts';
import { sentence } from '../i18n/words.ts';
import type { ChosenMessage } from '../message-action.ts';
import type { CommandContext } from '../platform.ts';
import { estimateTextTokens } from '../tokens.ts';
import { answerMention } from './mention.ts';

/** What "Summarize" asks. */
export const SUMMARIZE_INSTRUCTION = 'Summarize this message.';

/**
 * Longest text of the chosen message sent, in characters; the rest is cut (and said). The
 * platforms bound it already (Discord 4,000 characters, Slack 40,000): this keeps the bound here.
 * The history budget bounds it further ({@link quotedChars}).
 */
export const MAX_CHOSEN_MESSAGE_CHARS = 40_000;

/** Tokens of the history budget kept free for the channel's system prompt, the instruction's frame and the answer's context. */
const QUOTE_MARGIN_TOKENS = 200;

/**
 * Characters of the chosen message's text that one question may quote: what the history budget
 * (`HISTORY_TOKEN_BUDGET`, estimated at 4 characters a token as tokens.ts counts) leaves after
 * the instruction and {@link QUOTE_MARGIN_TOKENS}, and at most {@link MAX_CHOSEN_MESSAGE_CHARS}.
 * The question is sent whole, so this is what keeps it within the budget. Never below 0.
 */
export function quotedChars(historyTokenBudget: number, instruction: string): number {
  const tokens = historyTokenBudget - estimateTextTokens(instruction) - QUOTE_MARGIN_TOKENS;
  return Math.max(0, Math.min(MAX_CHOSEN_MESSAGE_CHARS, tokens * 4));
}

/**
 * The question's text: the instruction, then the message quoted with its author, at most
 * `maxChars` characters of it (default {@link MAX_CHOSEN_MESSAGE_CHARS}; `[…cut]` marks a cut).
 * A message without text says that only its files are attached.
 */
export function promptAbout(instruction: string, message: ChosenMessage, maxChars = MAX_CHOSEN_MESSAGE_CHARS): string {
  const text = message.text.trim();
  const who = message.fromBot ? `${message.author} (you)` : message.author;
  if (text === '') return `${instruction}\n\nThe message, by ${who}, has no text: its files are attached.`;
  const cut = text.length > maxChars;
  const quoted = cut ? `${text.slice(0, maxChars)}\n[…cut]` : text;
  return `${instruction}\n\nMessage by ${who}:\n"""\n${quoted}\n"""`;
}

/**
 * Answers `instruction` about `message` in `ctx`'s conversation, as a mention would be answered
 * (see the file's comment).
 * @param command the message action's id (the answer's feedback record names it).
 * @throws InputError when the message has neither text nor files; otherwise as answerMention.
 */
export async function answerAboutMessage(
  ctx: CommandContext,
  core: Core,
  message: ChosenMessage,
  instruction: string,
  command?: string,
): Promise<void> {
  if (message.text.trim() === '' && message.attachments.length === 0)
    throw new InputError('answers.message_action.nothing_to_read');
  const maxChars = quotedChars(core.limits.historyTokenBudget, instruction);
  const notices =
    message.text.trim().length > maxChars ? [sentence('answers.message_action.read_up_to', { chars: maxChars })] : [];
  await answerMention(ctx, core, {
    text: promptAbout(instruction, message, maxChars),
    attachments: message.attachments,
    ...(notices.length ? { notices } : {}),
    ...(command ? { command } : {}),
  });
}
