/**
 * The `chat.*` Web API methods: postMessage, update, postEphemeral, delete. Each checks what
 * Slack checks (channel, membership, text length, blocks, thread, authorship, rate limits) and
 * records what the bot did on the workspace. A message still streaming (streaming.ts) refuses
 * chat.update with `streaming_state_conflict` and chat.delete with `cant_delete_message`: no
 * Slack page documents either; both were measured against the live API by other projects'
 * recordings (found on GitHub; the chat.update one by several independent ones).
 */
import { parseBlocks } from './blocks.ts';
import { isStreaming } from './streaming.ts';
import type { MethodTable } from './web-api.ts';
import { type Json, required, SlackApiError, str } from './wire.ts';
import type { Workspace } from './workspace.ts';

export function chatMethods(ws: Workspace): MethodTable {
  return {
    'chat.postMessage': (p) => postMessage(ws, p),
    'chat.update': (p) => update(ws, p),
    'chat.postEphemeral': (p) => postEphemeral(ws, p),
    'chat.delete': (p) => deleteMessage(ws, p),
  };
}

function postMessage(ws: Workspace, p: Json): Json {
  const channel = ws.channelOf(p, 'channel');
  ws.limits.takePostToken(channel.id);
  ws.requireMember(channel, true);
  const blocks = parseBlocks(p.blocks);
  const text = str(p, 'text');
  ws.checkText(text, blocks, p.attachments !== undefined);
  const threadTs = ws.threadParent(channel.id, str(p, 'thread_ts'));
  const m = ws.storeMessage({
    channel: channel.id,
    user: ws.botUserId,
    botId: ws.botId,
    text: text ?? '',
    blocks,
    threadTs,
    files: [],
    via: 'chat.postMessage',
    method: 'chat.postMessage',
  });
  return { channel: channel.id, ts: m.ts, message: ws.wire(m) };
}

function update(ws: Workspace, p: Json): Json {
  ws.limits.takeUpdateSlot();
  const channel = ws.channelOf(p, 'channel');
  const ts = required(p, 'ts', 'message_not_found');
  const m = ws.message(channel.id, ts);
  if (!m || m.deleted) throw new SlackApiError('message_not_found');
  if (m.user !== ws.botUserId) throw new SlackApiError('cant_update_message');
  if (isStreaming(m)) throw new SlackApiError('streaming_state_conflict');
  const blocks = parseBlocks(p.blocks);
  const text = str(p, 'text');
  if (text === undefined && blocks === undefined) throw new SlackApiError('no_text');
  ws.checkText(text, blocks, true);
  // Slack keeps the previous blocks when `blocks` is absent (an empty array removes them).
  if (text !== undefined) m.text = text;
  if (blocks !== undefined) m.blocks = blocks.length ? blocks : undefined;
  m.revisions.push({ text: m.text, blocks: m.blocks, at: ws.now(), method: 'chat.update' });
  m.mentions = ws.mentionsOf(m);
  return { channel: channel.id, ts: m.ts, text: m.text, message: ws.wire(m) };
}

function postEphemeral(ws: Workspace, p: Json): Json {
  const channel = ws.channelOf(p, 'channel');
  // Posting messages, ephemeral ones too, about one a second per channel (the rate-limits page's
  // "Posting messages"; its `rate_limited` error: "Application has posted too many messages").
  ws.limits.takePostToken(channel.id);
  ws.requireMember(channel);
  const userId = required(p, 'user', 'user_not_found');
  if (!ws.users.has(userId)) throw new SlackApiError('user_not_found');
  if (channel.members && !channel.members.includes(userId)) throw new SlackApiError('user_not_in_channel');
  const blocks = parseBlocks(p.blocks);
  const text = str(p, 'text');
  ws.checkText(text, blocks, p.attachments !== undefined);
  const ts = ws.nextTs();
  ws.ephemerals.push({
    channel: channel.id,
    user: userId,
    ts,
    threadTs: str(p, 'thread_ts') || undefined,
    text: text ?? '',
    blocks,
    at: ws.now(),
    via: 'chat.postEphemeral',
    shown: true,
  });
  return { message_ts: ts };
}

function deleteMessage(ws: Workspace, p: Json): Json {
  const channel = ws.channelOf(p, 'channel');
  const m = ws.message(channel.id, required(p, 'ts', 'message_not_found'));
  if (!m || m.deleted) throw new SlackApiError('message_not_found');
  if (m.user !== ws.botUserId || isStreaming(m)) throw new SlackApiError('cant_delete_message');
  m.deleted = true;
  return { channel: channel.id, ts: m.ts };
}
