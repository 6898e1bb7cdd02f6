/**
 * Button presses: the `block_actions` interaction payload Slack sends when a user presses a
 * Block Kit button of a message (docs.slack.dev/reference/interaction-payloads/
 * block_actions-payload; "Handling user interaction": a POST to the app's Request URL,
 * `application/x-www-form-urlencoded` with one `payload` field holding the JSON).
 *
 * The payload has the fields of real captures (several dumped on GitHub, e.g. 2023–2025 ones
 * with `enterprise: null`, `is_enterprise_install: false`) and of @slack/bolt's BlockAction
 * type: `type: 'block_actions'`, `user { id, username, name, team_id }`, `api_app_id`, `token`
 * (the verification token), `container { type: 'message', message_ts, channel_id,
 * is_ephemeral: false, thread_ts? }`, `trigger_id`, `team { id, domain }`, `enterprise: null`,
 * `is_enterprise_install: false`, `channel { id, name }` (`directmessage` in a DM,
 * `privategroup` for a private channel, as in slash commands), `message` (the message object,
 * every block with a `block_id`: Slack generates one where the app gave none), `state { values:
 * {} }`, `response_url` (a fresh one of this fake, tied to the message: response-url.ts),
 * `actions: [{ action_id, block_id, text, value?, style?, type: 'button', action_ts }]`; a press
 * of a `feedback_buttons` element's 👍 or 👎 (in a `context_actions` block) is
 * `{ action_id, block_id, text, value, type: 'feedback_buttons', action_ts }` with the pressed
 * button's text and value (@slack/bolt's FeedbackButtonsAction; pressables.ts).
 * A button of an ephemeral message (chat.postEphemeral, or a response_url's ephemeral answer)
 * can be pressed by its one user: `container.is_ephemeral: true` and no `message` (as in real
 * captures). `container.thread_ts` for a reply comes from one description, not from Slack's
 * reference (assumed).
 *
 * Over Socket Mode the same payload travels in an envelope `{ envelope_id, type: 'interactive',
 * payload, accepts_response_payload: false }` (the sample of node-slack-sdk
 * packages/socket-mode/src/SocketModeClient.test.ts). Like Slack, the fake waits 3 s for the
 * ack (HTTP 200, or a message with the envelope_id); anything else is a platform failure.
 *
 * A press Slack could not produce throws: an unknown user or channel, a deleted or unknown
 * message, a user who cannot see the conversation, or no button with that `action_id` (and
 * `value` / `blockId` when given) in the message's blocks (an `actions` block's elements, a
 * section's accessory, or a `feedback_buttons` element's two buttons, told apart by `value`).
 */
import { randomUUID } from 'node:crypto';
import { ackFailure, isFaulty, sendSigned } from './inbound.ts';
import type { SignOptions } from './inbound-types.ts';
import type {
  BlockActionInput,
  BlockActionRecord,
  BlockActionResult,
  SocketBlockActionResult,
} from './interaction-types.ts';
import { blocksWithIds, buttonsOf, type Holder } from './pressables.ts';
import { issueResponseUrl } from './response-url.ts';
import type { SocketMode } from './socket-mode.ts';
import { issueTrigger } from './triggers.ts';
import type { FakeSlackChannel, FakeSlackMessage, PlatformFailure } from './types.ts';
import { formatTs, type Json } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** A button found in a message. */
interface Pressed {
  channel: FakeSlackChannel;
  holder: Holder;
  /** The stored message; undefined for an ephemeral one. */
  message: FakeSlackMessage | undefined;
  blockId: string;
  button: Json;
}

