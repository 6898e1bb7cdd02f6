/**
 * What users do, scripted by tests: open a DM with the bot, start a thread, post a message
 * (with mentions, attachments, as a reply). Each goes out over the gateway as Discord sends it:
 * THREAD_CREATE (a channel object with `newly_created`), MESSAGE_CREATE (wire.ts,
 * `gatewayMessageJson`). Discord sends bots no CHANNEL_CREATE for DMs: a DM's first message
 * is all the bot sees (discord.js needs `Partials.Channel` and the `channel_type` for it).
 */
import { userAttachment } from './attachments.ts';
import { DEFAULT_USER, MAX_FILES } from './constants.ts';
import type { Ctx } from './context.ts';
import { userMayPost } from './member-permissions.ts';
import {
  ChannelType,
  type FakeChannel,
  type FakeMessage,
  type FakeUser,
  type MessageReference,
  type Pings,
} from './model.ts';
import type { PostUserMessageOptions } from './types.ts';
import { codePoints, snowflake } from './util.ts';
import { channelJson, gatewayMessageJson } from './wire.ts';
import { announce } from './writes.ts';

/** The most a user can type (Nitro's 4,000 characters); Discord's client sends no more. */
const MAX_USER_CONTENT = 4000;

/** The DM channel between the bot and `user`, opened (and remembered) if needed. */
export function openDm(ctx: Ctx, user: FakeUser): FakeChannel {
  const { state } = ctx;
  for (const channel of state.channels.values())
    if (channel.type === ChannelType.DM && channel.recipient?.id === user.id) return channel;
  return state.addChannel({ type: ChannelType.DM, guildId: undefined, name: user.username, recipient: user });
}

/**
 * A public thread in a guild text channel, announced as THREAD_CREATE; started from one of the
 * channel's messages when `fromMessage` names one (the thread then takes the message's id, as
 * on Discord, and the message gets the Has Thread flag).
 * @throws Error when the parent is not a guild text channel of the fake, or the message is not
 *   one of its own or has a thread already.
 */
export function addThread(
  ctx: Ctx,
  parentChannelId: string,
  name: string,
  options: { fromMessage?: string } = {},
): FakeChannel {
  const { state } = ctx;
  const parent = state.channels.get(parentChannelId);
  if (!parent || parent.type !== ChannelType.GuildText)
    throw new Error(`FakeDiscord: ${parentChannelId} is not a text channel of the guild`);
  const from = options.fromMessage === undefined ? undefined : state.messages.get(options.fromMessage);
  if (options.fromMessage !== undefined && (!from || from.channelId !== parent.id || state.channels.has(from.id)))
    throw new Error(`FakeDiscord: no message ${options.fromMessage} without a thread in ${parent.id}`);
  if (from) from.flags |= 32;
  const thread = state.addChannel({
    ...(from ? { id: from.id } : {}),
    type: ChannelType.PublicThread,
    guildId: state.guildId,
    name,
    parentId: parent.id,
  });
  ctx.gateway.dispatch('THREAD_CREATE', { ...channelJson(state, thread), newly_created: true });
  return thread;
}

/**
 * Posts a message by a user (or another bot, or a webhook) and dispatches MESSAGE_CREATE.
 * @throws Error for an unknown channel, a reply to a message not in the channel, an author
 *   who cannot post there, more than 10 files or 4,000 characters: what Discord's client
 *   would never send.
 */
export function postUserMessage(ctx: Ctx, options: PostUserMessageOptions): FakeMessage {
  const { state } = ctx;
  const channel = state.channels.get(options.channelId);
  if (!channel) throw new Error(`FakeDiscord: unknown channel ${options.channelId}`);
  const content = options.content ?? '';
  if (codePoints(content) > MAX_USER_CONTENT)
    throw new Error(`FakeDiscord: a user cannot send more than ${MAX_USER_CONTENT} characters`);
  const files = options.attachments ?? [];
  if (files.length > MAX_FILES) throw new Error(`FakeDiscord: a message holds at most ${MAX_FILES} files`);
  const author = authorOf(ctx, channel, options);
  if (channel.type !== ChannelType.DM && options.webhookId === undefined && !userMayPost(state, channel, author.id))
    throw new Error(`FakeDiscord: ${author.username} may not send messages in ${channel.name} (its overwrites)`);

  let reference: MessageReference | undefined;
  let replied: FakeMessage | undefined;
  if (options.replyTo !== undefined) {
    replied = state.messages.get(options.replyTo);
    if (!replied || replied.channelId !== channel.id || replied.deleted || replied.ephemeral)
      throw new Error(`FakeDiscord: no message ${options.replyTo} to reply to in ${channel.id}`);
    reference = { messageId: replied.id, channelId: channel.id, guildId: channel.guildId };
  }

  const message = state.newMessage(channel.id, 'user', undefined, author, options.at);
  message.type = options.type ?? (reference ? 19 : 0);
  message.reference = reference;
  message.webhookId = options.webhookId;
  message.content = content;
  message.attachments = files.map((file) => userAttachment(state, channel.id, snowflake(), file));
  const pingReplied =
    replied && options.pingRepliedAuthor !== false && replied.author.id !== author.id ? replied.author : undefined;
  const pinged = mentionsOf(channel, content, pingReplied);
  message.revisions.push({
    seq: state.nextSeq(),
    at: message.createdAt,
    via: 'create',
    content,
    embeds: [],
    attachmentIds: message.attachments.map((a) => a.id),
    flags: 0,
    allowedMentions: undefined,
    pinged,
    reference: reference ? { messageId: reference.messageId } : undefined,
  });
  announce(ctx, message);
  state.events.emit('userMessage', message);
  return message;
}

