/**
 * The platforms' part of the configuration (config.ts): which platforms are configured and
 * what is missing for them, and the Slack section in either of its modes — one workspace
 * (SLACK_BOT_TOKEN) or any number installed through OAuth (SLACK_CLIENT_ID, SLACK_CLIENT_SECRET,
 * SLACK_STATE_SECRET, SLACK_INSTALLATION_KEY). Exactly one mode may be configured.
 */
import type { AssistantPrompt, Env } from './config-env.ts';

/** The OAuth variables of Slack's many-workspace mode, all four needed together. */
const SLACK_OAUTH_VARIABLES = [
  'SLACK_CLIENT_ID',
  'SLACK_CLIENT_SECRET',
  'SLACK_STATE_SECRET',
  'SLACK_INSTALLATION_KEY',
] as const;

/** Which platforms are configured, and what is missing for them (checked on the raw values). */
export function platformProblems(env: Record<string, string | undefined>): string[] {
  const set = (name: string) => env[name] !== undefined && env[name] !== '';
  const discord = set('DISCORD_TOKEN') || set('DISCORD_APPLICATION_ID');
  const oauth = SLACK_OAUTH_VARIABLES.some(set);
  const slack = set('SLACK_BOT_TOKEN') || set('SLACK_SIGNING_SECRET') || oauth;
  if (!discord && !slack) {
    return [
      'no platform is configured: set DISCORD_TOKEN and DISCORD_APPLICATION_ID, or SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (one workspace), or SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SLACK_STATE_SECRET, SLACK_INSTALLATION_KEY and SLACK_SIGNING_SECRET (any number of workspaces, installed through /slack/install)',
    ];
  }
  const problems: string[] = [];
  if (discord) {
    if (!set('DISCORD_TOKEN')) problems.push('DISCORD_TOKEN is required when DISCORD_APPLICATION_ID is set');
    if (!set('DISCORD_APPLICATION_ID')) problems.push('DISCORD_APPLICATION_ID is required when DISCORD_TOKEN is set');
  }
  if (!slack) return problems;
  if (set('SLACK_BOT_TOKEN') && oauth)
    problems.push(
      'Slack is configured twice: set SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SLACK_STATE_SECRET and SLACK_INSTALLATION_KEY (installs through /slack/install), not both',
    );
  else if (oauth)
    for (const name of SLACK_OAUTH_VARIABLES.filter((n) => !set(n)))
      problems.push(`${name} is required when ${SLACK_OAUTH_VARIABLES.filter(set).join(', ')} is set`);
  else if (!set('SLACK_BOT_TOKEN')) problems.push('SLACK_BOT_TOKEN is required when SLACK_SIGNING_SECRET is set');
  if (!set('SLACK_SIGNING_SECRET'))
    problems.push(
      `SLACK_SIGNING_SECRET is required when ${set('SLACK_BOT_TOKEN') ? 'SLACK_BOT_TOKEN' : SLACK_OAUTH_VARIABLES.filter(set).join(', ')} is set`,
    );
  if (set('SLACK_INSTALLATION_KEY_PREVIOUS') && !oauth)
    problems.push('SLACK_INSTALLATION_KEY_PREVIOUS is only read with SLACK_INSTALLATION_KEY (the OAuth install)');
  return problems;
}

/**
 * Slack's many-workspace mode: the app's OAuth credentials (Bolt's installer serves
 * `/slack/install` and `/slack/oauth_redirect`) and the keys the installations are sealed with.
 */
export interface SlackOAuthConfig {
  clientId: string;
  clientSecret: string;
  /** Signs the OAuth `state` (Bolt's ClearStateStore). */
  stateSecret: string;
  /** AES-256-GCM key of the installations at rest (32 bytes, SLACK_INSTALLATION_KEY). */
  installationKey: Buffer;
  /** The key before a rotation (SLACK_INSTALLATION_KEY_PREVIOUS): read, never written. */
  previousInstallationKey: Buffer | undefined;
}

/** Slack settings, present when the Slack adapter is to run. */
export interface SlackConfig {
  /**
   * How the bot gets its tokens: one workspace's bot token (SLACK_BOT_TOKEN), or any number of
   * workspaces installed through OAuth, each token read from the store per request.
   */
  auth: { mode: 'token'; botToken: string } | ({ mode: 'oauth' } & SlackOAuthConfig);
  signingSecret: string;
  /** `xapp-` token: Socket Mode when set, HTTP receiver on `port` otherwise. */
  appToken: string | undefined;
  /** Web API base with a trailing slash, e.g. `https://slack.com/api/`. */
  apiUrl: string | undefined;
  /** TCP port of the HTTP receiver (0 = any free port). */
  port: number;
  /** The agent view's suggested prompts (`ASSISTANT_PROMPTS`), at most 4. */
  assistantPrompts: readonly AssistantPrompt[];
}

/** Which Slack mode the variables configure, undefined when neither is complete. */
function slackAuthOf(e: Env): SlackConfig['auth'] | undefined {
  if (e.SLACK_BOT_TOKEN) return { mode: 'token', botToken: e.SLACK_BOT_TOKEN };
  if (!e.SLACK_CLIENT_ID || !e.SLACK_CLIENT_SECRET || !e.SLACK_STATE_SECRET || !e.SLACK_INSTALLATION_KEY)
    return undefined;
  return {
    mode: 'oauth',
    clientId: e.SLACK_CLIENT_ID,
    clientSecret: e.SLACK_CLIENT_SECRET,
    stateSecret: e.SLACK_STATE_SECRET,
    installationKey: e.SLACK_INSTALLATION_KEY,
    previousInstallationKey: e.SLACK_INSTALLATION_KEY_PREVIOUS,
  };
}

/** The Slack section, or undefined when Slack is not (completely) configured. */
export function slackOf(e: Env): SlackConfig | undefined {
  const auth = slackAuthOf(e);
  if (!auth || !e.SLACK_SIGNING_SECRET) return undefined;
  return {
    auth,
    signingSecret: e.SLACK_SIGNING_SECRET,
    appToken: e.SLACK_APP_TOKEN,
    apiUrl: e.SLACK_API_URL === undefined ? undefined : e.SLACK_API_URL.replace(/\/?$/, '/'),
    port: e.SLACK_PORT,
    assistantPrompts: e.ASSISTANT_PROMPTS,
  };
}