/** The button a user presses. @throws Error when Slack could not send such a press. */
function findButton(ws: Workspace, input: BlockActionInput, caller: string): Pressed {
  const channel = ws.channels.get(input.channel);
  if (!channel) throw new Error(`${caller}: unknown channel ${input.channel}`);
  if (!ws.users.has(input.user)) throw new Error(`${caller}: unknown user ${input.user}`);
  const sees = channel.isIm ? channel.imUser === input.user : !channel.members || channel.members.includes(input.user);
  if (!sees) throw new Error(`${caller}: ${input.user} is not in ${channel.id} and cannot see its messages`);
  const stored = ws.message(channel.id, input.messageTs);
  const message = stored && !stored.deleted ? stored : undefined;
  const ephemeral = message
    ? undefined
    : ws.ephemerals.findLast((e) => e.channel === channel.id && e.ts === input.messageTs && e.shown);
  if (ephemeral && ephemeral.user !== input.user)
    throw new Error(
      `${caller}: the ephemeral message ${input.messageTs} in ${channel.id} is shown to ${ephemeral.user} only; ${input.user} cannot see it`,
    );
  const holder: Holder | undefined =
    message ??
    (ephemeral && { channel: channel.id, ts: ephemeral.ts, threadTs: ephemeral.threadTs, blocks: ephemeral.blocks });
  if (!holder) throw new Error(`${caller}: no message ${input.messageTs} in ${channel.id}`);
  const buttons = buttonsOf(holder);
  const match = buttons.find(
    ({ blockId, button }) =>
      button.action_id === input.actionId &&
      (input.value === undefined || button.value === input.value) &&
      (input.blockId === undefined || blockId === input.blockId),
  );
  if (!match) {
    const wanted = [
      `action_id ${input.actionId}`,
      ...(input.value === undefined ? [] : [`value ${input.value}`]),
      ...(input.blockId === undefined ? [] : [`block_id ${input.blockId}`]),
    ].join(', ');
    const present =
      buttons
        .map(({ blockId, button }) => `${String(button.action_id)} (block ${blockId}, value ${String(button.value)})`)
        .join('; ') || 'none';
    throw new Error(
      `${caller}: message ${holder.ts} in ${channel.id} has no button with ${wanted}, so no user could press it (its buttons: ${present})`,
    );
  }
  return { channel, holder, message, ...match };
}

/** The `block_actions` payload of one press, with a fresh response_url and trigger_id. */
function blockActionPayload(
  ws: Workspace,
  input: BlockActionInput,
  pressed: Pressed,
): { payload: Json; responseUrl: string; triggerId: string } {
  const { channel, holder, message, blockId, button } = pressed;
  const user = ws.users.get(input.user)!;
  const response = issueResponseUrl(ws, 'block_actions', channel.id, input.user);
  response.messageTs = holder.ts;
  if (!message) response.ephemeral = true;
  const triggerId = issueTrigger(ws, input.user);
  const blocks = blocksWithIds(holder);
  const payload: Json = {
    type: 'block_actions',
    user: { id: user.id, username: user.name, name: user.name, team_id: user.team ?? ws.teamId },
    api_app_id: ws.appId,
    token: ws.verificationToken,
    container: {
      type: 'message',
      message_ts: holder.ts,
      channel_id: channel.id,
      is_ephemeral: !message,
      ...(message?.threadTs ? { thread_ts: message.threadTs } : {}),
    },
    trigger_id: triggerId,
    team: { id: ws.teamOf(channel.id), domain: ws.teamDomain },
    enterprise: null,
    is_enterprise_install: false,
    channel: {
      id: channel.id,
      name: channel.isIm ? 'directmessage' : channel.isPrivate ? 'privategroup' : channel.name,
    },
    // An ephemeral message is not in the payload (Slack keeps no copy of it).
    ...(message ? { message: { ...ws.wire(message), ...(blocks ? { blocks } : {}) } } : {}),
    state: { values: {} },
    response_url: response.url,
    actions: [
      {
        action_id: button.action_id,
        block_id: blockId,
        text: button.text,
        ...(button.value === undefined ? {} : { value: button.value }),
        ...(button.style === undefined ? {} : { style: button.style }),
        // A feedback_buttons element's press names the element's type (Bolt's FeedbackButtonsAction).
        type: button.type === 'feedback_buttons' ? 'feedback_buttons' : 'button',
        action_ts: formatTs(Math.floor(ws.now() * 1000)),
      },
    ],
  };
  return { payload, responseUrl: response.url, triggerId };
}