/**
 * A user edits the text of their message, as Discord's client lets its author do, and
 * MESSAGE_UPDATE goes out as Discord sends it: the whole message with `edited_timestamp` and
 * MESSAGE_CREATE's extra fields (`guild_id`, the author's `member`, mentions with `member`):
 * discord-api-types' GatewayMessageUpdateDispatchData. Mentions are read again from the new
 * text (a reply that pinged its author still does).
 * @param options.at when the edit is made, ms since 1970 (default now): a test may edit "later".
 * @throws Error for a message that is not a user's own (a webhook's, the bot's), is deleted, or
 *   for more than 4,000 characters or an edit before the message was posted.
 */
export function editUserMessage(
  ctx: Ctx,
  messageId: string,
  content: string,
  options: { at?: number } = {},
): FakeMessage {
  const { state } = ctx;
  const message = state.messages.get(messageId);
  if (message?.kind !== 'user' || message.webhookId !== undefined || message.deleted)
    throw new Error(`FakeDiscord: no message of a user ${messageId} to edit`);
  if (codePoints(content) > MAX_USER_CONTENT)
    throw new Error(`FakeDiscord: a user cannot send more than ${MAX_USER_CONTENT} characters`);
  const at = options.at ?? Date.now();
  if (at < message.createdAt) throw new Error('FakeDiscord: an edit comes after the message');
  const channel = state.channels.get(message.channelId)!;
  const previous = message.revisions.at(-1)!;
  const replied = message.reference ? state.messages.get(message.reference.messageId) : undefined;
  const pingReplied = replied && previous.pinged.users.includes(replied.author.id) ? replied.author : undefined;
  message.content = content;
  message.editedAt = at;
  message.revisions.push({
    ...previous,
    seq: state.nextSeq(),
    at,
    via: 'edit',
    content,
    pinged: mentionsOf(channel, content, pingReplied),
  });
  ctx.gateway.dispatch('MESSAGE_UPDATE', gatewayMessageJson(state, message));
  return message;
}

/** The author of a user's message: a webhook, the DM's recipient, or a (new) user. */
function authorOf(ctx: Ctx, channel: FakeChannel, options: PostUserMessageOptions): FakeUser {
  const { state } = ctx;
  if (options.webhookId !== undefined) {
    if (channel.type === ChannelType.DM) throw new Error('FakeDiscord: webhooks post in guild channels only');
    return {
      id: options.webhookId,
      username: options.author?.username ?? 'Captain Hook',
      global_name: null,
      discriminator: '0000',
      avatar: null,
      bot: true,
    };
  }
  if (options.author?.id === state.botUser.id)
    throw new Error("FakeDiscord: the bot's own messages go through the REST API");
  const author = options.author ? state.userFrom(options.author) : (channel.recipient ?? state.userOf(DEFAULT_USER.id));
  if (channel.type === ChannelType.DM && author.id !== channel.recipient!.id)
    throw new Error('FakeDiscord: only its recipient writes in a DM with the bot');
  return author;
}

/**
 * Whom a user's message mentions: every `<@id>`/`<@!id>` (a user's message has no
 * `allowed_mentions`), the replied author when the reply pings, every `<@&id>` role, and
 * `@everyone`/`@here` in a guild (the fake assumes the author may mention everyone: the
 * default user owns the guild).
 */
function mentionsOf(channel: FakeChannel, content: string, repliedAuthor: FakeUser | undefined): Pings {
  const users = [...content.matchAll(/<@!?(\d{15,21})>/g)].map((m) => m[1]!);
  if (repliedAuthor) users.push(repliedAuthor.id);
  const roles = [...content.matchAll(/<@&(\d{15,21})>/g)].map((m) => m[1]!);
  const everyone = channel.type !== ChannelType.DM && /@(everyone|here)\b/.test(content);
  return { everyone, users: [...new Set(users)], roles: [...new Set(roles)] };
}
