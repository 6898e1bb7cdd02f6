/**
 * The FakeSlack facade: {@link FakeSlackCore} (server, setup, inspection) and
 * {@link FakeSlackAgentSurface} (AI apps, App Home) plus what Slack sends to the app — slash
 * commands, events and button presses, over HTTP (signed) or Socket Mode —, the builders of
 * the events people write, and the streaming / loading-status settings and records. See
 * test/fakes/slack.ts for the overview.
 */
import { FakeSlackAgentSurface } from './agent-facade.ts';
import { shownStatus } from './assistant.ts';
import { FakeSlackCore } from './core.ts';
import {
  botMessageEvent,
  channelMessageEvent,
  imMessageEvent,
  mentionEvent,
  messageChangedEvent,
  messageDeletedEvent,
  ownMessageEvent,
} from './events.ts';
import { sendEvent, verifyUrl } from './events-api.ts';
import { type SignedResult, sendSigned, sendSlashCommand } from './inbound.ts';
import type {
  SendEventOptions,
  SendEventResult,
  SignOptions,
  SlackEvent,
  SlashCommandInput,
  SlashCommandResult,
  SocketEventOptions,
  SocketEventResult,
  SocketSlashCommandResult,
  UrlVerificationResult,
  UserMessageInput,
} from './inbound-types.ts';
import type {
  BlockActionInput,
  BlockActionRecord,
  BlockActionResult,
  SocketBlockActionResult,
} from './interaction-types.ts';
import { sendBlockAction, sendSocketBlockAction } from './interactivity.ts';
import {
  type MessageShortcutInput,
  type MessageShortcutResult,
  type SocketMessageShortcutResult,
  sendMessageShortcut,
  sendSocketMessageShortcut,
} from './shortcuts.ts';
import type { AssistantStatus, StreamingSettings } from './stream-types.ts';
import { applyStreaming, stopStreamByUser } from './streaming.ts';
import type { FakeSlackOptions } from './types.ts';
import { type UninstallEvents, uninstallApp } from './uninstall.ts';
import {
  type FakeSlackView,
  submitSocketView,
  submitView,
  type ViewSubmissionInput,
  type ViewSubmissionResult,
  viewsOf,
} from './views.ts';

/** The fake Slack. Start with {@link FakeSlack.start}; stop with {@link FakeSlack.close}. */
export class FakeSlack extends FakeSlackAgentSurface {
  /**
   * Starts a fake on 127.0.0.1 with a random port.
   * @throws when the port cannot be bound.
   */
  static async start(options: FakeSlackOptions = {}): Promise<FakeSlack> {
    const { server, port } = await FakeSlackCore.listen();
    const fake = new FakeSlack(server, port, options);
    fake.attach();
    return fake;
  }

  // ------------------------------------------------------------ slash commands (Slack → app)

  /**
   * Sends a slash command to the app the way Slack does: the real form-encoded body (`token`,
   * `team_id`, `team_domain`, `channel_id`, `channel_name`, `user_id`, `user_name`, `command`,
   * `text`, `api_app_id`, `is_enterprise_install`, `response_url`, `trigger_id`), signed with
   * `x-slack-request-timestamp` / `x-slack-signature`, POSTed to `botUrl` + `/slack/events`.
   * Like Slack, it waits at most 3 s (`ackTimeoutMs`) for the ack; a late, failed or non-200 ack
   * of a correctly signed command is recorded in {@link platformFailures}. A fresh `response_url`
   * of this fake is issued for the command.
   * @param botUrl the app's origin, e.g. `http://127.0.0.1:PORT`.
   * @param sign deliberate signing faults (wrong secret, stale timestamp, forged signature).
   * @throws Error for an unknown channel or user (a test mistake: Slack only sends real ones).
   */
  sendSlashCommand(botUrl: string, input: SlashCommandInput, sign: SignOptions = {}): Promise<SlashCommandResult> {
    return sendSlashCommand(this.ws, botUrl, input, sign);
  }

  /**
   * POSTs `rawBody` to the app, signed (or mis-signed per `sign`), waiting at most `ackTimeoutMs`.
   * @returns the status (undefined on timeout or connection failure), body and real-time duration.
   */
  sendSigned(botUrl: string, rawBody: string, contentType: string, sign: SignOptions = {}): Promise<SignedResult> {
    return sendSigned(this.ws, botUrl, rawBody, contentType, sign);
  }

