/**
 * The conversation around a Discord mention that replies to a message: its reply chain
 * (issue 19). Each replied-to message is read, oldest last, following `message_reference` in
 * the same channel, up to REPLY_CHAIN_MAX messages or about HISTORY_TOKEN_BUDGET tokens
 * (core/tokens.ts estimates), whichever comes first; a deleted message (10008) ends the chain.
 * The bot's own messages become `assistant` turns, other people's `user` turns named by their
 * display name; a message Discord sent empty (no Message Content intent, another person's
 * message that did not mention the bot) is skipped and its author named under the answer.
 *
 * When the replied-to message is already in the conversation the bot keeps (its own answer, or
 * a mention it answered there: its question is among the channel's stored turns), the stored
 * history is used as before: it holds the bot's answers, which a chain through the user's own
 * messages would miss; the replied-to message's files then go with the question. A mention the
 * bot never answered (sent while it was down, past the catch-up age) is read as the chain's
 * head like any other message.
 *
 * Reads: discord.js's cache first (messages the gateway delivered; never the bot's own:
 * own-messages.ts), then REST
 * (`GET /channels/:id/messages/:id`), one message at a time, each spending the bot token's
 * global budget in the write scheduler (`discord:global`, docs/platform-limits.md); discord.js
 * keeps the route's own bucket from its headers.
 */
import type { Message } from 'discord.js';
import type { Core } from '../../core/core.ts';
import type { ContextTurn, MentionContext } from '../../core/features/mention.ts';
import { conversationKey } from '../../core/keys.ts';
import { IMAGE_TOKENS } from '../../core/media/images.ts';
import type { Attachment } from '../../core/platform.ts';
import { estimateTextTokens } from '../../core/tokens.ts';
import type { Logger } from '../../log.ts';
import { isUnknownMessage } from './errors.ts';
import { attachmentsOf, isAddressedToBot, looksHidden, promptOf } from './messages.ts';
import { readInGlobalBudget } from './rate-limits.ts';

/** Why a message of the chain could not be read (the end of the line under the answer). */
export const HIDDEN_CHAIN_REASON =
  "Discord shows other people's messages to bots only when they mention the bot, or with the Message Content intent: an admin can enable it in the Developer Portal and set DISCORD_MESSAGE_CONTENT=true";

/** How far the bot's clock may be behind Discord's, in ms, when a stored turn is compared with a message's time. */
const CLOCK_SLACK_MS = 60_000;

/** What a mention gets from the message it replies to. */
export interface AroundMessage {
  /** The replied-to message's files, when it is in the kept history (else they are in `context`). */
  attachments: Attachment[];
  /** The reply chain, when the replied-to message is not in the kept history. */
  context?: MentionContext;
}

/** What reading a chain needs. */
export interface ChainDeps {
  core: Core;
  botId: string;
  /** Whether the Message Content intent is on (DISCORD_MESSAGE_CONTENT). */
  messageContent: boolean;
}

/** The id of the message `message` replies to in its own channel, if any. */
function repliedId(message: Message): string | undefined {
  const reference = message.reference;
  if (!reference?.messageId || (reference.channelId && reference.channelId !== message.channelId)) return undefined;
  return reference.messageId;
}

/**
 * One message of the channel: from discord.js's cache, else fetched (REST, within the global budget).
 * @returns undefined when Discord says it is gone (10008) or the read fails (logged).
 */
async function readMessage(
  origin: Message,
  id: string,
  deps: ChainDeps,
  log: Logger,
  stream: string,
): Promise<Message | undefined> {
  const cached = origin.channel.messages.cache.get(id);
  if (cached) return cached;
  let read: Message | undefined;
  try {
    await readInGlobalBudget(deps.core.scheduler, `read:${stream}:${id}`, stream, async () => {
      read = await origin.channel.messages.fetch(id);
    });
  } catch (error) {
    if (!isUnknownMessage(error))
      log.info({ err: error instanceof Error ? error.message : String(error) }, 'replied-to message not readable');
  }
  return read;
}

