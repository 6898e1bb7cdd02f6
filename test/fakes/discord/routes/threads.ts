/**
 * Threads the bot starts, as Discord has them (resources/channel, "Start Thread from Message"):
 * `POST /channels/:channel/messages/:message/threads` with the bot token.
 *
 * - The channel must exist (404, 10003), in a guild the bot is a member of (403, 50001), and be a guild text channel: a DM, a thread or another
 *   type is 400, 50024 "Cannot execute action on this channel type" (the fake has no
 *   announcement or forum channels).
 * - The message must be in that channel and visible (404, 10008).
 * - The bot needs Create Public Threads (403, 50013 "Missing Permissions"; `setBotPermissions`).
 * - `name` is required, 1–100 characters; `auto_archive_duration` one of 60, 1440, 4320, 10080;
 *   `rate_limit_per_user` 0–21600; `type` (discord.js sends the thread type) 10, 11 or 12
 *   (400, 50035 with the field's error).
 * - One thread per message: the thread's id is the message's, and a second start is 400,
 *   160004 "A thread has already been created for this message".
 *
 * The answer is the thread (a channel object, type 11, `owner_id` the bot); THREAD_CREATE
 * (`newly_created`) goes to the gateway, and the message gets the Has Thread flag (32) and its
 * `thread`, announced as MESSAGE_UPDATE. Posting in a thread (channels.ts) needs Send Messages
 * in Threads ({@link checkThreadPost}).
 */

import { P } from '../constants.ts';
import type { Ctx } from '../context.ts';
import { addError, discordError, type ErrorTree, formError, unknownChannel, unknownMessage } from '../errors.ts';
import type { Body, Reply } from '../http.ts';
import { ChannelType, type FakeChannel } from '../model.ts';
import { refuseWhereAbsent } from '../user-install.ts';
import { isObject } from '../util.ts';
import { channelJson, gatewayMessageJson } from '../wire.ts';
import type { AreaRoutes } from './index.ts';

/** The message flag Discord sets on a message a thread was started from. */
export const HAS_THREAD_FLAG = 32;
/** `auto_archive_duration` values Discord takes, in minutes. */
const ARCHIVE_DURATIONS = [60, 1440, 4320, 10080];

export const threadRoutes: AreaRoutes = (ctx, rq) => {
  if (!rq.is('channels', '*', 'messages', '*', 'threads')) return undefined;
  rq.requireBot();
  rq.allow('POST');
  return rq.body().then((body) => startThread(ctx, rq.p[1]!, rq.p[3]!, body));
};

/**
 * Refuses a bot's message in a thread without Send Messages in Threads (403, 50013).
 * @throws HttpError as Discord does.
 */
export function checkThreadPost(ctx: Ctx, channel: FakeChannel): void {
  if (channel.type === ChannelType.PublicThread && (ctx.state.botPermissions & P.SendMessagesInThreads) === 0n)
    throw discordError(403, 50013, 'Missing Permissions');
}

/** The body's form errors (name, auto_archive_duration, rate_limit_per_user, type). */
function bodyErrors(json: Record<string, unknown>): ErrorTree {
  const errors: ErrorTree = {};
  const name = json.name;
  if (name === undefined || name === null) addError(errors, ['name'], 'BASE_TYPE_REQUIRED', 'This field is required');
  else if (typeof name !== 'string') addError(errors, ['name'], 'BASE_TYPE_STRING', 'Must be a string.');
  else if ([...name].length < 1 || [...name].length > 100)
    addError(errors, ['name'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
  const duration = json.auto_archive_duration;
  if (duration !== undefined && duration !== null && !ARCHIVE_DURATIONS.includes(duration as number))
    addError(
      errors,
      ['auto_archive_duration'],
      'BASE_TYPE_CHOICES',
      `Value must be one of {${ARCHIVE_DURATIONS.join(', ')}}.`,
    );
  const slow = json.rate_limit_per_user;
  if (
    slow !== undefined &&
    slow !== null &&
    !(Number.isInteger(slow) && (slow as number) >= 0 && (slow as number) <= 21600)
  )
    addError(errors, ['rate_limit_per_user'], 'NUMBER_TYPE_MAX', 'int value should be between 0 and 21600.');
  const type = json.type;
  if (type !== undefined && type !== null && ![10, 11, 12].includes(type as number))
    addError(errors, ['type'], 'BASE_TYPE_CHOICES', 'Value must be one of {10, 11, 12}.');
  return errors;
}

/** "Start Thread from Message" (see the file's comment). */
function startThread(ctx: Ctx, channelId: string, messageId: string, body: Body): Reply {
  const { state } = ctx;
  const channel = state.channels.get(channelId);
  if (!channel) throw unknownChannel();
  refuseWhereAbsent(state, channel);
  if (channel.type !== ChannelType.GuildText)
    throw discordError(400, 50024, 'Cannot execute action on this channel type');
  const message = state.messages.get(messageId);
  if (!message || message.channelId !== channel.id || message.deleted || message.ephemeral) throw unknownMessage();
  if ((state.botPermissions & P.CreatePublicThreads) === 0n) throw discordError(403, 50013, 'Missing Permissions');
  const json = isObject(body.json) ? body.json : {};
  const errors = bodyErrors(json);
  if (Object.keys(errors).length > 0) throw formError(errors);
  if (state.channels.has(message.id))
    throw discordError(400, 160004, 'A thread has already been created for this message');
  const thread = state.addChannel({
    id: message.id,
    type: ChannelType.PublicThread,
    guildId: channel.guildId,
    name: json.name as string,
    parentId: channel.id,
    ownerId: state.botUser.id,
  });
  const threadJson = { ...channelJson(state, thread), member_count: 1 };
  ctx.gateway.dispatch('THREAD_CREATE', { ...threadJson, newly_created: true });
  message.flags |= HAS_THREAD_FLAG;
  ctx.gateway.dispatch('MESSAGE_UPDATE', { ...gatewayMessageJson(state, message), thread: threadJson });
  return { status: 201, body: threadJson };
}