  /**
   * Sends a slash command over Socket Mode the way Slack does: an envelope
   * `{ envelope_id, type: 'slash_commands', payload, accepts_response_payload: true }` whose
   * payload holds the same fields as {@link sendSlashCommand}'s form body (strings; a fresh
   * `response_url` of this fake is issued). It goes over the newest open connection unless
   * `options.connectionId` names one (Slack spreads envelopes over an app's connections; which one
   * it picks is not specified). Like Slack, it waits at most 3 s (`ackTimeoutMs`) for a message
   * with the same `envelope_id`; a missing or late ack is recorded in {@link platformFailures} as
   * `operation_timeout` (a late ack is still stored on the envelope, `late: true`), and a command
   * with no open connection as `dispatch_failed`.
   * @throws Error for an unknown channel or user, or an unknown or closed `options.connectionId`.
   */
  sendSocketSlashCommand(
    input: SlashCommandInput,
    options: { connectionId?: number } = {},
  ): Promise<SocketSlashCommandResult> {
    return this.socketMode.sendSlashCommand(input, options);
  }

  /**
   * Sends `{ type: 'disconnect', reason, debug_info }` on one connection, as Slack does before it
   * recycles a connection (`warning`, `refresh_requested`) or when Socket Mode was turned off
   * (`link_disabled`). @slack/socket-mode answers by closing the socket and, unless it is shutting
   * down, opening a new one through `apps.connections.open`.
   * @param connectionId default: the newest open connection.
   * @returns the id of the connection it was sent on.
   * @throws Error when there is no such open connection.
   */
  sendSocketDisconnect(
    reason: 'warning' | 'refresh_requested' | 'link_disabled' = 'refresh_requested',
    connectionId?: number,
  ): number {
    return this.socketMode.sendDisconnect(reason, connectionId);
  }

  // ------------------------------------------------------------ button presses (Slack → app)

  /**
   * A user presses a button of a message: POSTs the `block_actions` payload to the app the way
   * Slack does (a signed `application/x-www-form-urlencoded` body `payload=<JSON>`, to `botUrl`
   * + `/slack/events` unless `sign.path` says otherwise; interactivity.ts lists its fields),
   * with a fresh `response_url` of this fake tied to the message and a `trigger_id`. Waits at
   * most 3 s (`ackTimeoutMs`) for HTTP 200; a late, failed or non-200 ack of a correctly signed
   * press is recorded in {@link platformFailures} (`command: 'block_actions'`). Every press is
   * recorded in {@link blockActions}.
   * @throws Error when no user could make that press: unknown user or channel, a user who
   *   cannot see the conversation, no such message, or no button with that `action_id` (and
   *   `value` / `blockId` when given) in its blocks.
   */
  sendBlockAction(botUrl: string, input: BlockActionInput, sign: SignOptions = {}): Promise<BlockActionResult> {
    return sendBlockAction(this.ws, botUrl, input, sign);
  }

  /**
   * The same press over Socket Mode: an envelope `{ envelope_id, type: 'interactive', payload:
   * <block_actions>, accepts_response_payload: false }` on the newest open connection (or
   * `options.connectionId`), acked like {@link sendSocketSlashCommand} (a missing ack is
   * `operation_timeout`, no open connection `dispatch_failed`).
   * @throws Error as {@link sendBlockAction}, or for an unknown or closed `options.connectionId`.
   */
  sendSocketBlockAction(
    input: BlockActionInput,
    options: { connectionId?: number } = {},
  ): Promise<SocketBlockActionResult> {
    return sendSocketBlockAction(this.ws, this.socketMode, input, options);
  }

  /**
   * A user picks one of the app's message shortcuts on a message ("More actions" menu): POSTs the
   * `message_action` payload the way Slack does (signed form `payload=<JSON>`, shortcuts.ts lists
   * its fields), with a fresh `response_url` and a `trigger_id`; acked as {@link sendBlockAction}
   * (failures recorded in {@link platformFailures}, `command: 'message_action'`).
   * @throws Error when no user could do that: unknown user or channel, a user who cannot see the
   *   conversation, no such message (or a deleted or ephemeral one), a malformed `callbackId`.
   */
  sendMessageShortcut(
    botUrl: string,
    input: MessageShortcutInput,
    sign: SignOptions = {},
  ): Promise<MessageShortcutResult> {
    return sendMessageShortcut(this.ws, botUrl, input, sign);
  }

