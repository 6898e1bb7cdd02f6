/**
 * The channel a Slack user is viewing beside the bot's agent view (issue 21, item 1): Slack
 * says which with `app_context_changed` (agent view; also in `app_home_opened` of the Messages
 * tab) or `assistant_thread_started` / `assistant_thread_context_changed` (assistant view), and
 * the bot remembers it for the user's conversations with it, a day, in the store
 * (`storeKeys.viewedChannel`), so that "summarize this channel" in the agent conversation reads
 * that channel's recent messages (`conversations.history`, one page of {@link PAGE_SIZE}): the
 * newest that fit HISTORY_TOKEN_BUDGET (core/tokens.ts estimates), as turns named by author,
 * oldest first, sent before the question.
 *
 * What Slack said the user views is not trusted a day later: when the channel is read, the user
 * must still be in it (a private channel they were removed from, a channel they left), checked
 * with `conversations.members` ({@link requireMember}): tier 4, pages of
 * {@link MEMBER_PAGE_SIZE} (Slack's largest), stopping at the page naming the user, at most
 * {@link MAX_MEMBER_PAGES}; it works for private channels and DMs the bot is in, with the bot
 * token's `*:read` scopes. (`users.conversations` would list every channel of the user, tier 3;
 * `conversations.info` says nothing of other members.) Anyone else is refused with a sentence,
 * and nothing of the channel is read.
 *
 * Reading needs the bot in the channel, the history scope of its type (`channels:history`,
 * `groups:history`…) and its read scope (`channels:read`, `groups:read`…), which the manifest
 * asks for and `npm run doctor` checks. When Slack refuses (`not_in_channel`, `missing_scope`,
 * `channel_not_found`…) the answer is a sentence naming the channel and what to change
 * ({@link SlackRefusal}), without asking the service to summarize nothing.
 */

import type { WebClient } from '@slack/web-api';
import type { Core } from '../../core/core.ts';
import { InputError } from '../../core/errors.ts';
import type { ContextTurn, MentionContext } from '../../core/features/mention.ts';
import { type Sentence, sentence } from '../../core/i18n/words.ts';
import { storeKeys } from '../../core/keys.ts';
import { estimateTextTokens } from '../../core/tokens.ts';
import type { Logger } from '../../log.ts';
import { SlackRefusal, slackErrorCode } from './errors.ts';
import { patiently } from './rate-limits.ts';
import { plainTextOf } from './text.ts';
import type { SlackDirectory } from './users.ts';

/** The bot scopes of conversations.members, one per conversation type (the manifest asks for them all). */
export const SLACK_MEMBER_SCOPES = ['channels:read', 'groups:read', 'im:read', 'mpim:read'] as const;

/** Members asked for per conversations.members page (the method's largest page). */
export const MEMBER_PAGE_SIZE = 1000;
/** conversations.members pages read at most: a larger channel is not read for anyone. */
export const MAX_MEMBER_PAGES = 5;

/** How long a viewed channel is remembered, in ms. */
const REMEMBERED_MS = 24 * 60 * 60_000;
/** Messages asked for (one page of conversations.history, newest first). */
export const PAGE_SIZE = 200;

/** Message subtypes read as the channel's content: people's messages and other apps' posts. */
const READ_SUBTYPES: ReadonlySet<string | undefined> = new Set([
  undefined,
  'file_share',
  'thread_broadcast',
  'bot_message',
]);

/** One entity of what a user views (`app_context_changed`'s `context.entities`, @slack/types AppContextChangedEvent). */
interface ContextEntity {
  type?: string;
  value?: unknown;
}

/**
 * The channel an `app_context_changed` (or `app_home_opened`) context names first (entities
 * are ordered by relevance): a `slack#/types/channel_id`, or the channel of a
 * `slack#/types/message_context`. @returns undefined when it names none.
 */
export function channelOfContext(context: unknown): string | undefined {
  const entities = (context as { entities?: unknown } | undefined)?.entities;
  if (!Array.isArray(entities)) return undefined;
  for (const entity of entities as ContextEntity[]) {
    if (entity?.type === 'slack#/types/channel_id' && typeof entity.value === 'string') return entity.value;
    const inMessage = (entity?.value as { channel_id?: unknown } | undefined)?.channel_id;
    if (entity?.type === 'slack#/types/message_context' && typeof inMessage === 'string') return inMessage;
  }
  return undefined;
}

/**
 * Remembers the channel `user` views (undefined: none, forgotten). Never throws: a store that
 * does not answer is logged, and the next summary says it does not know the channel.
 */
export async function rememberViewed(
  core: Core,
  at: { team: string; user: string },
  channel: string | undefined,
  log: Logger,
): Promise<void> {
  const key = storeKeys.viewedChannel(at.team, at.user);
  try {
    if (channel) await core.store.keyv.set(key, channel, REMEMBERED_MS);
    else await core.store.keyv.delete(key);
  } catch (error) {
    log.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not remember the viewed channel');
  }
}

/** The channel `user` views, as last remembered. @throws what the store throws. */
export async function viewedChannel(core: Core, at: { team: string; user: string }): Promise<string | undefined> {
  return (await core.store.keyv.get<string>(storeKeys.viewedChannel(at.team, at.user))) ?? undefined;
}

/**
 * Whether a message asks to summarize a channel ("summarize this channel", "summarise the
 * channel I am viewing"…): `summarize` or `summarise`, then `channel` later in the text. Two
 * linear searches (the pattern has no repetition).
 */
export function asksToSummarizeChannel(text: string): boolean {
  const lower = text.toLowerCase();
  const at = lower.search(/summari[sz]e/);
  return at >= 0 && lower.indexOf('channel', at) >= 0;
}

