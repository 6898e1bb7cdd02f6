/**
 * A workspace removing the app (docs.slack.dev/reference/events/app_uninstalled, tokens_revoked;
 * docs.slack.dev/reference/methods/auth.revoke for the error): {@link uninstallApp} revokes the
 * bot token — from then on every Web API call with it is refused `token_revoked` ("Authentication
 * token is for a deleted user or workspace or the app has been removed", Slack's documented error
 * for a removed app's token) — and returns the two events Slack sends then, for the test to
 * deliver in the order it wants (Slack guarantees none):
 *
 * - `app_uninstalled`: `{ type: 'app_uninstalled' }` (the event holds nothing else; the envelope's
 *   `team_id` names the workspace).
 * - `tokens_revoked`: `{ type: 'tokens_revoked', tokens: { oauth: [<user ids>], bot: [<bot user id>] } }`
 *   (user ids, never the tokens).
 *
 * Both go out in the usual `event_callback` envelope (events-api.ts: `token`, `team_id`,
 * `api_app_id`, `event_id`, `event_time`, `authorizations`), over HTTP or Socket Mode; neither
 * needs a scope. After the uninstall Slack sends that workspace no new event; the fake refuses
 * to send one (events-api.ts `checkDeliverable`), except one already on its way: an event whose
 * `event_ts` is from before the uninstall (built before {@link uninstallApp}), or a retry of an
 * event delivered before (`retryNum` with its `eventId`): how the app may still hear of the
 * workspace (the fake's choice: Slack documents nothing either way). Not modelled: user tokens (the bot has none), reinstalling with a new token.
 */
import type { SlackEvent } from './inbound-types.ts';
import type { Workspace } from './workspace.ts';

/** The events of an uninstall (the subscriptions scopes.ts lists with no scope). */
export const UNINSTALL_EVENT_TYPES: readonly string[] = ['app_uninstalled', 'tokens_revoked'];

/** The two events an uninstall sends. */
export interface UninstallEvents {
  appUninstalled: SlackEvent;
  tokensRevoked: SlackEvent;
}

/** See {@link FakeSlack.uninstallApp}. */
export function uninstallApp(ws: Workspace): UninstallEvents {
  ws.uninstalled = true;
  ws.uninstalledAt = ws.now();
  return {
    appUninstalled: { type: 'app_uninstalled' },
    tokensRevoked: { type: 'tokens_revoked', tokens: { oauth: [], bot: [ws.botUserId] } },
  };
}

/**
 * Why Slack would not send `event` now (the workspace uninstalled the app, and it is neither an
 * uninstall event nor a retry of an earlier delivery), or undefined.
 */
export function uninstalledProblem(ws: Workspace, event: SlackEvent, retryOf?: string): string | undefined {
  if (!ws.uninstalled || UNINSTALL_EVENT_TYPES.includes(event.type)) return undefined;
  if (retryOf !== undefined && ws.eventTimestamps.has(retryOf)) return undefined;
  const sentAtMs = typeof event.event_ts === 'string' ? Number(event.event_ts) * 1000 : Number.NaN;
  if (Math.floor(sentAtMs) <= (ws.uninstalledAt ?? 0)) return undefined;
  return `${ws.teamId} uninstalled the app: Slack sends it no ${event.type} event`;
}
