/**
 * AI loading states: `assistant.threads.setStatus` (docs.slack.dev/reference/methods/
 * assistant.threads.setStatus; its argument and error table in smstoslack/slack_kit
 * priv/docs/methods/assistant.threads.setStatus.json).
 *
 * - Arguments `channel_id`, `thread_ts`, `status` (required; `''` clears it), optional
 *   `loading_messages` (at most 10) and `icon_emoji` / `icon_url` / `username` (ignored).
 * - Scope `chat:write`, or `assistant:write` (accepted "for the time being": changelog
 *   2026-03-05, "Set status method scope update"; scopes.ts ALTERNATIVE_SCOPES). Since then it
 *   works in channels too, not only in assistant threads: the fake takes every conversation
 *   type unless `assistantStatusChannelTypes` or a channel's `assistantStatus: false` says
 *   otherwise (`method_not_supported_for_channel_type`, Slack's error for conversations that
 *   cannot take it).
 * - `channel_not_found`, `invalid_thread_ts` (malformed, or no such message: the second is the
 *   fake's choice); more than 10 loading messages is `invalid_arguments` (the fake's choice).
 * - A status shows until the app posts in the thread, it is cleared, or 2 minutes pass ("A two
 *   minute timeout applies, which will cause the status to be removed if no message has been
 *   sent"): {@link shownStatus}.
 */
import { channelType } from './scopes.ts';
import type { AssistantStatus } from './stream-types.ts';
import type { MethodTable } from './web-api.ts';
import { type Json, jsonParam, SlackApiError, str, TS_PATTERN } from './wire.ts';
import type { Workspace } from './workspace.ts';

export function assistantMethods(ws: Workspace): MethodTable {
  return { 'assistant.threads.setStatus': (p) => setStatus(ws, p) };
}

function setStatus(ws: Workspace, p: Json): Json {
  const channel = ws.channelOf(p, 'channel_id');
  if (channel.assistantStatus === false || !ws.streaming.assistantStatusChannelTypes.includes(channelType(channel))) {
    throw new SlackApiError('method_not_supported_for_channel_type');
  }
  const threadTs = str(p, 'thread_ts') ?? '';
  const parent = TS_PATTERN.test(threadTs) ? ws.message(channel.id, threadTs) : undefined;
  if (!parent || parent.deleted) throw new SlackApiError('invalid_thread_ts');
  const status = str(p, 'status');
  if (status === undefined)
    throw new SlackApiError('invalid_arguments', {
      response_metadata: { messages: ['[ERROR] missing required field: status'] },
    });
  const raw =
    p.loading_messages === undefined || p.loading_messages === '' ? undefined : jsonParam(p, 'loading_messages');
  if (raw !== undefined && (!Array.isArray(raw) || raw.length > 10 || raw.some((m) => typeof m !== 'string'))) {
    throw new SlackApiError('invalid_arguments', {
      response_metadata: { messages: ['[ERROR] loading_messages must be an array of at most 10 strings'] },
    });
  }
  ws.assistantStatuses.push({
    channel: channel.id,
    threadTs: parent.threadTs ?? parent.ts,
    status,
    loadingMessages: raw as string[] | undefined,
    at: ws.now(),
  });
  return {};
}

/**
 * The loading status users see in a thread now: the latest one set there, unless it was
 * cleared (`''`), timed out, or the bot has posted in the thread since (a message or a stream).
 */
export function shownStatus(ws: Workspace, channel: string, threadTs: string): AssistantStatus | undefined {
  const root = ws.message(channel, threadTs)?.threadTs ?? threadTs;
  const last = ws.assistantStatuses.findLast((s) => s.channel === channel && s.threadTs === root);
  if (!last || last.status === '') return undefined;
  if (ws.now() - last.at >= ws.streaming.assistantStatusTimeoutMs) return undefined;
  const posted = ws.messageList.some(
    (m) =>
      m.channel === channel &&
      m.threadTs === root &&
      m.user === ws.botUserId &&
      !m.deleted &&
      m.revisions[0]!.at >= last.at,
  );
  return posted ? undefined : last;
}
