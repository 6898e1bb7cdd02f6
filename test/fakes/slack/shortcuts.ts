/**
 * Message shortcuts: the `message_action` interaction payload Slack sends when a user picks one
 * of the app's message shortcuts in a message's "More actions" menu (docs.slack.dev/reference/
 * interaction-payloads/shortcuts-interaction-payload; @slack/bolt's MessageShortcut type). Like a
 * button press, a POST to the app's Request URL, `application/x-www-form-urlencoded` with one
 * `payload` field holding the JSON, acked within 3 s.
 *
 * The payload: `type: 'message_action'`, `token` (the verification token), `action_ts`, `team {
 * id, domain }`, `user { id, username, name, team_id }`, `channel { id, name }` (`directmessage`
 * in a DM, `privategroup` for a private channel, as in slash commands), `is_enterprise_install:
 * false`, `enterprise: null`, `callback_id` (the shortcut's, from the app's configuration),
 * `trigger_id`, `response_url` (a fresh one of this fake: ephemeral or in-channel messages, as
 * for a slash command), `message_ts` and `message` (the message object, with `thread_ts` for a
 * reply in a thread).
 *
 * A shortcut Slack could not send throws: an unknown user or channel, a user who cannot see the
 * conversation, an unknown or deleted message, an ephemeral message (Slack keeps no copy: its
 * menu has no app shortcuts), a `callback_id` that is not 1–255 word characters, or an app
 * without the `commands` scope (shortcuts come with it). The `trigger_id` is issued by views.ts,
 * so the app can open a modal with it (views.open) within 3 s.
 */
import { randomUUID } from 'node:crypto';
import { ackFailure, isFaulty, sendSigned } from './inbound.ts';
import type { SignOptions } from './inbound-types.ts';
import { issueResponseUrl } from './response-url.ts';
import type { SocketMode } from './socket-mode.ts';
import { issueTrigger } from './triggers.ts';
import type { PlatformFailure } from './types.ts';
import { formatTs, type Json } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** A user picks a message shortcut on a message. */
export interface MessageShortcutInput {
  /** Who picks it (a known user who can see the message). */
  user: string;
  channel: string;
  /** The ts of the message it is used on. */
  messageTs: string;
  /** The shortcut's `callback_id` (as the app's manifest declares it). */
  callbackId: string;
}

/** What came back from the app for a message shortcut over HTTP. */
export interface MessageShortcutResult {
  /** HTTP status of the ack; undefined when there was none within the deadline or the app was unreachable. */
  status: number | undefined;
  body: string;
  /** Real-time ms from sending to the complete answer. */
  ackMs: number;
  /** HTTP 200 within Slack's deadline (3 s). */
  ackedInTime: boolean;
  /** The `message_action` payload as sent. */
  payload: Record<string, unknown>;
  responseUrl: string;
  triggerId: string;
  failure: PlatformFailure | undefined;
}

/** The `message_action` payload of one use. @throws Error when no user could use it (see the file's comment). */
function shortcutPayload(
  ws: Workspace,
  input: MessageShortcutInput,
): { payload: Json; responseUrl: string; triggerId: string } {
  const caller = 'sendMessageShortcut';
  const channel = ws.channels.get(input.channel);
  if (!channel) throw new Error(`${caller}: unknown channel ${input.channel}`);
  const user = ws.users.get(input.user);
  if (!user) throw new Error(`${caller}: unknown user ${input.user}`);
  const sees = channel.isIm ? channel.imUser === input.user : !channel.members || channel.members.includes(input.user);
  if (!sees) throw new Error(`${caller}: ${input.user} is not in ${channel.id} and cannot see its messages`);
  const message = ws.message(channel.id, input.messageTs);
  if (!message || message.deleted) throw new Error(`${caller}: no message ${input.messageTs} in ${channel.id}`);
  if (!/^[\w.-]{1,255}$/.test(input.callbackId)) throw new Error(`${caller}: invalid callback_id ${input.callbackId}`);
  // Shortcuts are an app feature of the `commands` scope: without it Slack lists none of the app's.
  if (!ws.scopes.includes('commands'))
    throw new Error(`${caller}: the app lacks the commands scope, so Slack shows no shortcut`);
  const response = issueResponseUrl(ws, 'message_action', channel.id, input.user);
  const triggerId = issueTrigger(ws, input.user);
  const payload: Json = {
    type: 'message_action',
    token: ws.verificationToken,
    action_ts: formatTs(Math.floor(ws.now() * 1000)),
    team: { id: ws.teamId, domain: ws.teamDomain },
    user: { id: user.id, username: user.name, name: user.name, team_id: ws.teamId },
    channel: {
      id: channel.id,
      name: channel.isIm ? 'directmessage' : channel.isPrivate ? 'privategroup' : channel.name,
    },
    is_enterprise_install: false,
    enterprise: null,
    callback_id: input.callbackId,
    trigger_id: triggerId,
    response_url: response.url,
    message_ts: message.ts,
    message: ws.wire(message),
  };
  return { payload, responseUrl: response.url, triggerId };
}

/** See {@link FakeSlack.sendMessageShortcut}. */
export async function sendMessageShortcut(
  ws: Workspace,
  botUrl: string,
  input: MessageShortcutInput,
  sign: SignOptions = {},
): Promise<MessageShortcutResult> {
  const { payload, responseUrl, triggerId } = shortcutPayload(ws, input);
  const rawBody = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const result = await sendSigned(ws, botUrl, rawBody, 'application/x-www-form-urlencoded', sign);
  const failed = isFaulty(sign) ? undefined : ackFailure(ws, 'message_action', result);
  const failure = failed && { ...failed, detail: `${failed.detail} (shortcut ${input.callbackId})` };
  if (failure) ws.platformFailures.push(failure);
  return {
    status: result.status,
    body: result.body,
    ackMs: result.ms,
    ackedInTime: result.status === 200 && !result.timedOut,
    payload,
    responseUrl,
    triggerId,
    failure,
  };
}

/** What came back from the app for a message shortcut over Socket Mode (an `interactive` envelope). */
export interface SocketMessageShortcutResult {
  ackedInTime: boolean;
  /** The `message_action` payload as sent. */
  payload: Record<string, unknown>;
  responseUrl: string;
  triggerId: string;
  failure: PlatformFailure | undefined;
}

/** See {@link FakeSlack.sendSocketMessageShortcut}. */
export async function sendSocketMessageShortcut(
  ws: Workspace,
  socketMode: SocketMode,
  input: MessageShortcutInput,
): Promise<SocketMessageShortcutResult> {
  const { payload, responseUrl, triggerId } = shortcutPayload(ws, input);
  const base = { payload, responseUrl, triggerId };
  const fail = (failure: PlatformFailure): SocketMessageShortcutResult => {
    ws.platformFailures.push(failure);
    return { ...base, ackedInTime: false, failure };
  };
  const live = socketMode.liveSocket('sendSocketMessageShortcut', undefined);
  if (!live)
    return fail({ kind: 'dispatch_failed', command: 'message_action', detail: 'no open Socket Mode connection' });
  const envelopeId = randomUUID();
  const envelope = await socketMode.sendEnvelope(live, envelopeId, 'interactive', payload, {
    accepts_response_payload: false,
  });
  if (!envelope.ack || envelope.ack.late)
    return fail({ kind: 'operation_timeout', command: 'message_action', detail: `no ack of envelope ${envelopeId}` });
  return { ...base, ackedInTime: true, failure: undefined };
}
