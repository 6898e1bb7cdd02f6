/**
 * The Slack app manifest, derived from the same command definitions as the Discord command
 * JSON (commands/): paste its output at api.slack.com/apps → Create New App → From a manifest.
 *
 * `npm run slack-manifest` prints it for Socket Mode; `npm run slack-manifest -- https://host`
 * prints it for HTTP mode, with every request URL at `https://host/slack/events`. With
 * SLACK_CLIENT_ID set (the OAuth mode, from the environment or `.env`) the URL is required, and
 * `oauth_config.redirect_urls` names `https://host/slack/oauth_redirect` (Socket Mode when
 * SLACK_APP_TOKEN is set too: no request URLs then). The agent view's suggested prompts are
 * ASSISTANT_PROMPTS.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AppsManifestCreateArguments } from '@slack/web-api';
import { commands, messageActions } from '../../../commands/index.ts';
import { type AssistantPrompt, DEFAULT_ASSISTANT_PROMPTS, slackEnv } from '../../config-env.ts';
import type { Command } from '../../core/command.ts';
import type { MessageAction } from '../../core/message-action.ts';
import { flagForm, mainOptionOf } from '../../core/option-forms.ts';
import { SLACK_AGENT_EVENTS, SLACK_AGENT_SCOPES } from './agent.ts';
import { SLACK_COMMAND_SCOPES } from './commands.ts';
import { SLACK_DIRECT_SCOPES } from './direct.ts';
import { SLACK_BOT_EVENTS, SLACK_EVENT_SCOPES } from './events.ts';
import { slackShortcutsOf } from './message-actions.ts';
import { SLACK_THREAD_SCOPES } from './thread.ts';
import { SLACK_UNINSTALL_EVENTS } from './uninstall.ts';
import { SLACK_USER_SCOPES } from './users.ts';
import { SLACK_MEMBER_SCOPES } from './viewed-channel.ts';

/** Slack's app manifest (the shape `apps.manifest.create` takes). */
export type SlackManifest = AppsManifestCreateArguments['manifest'];
/** Its bot scopes. */
type BotScopes = NonNullable<NonNullable<SlackManifest['oauth_config']>['scopes']>['bot'];

/**
 * Bot scopes the bot needs, from the files that use them: slash commands, posting, editing
 * and uploads (commands.ts); mentions, DMs and users' files (events.ts); admin checks and names
 * (users.ts); reading the threads the bot is called into and the channel a user views, and
 * whether the user is in it (thread.ts, viewed-channel.ts); the agent view's prompts and titles
 * (agent.ts); a user's DM for /export's files (direct.ts).
 */
export const SLACK_BOT_SCOPES = [
  ...new Set([
    ...SLACK_COMMAND_SCOPES,
    ...SLACK_EVENT_SCOPES,
    ...SLACK_USER_SCOPES,
    ...SLACK_THREAD_SCOPES,
    ...SLACK_MEMBER_SCOPES,
    ...SLACK_AGENT_SCOPES,
    ...SLACK_DIRECT_SCOPES,
  ]),
];

/** The bot events: messages addressed to the bot (events.ts), the agent view and the Home tab (agent.ts), uninstall and revocation (uninstall.ts). */
export const SLACK_ALL_BOT_EVENTS = [...SLACK_BOT_EVENTS, ...SLACK_AGENT_EVENTS, ...SLACK_UNINSTALL_EVENTS];

/** What the agent view says of the bot (`agent_description`, at most 300 characters). */
export const AGENT_DESCRIPTION =
  'Ask me anything, have me imagine an image, or ask me to summarize the channel you are viewing. Each question is a thread.';

/**
 * Slack's built-in slash commands, which an app cannot declare (Slack refuses the whole
 * manifest: "the slash command has an invalid name", reported for `/status`), from Slack's help
 * article "Use built-in slash commands" (slack.com/help/articles/201259356), and `/archive`,
 * also refused. `/help` is not one of them: Slack's own `/help` was retired, and apps declare
 * `/help` in their manifests (Slack accepts it), so the bot's /help is declared like every other
 * command (docs/platform-limits.md). {@link slackManifest} refuses a command named like one of
 * these, so a new command cannot break the manifest unseen.
 */
export const SLACK_BUILT_IN_COMMANDS: ReadonlySet<string> = new Set([
  'me',
  'status',
  'away',
  'dnd',
  'shrug',
  'remind',
  'msg',
  'feed',
  'who',
  'collapse',
  'expand',
  'leave',
  'join',
  'open',
  'search',
  'topic',
  'mute',
  'pro',
  'shortcuts',
  'archive',
]);

/**
 * The usage hint Slack shows under a command, from its options: the main option first (the
 * free text), then `--name value` flags written as options.ts parses them. At most 1000
 * characters.
 */
export function usageHint(command: Command): string {
  const main = mainOptionOf(command);
  const flags = command.options.filter((o) => o !== main).map((o) => (o.required ? flagForm(o) : `[${flagForm(o)}]`));
  return [...(main ? [`<${main.name}>`] : []), ...flags].join(' ').slice(0, 1000);
}

