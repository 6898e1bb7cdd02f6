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
 * System messages (a thread's starter line, joins, pins) are not read.
 */
import { type Message, MessageType } from 'discord.js';
import type { ContextTurn, MentionContext } from '../../core/features/mention.ts';
import type { Logger } from '../../log.ts';
import { looksHidden } from './messages.ts';
import { GLOBAL_BUCKET } from './rate-limits.ts';
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

/** The messages of the mention's thread before it, newest first. @throws what discord.js throws. */
async function earlierMessages(message: Message, deps: ChainDeps, stream: string): Promise<Message[]> {
  let read: Message[] = [];
  await deps.core.scheduler.submit({
    key: `thread-read:${stream}`,
    stream,
    buckets: [GLOBAL_BUCKET],
    final: true,
    run: async () => {
      const limit = Math.min(DISCORD_PAGE_MAX, deps.core.limits.replyChainMax);
      const page = await message.channel.messages.fetch({ limit, before: message.id });
      read = [...page.values()];
    },
  });
  return read.sort((a, b) => b.createdTimestamp - a.createdTimestamp);
}

/**
 * The thread a mention is in as its context, when the bot keeps no history for the thread (a
 * store that does not answer counts as none): see the file's comment. Never throws: a read
 * that fails is logged and the mention is answered without the thread.
 * @param conversationId the thread's conversation key.
 * @param stream a name for the read in the scheduler (the invocation's reference).
 * @returns undefined outside a thread, with stored history, or when nothing was read.
 */
export async function readThread(
  message: Message,
  deps: ChainDeps & { conversationId: string },
  log: Logger,
  stream: string,
): Promise<MentionContext | undefined> {
  if (!message.channel.isThread()) return undefined;
  const stored = await deps.core.history.asChatMessages(deps.conversationId).catch(() => []);
  if (stored.length > 0) return undefined;
  let messages: Message[];
  try {
    messages = await earlierMessages(message, deps, stream);
  } catch (error) {
    log.info({ err: error instanceof Error ? error.message : String(error) }, 'thread not read');
    return undefined;
  }
  const turns: ContextTurn[] = [];
  const hidden: string[] = [];
  let tokens = 0;
  for (const earlier of messages) {
    if (earlier.author.id === deps.botId) break;
    if (!READ_TYPES.has(earlier.type)) continue;
    if (!deps.messageContent && looksHidden(earlier, deps.botId)) {
      hidden.push(displayName(earlier));
      continue;
    }
    const read = turnOf(earlier, deps);
    tokens += read.tokens;
    if (tokens > deps.core.limits.historyTokenBudget && turns.length > 0) break;
    turns.push(read.turn);
  }
  log.debug({ turns: turns.length, hidden: hidden.length }, 'thread read');
  if (turns.length === 0 && hidden.length === 0) return undefined;
  return {
    turns: turns.reverse(),
    replacesHistory: true,
    ...(hidden.length ? { skipped: { authors: hidden.reverse(), why: HIDDEN_CHAIN_REASON } } : {}),
  };
}
