/**
 * Rough token estimates for budgeting the history sent with a chat. No tokenizer
 * is bundled: about 4 characters a token for text, and a flat cost per image (§4.1 image
 * input rule 3, §8: "about 85 tokens each").
 */

import { IMAGE_TOKENS } from './media/images.ts';
import type { ChatMessage } from './service/schemas.ts';

/** Tokens a message costs beyond its content (role and separators), as OpenAI counts it. */
const PER_MESSAGE_TOKENS = 4;

/** Estimated tokens of a text: ceil(characters / 4). */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Estimated prompt tokens of chat messages: text at ~4 chars a token, each image {@link IMAGE_TOKENS}. */
export function estimateMessageTokens(messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) {
    total += PER_MESSAGE_TOKENS;
    if (typeof message.content === 'string') {
      total += estimateTextTokens(message.content);
      continue;
    }
    for (const part of message.content) total += part.type === 'text' ? estimateTextTokens(part.text) : IMAGE_TOKENS;
  }
  return total;
}

/** What {@link fitHistory} kept of a history. */
export interface FittedHistory {
  /** The newest messages that fit, oldest first. */
  kept: ChatMessage[];
  /** How many older messages were left out. */
  dropped: number;
}

/**
 * Trims a conversation's history, oldest messages first, so that `fixed` (the system prompt
 * and the new message, always sent) plus the history stay within `budget` estimated tokens.
 * The kept history never starts with an assistant message (its question was left out).
 * @param budget tokens (`HISTORY_TOKEN_BUDGET`); when `fixed` alone exceeds it, no history is kept.
 */
export function fitHistory(
  history: readonly ChatMessage[],
  fixed: readonly ChatMessage[],
  budget: number,
): FittedHistory {
  let total = estimateMessageTokens(fixed);
  let start = history.length;
  while (start > 0) {
    const cost = estimateMessageTokens([history[start - 1]!]);
    if (total + cost > budget) break;
    total += cost;
    start -= 1;
  }
  while (start < history.length && history[start]!.role === 'assistant') start += 1;
  return { kept: history.slice(start), dropped: start };
}
