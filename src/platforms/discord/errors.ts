/**
 * Discord's refusals in sentences a user can act on (Discord's JSON error codes,
 * topics/opcodes-and-status-codes), for the core's one place that turns errors into words.
 */
import { DiscordAPIError } from 'discord.js';
import { InputError } from '../../core/errors.ts';

/** The codes the bot explains, with their sentence. */
const SENTENCES: Record<number, string> = {
  50013:
    "I lack a permission in this channel (Send Messages, Embed Links or Attach Files): a server admin can grant it in the channel's settings.",
  50001: 'I cannot see this channel: a server admin can give me access to it.',
  10003: 'This channel no longer exists.',
  40005: 'The file is too large for this server.',
  50027: 'Discord ended this interaction (interactions last 15 minutes). Run the command again.',
  10062: 'Discord says this interaction is unknown (it took too long to answer). Run the command again.',
  50006: 'Discord refused an empty message.',
  30046: 'Discord no longer lets me edit that message (it is older than an hour).',
};

/**
 * The sentence for a Discord API refusal, or for a write the adapter itself refused with a
 * sentence (an InputError: channel-writes.ts for an invoker who may not post); undefined for
 * anything else.
 * @param error what a discord.js call, or a write of the adapter's, threw.
 */
export function explainDiscordError(error: unknown): string | undefined {
  if (error instanceof InputError) return error.message;
  if (!(error instanceof DiscordAPIError)) return undefined;
  const code = typeof error.code === 'number' ? error.code : Number(error.code);
  return (
    SENTENCES[code] ??
    (error.status >= 500 ? `Discord had trouble (HTTP ${error.status}). Try again in a moment.` : undefined)
  );
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
