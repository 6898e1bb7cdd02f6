/**
 * Discord's refusals in sentences a user can act on (Discord's JSON error codes,
 * topics/opcodes-and-status-codes), for the core's one place that turns errors into words.
 */
import { DiscordAPIError } from 'discord.js';
import { InputError } from '../../core/errors.ts';
import type { MessageKey } from '../../core/i18n/catalogs.ts';
import { type Sentence, sentence } from '../../core/i18n/words.ts';

/** The codes the bot explains, with their sentence's key (discord.json `errors`). */
const SENTENCES: Readonly<Record<number, MessageKey>> = {
  50013: 'discord.errors.missing_permissions',
  50001: 'discord.errors.missing_access',
  10003: 'discord.errors.unknown_channel',
  40005: 'discord.errors.too_large',
  50027: 'discord.errors.interaction_ended',
  10062: 'discord.errors.unknown_interaction',
  50006: 'discord.errors.empty_message',
  30046: 'discord.errors.too_old_to_edit',
};

/**
 * The sentence (not yet in words: the caller renders it for its reader) for a Discord API
 * refusal, or for a write the adapter itself refused with a sentence (an InputError:
 * channel-writes.ts for an invoker who may not post); undefined for anything else.
 * @param error what a discord.js call, or a write of the adapter's, threw.
 */
export function explainDiscordError(error: unknown): Sentence | undefined {
  if (error instanceof InputError) return error.sentence;
  if (!(error instanceof DiscordAPIError)) return undefined;
  const code = typeof error.code === 'number' ? error.code : Number(error.code);
  const key = Object.hasOwn(SENTENCES, code) ? SENTENCES[code] : undefined;
  if (key) return sentence(key);
  return error.status >= 500 ? sentence('discord.errors.server', { status: String(error.status) }) : undefined;
}

/** Whether a discord.js error is Discord's "Invalid Webhook Token" (50027): the interaction's 15 minutes are over. */
export function isExpiredToken(error: unknown): boolean {
  return error instanceof DiscordAPIError && Number(error.code) === 50027;
}

/** Whether a discord.js error says what was asked for is gone: Unknown Message (10008) or Unknown Channel (10003). */
export function isGone(error: unknown): boolean {
  return isUnknownMessage(error) || (error instanceof DiscordAPIError && Number(error.code) === 10003);
}

/** Whether a discord.js error is Discord's "Unknown Message" (10008): the message is not there (deleted). */
export function isUnknownMessage(error: unknown): boolean {
  return error instanceof DiscordAPIError && Number(error.code) === 10008;
}

/** Whether a discord.js error is Discord's "Invalid Form Body" (400, 50035): the request's body was refused, nothing written. */
export function isInvalidForm(error: unknown): boolean {
  return error instanceof DiscordAPIError && Number(error.code) === 50035;
}
