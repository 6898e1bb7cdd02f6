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
 * Reading needs the bot in the channel and the history scope of its type (`channels:history`,
 * `groups:history`…, which the manifest asks for and `npm run doctor` checks). When Slack
 * refuses (`not_in_channel`, `missing_scope`, `channel_not_found`…) the answer is a sentence
 * naming the channel and what to change ({@link SlackRefusal}), without asking the
 * service to summarize nothing.
 */
import type { WebClient } from '@slack/web-api';
import type { Core } from '../../core/core.ts';
import { InputError } from '../../core/errors.ts';
import type { ContextTurn, MentionContext } from '../../core/features/mention.ts';
import { storeKeys } from '../../core/keys.ts';
import { estimateTextTokens } from '../../core/tokens.ts';
import type { Logger } from '../../log.ts';
import { SlackRefusal, slackErrorCode } from './errors.ts';
import { plainTextOf } from './text.ts';
import type { SlackDirectory } from './users.ts';

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

/** The history scope of a conversation, by its id's first letter (C public, G private or group DM, D DM). */
function historyScopeOf(channel: string): string {
  if (channel.startsWith('D')) return 'im:history';
  if (channel.startsWith('G')) return 'groups:history';
  return 'channels:history';
}

/** The sentence for Slack's refusal to read `channel` (see the file's comment). */
function refusalOf(error: unknown, channel: string): SlackRefusal | undefined {
  const code = slackErrorCode(error);
  const needed = (error as { data?: { needed?: unknown } }).data?.needed;
  const what = `I cannot read the channel you are viewing (${channel})`;
  switch (code) {
    case 'missing_scope':
      return new SlackRefusal(
        `${what}: the Slack app lacks the \`${typeof needed === 'string' && needed ? needed : historyScopeOf(channel)}\` scope. An admin can add it under OAuth & Permissions and reinstall the app.`,
      );
    case 'not_in_channel':
      return new SlackRefusal(
        `${what}: I am not in it. Invite me there (/invite followed by my name), then ask again.`,
      );
    case 'channel_not_found':
      return new SlackRefusal(`${what}: Slack does not let me see it (a private channel or a DM).`);
    case 'not_allowed_token_type':
      return new SlackRefusal(`${what}: Slack does not let this token read channels.`);
    case undefined:
      return undefined;
    default:
      return new SlackRefusal(`${what}: Slack refused (${code}).`);
  }
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
 * @throws InputError when no viewed channel is known; SlackRefusal when Slack
 *   refuses to read it; the store's or Slack's error otherwise (a network fault).
 */
export async function viewedChannelContext(
  client: WebClient,
  at: { team: string; user: string; botUserId: string | undefined },
  deps: { core: Core; directory: SlackDirectory },
): Promise<MentionContext> {
  const channel = await viewedChannel(deps.core, at);
  if (!channel)
    throw new InputError(
      'I do not know which channel you are viewing: open the channel, then ask me again here (Slack tells me what you view beside me).',
    );
  let messages: ChannelMessage[];
  try {
    messages = ((await client.conversations.history({ channel, limit: PAGE_SIZE })).messages ?? []) as ChannelMessage[];
  } catch (error) {
    throw refusalOf(error, channel) ?? error;
  }
  const intro: ContextTurn = { role: 'user', text: `The latest messages of the channel I am viewing, oldest first:` };
  const turns: ContextTurn[] = [];
  let tokens = estimateTextTokens(intro.text) + 4;
  // Newest first, as Slack returns them: the newest are kept when the budget runs out.
  for (const message of messages) {
    if (!READ_SUBTYPES.has(message.subtype)) continue;
    const text = plainTextOf(message.text ?? '', at.botUserId);
    if (!text.trim()) continue;
    tokens += estimateTextTokens(text) + 4;
    if (tokens > deps.core.limits.historyTokenBudget) break;
    const own = message.user !== undefined && message.user === at.botUserId;
    const author = own
      ? undefined
      : message.user
        ? await deps.directory.displayName(client, message.user)
        : (message.username ?? 'an app');
    turns.push(own ? { role: 'assistant', text } : { role: 'user', author, text });
  }
  return { turns: [intro, ...turns.reverse()], replacesHistory: false };
}
