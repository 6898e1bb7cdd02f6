/**
 * The Events API: events sent to the app as signed JSON `event_callback` requests (HTTP) or in
 * `events_api` envelopes (Socket Mode, socket-mode.ts), and the `url_verification` handshake.
 *
 * The wrapper holds what Slack sends (a real capture: hackage slack-web
 * tests/golden/SlackWebhookEvent/message_file_share.json; the sample in slackapi/node-slack-sdk
 * packages/socket-mode/src/SocketModeClient.test.ts): `token` (the verification token),
 * `team_id`, `api_app_id`, `event`, `type: 'event_callback'`, `event_id` (`Ev…`), `event_time`
 * (seconds), `authorizations: [{ enterprise_id: null, team_id, user_id: <bot user>, is_bot:
 * true, is_enterprise_install: false }]`, `is_ext_shared_channel: false`, `event_context`.
 *
 * Slack sends only events the app subscribes to, and only when the token has the
 * subscription's scope, the bot is in the channel (scopes.ts) and, for the AI-app events, the
 * app has the experience that sends them (agent.ts); the sender throws an Error
 * otherwise, since real Slack would simply never send it and a test expecting the bot to react
 * would be wrong. A retry (`retryNum`) carries `X-Slack-Retry-Num` and `X-Slack-Retry-Reason`
 * (`http_timeout`, `too_many_redirects`, `connection_failed`, `ssl_error`, `http_error`,
 * `unknown_error`: docs.slack.dev/apis/events-api, "Retries"); the fake does not retry on its
 * own — a test sends the retry, with the same `eventId`, and it goes out with a later
 * `x-slack-request-timestamp` (so a new signature) than the event's previous delivery. Like Slack, it waits at most 3 s for
 * HTTP 200; anything else of a correctly signed event is a platform failure.
 */
import { randomBytes } from 'node:crypto';
import { agentEventProblem } from './agent.ts';
import { ackFailure, isFaulty, sendSigned } from './inbound.ts';
import type {
  EventDelivery,
  SendEventOptions,
  SendEventResult,
  SignOptions,
  SlackEvent,
  UrlVerificationResult,
} from './inbound-types.ts';
import { SUBSCRIPTION_SCOPES, subscriptionOf } from './scopes.ts';
import { uninstalledProblem } from './uninstall.ts';
import { isObject, type Json } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** A fresh `event_id`: `Ev` and 10 characters. */
export function newEventId(): string {
  return `Ev${randomBytes(5).toString('hex').toUpperCase()}`;
}

/**
 * Checks that Slack would deliver `event` to this app.
 * @returns the subscription it arrives under.
 * @throws Error when the app is not subscribed, lacks the subscription's scope, or the bot is not in the channel;
 *   when the workspace uninstalled the app (uninstall.ts), unless `retryOf` names an event delivered before.
 */
export function checkDeliverable(ws: Workspace, event: SlackEvent, caller: string, retryOf?: string): string {
  const gone = uninstalledProblem(ws, event, retryOf);
  if (gone) throw new Error(`${caller}: ${gone}`);
  const subscription = subscriptionOf(event);
  if (!ws.botEvents.includes(subscription)) {
    throw new Error(
      `${caller}: the app is not subscribed to the ${subscription} event (its bot events: ${ws.botEvents.join(', ') || 'none'}); Slack would not send it`,
    );
  }
  const scope = SUBSCRIPTION_SCOPES[subscription];
  if (scope && !ws.scopes.includes(scope)) {
    throw new Error(
      `${caller}: the ${subscription} subscription needs the scope ${scope}, which the token lacks; Slack would not send it`,
    );
  }
  const problem = agentEventProblem(ws, event);
  if (problem) throw new Error(`${caller}: ${problem}; Slack would not send it`);
  const channel = typeof event.channel === 'string' ? ws.channels.get(event.channel) : undefined;
  if (channel && !channel.isIm && channel.botIsMember === false) {
    throw new Error(`${caller}: the bot is not in ${channel.id}; Slack sends no ${subscription} event from there`);
  }
  return subscription;
}

