/**
 * Channels (guild text channels, threads and DMs) with the bot token: `GET /channels/:id`,
 * `POST /channels/:id/typing` (204), `GET`/`POST /channels/:id/messages`, and `GET`/`PATCH`/
 * `DELETE /channels/:id/messages/:id`.
 *
 * - A channel of a guild the bot is not a member of (user-install.ts) refuses every route (403,
 *   50001 Missing Access), as does a guild channel the bot cannot see (no View Channel: `setBotPermissions`) refuses every
 *   route (403, 50001 Missing Access), while the interaction routes still serve (an
 *   interaction's webhook needs no channel access). Send Messages is not needed to edit.
 * - Ephemeral messages exist only for their user: the bot token cannot see them (10008).
 * - The bot edits only its own messages (403, 50005), an interaction's public reply and
 *   follow-ups included (the bot user wrote them), and may not delete others' (403, 50013: it
 *   lacks Manage Messages).
 * - A create may reply (`message_reference`): the referenced message must exist in this
 *   channel, else 400 50035 `MESSAGE_REFERENCE_UNKNOWN_MESSAGE` (as discord.js reports
 *   "message_reference[MESSAGE_REFERENCE_UNKNOWN_MESSAGE]: Unknown message"), unless
 *   `fail_if_not_exists: false`, which sends a plain message instead. A reply is type 19.
 * - Reads (`before`, `after`, `limit`) show other users' messages as an app without Message Content sees them unless the
 *   app is approved for it (`privilegedIntents`): REST ignores the session's intents.
 * - A message in a thread needs Send Messages in Threads (403, 50013: threads.ts).
 */

import { P } from '../constants.ts';
import type { Ctx } from '../context.ts';
import { discordError, fieldError, unknownChannel, unknownMessage } from '../errors.ts';
import { type Body, NO_BODY, type Reply } from '../http.ts';
import type { FakeChannel, MessageReference } from '../model.ts';
import type { FakeTyping } from '../types.ts';
import { refuseWhereAbsent } from '../user-install.ts';
import { isObject } from '../util.ts';
import { channelJson, restMessageJson } from '../wire.ts';
import { commit, existingMessage, prepareWrite } from '../writes.ts';
import type { AreaRoutes } from './index.ts';
import { checkThreadPost } from './threads.ts';

export const channelRoutes: AreaRoutes = (ctx, rq) => {
  const { p, method } = rq;
  const isTyping = p.length === 3 && p[2] === 'typing';
  if (!(p[0] === 'channels' && (p.length === 2 || isTyping || (p[2] === 'messages' && p.length <= 4))))
    return undefined;
  rq.requireBot();
  const { state } = ctx;
  const channel = state.channels.get(p[1]!);
  if (!channel) throw unknownChannel();
  refuseWhereAbsent(state, channel);
  if (channel.guildId && (state.botPermissions & P.ViewChannel) === 0n)
    throw discordError(403, 50001, 'Missing Access');
  if (p.length === 2) {
    rq.allow('GET');
    return {
      status: 200,
      body: { ...channelJson(state, channel), ...(channel.guildId ? { guild_id: channel.guildId } : {}) },
    };
  }
  if (isTyping) {
    rq.allow('POST');
    const typing: FakeTyping = { channelId: channel.id, at: Date.now() };
    state.typing.push(typing);
    state.events.emit('typing', typing);
    return { status: 204 };
  }
  if (p.length === 3) {
    rq.allow('GET', 'POST');
    if (method === 'GET') return listMessages(ctx, channel, rq.url.searchParams);
    return rq.body().then((body) => createMessage(ctx, channel, rq.path, body));
  }
  rq.allow('GET', 'PATCH', 'DELETE');
  const messageId = p[3]!;
  return (method === 'PATCH' ? rq.body() : Promise.resolve(NO_BODY)).then((body) =>
    channelMessage(ctx, method, channel, messageId, rq.path, body),
  );
};

/**
 * `GET /channels/:id/messages` ("Get Channel Messages"): newest first, at most `limit` (1–100,
 * default 50; else 400, 50035); with `before`, the `limit` messages just older than the one it
 * names; with `after`, the `limit` messages just newer (the oldest ones after it, still newest
 * first, as Discord returns them); the two are exclusive (400, 50035). Ids are compared as
 * snowflakes (time order), not by when the fake stored them. `around` is not served.
 */
