/**
 * The `conversations.*` Web API methods: what the bot may read about a channel or DM.
 *
 * - `conversations.info`: a channel (`is_channel`, `is_private`, `is_member`…) or a DM
 *   (`is_im: true`, `user`).
 * - `conversations.history`: top-level messages, newest first (`latest`, `oldest`, `inclusive`,
 *   `limit` 1–999, default 100; `cursor`), thread parents with `reply_count`, `reply_users`,
 *   `latest_reply`.
 * - `conversations.replies`: a thread, parent first then replies oldest first, for the ts of
 *   the parent or of any reply (`limit` 1–1000; `cursor`); `thread_not_found` for an unknown ts.
 *
 * - `conversations.members`: the member ids of a conversation, the bot's own among them where it is
 *   in it (`limit` 1–1000, default 100; `cursor`). A private channel or DM the bot is not in is
 *   `channel_not_found` (the bot cannot see it); a public one is listed to any bot (docs.slack.dev
 *   conversations.members: tier 4, scopes `channels:read`, `groups:read`, `im:read`, `mpim:read`).
 *
 * - `conversations.open`: the DM between the bot and one user (`users`: one user id; the same DM
 *   every time, FakeSlack.openIm), `{ channel: { id } }` (`return_im`: the DM's info).
 *   `user_not_found` for an unknown user; several users (a group DM) are not modelled
 *   (`not_implemented`, the fake's own). Scope `im:write` (scopes.ts).
 *
 * Both read methods need the bot in the conversation (`not_in_channel`) and the history scope
 * of its type (scopes.ts). Messages users wrote through the event builders are there, with
 * the same ts as their events. Pagination cursors are opaque to callers; a malformed one is
 * `invalid_cursor`.
 */
import type { FakeSlackChannel, FakeSlackMessage } from './types.ts';
import type { MethodTable } from './web-api.ts';
import { type Json, paginate, required, SlackApiError, str } from './wire.ts';
import type { Workspace } from './workspace.ts';

export function conversationMethods(ws: Workspace): MethodTable {
  return {
    'conversations.info': (p) => ({ channel: info(ws.channelOf(p, 'channel')) }),
    'conversations.history': (p) => history(ws, p),
    'conversations.replies': (p) => replies(ws, p),
    'conversations.members': (p) => members(ws, p),
    'conversations.open': (p) => open(ws, p),
  };
}

function open(ws: Workspace, p: Json): Json {
  const users = (str(p, 'users') ?? '').split(',').filter(Boolean);
  if (users.length === 0) throw new SlackApiError('users_list_not_supplied');
  if (users.length > 1) throw new SlackApiError('not_implemented');
  if (!ws.users.has(users[0]!)) throw new SlackApiError('user_not_found');
  const channel = ws.openIm(users[0]!);
  return { channel: str(p, 'return_im') === 'true' ? info(channel) : { id: channel.id } };
}

function members(ws: Workspace, p: Json): Json {
  const channel = ws.channelOf(p, 'channel');
  if (channel.botIsMember === false && (channel.isPrivate || channel.isIm))
    throw new SlackApiError('channel_not_found');
  const people = channel.isIm ? [channel.imUser ?? ''] : (channel.members ?? [...ws.users.keys()]);
  const all = channel.botIsMember === false ? people : [...people, ws.botUserId];
  const page = paginate(all, p, 100, 1000);
  return { members: page.items, response_metadata: { next_cursor: page.nextCursor } };
}

function info(channel: FakeSlackChannel): Json {
  if (channel.isIm) {
    return {
      id: channel.id,
      created: 1_700_000_000,
      is_archived: false,
      is_im: true,
      is_org_shared: false,
      user: channel.imUser,
      is_user_deleted: false,
      priority: 0,
    };
  }
  return {
    id: channel.id,
    name: channel.name,
    is_channel: !channel.isPrivate,
    is_group: false,
    is_im: false,
    is_private: Boolean(channel.isPrivate),
    is_archived: false,
    is_member: channel.botIsMember !== false,
    created: 1_700_000_000,
  };
}

function history(ws: Workspace, p: Json): Json {
  const channel = ws.channelOf(p, 'channel');
  ws.requireMember(channel);
  const inRange = range(p);
  const all = ws.messageList
    .filter((m) => m.channel === channel.id && !m.deleted && m.threadTs === undefined && inRange(m.ts))
    .sort((a, b) => (a.ts < b.ts ? 1 : -1));
  const page = paginate(all, p, 100, 999);
  return {
    messages: page.items.map((m) => withThread(ws, m)),
    has_more: page.nextCursor !== '',
    pin_count: 0,
    channel_actions_ts: null,
    channel_actions_count: 0,
    response_metadata: { next_cursor: page.nextCursor },
  };
}

function replies(ws: Workspace, p: Json): Json {
  const channel = ws.channelOf(p, 'channel');
  ws.requireMember(channel);
  const asked = ws.message(channel.id, required(p, 'ts'));
  if (!asked || asked.deleted) throw new SlackApiError('thread_not_found');
  const parentTs = asked.threadTs ?? asked.ts;
  const parent = ws.message(channel.id, parentTs);
  const inRange = range(p);
  const thread = ws.messageList
    .filter((m) => m.channel === channel.id && !m.deleted && m.threadTs === parentTs && inRange(m.ts))
    .sort((a, b) => (a.ts < b.ts ? -1 : 1));
  const all = parent && !parent.deleted ? [parent, ...thread] : thread;
  const page = paginate(all, p, 1000, 1000);
  return {
    messages: page.items.map((m) => withThread(ws, m)),
    has_more: page.nextCursor !== '',
    response_metadata: { next_cursor: page.nextCursor },
  };
}

/** A message as conversations.* return it: with the thread fields of a parent or a reply. */
function withThread(ws: Workspace, m: FakeSlackMessage): Json {
  const base = ws.wire(m);
  if (m.threadTs !== undefined) return { ...base, parent_user_id: ws.message(m.channel, m.threadTs)?.user };
  const thread = ws.messageList.filter((r) => r.channel === m.channel && r.threadTs === m.ts && !r.deleted);
  if (thread.length === 0) return base;
  const users = [...new Set(thread.map((r) => r.user))];
  return {
    ...base,
    thread_ts: m.ts,
    reply_count: thread.length,
    reply_users_count: users.length,
    reply_users: users,
    latest_reply: thread.at(-1)!.ts,
  };
}

/** The `oldest` / `latest` / `inclusive` filter of a read method. */
function range(p: Json): (ts: string) => boolean {
  const oldest = str(p, 'oldest');
  const latest = str(p, 'latest');
  const inclusive = str(p, 'inclusive') === 'true' || str(p, 'inclusive') === '1';
  return (ts) =>
    (oldest === undefined || oldest === '' || (inclusive ? ts >= oldest : ts > oldest)) &&
    (latest === undefined || latest === '' || (inclusive ? ts <= latest : ts < latest));
}
