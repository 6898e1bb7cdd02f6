/**
 * A Slack thread the bot is called into (issue 19, item 2): a mention in a thread the bot has
 * no stored history for reads the thread's earlier messages (`conversations.replies`) as the
 * conversation, so "summarize this thread" works: the messages since the bot last wrote there
 * (all of them in a thread it never wrote in; none after `@bot forget`, whose answer is the
 * bot's), as `user` turns named by their display name (users.ts: all at once), with their
 * images (files of an image type: sent as `image_url` parts, downloaded with the bot token
 * from Slack's file hosts only, files.ts; without `files:read` that is said once under the
 * answer), the newest kept within HISTORY_TOKEN_BUDGET (core/tokens.ts estimates, an image
 * {@link IMAGE_TOKENS}).
 *
 * Reading needs the history scope of the conversation's type (`channels:history`,
 * `groups:history`, `im:history`, `mpim:history`). A refusal (`missing_scope`,
 * `not_allowed_token_type`, `ratelimited`, `not_in_channel`) becomes a line under the answer
 * naming what to change, and the question is answered without the thread. conversations.replies
 * is tier 3 for internal apps (docs.slack.dev: 1 a minute, 15 messages a page for commercially
 * distributed apps outside the Marketplace): one call a mention, at most {@link MAX_PAGES} pages.
 */

import type { WebClient } from '@slack/web-api';
import type { Core } from '../../core/core.ts';
import type { ContextTurn, MentionContext } from '../../core/features/mention.ts';
import { type Sentence, sentence } from '../../core/i18n/words.ts';
import { looksLikeImage } from '../../core/media/attachments.ts';
import { IMAGE_TOKENS } from '../../core/media/images.ts';
import type { Attachment } from '../../core/platform.ts';
import { estimateTextTokens } from '../../core/tokens.ts';
import type { Logger } from '../../log.ts';
import { slackErrorCode } from './errors.ts';
import { type SlackFile, type SlackFileDeps, slackFileAttachment } from './files.ts';
import { plainTextOf } from './text.ts';
import type { SlackDirectory } from './users.ts';

/** The history scopes conversations.replies needs, one per conversation type (the manifest asks for them all). */
export const SLACK_THREAD_SCOPES = ['channels:history', 'groups:history', 'im:history', 'mpim:history'] as const;

/** Messages asked for a page. */
const PAGE_SIZE = 200;
/** Pages read at most (a longer thread is read from its start, up to this many messages). */
const MAX_PAGES = 5;

/** A message as conversations.replies returns it (the fields read here). */
interface ThreadMessage {
  ts?: string;
  user?: string;
  bot_id?: string;
  username?: string;
  text?: string;
  files?: SlackFile[];
}

/** Where the mention is, and who the bot is. */
export interface ThreadWhere {
  /** The workspace (team id): whose directory names the authors. */
  team: string;
  channel: string;
  threadTs: string;
  /** The mention's own ts: it and later messages are not read. */
  ts: string;
  botUserId: string | undefined;
  conversationId: string;
}

/** What the thread adds to the mention. */
export interface ThreadRead {
  context?: MentionContext;
  /** A line naming what to change when Slack refused (not yet in words: it goes under a public answer, in the place's). */
  notice?: Sentence;
}

/** The history scope of a conversation, by its id's first letter (C public, G private or group DM, D DM). */
function historyScopeOf(channel: string): string {
  if (channel.startsWith('D')) return 'im:history';
  if (channel.startsWith('G')) return 'groups:history';
  return 'channels:history';
}

/** The sentence (not yet in words: the answer's place's) for a refusal of conversations.replies, or undefined for another error. */
export function threadRefusal(error: unknown, channel: string): Sentence | undefined {
  const data = (error as { data?: { error?: string; needed?: string } }).data;
  switch (slackErrorCode(error)) {
    case 'missing_scope':
      return sentence('slack.thread.missing_scope', { scope: data?.needed || historyScopeOf(channel) });
    case 'not_allowed_token_type':
      return sentence('slack.thread.token_type', { scope: historyScopeOf(channel) });
    case 'ratelimited':
      return sentence('slack.thread.ratelimited');
    case 'not_in_channel':
      return sentence('slack.thread.not_in_channel');
    default:
      return undefined;
  }
}

/** The thread's messages before the mention, oldest first (at most MAX_PAGES pages). */
async function earlierMessages(client: WebClient, where: ThreadWhere): Promise<ThreadMessage[]> {
  const messages: ThreadMessage[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await client.conversations.replies({
      channel: where.channel,
      ts: where.threadTs,
      limit: PAGE_SIZE,
      ...(cursor ? { cursor } : {}),
    });
    messages.push(...((answer.messages ?? []) as ThreadMessage[]).filter((m) => m.ts && m.ts < where.ts));
    cursor = answer.response_metadata?.next_cursor || undefined;
    if (!cursor || !answer.has_more) break;
  }
  return messages;
}

/**
 * Reads the thread a mention is in, when the bot keeps no history for it (a store that does not
 * answer counts as none). Never throws: a refusal is the returned `notice` (see the file's
 * comment), any other failure of conversations.replies (a network fault) is logged and the
 * mention is answered without the thread.
 */
export async function readThread(
  client: WebClient,
  where: ThreadWhere,
  deps: { core: Core; directory: SlackDirectory } & Pick<SlackFileDeps, 'apiOrigin'>,
  log: Logger,
): Promise<ThreadRead> {
  const stored = await deps.core.history.asChatMessages(where.conversationId).catch(() => []);
  if (stored.length > 0) return {};
  let messages: ThreadMessage[];
  try {
    messages = await earlierMessages(client, where);
  } catch (error) {
    const notice = threadRefusal(error, where.channel);
    log.info({ err: error instanceof Error ? error.message : String(error) }, 'thread not read');
    return notice ? { notice } : {};
  }
  const fileDeps = { client, apiOrigin: deps.apiOrigin, downloader: deps.core.downloader };
  const kept: Array<{ message: ThreadMessage; text: string; images: Attachment[] }> = [];
  let tokens = 0;
  for (const message of messages.reverse()) {
    // The bot's own last message ends what is read: with no stored history, what came before it
    // was forgotten (`@bot forget` answers in the thread) or lost with the store.
    if (message.user !== undefined && message.user === where.botUserId) break;
    const text = plainTextOf(message.text ?? '', where.botUserId);
    const images = (message.files ?? []).map((file) => slackFileAttachment(file, fileDeps)).filter(looksLikeImage);
    tokens += estimateTextTokens(text) + 4 + images.length * IMAGE_TOKENS;
    if (tokens > deps.core.limits.historyTokenBudget && kept.length > 0) break;
    kept.push({ message, text, images });
  }
  if (kept.length === 0) return {};
  // Every author named at once (users.ts: the workspace's directory, not one lookup each).
  const names = await deps.directory.names(
    client,
    where.team,
    kept.flatMap(({ message }) => (message.user ? [message.user] : [])),
  );
  const turns = kept.map(({ message, text, images }): ContextTurn => {
    const author = message.user ? (names.get(message.user) ?? message.user) : (message.username ?? 'an app');
    return { role: 'user', author, text, ...(images.length ? { attachments: images } : {}) };
  });
  return { context: { turns: turns.reverse(), replacesHistory: true } };
}
