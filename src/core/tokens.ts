/**
 * Rough token estimates for budgeting (history trimming comes in a later issue). No tokenizer
 * is bundled: about 4 characters a token for text, and a flat cost per image (§4.1 image
 * input rule 3, §8: "about 85 tokens each").
 */
import type { ChatMessage } from './service/schemas.ts';
import { IMAGE_TOKENS } from './media/images.ts';

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
