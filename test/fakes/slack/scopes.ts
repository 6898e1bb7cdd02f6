/**
 * OAuth scopes and event subscriptions, in one place.
 *
 * - Each Web API method's bot scope (docs.slack.dev/reference/methods/<method>, "Required
 *   scopes"); conversations.* need the `*:read` / `*:history` scope of the channel's type
 *   (`channels:` public, `groups:` private, `im:` DM). A call without it is answered, as Slack
 *   does, HTTP 200 `{ ok: false, error: 'missing_scope', needed: 'chat:write', provided:
 *   'commands,users:read' }` (both comma-separated; the shape of `needed` / `provided` in
 *   @slack/web-api's generated response types, e.g. ChatPostMessageResponse).
 * - Every Web API answer to the bot token carries `X-OAuth-Scopes` (the token's scopes; what
 *   @slack/web-api exposes as `response_metadata.scopes`) and, for a method that needs one,
 *   `X-Accepted-OAuth-Scopes`.
 * - A bot event subscription needs a scope too (docs.slack.dev/reference/events/<event>):
 *   `app_mention` → `app_mentions:read`, `message.im` → `im:history`, `message.channels` →
 *   `channels:history`, … (none for `app_home_opened` and the AI-app events). Slack only
 *   delivers an event the app is subscribed to.
 */
import type { FakeSlackChannel } from './types.ts';
import type { Json } from './wire.ts';
import type { Workspace } from './workspace.ts';

/** The bot scope of each Web API method the fake serves, or a function of the call's channel; null: none needed. */
export const METHOD_SCOPES: Readonly<Record<string, string | null | { family: 'read' | 'history' }>> = {
  'api.test': null,
  'auth.test': null,
  // apps.connections.open takes the app-level token (its scope, connections:write, is not modelled).
  'apps.connections.open': null,
  'chat.postMessage': 'chat:write',
  'chat.update': 'chat:write',
  'chat.delete': 'chat:write',
  'chat.postEphemeral': 'chat:write',
  'chat.startStream': 'chat:write',
  'chat.appendStream': 'chat:write',
  'chat.stopStream': 'chat:write',
  'assistant.threads.setStatus': 'chat:write',
  'assistant.threads.setSuggestedPrompts': 'assistant:write',
  'assistant.threads.setTitle': 'assistant:write',
  'files.getUploadURLExternal': 'files:write',
  'files.completeUploadExternal': 'files:write',
  'files.info': 'files:read',
  'users.info': 'users:read',
  'users.list': 'users:read',
  'conversations.info': { family: 'read' },
  'conversations.history': { family: 'history' },
  'conversations.replies': { family: 'history' },
  'conversations.members': { family: 'read' },
  // A DM with one user (docs.slack.dev/reference/methods/conversations.open: im:write for a DM).
  'conversations.open': 'im:write',
  // Opening a modal needs no scope (docs.slack.dev/reference/methods/views.open), only a valid trigger.
  'views.open': null,
  // Publishing a Home tab needs none either (docs.slack.dev/reference/methods/views.publish).
  'views.publish': null,
};

/**
 * Other scopes a method also accepts: assistant.threads.setStatus takes `assistant:write` too,
 * "for the time being" (docs.slack.dev changelog 2026-03-05, "Set status method scope update").
 */
export const ALTERNATIVE_SCOPES: Readonly<Record<string, readonly string[]>> = {
  'assistant.threads.setStatus': ['assistant:write'],
};

/** Posting with chat.postMessage to a public channel the bot is not a member of needs this scope. */
export const CHAT_WRITE_PUBLIC = 'chat:write.public';

/** Every scope a method of the fake needs, plus `commands` and the event subscriptions' scopes (not `chat:write.public`). */
export const DEFAULT_BOT_SCOPES: readonly string[] = [
  'commands',
  'chat:write',
  'assistant:write',
  'files:write',
  'files:read',
  'users:read',
  'app_mentions:read',
  'channels:read',
  'groups:read',
  'im:read',
  'mpim:read',
  'channels:history',
  'groups:history',
  'im:history',
  'mpim:history',
  'im:write',
];

/**
 * The scope each bot event subscription needs; null: none (the event's page says "No scopes
 * required", or lists none: `app_home_opened`, `app_context_changed`, the assistant view's
 * `assistant_thread_*`). Which of the AI-app events Slack sends depends on the app's view
 * (agent.ts).
 */
export const SUBSCRIPTION_SCOPES: Readonly<Record<string, string | null>> = {
  app_mention: 'app_mentions:read',
  'message.channels': 'channels:history',
  'message.groups': 'groups:history',
  'message.im': 'im:history',
  'message.mpim': 'mpim:history',
  app_home_opened: null,
  app_context_changed: null,
  assistant_thread_started: null,
  assistant_thread_context_changed: null,
  // Sent when the workspace removes the app (uninstall.ts).
  app_uninstalled: null,
  tokens_revoked: null,
};

/** Every event subscription the fake can deliver. */
export const DEFAULT_BOT_EVENTS: readonly string[] = Object.keys(SUBSCRIPTION_SCOPES);

/** Slack's `channel_type` of a channel: `channel` (public), `group` (private), `im`. */
export function channelType(channel: FakeSlackChannel): 'channel' | 'group' | 'im' {
  return channel.isIm ? 'im' : channel.isPrivate ? 'group' : 'channel';
}

/** The scope prefix of a channel type. */
const SCOPE_PREFIX = { channel: 'channels', group: 'groups', im: 'im' } as const;

/**
 * The scope `method` needs for these parameters; undefined when none is needed or it cannot be
 * told yet (an unknown channel: the method answers `channel_not_found` itself).
 */
export function neededScope(ws: Workspace, method: string, params: Json): string | undefined {
  const rule = METHOD_SCOPES[method];
  if (rule === undefined || rule === null) return undefined;
  if (typeof rule === 'string') return rule;
  const channel = typeof params.channel === 'string' ? ws.findChannel(params.channel) : undefined;
  if (!channel) return undefined;
  return `${SCOPE_PREFIX[channelType(channel)]}:${rule.family}`;
}

/** The subscription an event arrives under: `app_mention`, or `message.<channels|groups|im|mpim>` by `channel_type`. */
export function subscriptionOf(event: { type: string; channel_type?: unknown }): string {
  if (event.type === 'message') {
    const type =
      event.channel_type === 'im'
        ? 'im'
        : event.channel_type === 'group'
          ? 'groups'
          : event.channel_type === 'mpim'
            ? 'mpim'
            : 'channels';
    return `message.${type}`;
  }
  return event.type;
}