/**
 * Builds the manifest.
 * @param list the commands (default: every command under commands/).
 * @param options.actions the message actions, declared as message shortcuts after "Forget this
 *   thread" (default: every one under commands/).
 * @throws Error naming a command whose name is one of {@link SLACK_BUILT_IN_COMMANDS} (Slack would
 *   refuse the whole manifest).
 * @param options.requestUrl the bot's public base URL for HTTP mode (e.g. `https://bot.example.com`);
 *   absent: Socket Mode (no request URLs; an app-level token with `connections:write` is needed).
 * @param options.redirectUrl the bot's public base URL where its OAuth installer is served (the
 *   OAuth mode: SLACK_CLIENT_ID…): `oauth_config.redirect_urls` is then
 *   `<redirectUrl>/slack/oauth_redirect`, the one URL Slack may send the code to.
 * @param options.name the app's and bot user's display name (default `genbot`).
 * @param options.prompts the agent view's suggested prompts (ASSISTANT_PROMPTS; default
 *   {@link DEFAULT_ASSISTANT_PROMPTS}), at most 4.
 */
export function slackManifest(
  list: readonly Command[] = commands,
  options: {
    requestUrl?: string;
    redirectUrl?: string;
    name?: string;
    actions?: readonly MessageAction[];
    prompts?: readonly AssistantPrompt[];
  } = {},
): SlackManifest {
  const builtIn = list.find((command) => SLACK_BUILT_IN_COMMANDS.has(command.name));
  if (builtIn) throw new Error(`/${builtIn.name} is a built-in Slack command: an app cannot declare it`);
  const name = options.name ?? 'genbot';
  const url = options.requestUrl ? `${options.requestUrl.replace(/\/+$/, '')}/slack/events` : undefined;
  return {
    display_information: { name, description: 'Chat, completions and images from a generation service' },
    features: {
      // The agent view: its conversations are the Messages tab's threads (agent.ts).
      agent_view: {
        agent_description: AGENT_DESCRIPTION,
        suggested_prompts: (options.prompts ?? DEFAULT_ASSISTANT_PROMPTS).slice(0, 4).map((p) => ({ ...p })),
      },
      // The Messages tab lets people DM the bot (message.im); the Home tab shows their use (home.ts).
      app_home: { home_tab_enabled: true, messages_tab_enabled: true, messages_tab_read_only_enabled: false },
      bot_user: { display_name: name, always_online: true },
      slash_commands: list.map((command) => ({
        command: `/${command.name}`,
        description: command.description,
        usage_hint: usageHint(command),
        should_escape: false,
        ...(url ? { url } : {}),
      })),
      // Message shortcuts (a message's "More actions" menu) arrive as interactivity payloads.
      shortcuts: slackShortcutsOf(options.actions ?? messageActions).map((shortcut) => ({
        name: shortcut.name,
        type: 'message' as const,
        callback_id: shortcut.callbackId,
        description: shortcut.description,
      })),
    },
    // @slack/web-api 8.2's scope type lacks `assistant:write` (docs.slack.dev/reference/scopes/assistant.write).
    oauth_config: {
      ...(options.redirectUrl
        ? { redirect_urls: [`${options.redirectUrl.replace(/\/+$/, '')}/slack/oauth_redirect`] }
        : {}),
      scopes: { bot: [...SLACK_BOT_SCOPES] as BotScopes },
    },
    settings: {
      event_subscriptions: { ...(url ? { request_url: url } : {}), bot_events: [...SLACK_ALL_BOT_EVENTS] },
      // Button presses (Stop, Reroll / Upscale / Vary) arrive as block_actions (actions.ts), message
      // shortcuts as message_action (shortcuts.ts), their forms as view_submission (message-actions.ts).
      interactivity: { is_enabled: true, ...(url ? { request_url: url } : {}) },
      socket_mode_enabled: url === undefined,
      org_deploy_enabled: false,
      token_rotation_enabled: false,
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // ASSISTANT_PROMPTS, from .env as npm start reads it.
  const envFile = join(process.env.INIT_CWD ?? process.cwd(), '.env');
  if (existsSync(envFile)) process.loadEnvFile(envFile);
  const prompts = slackEnv.shape.ASSISTANT_PROMPTS.safeParse(process.env.ASSISTANT_PROMPTS);
  if (!prompts.success) {
    process.stderr.write(`ASSISTANT_PROMPTS ${prompts.error.issues[0]?.message ?? 'is malformed'}\n`);
    process.exit(2);
  }
  const url = process.argv[2];
  // The OAuth mode (SLACK_CLIENT_ID set): the URL is where the installer is served, and it is
  // also the request URL unless SLACK_APP_TOKEN says Socket Mode.
  const oauth = Boolean(process.env.SLACK_CLIENT_ID);
  if ((url !== undefined && !/^https:\/\/[^\s/]+/.test(url)) || (oauth && url === undefined)) {
    process.stderr.write(
      'Usage: npm run slack-manifest [-- https://<public host of the bot>]  (no URL: Socket Mode; with SLACK_CLIENT_ID set, the URL is required: the OAuth redirect is there)\n',
    );
    process.exit(2);
  }
  const socketMode = oauth ? Boolean(process.env.SLACK_APP_TOKEN) : url === undefined;
  const manifest = slackManifest(commands, {
    ...(url && !socketMode ? { requestUrl: url } : {}),
    ...(url && oauth ? { redirectUrl: url } : {}),
    prompts: prompts.data,
  });
  process.stdout.write(`${JSON.stringify(manifest, null, 2)}\n`);
}