/** The author's name as the channel shows it: the member's nickname, else the user's display name. */
export function displayName(message: Message): string {
  return message.member?.displayName ?? message.author.displayName;
}

/**
 * Whether the conversation the bot keeps holds `message` already: its own, or a mention it
 * answered in the message's channel ({@link answeredThere}).
 */
async function kept(message: Message, deps: ChainDeps): Promise<boolean> {
  if (message.author.id === deps.botId) return true;
  if (!isAddressedToBot(message, deps.botId) || (!deps.messageContent && looksHidden(message, deps.botId)))
    return false;
  return answeredThere(message, deps);
}

/**
 * Whether the stored history of the message's channel (or thread) holds it as a question: a user
 * turn by its author, stored since it was sent (less {@link CLOCK_SLACK_MS}), whose text is the
 * message's (a question is stored as its text, then a line per note of its files). A store that
 * does not answer holds nothing (the chain is read instead).
 */
async function answeredThere(message: Message, deps: ChainDeps): Promise<boolean> {
  const guild = message.guildId ?? undefined;
  const conversationId = conversationKey({ platform: 'discord', guild, channel: message.channelId });
  const stored = await deps.core.history.get(conversationId).catch(() => []);
  const text = promptOf(message, deps.botId);
  const since = message.createdTimestamp - CLOCK_SLACK_MS;
  return stored.some(
    (turn) =>
      turn.role === 'user' &&
      turn.userId === message.author.id &&
      turn.at >= since &&
      (text === '' || turn.content === text || turn.content.startsWith(`${text}\n`)),
  );
}

/** A readable message (of a chain, or a thread: thread-read.ts) as a turn; its estimated tokens. */
export function turnOf(message: Message, deps: ChainDeps): { turn: ContextTurn; tokens: number } {
  const own = message.author.id === deps.botId;
  const text = own ? message.content : promptOf(message, deps.botId);
  const attachments = own ? [] : attachmentsOf(message, 'replied', deps.core.downloader);
  const turn: ContextTurn = own
    ? { role: 'assistant', text }
    : { role: 'user', author: displayName(message), text, attachments };
  return { turn, tokens: estimateTextTokens(text) + 4 + attachments.length * IMAGE_TOKENS };
}

/**
 * What the message `message` replies to adds to its mention: nothing when it replies to none
 * (or the replied-to message cannot be read); the replied-to message's files when the kept
 * history holds it; else the reply chain, replacing the history (see the file's comment).
 * @param stream a name for the reads in the scheduler (the invocation's reference).
 */
export async function aroundMessage(
  message: Message,
  deps: ChainDeps,
  log: Logger,
  stream: string,
): Promise<AroundMessage> {
  const id = repliedId(message);
  const replied = id ? await readMessage(message, id, deps, log, stream) : undefined;
  if (!replied) return { attachments: [] };
  if (await kept(replied, deps)) return { attachments: attachmentsOf(replied, 'replied', deps.core.downloader) };
  const { replyChainMax, historyTokenBudget } = deps.core.limits;
  const turns: ContextTurn[] = [];
  const hidden: string[] = [];
  let tokens = 0;
  let next: Message | undefined = replied;
  for (let count = 1; next; count++) {
    if (!deps.messageContent && looksHidden(next, deps.botId)) hidden.push(displayName(next));
    else {
      const read = turnOf(next, deps);
      tokens += read.tokens;
      if (tokens > historyTokenBudget && turns.length > 0) break;
      turns.push(read.turn);
    }
    const parent: string | undefined = count < replyChainMax ? repliedId(next) : undefined;
    next = parent ? await readMessage(next, parent, deps, log, stream) : undefined;
  }
  log.debug({ turns: turns.length, hidden: hidden.length }, 'reply chain read');
  return {
    attachments: [],
    context: {
      turns: turns.reverse(),
      replacesHistory: true,
      ...(hidden.length ? { skipped: { authors: hidden.reverse(), why: HIDDEN_CHAIN_REASON } } : {}),
    },
  };
}
