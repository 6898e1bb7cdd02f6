/**
 * Builders of the events Slack sends when people (and other apps) write: each stores the
 * message in the workspace (so conversations.history / replies and message lookups see it,
 * with the same ts) and returns the `event` exactly as Slack puts it in an `event_callback`.
 *
 * Shapes, checked against real payloads and Slack's own types:
 * - `app_mention`: `{ client_msg_id, type, text: '<@BOT> …', user, ts, team, blocks:
 *   [rich_text], channel, event_ts, thread_ts?, parent_user_id?, files?, upload: false,
 *   display_as_bot: false }` — app_mention DOES carry `files` (with `upload: false`) and never a
 *   subtype (slackapi/node-slack-sdk packages/socket-mode/src/SocketModeClient.test.ts sample;
 *   slackapi/bolt-js#2057, the payload of #2056; @slack/types events/app.ts AppMentionEvent).
 *   Slack sends no app_mention for a DM (docs.slack.dev/reference/events/app_mention).
 * - `message` in a DM: `{ …, channel_type: 'im' }`, with files `subtype: 'file_share'`,
 *   `upload: true`, `display_as_bot: false` (docs.slack.dev/reference/events/message.im; a real
 *   capture: hackage slack-web tests/golden/SlackWebhookEvent/message_file_share.json;
 *   @slack/types events/message.ts FileShareMessageEvent).
 * - `bot_message` (`bot_id`, `username`, `icons`, no `user`), `message_changed` (`hidden`,
 *   `message` with `edited`, `previous_message`), `message_deleted` (`hidden`, `deleted_ts`,
 *   `previous_message`): @slack/types events/message.ts; docs.slack.dev/reference/events/message/*.
 * - the bot's own message echoed to its `message.*` subscriptions: `user` (the bot user),
 *   `bot_id`, `app_id`, `bot_profile`, no subtype.
 *
 * A builder throws an Error for what Slack would never produce (unknown user or channel, a
 * mention in a DM, a DM message from someone else than the DM's user, a thread that does not
 * exist): a test mistake, not a refusal of the app.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { SlackEvent, UserMessageInput } from './inbound-types.ts';
import { channelType } from './scopes.ts';
import type { FakeSlackChannel, FakeSlackMessage } from './types.ts';
import { escapeSlack, type Json, SlackApiError, unescapeSlack } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** Markup Slack writes into message text itself: user, channel, broadcast mentions and links. */
const MARKUP = /<(?:[@#!][^<>\s][^<>]*|(?:https?|mailto):[^<>]*)>/g;

/** The `client_msg_id` of each message a user wrote (real clients send one; bots do not). */
const clientMsgIds = new WeakMap<FakeSlackMessage, string>();

/** What a user typed as Slack sends it: `&`, `<`, `>` escaped outside Slack's own markup. */
export function userText(typed: string): string {
  let out = '';
  let last = 0;
  for (const m of typed.matchAll(MARKUP)) {
    out += escapeSlack(typed.slice(last, m.index)) + m[0];
    last = m.index + m[0].length;
  }
  return out + escapeSlack(typed.slice(last));
}

/** The `rich_text` block Slack's clients attach to a message: mentions, links and text elements (text unescaped). */
export function richTextBlock(text: string): Json {
  const elements: Json[] = [];
  const pushText = (t: string) => void (t && elements.push({ type: 'text', text: unescapeSlack(t) }));
  let last = 0;
  for (const m of text.matchAll(MARKUP)) {
    pushText(text.slice(last, m.index));
    last = m.index + m[0].length;
    const [target, label] = m[0].slice(1, -1).split('|');
    if (target!.startsWith('@')) elements.push({ type: 'user', user_id: target!.slice(1) });
    else if (target!.startsWith('#')) elements.push({ type: 'channel', channel_id: target!.slice(1) });
    else if (target!.startsWith('!')) elements.push({ type: 'broadcast', range: target!.slice(1) });
    else elements.push({ type: 'link', url: target, ...(label ? { text: label } : {}) });
  }
  pushText(text.slice(last));
  return {
    type: 'rich_text',
    block_id: randomBytes(4).toString('base64').slice(0, 5),
    elements: [{ type: 'rich_text_section', elements }],
  };
}

/** `{ thread_ts, parent_user_id }` of a reply, or nothing. */
function threadFields(ws: Workspace, m: FakeSlackMessage): Json {
  if (m.threadTs === undefined) return {};
  return { thread_ts: m.threadTs, parent_user_id: ws.message(m.channel, m.threadTs)?.user };
}

/** A user's message object as events carry it. */
function userMessage(ws: Workspace, m: FakeSlackMessage, text = m.text, blocks = m.blocks): Json {
  return {
    user: m.user,
    type: 'message',
    ts: m.ts,
    ...(clientMsgIds.has(m) ? { client_msg_id: clientMsgIds.get(m) } : {}),
    text,
    team: ws.teamOf(m.channel),
    ...threadFields(ws, m),
    ...(blocks ? { blocks } : {}),
  };
}

/** Checks the channel, user and thread of a user's message and stores it. @throws Error (a test mistake). */
function storeUserMessage(
  ws: Workspace,
  caller: string,
  input: UserMessageInput,
  check: (channel: FakeSlackChannel) => string | undefined,
  text: string,
): FakeSlackMessage {
  const channel = ws.channels.get(input.channel);
  if (!channel) throw new Error(`${caller}: unknown channel ${input.channel}`);
  if (!ws.users.has(input.user)) throw new Error(`${caller}: unknown user ${input.user}`);
  const problem = check(channel);
  if (problem) throw new Error(`${caller}: ${problem}`);
  if (channel.members && !channel.members.includes(input.user))
    throw new Error(`${caller}: ${input.user} is not a member of ${channel.id}`);
  let threadTs: string | undefined;
  try {
    threadTs = ws.threadParent(channel.id, input.threadTs);
  } catch (error) {
    throw new Error(
      `${caller}: thread ${input.threadTs} in ${channel.id}: ${error instanceof SlackApiError ? error.error : String(error)}`,
    );
  }
  const files = input.files ?? [];
  for (const f of files) {
    if (ws.file(f.id) !== f) throw new Error(`${caller}: file ${f.id} is not a file of this fake`);
    // The files of a message are the ones its author uploaded with it.
    if (f.user !== input.user)
      throw new Error(`${caller}: file ${f.id} belongs to ${f.user}, not ${input.user} (addUserFile({ user }))`);
  }
  const blocks = text ? [richTextBlock(text)] : undefined;
  const m = ws.storeMessage({
    channel: channel.id,
    user: input.user,
    botId: undefined,
    text,
    blocks,
    threadTs,
    files: files.map((f) => f.id),
    via: 'user',
    method: 'user',
  });
  clientMsgIds.set(m, randomUUID());
  for (const f of files) {
    Object.assign(f, { channel: channel.id, threadTs, messageTs: m.ts });
    f.shares.push({ channel: channel.id, ts: m.ts, threadTs });
  }
  return m;
}

/** The files fields of a user's message event. */
function fileFields(ws: Workspace, m: FakeSlackMessage, upload: boolean): Json {
  if (m.files.length === 0) return {};
  return { files: m.files.map((id) => ws.fileObject(ws.file(id)!)), upload, display_as_bot: false };
}

/** See {@link FakeSlack.mentionEvent}. */
export function mentionEvent(ws: Workspace, input: UserMessageInput): SlackEvent {
  let text = userText(input.text);
  if (!text.includes(`<@${ws.botUserId}>`)) text = `<@${ws.botUserId}> ${text}`.trimEnd();
  const m = storeUserMessage(
    ws,
    'mentionEvent',
    input,
    (c) => (c.isIm ? 'Slack sends no app_mention in a DM (use imMessageEvent)' : undefined),
    text,
  );
  return {
    ...userMessage(ws, m),
    type: 'app_mention',
    ...fileFields(ws, m, false),
    channel: m.channel,
    event_ts: m.ts,
  };
}

/** See {@link FakeSlack.imMessageEvent}. */
export function imMessageEvent(ws: Workspace, input: UserMessageInput): SlackEvent {
  const check = (c: FakeSlackChannel) =>
    !c.isIm
      ? `${c.id} is not a DM (use openIm)`
      : c.imUser !== input.user
        ? `${input.user} cannot write in the DM of ${c.imUser}`
        : undefined;
  const m = storeUserMessage(ws, 'imMessageEvent', input, check, userText(input.text));
  return messageEvent(ws, m);
}

/** See {@link FakeSlack.channelMessageEvent}. */
export function channelMessageEvent(ws: Workspace, input: UserMessageInput): SlackEvent {
  const m = storeUserMessage(
    ws,
    'channelMessageEvent',
    input,
    (c) => (c.isIm ? `${c.id} is a DM (use imMessageEvent)` : undefined),
    userText(input.text),
  );
  return messageEvent(ws, m);
}

function messageEvent(ws: Workspace, m: FakeSlackMessage): SlackEvent {
  const channel = ws.channels.get(m.channel)!;
  const files = m.files.length ? { subtype: 'file_share', ...fileFields(ws, m, true) } : {};
  return {
    ...userMessage(ws, m),
    type: 'message',
    ...files,
    channel: m.channel,
    event_ts: m.ts,
    channel_type: channelType(channel),
  };
}

/** See {@link FakeSlack.botMessageEvent}. */
export function botMessageEvent(
  ws: Workspace,
  input: { channel: string; text: string; botId?: string; username?: string; threadTs?: string },
): SlackEvent {
  const channel = ws.channels.get(input.channel);
  if (!channel) throw new Error(`botMessageEvent: unknown channel ${input.channel}`);
  const botId = input.botId ?? 'B0OTHERAPP';
  if (botId === ws.botId) throw new Error('botMessageEvent: that is this bot (use ownMessageEvent)');
  const threadTs = ws.threadParent(channel.id, input.threadTs);
  const text = userText(input.text);
  const m = ws.storeMessage({
    channel: channel.id,
    user: '',
    botId,
    text,
    blocks: undefined,
    threadTs,
    files: [],
    via: 'other_app',
    method: 'other_app',
  });
  return {
    type: 'message',
    subtype: 'bot_message',
    text,
    ts: m.ts,
    username: input.username ?? 'otherbot',
    bot_id: botId,
    icons: {},
    ...(threadTs ? { thread_ts: threadTs } : {}),
    channel: m.channel,
    event_ts: m.ts,
    channel_type: channelType(channel),
  };
}

/** See {@link FakeSlack.ownMessageEvent}. */
export function ownMessageEvent(ws: Workspace, input: { channel: string; ts: string }): SlackEvent {
  const m = ws.message(input.channel, input.ts);
  if (!m || m.deleted || m.user !== ws.botUserId)
    throw new Error(`ownMessageEvent: no message of the bot at ${input.channel}/${input.ts}`);
  const channel = ws.channels.get(m.channel)!;
  return {
    user: ws.botUserId,
    type: 'message',
    ts: m.ts,
    bot_id: ws.botId,
    app_id: ws.appId,
    text: m.text,
    team: ws.teamId,
    bot_profile: {
      id: ws.botId,
      deleted: false,
      name: 'genbot',
      updated: 1_700_000_000,
      app_id: ws.appId,
      icons: {},
      team_id: ws.teamId,
    },
    ...(m.blocks ? { blocks: m.blocks } : {}),
    ...threadFields(ws, m),
    ...fileFields(ws, m, true),
    channel: m.channel,
    event_ts: m.ts,
    channel_type: channelType(channel),
  };
}

/** A user's stored, not deleted message. @throws Error. */
function usersMessage(ws: Workspace, caller: string, channel: string, ts: string): FakeSlackMessage {
  const m = ws.message(channel, ts);
  if (!m || m.deleted || m.via !== 'user') throw new Error(`${caller}: no message of a user at ${channel}/${ts}`);
  return m;
}

/** See {@link FakeSlack.messageChangedEvent}. */
export function messageChangedEvent(ws: Workspace, input: { channel: string; ts: string; text: string }): SlackEvent {
  const m = usersMessage(ws, 'messageChangedEvent', input.channel, input.ts);
  const previous = userMessage(ws, m);
  const text = userText(input.text);
  const editTs = ws.nextTs();
  m.text = text;
  m.blocks = text ? [richTextBlock(text)] : undefined;
  m.revisions.push({ text, blocks: m.blocks, at: ws.now(), method: 'user_edit' });
  m.mentions = ws.mentionsOf(m);
  const channel = ws.channels.get(m.channel)!;
  return {
    type: 'message',
    subtype: 'message_changed',
    message: { ...userMessage(ws, m), edited: { user: m.user, ts: editTs }, ...fileFields(ws, m, true) },
    previous_message: previous,
    channel: m.channel,
    hidden: true,
    ts: editTs,
    event_ts: editTs,
    channel_type: channelType(channel),
  };
}

/** See {@link FakeSlack.messageDeletedEvent}. */
export function messageDeletedEvent(ws: Workspace, input: { channel: string; ts: string }): SlackEvent {
  const m = usersMessage(ws, 'messageDeletedEvent', input.channel, input.ts);
  const previous = userMessage(ws, m);
  const eventTs = ws.nextTs();
  m.deleted = true;
  const channel = ws.channels.get(m.channel)!;
  return {
    type: 'message',
    subtype: 'message_deleted',
    previous_message: previous,
    channel: m.channel,
    hidden: true,
    deleted_ts: m.ts,
    event_ts: eventTs,
    ts: eventTs,
    channel_type: channelType(channel),
  };
}