  /**
   * The same shortcut over Socket Mode: an `interactive` envelope holding the `message_action`
   * payload on the newest open connection, acked like {@link sendSocketBlockAction}.
   * @throws Error as {@link sendMessageShortcut}.
   */
  sendSocketMessageShortcut(input: MessageShortcutInput): Promise<SocketMessageShortcutResult> {
    return sendSocketMessageShortcut(this.ws, this.socketMode, input);
  }

  /**
   * The modals the app opened (views.open, which takes a `trigger_id` this fake sent, once and
   * within 3 s, and checks the view as Slack does: views.ts), oldest first, with their state.
   */
  get views(): readonly FakeSlackView[] {
    return viewsOf(this.ws);
  }

  /**
   * The user submits an open modal: POSTs the `view_submission` payload (signed form
   * `payload=<JSON>`, the view with `state.values` of what was typed) and waits at most 3 s for
   * the ack; `response_action: 'errors'` keeps the modal open (its `errors` recorded), `update`
   * keeps it open showing the ack's view (checked as views.open's), any other ack closes it. A
   * late or failed ack (or a refused update's view) is recorded in {@link platformFailures}.
   * @param input.values by block_id, then action_id.
   * @throws Error when the view is not open, or Slack's client would not submit the values (a
   *   required input empty, a value outside the input's lengths, an input the view lacks).
   */
  submitView(botUrl: string, input: ViewSubmissionInput, sign: SignOptions = {}): Promise<ViewSubmissionResult> {
    return submitView(this.ws, botUrl, input, sign);
  }

  /** The same submission over Socket Mode (an `interactive` envelope accepting a response payload). @throws as {@link submitView}. */
  submitSocketView(input: ViewSubmissionInput): Promise<ViewSubmissionResult> {
    return submitSocketView(this.ws, this.socketMode, input);
  }

  /** Every button press sent to the app (HTTP or Socket Mode), oldest first, with its ack. */
  get blockActions(): readonly BlockActionRecord[] {
    return this.ws.blockActions;
  }

  // ------------------------------------------------------------ streaming and loading statuses

  /** The streaming and loading-status settings now (a copy). */
  get streamingSettings(): StreamingSettings {
    return structuredClone(this.ws.streaming);
  }

  /**
   * Changes streaming and loading-status settings from now on (partial: the rest stays; a key
   * given as `undefined` goes back to its default), e.g. `{ streaming: false,
   * streamingRefusal: 'feature_not_enabled' }`. Expiry settings apply to open streams too.
   */
  setStreaming(patch: Partial<StreamingSettings>): void {
    applyStreaming(this.ws.streaming, patch, true);
  }

  /**
   * The user stops a streaming message in Slack's client: it leaves the streaming state (state
   * `stopped_by_user`); chat.appendStream is then `stopped_by_user`, chat.stopStream
   * `message_not_in_streaming_state`.
   * @throws Error when the message is not streaming.
   */
  stopStreamByUser(channel: string, ts: string): void {
    stopStreamByUser(this.ws, channel, ts);
  }

  /** Every accepted assistant.threads.setStatus, oldest first (also the ones that cleared a status). */
  get assistantStatuses(): readonly AssistantStatus[] {
    return this.ws.assistantStatuses;
  }

  /**
   * The loading status users see in a thread now (`threadTs`: the parent's ts or a reply's):
   * the latest one set there unless it was cleared (`''`), is older than
   * `assistantStatusTimeoutMs` (2 minutes), or the bot has posted in the thread since.
   */
  assistantStatus(channel: string, threadTs: string): AssistantStatus | undefined {
    return shownStatus(this.ws, channel, threadTs);
  }

  // ------------------------------------------------------------ events (Slack → app)

  /**
   * POSTs an event to the app the way the Events API does: a signed JSON `event_callback`
   * (events-api.ts) to `botUrl` + `/slack/events`, with `X-Slack-Retry-Num` /
   * `X-Slack-Retry-Reason` when `options.retryNum` is given (send a retry with the same
   * `eventId`). Waits at most 3 s for HTTP 200; a late, failed or non-200 ack of a correctly
   * signed event is recorded in {@link platformFailures} (`command`: the event type).
   * @param event from a builder ({@link mentionEvent}, {@link imMessageEvent}, …).
   * @throws Error when Slack would not send it: the app is not subscribed to the event
   *   (`botEvents`), lacks the subscription's scope, or the bot is not in the channel.
   */
  sendEvent(botUrl: string, event: SlackEvent, options: SendEventOptions = {}): Promise<SendEventResult> {
    return sendEvent(this.ws, botUrl, event, options);
  }

