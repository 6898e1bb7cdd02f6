/**
 * Slack → app over HTTP: request signing, and slash commands POSTed to the app the way Slack
 * sends them (form-encoded, signed with `x-slack-request-timestamp` / `x-slack-signature`),
 * waiting at most Slack's ack deadline (3 s) and recording what Slack would show the user as a
 * failure of the app.
 */
import { createHmac } from 'node:crypto';
import type { SignOptions, SlashCommandInput, SlashCommandResult } from './inbound-types.ts';
import { issueResponseUrl } from './response-url.ts';
import { issueTrigger } from './triggers.ts';
import type { PlatformFailure } from './types.ts';
import { escapeSlack } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** `'v0=' + hex(HMAC-SHA256(secret, 'v0:' + timestampSec + ':' + rawBody))`: Slack's request signature. */
export function signSlackRequest(signingSecret: string, timestampSec: number, rawBody: string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestampSec}:${rawBody}`).digest('hex')}`;
}

/** What came back from one signed POST to the app. */
export interface SignedResult {
  /** HTTP status; undefined on timeout or connection failure. */
  status: number | undefined;
  body: string;
  /** Real-time ms from sending to the complete answer. */
  ms: number;
  timedOut: boolean;
}

/** True when `sign` asks for a deliberately wrong signature (such a request is refused by design, not a platform failure). */
export function isFaulty(sign: SignOptions): boolean {
  return sign.signingSecret !== undefined || sign.timestampSec !== undefined || sign.signature !== undefined;
}

/**
 * POSTs `rawBody` to the app, signed (or mis-signed per `sign`), waiting at most `ackTimeoutMs`.
 * @param headers extra request headers (e.g. `x-slack-retry-num`).
 */
export async function sendSigned(
  ws: Workspace,
  botUrl: string,
  rawBody: string,
  contentType: string,
  sign: SignOptions = {},
  headers: Record<string, string> = {},
): Promise<SignedResult> {
  const timestampSec = sign.timestampSec ?? Math.floor(Date.now() / 1000);
  const signature = sign.signature ?? signSlackRequest(sign.signingSecret ?? ws.signingSecret, timestampSec, rawBody);
  const url = new URL(sign.path ?? '/slack/events', botUrl);
  const started = performance.now();
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': contentType,
        'x-slack-request-timestamp': String(timestampSec),
        'x-slack-signature': signature,
        'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
        ...headers,
      },
      body: rawBody,
      signal: AbortSignal.timeout(ws.ackTimeoutMs),
    });
    const body = await res.text();
    return { status: res.status, body, ms: performance.now() - started, timedOut: false };
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    return {
      status: undefined,
      body: error instanceof Error ? error.message : String(error),
      ms: performance.now() - started,
      timedOut,
    };
  }
}

/** The platform failure Slack would show for an ack of a correctly signed request, if any. */
export function ackFailure(ws: Workspace, command: string, result: SignedResult): PlatformFailure | undefined {
  if (result.timedOut) return { kind: 'operation_timeout', command, detail: `no ack within ${ws.ackTimeoutMs} ms` };
  if (result.status === undefined) return { kind: 'dispatch_failed', command, detail: result.body };
  if (result.status !== 200) return { kind: 'http_error', command, detail: `HTTP ${result.status}` };
  return undefined;
}

/**
 * The fields of a slash command as Slack sends them (the form body over HTTP, the envelope
 * payload in Socket Mode), with a fresh `response_url` of this fake issued for it.
 * @throws Error for an unknown channel or user (a test mistake: Slack only sends real ones).
 */
export function slashCommandFields(
  ws: Workspace,
  caller: string,
  input: SlashCommandInput,
): { fields: Record<string, string>; responseUrl: string; triggerId: string } {
  const channelId = input.channel_id ?? [...ws.channels.keys()][0] ?? '';
  const userId = input.user_id ?? [...ws.users.keys()][0] ?? '';
  const channel = ws.channels.get(channelId);
  const user = ws.users.get(userId);
  if (!channel) throw new Error(`${caller}: unknown channel ${channelId}`);
  if (!user) throw new Error(`${caller}: unknown user ${userId}`);
  const responseUrl = issueResponseUrl(ws, input.command, channelId, userId).url;
  const triggerId = issueTrigger(ws, userId);
  const fields = {
    token: ws.verificationToken,
    team_id: input.team_id ?? ws.teamOf(channelId),
    team_domain: ws.teamDomain,
    channel_id: channelId,
    channel_name: channel.isPrivate ? 'privategroup' : channel.name,
    user_id: userId,
    user_name: user.name,
    command: input.command,
    text: escapeSlack(input.text),
    api_app_id: ws.appId,
    is_enterprise_install: 'false',
    response_url: responseUrl,
    trigger_id: triggerId,
  };
  return { fields, responseUrl, triggerId };
}

/** See {@link FakeSlack.sendSlashCommand}. */
export async function sendSlashCommand(
  ws: Workspace,
  botUrl: string,
  input: SlashCommandInput,
  sign: SignOptions = {},
): Promise<SlashCommandResult> {
  const { fields, responseUrl, triggerId } = slashCommandFields(ws, 'sendSlashCommand', input);
  const rawBody = new URLSearchParams(fields).toString();
  const result = await sendSigned(ws, botUrl, rawBody, 'application/x-www-form-urlencoded', sign);
  const failure = isFaulty(sign) ? undefined : ackFailure(ws, input.command, result);
  if (failure) ws.platformFailures.push(failure);
  return {
    status: result.status,
    body: result.body,
    ackMs: result.ms,
    ackedInTime: result.status === 200 && !result.timedOut,
    responseUrl,
    triggerId,
    rawBody,
    failure,
  };
}