/** The `event_callback` body of one delivery. */
export function eventCallback(
  ws: Workspace,
  event: SlackEvent,
  eventId: string,
  eventTime?: number,
  teamId?: string,
): Json {
  const ts = typeof event.event_ts === 'string' ? Number(event.event_ts) : NaN;
  // The workspace of the event's channel; an org-wide installation names its enterprise.
  const team = typeof event.channel === 'string' ? ws.teamOf(event.channel) : (teamId ?? ws.teamId);
  const orgWide = [...ws.oauth.installations.values()].find(
    (i) => i.isEnterpriseInstall && i.enterpriseId === ws.enterpriseOf(team),
  );
  return {
    token: ws.verificationToken,
    team_id: team,
    ...(orgWide ? { enterprise_id: orgWide.enterpriseId, is_enterprise_install: true } : {}),
    api_app_id: ws.appId,
    event,
    type: 'event_callback',
    event_id: eventId,
    event_time: eventTime ?? (Number.isFinite(ts) ? Math.floor(ts) : Math.floor(ws.now() / 1000)),
    authorizations: [
      {
        enterprise_id: orgWide?.enterpriseId ?? null,
        team_id: team,
        user_id: ws.botUserId,
        is_bot: true,
        is_enterprise_install: Boolean(orgWide),
      },
    ],
    is_ext_shared_channel: false,
    event_context: `1-${event.type}-${team}-${typeof event.channel === 'string' ? event.channel : ''}`,
  };
}

/** Records one delivery of an event. */
export function recordDelivery(ws: Workspace, d: Omit<EventDelivery, 'at'>): void {
  ws.eventDeliveries.push({ ...d, at: ws.now() });
}

/** See {@link FakeSlack.sendEvent}. */
export async function sendEvent(
  ws: Workspace,
  botUrl: string,
  event: SlackEvent,
  o: SendEventOptions = {},
): Promise<SendEventResult> {
  const retryOf = o.retryNum === undefined ? undefined : o.eventId;
  const subscription = checkDeliverable(ws, event, 'sendEvent', retryOf);
  const eventId = o.eventId ?? newEventId();
  const rawBody = JSON.stringify(eventCallback(ws, event, eventId, o.eventTime, o.teamId));
  const headers: Record<string, string> =
    o.retryNum === undefined
      ? {}
      : { 'x-slack-retry-num': String(o.retryNum), 'x-slack-retry-reason': o.retryReason ?? 'http_timeout' };
  const sign = o.sign ?? {};
  // A retry is a new request made later (after the 3 s deadline at the earliest): never the same
  // timestamp, hence never the same signature, as an earlier delivery of the event — even when a
  // test sends it within the same second (then one second after the previous delivery).
  const nowSec = Math.floor(Date.now() / 1000);
  const previous = ws.eventTimestamps.get(eventId);
  const timestampSec = sign.timestampSec ?? (previous === undefined ? nowSec : Math.max(nowSec, previous + 1));
  ws.eventTimestamps.set(eventId, timestampSec);
  const result = await sendSigned(ws, botUrl, rawBody, 'application/json', { ...sign, timestampSec }, headers);
  const failed = isFaulty(sign) ? undefined : ackFailure(ws, event.type, result);
  const failure = failed && { ...failed, eventId };
  if (failure) ws.platformFailures.push(failure);
  const ackedInTime = result.status === 200 && !result.timedOut;
  recordDelivery(ws, { eventId, type: event.type, subscription, via: 'http', retryNum: o.retryNum, ackedInTime });
  return { status: result.status, ackMs: result.ms, body: result.body, eventId, ackedInTime, rawBody, failure };
}

/** See {@link FakeSlack.verifyUrl}. */
export async function verifyUrl(ws: Workspace, botUrl: string, sign: SignOptions = {}): Promise<UrlVerificationResult> {
  const challenge = randomBytes(24).toString('base64url');
  const rawBody = JSON.stringify({ token: ws.verificationToken, challenge, type: 'url_verification' });
  const result = await sendSigned(ws, botUrl, rawBody, 'application/json', sign);
  let answered: unknown;
  try {
    const parsed: unknown = JSON.parse(result.body);
    answered = isObject(parsed) ? parsed.challenge : undefined;
  } catch {
    answered = result.body.trim() === challenge ? challenge : new URLSearchParams(result.body).get('challenge');
  }
  return {
    status: result.status,
    body: result.body,
    challenge,
    verified: result.status === 200 && answered === challenge,
  };
}