  /**
   * A deaf Socket Mode (`true`) or a hearing one again (`false`): while deaf, every event sent
   * over a socket ({@link sendSocketEvent}), new sockets too, is lost on the way (its message
   * stays in the channel; the result says `operation_timeout`), while the sockets stay open and
   * answer pings — a connection that looks healthy and delivers nothing.
   */
  deafenSockets(deaf = true): void {
    this.socketMode.deaf = deaf;
  }

  /** Events lost by a deaf Socket Mode ({@link deafenSockets}). */
  get swallowedSocketEvents(): number {
    return this.socketMode.swallowedEvents;
  }

  /**
   * Sends an event over Socket Mode: an envelope `{ envelope_id, type: 'events_api', payload:
   * <event_callback>, accepts_response_payload: false, retry_attempt, retry_reason }` on the
   * newest open connection (or `options.connectionId`), and resolves with the ack like
   * {@link sendSocketSlashCommand} (a missing ack is `operation_timeout`, no connection
   * `dispatch_failed`).
   * @throws Error as {@link sendEvent}, or for an unknown or closed `options.connectionId`.
   */
  sendSocketEvent(event: SlackEvent, options: SocketEventOptions = {}): Promise<SocketEventResult> {
    return this.socketMode.sendEvent(event, options);
  }

  /**
   * Sends the `url_verification` request Slack sends when the Request URL is set
   * (`{ token, challenge, type: 'url_verification' }`, signed); `verified` when the app
   * answered HTTP 200 with the challenge.
   */
  verifyUrl(botUrl: string, sign: SignOptions = {}): Promise<UrlVerificationResult> {
    return verifyUrl(this.ws, botUrl, sign);
  }

  /**
   * The workspace removes the app (uninstall.ts): the bot token is refused `token_revoked` from
   * now on, no other event of the workspace is sent (but retries), and the two events Slack
   * sends then are returned, for the test to deliver ({@link sendEvent}, {@link sendSocketEvent})
   * in the order it chooses.
   */
  uninstallApp(): UninstallEvents {
    return uninstallApp(this.ws);
  }

  /** Whether the workspace removed the app ({@link uninstallApp}). */
  get uninstalled(): boolean {
    return this.ws.uninstalled;
  }

  // ------------------------------------------------------------ what people write (events.ts)

  /**
   * A user mentions the bot in a channel (in a thread with `threadTs`): stores the message and
   * returns the `app_mention` event. `<@BOTUSERID> ` is put first unless the text mentions the
   * bot already; `files` are attached (`files`, `upload: false`).
   * @throws Error for an unknown channel or user, a DM, a user not in the channel, or an unknown thread.
   */
  mentionEvent(input: UserMessageInput): SlackEvent {
    return mentionEvent(this.ws, input);
  }

  /**
   * The DM's user writes to the bot ({@link openIm}): stores the message and returns the
   * `message` event (`channel_type: 'im'`; with files `subtype: 'file_share'`).
   * @throws Error when the channel is not a DM or `user` is not its user.
   */
  imMessageEvent(input: UserMessageInput): SlackEvent {
    return imMessageEvent(this.ws, input);
  }

  /** A user writes in a channel (not to the bot): the `message` event of `message.channels` / `message.groups`. @throws Error for a DM. */
  channelMessageEvent(input: UserMessageInput): SlackEvent {
    return channelMessageEvent(this.ws, input);
  }

  /** Another app posts (`subtype: 'bot_message'`, `bot_id`, no `user`): an event the bot must ignore. */
  botMessageEvent(input: {
    channel: string;
    text: string;
    botId?: string;
    username?: string;
    threadTs?: string;
  }): SlackEvent {
    return botMessageEvent(this.ws, input);
  }

  /** The `message` event Slack sends subscribers for one of the bot's own messages (`bot_id`, `user`: the bot). @throws Error for a message that is not the bot's. */
  ownMessageEvent(input: { channel: string; ts: string }): SlackEvent {
    return ownMessageEvent(this.ws, input);
  }

  /** A user edits their message: updates it and returns `message_changed` (`hidden`, `message`, `previous_message`). */
  messageChangedEvent(input: { channel: string; ts: string; text: string }): SlackEvent {
    return messageChangedEvent(this.ws, input);
  }

  /** A user deletes their message: deletes it and returns `message_deleted` (`hidden`, `deleted_ts`, `previous_message`). */
  messageDeletedEvent(input: { channel: string; ts: string }): SlackEvent {
    return messageDeletedEvent(this.ws, input);
  }
}
