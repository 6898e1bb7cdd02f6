/**
 * Native text streaming: `chat.startStream` → `chat.appendStream`… → `chat.stopStream`
 * (docs.slack.dev/reference/methods/chat.startStream, …appendStream, …stopStream; the
 * method/argument/error tables mirrored in slack-ruby/slack-api-ref and smstoslack/slack_kit
 * priv/docs/methods/chat.*Stream.json; @slack/web-api 8.2's request types and ChatStreamer).
 *
 * - startStream (tier 2): `channel`, `thread_ts` (required unless `streamTopLevel`, and then
 *   only outside DMs), `markdown_text` or `chunks`, and outside DMs `recipient_team_id` and
 *   `recipient_user_id` (`missing_recipient_team_id` / `missing_recipient_user_id`). Answers
 *   `{ channel, ts }` and creates the bot's message in the streaming state.
 * - appendStream (tier 4): `channel`, `ts`, `markdown_text` or `chunks`
 *   (`markdown_text_or_chunks_required`); the text is appended to the message.
 * - stopStream (tier 2): `channel`, `ts`, optional `markdown_text` / `chunks` and `blocks`
 *   (shown under the text); ends streaming; answers `{ channel, ts, message }`.
 * - Both content forms in one call: `cannot_provide_both_markdown_text_and_chunks`; the other
 *   form than the stream started with: `streaming_mode_mismatch`; chunks other than
 *   `markdown_text`, `task_update`, `plan_update`, `blocks` (the @slack/types chunk union), or
 *   malformed: `invalid_chunks`; text over `maxStreamTextChars` (12,000): `invalid_arguments`
 *   (the fake's choice: the docs give the limit, not its error).
 * - A stream that is stopped, expired (`streamExpiryMs`, ~5 min; optional idle expiry) or a
 *   message that never streamed: `message_not_in_streaming_state`; stopped by the user:
 *   `stopped_by_user` on append; another author's message: `message_not_owned_by_app`.
 * - `streaming: false`: every one of them is `streamingRefusal` (default `unknown_method`);
 *   channel types outside `streamingChannelTypes`, or a channel with `streaming: false`:
 *   `channel_type_not_supported`.
 *
 * Every accepted call is a {@link StreamWrite} on the message's {@link FakeSlackStream} and a
 * revision of the message (the text so far).
 */
import { parseBlocks } from './blocks.ts';
import { channelType } from './scopes.ts';
import type { FakeSlackStream, StreamingSettings, StreamState, StreamWrite } from './stream-types.ts';
import type { FakeSlackMessage } from './types.ts';
import type { MethodTable } from './web-api.ts';
import { isObject, type Json, jsonParam, required, SlackApiError, str } from './wire.ts';
import type { Workspace } from './workspace.ts';

export const DEFAULT_STREAMING: Readonly<StreamingSettings> = {
  streaming: true,
  streamingRefusal: 'unknown_method',
  streamingChannelTypes: ['channel', 'group', 'im'],
  streamTopLevel: false,
  streamExpiryMs: 5 * 60_000,
  streamIdleExpiryMs: undefined,
  maxStreamTextChars: 12_000,
  assistantStatusTimeoutMs: 2 * 60_000,
  assistantStatusChannelTypes: ['channel', 'group', 'im'],
};

/** The settings from options (or the defaults). */
export function streamingSettings(o: Partial<StreamingSettings>): StreamingSettings {
  const settings: StreamingSettings = {
    ...DEFAULT_STREAMING,
    streamingChannelTypes: [...DEFAULT_STREAMING.streamingChannelTypes],
    assistantStatusChannelTypes: [...DEFAULT_STREAMING.assistantStatusChannelTypes],
  };
  applyStreaming(settings, o, false);
  return settings;
}

/**
 * Changes `settings` in place from `patch`.
 * @param resetUndefined a key given as undefined goes back to its default (setStreaming); otherwise it is ignored (options).
 */