/** Records one press. */
function record(
  ws: Workspace,
  input: BlockActionInput,
  pressed: Pressed,
  via: 'http' | 'socket',
  status: number | undefined,
  ackedInTime: boolean,
): void {
  const r: BlockActionRecord = {
    via,
    user: input.user,
    channel: pressed.channel.id,
    messageTs: pressed.holder.ts,
    actionId: input.actionId,
    blockId: pressed.blockId,
    value: typeof pressed.button.value === 'string' ? pressed.button.value : undefined,
    status,
    ackedInTime,
    at: ws.now(),
  };
  ws.blockActions.push(r);
}

/** See {@link FakeSlack.sendBlockAction}. */
export async function sendBlockAction(
  ws: Workspace,
  botUrl: string,
  input: BlockActionInput,
  sign: SignOptions = {},
): Promise<BlockActionResult> {
  const pressed = findButton(ws, input, 'sendBlockAction');
  const { payload, responseUrl, triggerId } = blockActionPayload(ws, input, pressed);
  const rawBody = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const result = await sendSigned(ws, botUrl, rawBody, 'application/x-www-form-urlencoded', sign);
  const failed = isFaulty(sign) ? undefined : ackFailure(ws, 'block_actions', result);
  const failure = failed && { ...failed, detail: `${failed.detail} (button ${input.actionId})` };
  if (failure) ws.platformFailures.push(failure);
  const ackedInTime = result.status === 200 && !result.timedOut;
  record(ws, input, pressed, 'http', result.status, ackedInTime);
  return {
    status: result.status,
    body: result.body,
    ackMs: result.ms,
    ackedInTime,
    payload,
    rawBody,
    responseUrl,
    triggerId,
    failure,
  };
}

/** See {@link FakeSlack.sendSocketBlockAction}. */
export async function sendSocketBlockAction(
  ws: Workspace,
  socketMode: SocketMode,
  input: BlockActionInput,
  options: { connectionId?: number } = {},
): Promise<SocketBlockActionResult> {
  const pressed = findButton(ws, input, 'sendSocketBlockAction');
  const live = socketMode.liveSocket('sendSocketBlockAction', options.connectionId);
  const { payload, responseUrl, triggerId } = blockActionPayload(ws, input, pressed);
  const envelopeId = randomUUID();
  const base = { envelopeId, payload, responseUrl, triggerId };
  const fail = (failure: PlatformFailure, connectionId: number | undefined): SocketBlockActionResult => {
    ws.platformFailures.push(failure);
    record(ws, input, pressed, 'socket', undefined, false);
    return { ...base, connectionId, ackedInTime: false, ackMs: undefined, ackPayload: undefined, failure };
  };
  if (!live)
    return fail(
      {
        kind: 'dispatch_failed',
        command: 'block_actions',
        detail: `no open Socket Mode connection (button ${input.actionId})`,
      },
      undefined,
    );
  const envelope = await socketMode.sendEnvelope(live, envelopeId, 'interactive', payload, {
    accepts_response_payload: false,
  });
  const ack = envelope.ack;
  if (!ack || ack.late) {
    return fail(
      {
        kind: 'operation_timeout',
        command: 'block_actions',
        detail: `no ack of envelope ${envelopeId} within ${ws.ackTimeoutMs} ms (button ${input.actionId})`,
      },
      live.record.id,
    );
  }
  record(ws, input, pressed, 'socket', undefined, true);
  return {
    ...base,
    connectionId: live.record.id,
    ackedInTime: true,
    ackMs: ack.ms,
    ackPayload: ack.payload,
    failure: undefined,
  };
}