/** The scope of a family (`history`, `read`) for a conversation, by its id's first letter (C public, G private or group DM, D DM). */
function scopeOf(channel: string, family: 'history' | 'read'): string {
  if (channel.startsWith('D')) return `im:${family}`;
  if (channel.startsWith('G')) return `groups:${family}`;
  return `channels:${family}`;
}

/** The sentence for Slack's refusal to read `channel` (see the file's comment); `family`: the scope the call needs. */
function refusalOf(error: unknown, channel: string, family: 'history' | 'read'): SlackRefusal | undefined {
  const code = slackErrorCode(error);
  const needed = (error as { data?: { needed?: unknown } }).data?.needed;
  switch (code) {
    case 'missing_scope':
      return new SlackRefusal(
        sentence('slack.viewed.missing_scope', {
          channel,
          scope: typeof needed === 'string' && needed ? needed : scopeOf(channel, family),
        }),
      );
    case 'not_in_channel':
      return new SlackRefusal(sentence('slack.viewed.not_in_channel', { channel }));
    case 'channel_not_found':
      return new SlackRefusal(sentence('slack.viewed.not_found', { channel }));
    case 'not_allowed_token_type':
      return new SlackRefusal(sentence('slack.viewed.token_type', { channel }));
    case undefined:
      return undefined;
    default:
      return new SlackRefusal(sentence('slack.viewed.refused', { channel, code }));
  }
}

/**
 * Whether `user` is a member of `channel` now, by conversations.members (see the file's comment):
 * `member`, `not a member`, or `too many` when the channel has more members than are checked.
 * @throws Slack's refusal of conversations.members as the Web API gives it (slackErrorCode reads
 *   it); its other errors (a network fault).
 */
export async function membership(
  client: WebClient,
  channel: string,
  user: string,
): Promise<'member' | 'not a member' | 'too many'> {
  let cursor: string | undefined;
  for (let page = 0; page < MAX_MEMBER_PAGES; page++) {
    const answer = await patiently(() =>
      client.conversations.members({ channel, limit: MEMBER_PAGE_SIZE, ...(cursor ? { cursor } : {}) }),
    );
    if (answer.members?.includes(user)) return 'member';
    cursor = answer.response_metadata?.next_cursor || undefined;
    if (!cursor) return 'not a member';
  }
  return 'too many';
}

/**
 * Checks that `user` is a member of `channel` now ({@link membership}).
 * @throws InputError when they are not, or when the channel has more members than are checked;
 *   SlackRefusal when Slack refuses conversations.members; its other errors (a network fault).
 */
export async function requireMember(client: WebClient, channel: string, user: string): Promise<void> {
  let found: Awaited<ReturnType<typeof membership>>;
  try {
    found = await membership(client, channel, user);
  } catch (error) {
    throw refusalOf(error, channel, 'read') ?? error;
  }
  if (found === 'not a member') throw new InputError(notAMember(channel));
  if (found === 'too many')
    throw new InputError('slack.viewed.too_many_members', { channel, count: MEMBER_PAGE_SIZE * MAX_MEMBER_PAGES });
}

/** The refusal for a user who is not in the channel they asked about (not yet in words: the user's). */
export function notAMember(channel: string): Sentence {
  return sentence('slack.viewed.not_a_member', { channel });
}

/** A channel's message as conversations.history returns it (the fields read here). */
interface ChannelMessage {
  subtype?: string;
  user?: string;
  username?: string;
  text?: string;
}

/**
 * The recent messages of the channel the user views, as the context of their question: a
 * first turn saying what follows, then the newest messages that fit HISTORY_TOKEN_BUDGET,
 * oldest first (`replacesHistory: false`: after the conversation's own history).
 * @throws InputError when no viewed channel is known, or the user is not in it (any more);
 *   SlackRefusal when Slack refuses to read it; the store's or Slack's error otherwise (a
 *   network fault).
 */
export async function viewedChannelContext(
  client: WebClient,
  at: { team: string; user: string; botUserId: string | undefined },
  deps: { core: Core; directory: SlackDirectory },
): Promise<MentionContext> {
  const channel = await viewedChannel(deps.core, at);
  if (!channel) throw new InputError('slack.viewed.unknown');
  await requireMember(client, channel, at.user);
  let messages: ChannelMessage[];
  try {
    messages = ((await client.conversations.history({ channel, limit: PAGE_SIZE })).messages ?? []) as ChannelMessage[];
  } catch (error) {
    throw refusalOf(error, channel, 'history') ?? error;
  }
  const intro: ContextTurn = { role: 'user', text: `The latest messages of the channel I am viewing, oldest first:` };
  const kept: Array<{ message: ChannelMessage; text: string; own: boolean }> = [];
  let tokens = estimateTextTokens(intro.text) + 4;
  // Newest first, as Slack returns them: the newest are kept when the budget runs out.
  for (const message of messages) {
    if (!READ_SUBTYPES.has(message.subtype)) continue;
    const text = plainTextOf(message.text ?? '', at.botUserId);
    if (!text.trim()) continue;
    tokens += estimateTextTokens(text) + 4;
    if (tokens > deps.core.limits.historyTokenBudget) break;
    kept.push({ message, text, own: message.user !== undefined && message.user === at.botUserId });
  }
  // Every author named at once (users.ts: the workspace's directory, not one lookup each).
  const authors = kept.flatMap(({ message, own }) => (message.user && !own ? [message.user] : []));
  const names = await deps.directory.names(client, at.team, authors);
  const turns = kept.map(({ message, text, own }): ContextTurn => {
    if (own) return { role: 'assistant', text };
    const author = message.user ? (names.get(message.user) ?? message.user) : (message.username ?? 'an app');
    return { role: 'user', author, text };
  });
  return { turns: [intro, ...turns.reverse()], replacesHistory: false };
}
