/**
 * A Discord thread the bot is called into (issue 19, item 2, Discord's half; Slack's is
 * slack/thread.ts): a mention in a thread the bot keeps no history for, and that replies to no
 * message whose chain applies (reply-chain.ts), reads the thread's recent messages as the
 * conversation, so "summarize this thread" works.
 *
 * One read, `GET /channels/{thread.id}/messages?before=<the mention>&limit=<n>` (discord.js
 * `messages.fetch`; n = REPLY_CHAIN_MAX, at most Discord's 100 a page), spending the bot token's
 * global budget in the write scheduler as reply-chain reads do. Newest first, the messages are
 * kept until HISTORY_TOKEN_BUDGET (core/tokens.ts estimates) is spent, and stop at the bot's own
 * last message there: with no stored history, what came before it was forgotten (`/forget` in
 * the thread) or lost with the store, as on Slack. People's and other apps' messages become
 * `user` turns named by their display name; one Discord sent empty (no Message Content intent,
 * a message that did not mention the bot) is skipped and its author named under the answer.
 * System messages (a thread's starter line, joins, pins) are not read. When the page reaches
 * back to the thread's start, the message the thread was started from (in the parent channel:
 * discord.js `fetchStarterMessage`, one more read) opens the conversation.
 */
import { type Message, MessageType, type ThreadChannel } from 'discord.js';
import type { ContextTurn, MentionContext } from '../../core/features/mention.ts';
import type { Logger } from '../../log.ts';
import { isGone } from './errors.ts';
import { looksHidden } from './messages.ts';
import { readInGlobalBudget } from './rate-limits.ts';
import { type ChainDeps, displayName, HIDDEN_CHAIN_REASON, turnOf } from './reply-chain.ts';

/** The most messages Discord returns in one page of a channel's messages. */
const DISCORD_PAGE_MAX = 100;

/** Message types that carry what someone wrote (a reply, an app's answer to a command, included). */
const READ_TYPES: ReadonlySet<MessageType> = new Set([
  MessageType.Default,
  MessageType.Reply,
  MessageType.ChatInputCommand,
  MessageType.ContextMenuCommand,
]);

/**
 * The messages of the mention's thread before it, newest first, and whether they reach back to
 * the thread's start (fewer than asked for). @throws what discord.js throws.
 */
async function earlierMessages(
  message: Message,
  deps: ChainDeps,
  stream: string,
): Promise<{ messages: Message[]; all: boolean }> {
  let read: Message[] = [];
  const limit = Math.min(DISCORD_PAGE_MAX, deps.core.limits.replyChainMax);
  await readInGlobalBudget(deps.core.scheduler, `thread-read:${stream}`, stream, async () => {
    read = [...(await message.channel.messages.fetch({ limit, before: message.id })).values()];
  });
  return { messages: read.sort((a, b) => b.createdTimestamp - a.createdTimestamp), all: read.length < limit };
}

/**
 * The message a thread was started from (in its parent channel, the thread's id being the
 * message's), when it is not among `read` (a forum post's is in the thread itself).
 * @returns undefined for a thread started without a message, or one that is gone (10008).
 */
async function starterOf(thread: ThreadChannel, read: readonly Message[], deps: ChainDeps, stream: string) {
  if (read.some((m) => m.id === thread.id)) return undefined;
  let starter: Message | undefined;
  try {
    await readInGlobalBudget(deps.core.scheduler, `thread-starter:${stream}`, stream, async () => {
      starter = (await thread.fetchStarterMessage()) ?? undefined;
    });
  } catch (error) {
    if (!isGone(error)) throw error;
  }
  return starter;
}

/** The turns read so far, the authors of hidden messages, and the tokens spent. */
interface Reading {
  turns: ContextTurn[];
  hidden: string[];
  tokens: number;
}

/**
 * Adds one message (newer ones first) to what is read.
 * @returns false when reading stops here: the bot's own message, or the budget spent.
 */
function take(earlier: Message, reading: Reading, deps: ChainDeps): boolean {
  if (earlier.author.id === deps.botId) return false;
  if (!READ_TYPES.has(earlier.type)) return true;
  if (!deps.messageContent && looksHidden(earlier, deps.botId)) {
    reading.hidden.push(displayName(earlier));
    return true;
  }
  const read = turnOf(earlier, deps);
  reading.tokens += read.tokens;
  if (reading.tokens > deps.core.limits.historyTokenBudget && reading.turns.length > 0) return false;
  reading.turns.push(read.turn);
  return true;
}

/**
 * The thread a mention is in as its context, when the bot keeps no history for the thread (a
 * store that does not answer counts as none): see the file's comment. Never throws: a read
 * that fails is logged and the mention is answered without the thread.
 * @param conversationId the thread's conversation key.
 * @param stream a name for the reads in the scheduler (the invocation's reference).
 * @returns undefined outside a thread, with stored history, or when nothing was read.
 */
export async function readThread(
  message: Message,
  deps: ChainDeps & { conversationId: string },
  log: Logger,
  stream: string,
): Promise<MentionContext | undefined> {
  const thread = message.channel;
  if (!thread.isThread()) return undefined;
  const stored = await deps.core.history.asChatMessages(deps.conversationId).catch(() => []);
  if (stored.length > 0) return undefined;
  const reading: Reading = { turns: [], hidden: [], tokens: 0 };
  try {
    const { messages, all } = await earlierMessages(message, deps, stream);
    const whole = messages.every((earlier) => take(earlier, reading, deps));
    // Back at the thread's start: the message it was started from opens the conversation.
    const starter = whole && all ? await starterOf(thread, messages, deps, stream) : undefined;
    if (starter) take(starter, reading, deps);
  } catch (error) {
    log.info({ err: error instanceof Error ? error.message : String(error) }, 'thread not read');
    return undefined;
  }
  const { turns, hidden } = reading;
  log.debug({ turns: turns.length, hidden: hidden.length }, 'thread read');
  if (turns.length === 0 && hidden.length === 0) return undefined;
  return {
    turns: turns.reverse(),
    replacesHistory: true,
    ...(hidden.length ? { skipped: { authors: hidden.reverse(), why: HIDDEN_CHAIN_REASON } } : {}),
  };
}
