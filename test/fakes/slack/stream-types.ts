/**
 * Public types of the fake's native streaming (`chat.startStream` / `appendStream` /
 * `stopStream`, streaming.ts) and AI loading states (`assistant.threads.setStatus`,
 * assistant.ts): the settings a test picks and what the fake records. Re-exported by
 * test/fakes/slack.ts.
 */

/** Slack's `channel_type` of a conversation: public channel, private channel, DM. */
export type ChannelTypeName = 'channel' | 'group' | 'im';

/**
 * How the fake treats streaming and loading states; every field is also an option of
 * {@link FakeSlackOptions} and can be changed later with {@link FakeSlack.setStreaming}.
 */
export interface StreamingSettings {
  /**
   * Whether the workspace takes the streaming methods at all. False: each of them is refused
   * with {@link streamingRefusal} (a workspace or app without the feature). Default true.
   */
  streaming: boolean;
  /** The error of every streaming call when {@link streaming} is false: `unknown_method` (default), `feature_not_enabled`, `method_deprecated`, … */
  streamingRefusal: string;
  /** Conversation types chat.startStream takes; elsewhere `channel_type_not_supported`. Default all: `channel`, `group`, `im`. */
  streamingChannelTypes: ChannelTypeName[];
  /**
   * Whether chat.startStream may omit `thread_ts` in channels (newer docs: "Omit it to stream a
   * top-level message … only supported in channels"). Default false: `thread_ts` is required
   * everywhere (the method's documented required argument, and @slack/web-api's types).
   */
  streamTopLevel: boolean;
  /**
   * A stream leaves the streaming state this many ms after chat.startStream, whatever is
   * appended: later appends and stops are `message_not_in_streaming_state`. Undocumented by
   * Slack; about 5 minutes in practice (python-slack-sdk #1859, node-slack-sdk #2702,
   * vercel/chat #607). Default 300,000.
   */
  streamExpiryMs: number;
  /**
   * A stream also expires after this many ms without a write (some developers report ~30 s idle:
   * OasAIStudio/symphony-ts #1078; unconfirmed). Default undefined: no idle expiry.
   */
  streamIdleExpiryMs: number | undefined;
  /** Longest `markdown_text` (and markdown chunk text) of one call, in UTF-16 code units (docs: "Limit this field to 12,000 characters"). Default 12,000. */
  maxStreamTextChars: number;
  /** A loading status disappears this many ms after it was set if the app posts nothing (docs: "A two minute timeout applies"). Default 120,000. */
  assistantStatusTimeoutMs: number;
  /** Conversation types assistant.threads.setStatus takes; elsewhere `method_not_supported_for_channel_type`. Default all. */
  assistantStatusChannelTypes: ChannelTypeName[];
}

/** Where a streamed message stands. */
export type StreamState =
  /** chat.startStream succeeded; appends are taken. */
  | 'streaming'
  /** chat.stopStream ended it. */
  | 'stopped'
  /** Slack closed it ({@link StreamingSettings.streamExpiryMs} / idle expiry). */
  | 'expired'
  /** The user stopped it in Slack's client ({@link FakeSlack.stopStreamByUser}): appends are `stopped_by_user`. */
  | 'stopped_by_user';

/** One accepted call on a stream. */
export interface StreamWrite {
  method: 'chat.startStream' | 'chat.appendStream' | 'chat.stopStream';
  /** The markdown this call added to the message (`markdown_text`, or the text of its `markdown_text` chunks), as sent; `''` when none. */
  text: string;
  /** The `chunks` as sent, when the call used them. */
  chunks: unknown[] | undefined;
  /** Fake-clock ms. */
  at: number;
}

/** The streaming side of a message created by chat.startStream ({@link FakeSlackMessage.stream}). */
export interface FakeSlackStream {
  /** Where it stands now (read at the Slack-side clock: an expired stream says `expired` without any call). */
  readonly state: StreamState;
  /** How content arrives: fixed by the first call that carries any (`streaming_mode_mismatch` for the other). */
  readonly mode: 'markdown_text' | 'chunks' | undefined;
  readonly recipientTeamId: string | undefined;
  readonly recipientUserId: string | undefined;
  /** Fake-clock ms of chat.startStream. */
  readonly startedAt: number;
  /** Fake-clock ms when it left the streaming state (stop, expiry, user stop); undefined while streaming. */
  readonly endedAt: number | undefined;
  /** Every accepted call, oldest first: start, appends, stop. Refused calls are only in {@link FakeSlack.calls}. */
  readonly writes: readonly StreamWrite[];
  /** `task_update` / `plan_update` chunks received, in order (shown by Slack as task cards, not as text). */
  readonly tasks: readonly unknown[];
  /** The `blocks` chat.stopStream put under the text. */
  readonly stopBlocks: unknown[] | undefined;
}

/** One accepted `assistant.threads.setStatus` call. */
export interface AssistantStatus {
  channel: string;
  threadTs: string;
  /** `''` clears the status. */
  status: string;
  loadingMessages: string[] | undefined;
  /** Fake-clock ms. */
  at: number;
}