function listMessages(ctx: Ctx, channel: FakeChannel, query: URLSearchParams): Reply {
  const limitText = query.get('limit');
  const limit = limitText === null ? 50 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw fieldError(['limit'], 'NUMBER_TYPE_MAX', 'int value should be between 1 and 100.');
  const before = snowflakeParam(query, 'before');
  const after = snowflakeParam(query, 'after');
  if (before !== undefined && after !== undefined)
    throw fieldError(['after'], 'BASE_TYPE_BAD_INT', 'before and after are mutually exclusive.');
  const visible = [...ctx.state.messages.values()]
    .filter(
      (m) =>
        m.channelId === channel.id &&
        !m.deleted &&
        !m.ephemeral &&
        (before === undefined || BigInt(m.id) < before) &&
        (after === undefined || BigInt(m.id) > after),
    )
    .sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : -1));
  const page = after === undefined ? visible.slice(0, limit) : visible.slice(-limit);
  return { status: 200, body: page.map((m) => restMessageJson(ctx.state, m)) };
}

/** A snowflake query parameter, or undefined when absent. @throws HttpError 400 (50035) when it is not a snowflake. */
function snowflakeParam(query: URLSearchParams, name: string): bigint | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  if (!/^\d{1,20}$/.test(value)) throw fieldError([name], 'NUMBER_TYPE_COERCE', `Value "${value}" is not snowflake.`);
  return BigInt(value);
}

/** `POST /channels/:id/messages`: a message of the bot, within the channel's budget, maybe a reply. */
async function createMessage(ctx: Ctx, channel: FakeChannel, path: string, body: Body): Promise<Reply> {
  checkThreadPost(ctx, channel);
  ctx.budgets.check(channel.id, 'POST', path);
  const written = await prepareWrite(ctx, body, undefined, { allowEphemeral: false, channelId: channel.id });
  const reference = replyReference(ctx, channel, isObject(body.json) ? body.json.message_reference : undefined);
  const headers = ctx.budgets.spend(channel.id);
  const message = ctx.state.newMessage(channel.id, 'channel', undefined);
  if (reference) {
    message.reference = reference;
    message.type = 19;
  }
  commit(ctx, message, written, 'create', 'channel');
  return { status: 200, body: restMessageJson(ctx.state, message), headers };
}

/**
 * The message a create replies to, or undefined (none asked, or missing with
 * `fail_if_not_exists: false`).
 * @throws HttpError 400 (50035) for a malformed reference or a message not in this channel.
 */
function replyReference(ctx: Ctx, channel: FakeChannel, value: unknown): MessageReference | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw fieldError(['message_reference'], 'MODEL_TYPE_CONVERT', 'Expected an object/dictionary.');
  if (value.type !== undefined && value.type !== 0)
    throw fieldError(['message_reference', 'type'], 'BASE_TYPE_CHOICES', 'The fake supports replies (type 0) only.');
  if (typeof value.message_id !== 'string' && typeof value.message_id !== 'number') {
    throw fieldError(['message_reference', 'message_id'], 'BASE_TYPE_REQUIRED', 'This field is required');
  }
  const id = String(value.message_id);
  const target = ctx.state.messages.get(id);
  const sameChannel =
    value.channel_id === undefined || value.channel_id === null || String(value.channel_id) === channel.id;
  const found = target && sameChannel && target.channelId === channel.id && !target.deleted && !target.ephemeral;
  if (found) return { messageId: id, channelId: channel.id, guildId: channel.guildId };
  if (value.fail_if_not_exists === false) return undefined;
  throw fieldError(['message_reference'], 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', 'Unknown message');
}

function channelMessage(
  ctx: Ctx,
  method: string,
  channel: FakeChannel,
  messageId: string,
  path: string,
  body: Body,
): Promise<Reply> {
  const message = ctx.state.messages.get(messageId);
  if (!message || message.channelId !== channel.id || message.deleted || message.ephemeral) throw unknownMessage();
  if (method === 'GET') return Promise.resolve({ status: 200, body: restMessageJson(ctx.state, message) });
  if (message.kind === 'user') {
    if (method === 'PATCH') throw discordError(403, 50005, 'Cannot edit a message authored by another user');
    throw discordError(403, 50013, 'Missing Permissions');
  }
  return existingMessage(ctx, method, message, channel.id, path, body, 'channel');
}