export function applyStreaming(
  settings: StreamingSettings,
  patch: Partial<StreamingSettings>,
  resetUndefined: boolean,
): void {
  const target = settings as unknown as Record<string, unknown>;
  for (const key of Object.keys(DEFAULT_STREAMING) as Array<keyof StreamingSettings>) {
    if (!(key in patch)) continue;
    const value = patch[key];
    if (value !== undefined) target[key] = Array.isArray(value) ? [...value] : value;
    else if (resetUndefined) target[key] = DEFAULT_STREAMING[key];
  }
}

/** The streaming side of a message; its state is read at the Slack-side clock. */
class StreamRecord implements FakeSlackStream {
  mode: 'markdown_text' | 'chunks' | undefined = undefined;
  readonly writes: StreamWrite[] = [];
  readonly tasks: unknown[] = [];
  stopBlocks: unknown[] | undefined = undefined;
  // Private fields stay out of JSON and of test diffs.
  readonly #now: () => number;
  readonly #settings: StreamingSettings;
  #ended: { state: Exclude<StreamState, 'streaming'>; at: number } | undefined;

  constructor(
    ws: Workspace,
    readonly recipientTeamId: string | undefined,
    readonly recipientUserId: string | undefined,
    readonly startedAt: number,
  ) {
    this.#now = ws.now;
    this.#settings = ws.streaming;
  }

  get state(): StreamState {
    return this.#settle()?.state ?? 'streaming';
  }

  get endedAt(): number | undefined {
    return this.#settle()?.at;
  }

