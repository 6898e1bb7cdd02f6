/**
 * The root span of a request Slack sends the bot (ops/tracing.ts `traceInvocation`): its name
 * by the request's kind (`slack.command`, `slack.event`, `slack.action`, `slack.view`,
 * `slack.shortcut`, `slack.request` for another) and what it is (the command, the event's type,
 * the payload's type), never its text.
 */
import type { Attributes } from '@opentelemetry/api';

/** What kind of request a `type` of an interactivity payload is. */
const PAYLOAD_KINDS: Record<string, string> = {
  block_actions: 'slack.action',
  block_suggestion: 'slack.action',
  view_submission: 'slack.view',
  view_closed: 'slack.view',
  shortcut: 'slack.shortcut',
  message_action: 'slack.shortcut',
};

/**
 * The root span's name and attributes for a Bolt request body (a slash command's form, an
 * Events API envelope, an interactivity payload).
 */
export function slackInvocation(body: unknown): [string, Attributes] {
  const b = (typeof body === 'object' && body !== null ? body : {}) as {
    command?: unknown;
    event?: { type?: unknown };
    type?: unknown;
    team_id?: unknown;
  };
  const attributes: Attributes = { 'genbot.platform': 'slack' };
  if (typeof b.command === 'string') return ['slack.command', { ...attributes, 'genbot.command': b.command }];
  if (typeof b.event?.type === 'string') return ['slack.event', { ...attributes, 'slack.event.type': b.event.type }];
  const type = typeof b.type === 'string' ? b.type : undefined;
  return [
    (type && PAYLOAD_KINDS[type]) ?? 'slack.request',
    type ? { ...attributes, 'slack.payload.type': type } : attributes,
  ];
}