  /** Ends a stream that is still streaming. */
  end(state: 'stopped' | 'stopped_by_user', at: number): void {
    if (!this.#settle()) this.#ended = { state, at };
  }

  /** How the stream ended, if it has: fixes an expiry once the clock has passed it. */
  #settle(): { state: Exclude<StreamState, 'streaming'>; at: number } | undefined {
    if (this.#ended) return this.#ended;
    const { streamExpiryMs, streamIdleExpiryMs } = this.#settings;
    const lastWrite = this.writes.at(-1)?.at ?? this.startedAt;
    const expiresAt = Math.min(
      this.startedAt + streamExpiryMs,
      streamIdleExpiryMs === undefined ? Infinity : lastWrite + streamIdleExpiryMs,
    );
    if (this.#now() >= expiresAt) this.#ended = { state: 'expired', at: expiresAt };
    return this.#ended;
  }

  toJSON(): Json {
    return {
      state: this.state,
      mode: this.mode,
      recipientTeamId: this.recipientTeamId,
      recipientUserId: this.recipientUserId,
      startedAt: this.startedAt,
      endedAt: this.endedAt,
      writes: this.writes,
      tasks: this.tasks,
      stopBlocks: this.stopBlocks,
    };
  }
}

export function streamingMethods(ws: Workspace): MethodTable {
  return {
    'chat.startStream': (p) => start(ws, p),
    'chat.appendStream': (p) => append(ws, p),
    'chat.stopStream': (p) => stop(ws, p),
  };
}

/** Whether a message is being streamed now (chat.update and chat.delete refuse it). */
export function isStreaming(m: FakeSlackMessage): boolean {
  return m.stream?.state === 'streaming';
}

/** See {@link FakeSlack.stopStreamByUser}. @throws Error when the message is not streaming. */
export function stopStreamByUser(ws: Workspace, channel: string, ts: string): void {
  const m = ws.message(channel, ts);
  if (!m || !(m.stream instanceof StreamRecord) || !isStreaming(m))
    throw new Error(`stopStreamByUser: ${channel}/${ts} is not a message in the streaming state`);
  m.stream.end('stopped_by_user', ws.now());
}

/** @throws SlackApiError the configured refusal when the workspace does not stream. */
function refuseIfOff(ws: Workspace, method: string): void {
  const { streaming, streamingRefusal } = ws.streaming;
  if (!streaming)
    throw new SlackApiError(streamingRefusal, streamingRefusal === 'unknown_method' ? { req_method: method } : {});
}

function start(ws: Workspace, p: Json): Json {
  refuseIfOff(ws, 'chat.startStream');
  ws.limits.takeWindowSlot('startStream');
  const channel = ws.channelOf(p, 'channel');
  const type = channelType(channel);
  if (channel.streaming !== undefined)
    throw new SlackApiError(channel.streaming === false ? 'channel_type_not_supported' : channel.streaming);
  if (!ws.streaming.streamingChannelTypes.includes(type)) throw new SlackApiError('channel_type_not_supported');
  ws.requireMember(channel);
  const given = str(p, 'thread_ts');
  // Missing thread_ts: `invalid_arguments` is the fake's choice (Slack's error for it is undocumented).
  if (!given && !(ws.streaming.streamTopLevel && type !== 'im')) required(p, 'thread_ts');
  const threadTs = ws.threadParent(channel.id, given);
  const recipientTeamId = str(p, 'recipient_team_id') || undefined;
  const recipientUserId = str(p, 'recipient_user_id') || undefined;
  if (type !== 'im') {
    if (!recipientTeamId) throw new SlackApiError('missing_recipient_team_id');
    if (!recipientUserId) throw new SlackApiError('missing_recipient_user_id');
  }
  if (recipientUserId !== undefined && !ws.users.has(recipientUserId)) throw new SlackApiError('user_not_found');
  const c = content(ws, p);
  const m = ws.storeMessage({
    channel: channel.id,
    user: ws.botUserId,
    botId: ws.botId,
    text: c.text,
    blocks: c.blocks.length ? c.blocks : undefined,
    threadTs,
    files: [],
    via: 'chat.startStream',
    method: 'chat.startStream',
  });
  const stream = new StreamRecord(ws, recipientTeamId, recipientUserId, ws.now());
  stream.mode = c.mode;
  stream.tasks.push(...c.tasks);
  stream.writes.push({ method: 'chat.startStream', text: c.text, chunks: c.chunks, at: ws.now() });
  m.stream = stream;
  return { channel: channel.id, ts: m.ts };
}

function append(ws: Workspace, p: Json): Json {
  const { m, stream } = openStream(ws, p, 'chat.appendStream');
  const c = content(ws, p);
  if (c.mode === undefined) throw new SlackApiError('markdown_text_or_chunks_required');
  write(ws, m, stream, 'chat.appendStream', c);
  return { channel: m.channel, ts: m.ts };
}

function stop(ws: Workspace, p: Json): Json {
  const { m, stream } = openStream(ws, p, 'chat.stopStream');
  const c = content(ws, p);
  const blocks = parseBlocks(p.blocks);
  write(ws, m, stream, 'chat.stopStream', { ...c, blocks: [...c.blocks, ...(blocks ?? [])] });
  stream.stopBlocks = blocks;
  stream.end('stopped', ws.now());
  return { channel: m.channel, ts: m.ts, message: ws.wire(m) };
}

/** The bot's message `ts` in `channel` and its stream, still streaming. @throws SlackApiError. */
function openStream(
  ws: Workspace,
  p: Json,
  method: 'chat.appendStream' | 'chat.stopStream',
): { m: FakeSlackMessage; stream: StreamRecord } {
  refuseIfOff(ws, method);
  ws.limits.takeWindowSlot(method === 'chat.appendStream' ? 'appendStream' : 'stopStream');
  const channel = ws.channelOf(p, 'channel');
  const m = ws.message(channel.id, required(p, 'ts', 'message_not_found'));
  if (!m || m.deleted) throw new SlackApiError('message_not_found');
  if (m.user !== ws.botUserId) throw new SlackApiError('message_not_owned_by_app');
  const stream = m.stream;
  if (!(stream instanceof StreamRecord)) throw new SlackApiError('message_not_in_streaming_state');
  // Only appendStream documents stopped_by_user.
  if (stream.state === 'stopped_by_user' && method === 'chat.appendStream') throw new SlackApiError('stopped_by_user');
  if (stream.state !== 'streaming') throw new SlackApiError('message_not_in_streaming_state');
  return { m, stream };
}

/** What one call adds. */
interface Content {
  /** Markdown added to the message text. */
  text: string;
  chunks: unknown[] | undefined;
  blocks: unknown[];
  tasks: unknown[];
  /** Undefined when the call carries nothing. */
  mode: 'markdown_text' | 'chunks' | undefined;
}

/** Appends one call's content to the message and records the write. @throws SlackApiError `streaming_mode_mismatch`. */
function write(
  ws: Workspace,
  m: FakeSlackMessage,
  stream: StreamRecord,
  method: StreamWrite['method'],
  c: Content,
): void {
  if (c.mode !== undefined && stream.mode !== undefined && c.mode !== stream.mode)
    throw new SlackApiError('streaming_mode_mismatch');
  stream.mode ??= c.mode;
  m.text += c.text;
  if (c.blocks.length) m.blocks = [...(m.blocks ?? []), ...c.blocks];
  stream.tasks.push(...c.tasks);
  stream.writes.push({ method, text: c.text, chunks: c.chunks, at: ws.now() });
  m.revisions.push({ text: m.text, blocks: m.blocks, at: ws.now(), method });
  m.mentions = ws.mentionsOf(m);
}

const TASK_STATUSES = new Set(['pending', 'in_progress', 'complete', 'error']);

const argumentError = (message: string) =>
  new SlackApiError('invalid_arguments', { response_metadata: { messages: [`[ERROR] ${message}`] } });
const chunkError = (message: string, pointer: string) =>
  new SlackApiError('invalid_chunks', {
    response_metadata: { messages: [`[ERROR] ${message} [json-pointer:${pointer}]`] },
  });

/** The `markdown_text` or `chunks` of a call. @throws SlackApiError. */
function content(ws: Workspace, p: Json): Content {
  const max = ws.streaming.maxStreamTextChars;
  const markdown = str(p, 'markdown_text');
  const raw = p.chunks === undefined || p.chunks === '' ? undefined : jsonParam(p, 'chunks');
  if (raw !== undefined && !Array.isArray(raw)) throw chunkError('must be an array', '/chunks');
  // @slack/web-api's ChatStreamer sends `chunks: []` when it has nothing left: no content.
  const chunks = raw !== undefined && raw.length > 0 ? raw : undefined;
  if (markdown && chunks) throw new SlackApiError('cannot_provide_both_markdown_text_and_chunks');
  if (markdown) {
    if (markdown.length > max) throw argumentError(`markdown_text must be at most ${max} characters`);
    return { text: markdown, chunks: undefined, blocks: [], tasks: [], mode: 'markdown_text' };
  }
  if (!chunks) return { text: '', chunks: undefined, blocks: [], tasks: [], mode: undefined };
  const c: Content = { text: '', chunks, blocks: [], tasks: [], mode: 'chunks' };
  chunks.forEach((chunk: unknown, i) => {
    const at = `/chunks/${i}`;
    if (!isObject(chunk)) throw chunkError('must be an object', at);
    switch (chunk.type) {
      case 'markdown_text':
        if (typeof chunk.text !== 'string') throw chunkError('must be a string', `${at}/text`);
        if (chunk.text.length > max) throw chunkError(`must be at most ${max} characters`, `${at}/text`);
        c.text += chunk.text;
        break;
      case 'task_update':
        if (typeof chunk.id !== 'string' || typeof chunk.title !== 'string' || !TASK_STATUSES.has(String(chunk.status)))
          throw chunkError('needs id, title and a status of pending, in_progress, complete, error', at);
        c.tasks.push(chunk);
        break;
      case 'plan_update':
        if (typeof chunk.title !== 'string') throw chunkError('needs a title', at);
        c.tasks.push(chunk);
        break;
      case 'blocks':
        c.blocks.push(...(parseBlocks(chunk.blocks) ?? []));
        break;
      default:
        throw chunkError(`unsupported type: ${String(chunk.type)}`, `${at}/type`);
    }
  });
  return c;
}
