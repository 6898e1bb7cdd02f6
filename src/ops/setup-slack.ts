/**
 * Slack's part of `npm run setup`, in either mode (config-slack.ts): one workspace (the manifest
 * printed, then the bot token, checked with `auth.test` and its scopes against the manifest's,
 * the signing secret, and Socket Mode's app token, checked by opening a connection: the
 * doctor's own checks, doctor-slack.ts), or any number of workspaces through OAuth (the
 * manifest with its redirect URL, the app's credentials, the state secret and the
 * installations' key generated when there are none, and the install page printed).
 */
import { randomBytes } from 'node:crypto';
import { commands } from '../../commands/index.ts';
import { type Env, slackEnv } from '../config-env.ts';
import { slackOf } from '../config-slack.ts';
import { slackManifest } from '../platforms/slack/manifest.ts';
import { reasonOf } from './doctor.ts';
import { slackFindings } from './doctor-slack.ts';
import { SetupProblem } from './setup-answers.ts';
import { askChecked, quietSetting, removeVariables, type SetupContext, setVariable } from './setup-steps.ts';

/** The variables of each mode, removed from the file when the other mode is chosen. */
const TOKEN_MODE = ['SLACK_BOT_TOKEN'] as const;
const OAUTH_MODE = [
  'SLACK_CLIENT_ID',
  'SLACK_CLIENT_SECRET',
  'SLACK_STATE_SECRET',
  'SLACK_INSTALLATION_KEY',
  'SLACK_INSTALLATION_KEY_PREVIOUS',
] as const;

type Mode = 'token' | 'oauth';

/** The mode: the given token or client id says it; else asked in a terminal, else the file's. */
async function modeOf(ctx: SetupContext): Promise<Mode> {
  const { answers } = ctx;
  const token = answers.given('SLACK_BOT_TOKEN') !== undefined;
  const oauth = answers.given('SLACK_CLIENT_ID') !== undefined;
  if (token && oauth)
    throw new SetupProblem(
      'Give SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID (any number of workspaces), not both.',
    );
  if (token || oauth) return token ? 'token' : 'oauth';
  const current: Mode = answers.existing.SLACK_CLIENT_ID ? 'oauth' : 'token';
  if (!answers.interactive) return current;
  return ctx.prompter.select<Mode>({
    message: 'How is the Slack app installed?',
    options: [
      { value: 'token', label: 'In one workspace', hint: 'you install it, and give its bot token' },
      { value: 'oauth', label: 'In any number of workspaces', hint: '"Add to Slack" on the bot’s install page' },
    ],
    initialValue: current,
  });
}

/** Socket Mode (an app-level token, no public URL) or HTTP (Slack calls the bot's public URL). */
async function socketModeOf(ctx: SetupContext): Promise<boolean> {
  const { answers } = ctx;
  if (answers.given('SLACK_APP_TOKEN') !== undefined) return true;
  const current = answers.existing.SLACK_APP_TOKEN !== undefined && answers.existing.SLACK_APP_TOKEN !== '';
  if (!answers.interactive) return current;
  const socket = await ctx.prompter.select<'socket' | 'http'>({
    message: 'How do Slack’s events reach the bot?',
    options: [
      { value: 'socket', label: 'Socket Mode', hint: 'the bot connects to Slack; no public URL needed' },
      { value: 'http', label: 'HTTP', hint: 'Slack calls https://<the bot’s host>/slack/events' },
    ],
    initialValue: current || answers.known('SETUP_PUBLIC_URL') === undefined ? 'socket' : 'http',
  });
  return socket === 'socket';
}

/** Slack: the manifest, then the mode's answers, checked where Slack can check them. */
export async function slackStep(ctx: SetupContext): Promise<void> {
  ctx.report.step('Slack');
  const apiUrl = quietSetting(ctx, 'SLACK_API_URL');
  const mode = await modeOf(ctx);
  const socket = await socketModeOf(ctx);
  const needsUrl = mode === 'oauth' || !socket;
  const url = needsUrl
    ? await ctx.answers.ask({
        name: 'SETUP_PUBLIC_URL',
        message: 'The bot’s public https URL (where Slack reaches it)',
        placeholder: 'https://bot.example.com',
        optional: !ctx.answers.interactive,
      })
    : undefined;
  printManifest(ctx, mode, socket, url);
  if (!socket) removeVariables(ctx, ['SLACK_APP_TOKEN'], 'HTTP mode');
  const appToken = socket
    ? [
        {
          name: 'SLACK_APP_TOKEN' as const,
          message: 'The app-level token (xapp-…, Basic Information → App-Level Tokens)',
        },
      ]
    : [];
  const signingSecret = {
    name: 'SLACK_SIGNING_SECRET' as const,
    message: 'The signing secret (Basic Information → App Credentials)',
  };
  if (mode === 'oauth') return oauthAnswers(ctx, [signingSecret, ...appToken], url);
  removeVariables(ctx, OAUTH_MODE, 'one workspace: SLACK_BOT_TOKEN');
  await askChecked(
    ctx,
    [
      { name: 'SLACK_BOT_TOKEN', message: 'The Bot User OAuth Token (xoxb-…, OAuth & Permissions)' },
      signingSecret,
      ...appToken,
    ],
    async (values) => {
      // The doctor's checks, on the section the bot would build from these values.
      const slack = slackOf(slackEnv.parse({ ...values, SLACK_API_URL: apiUrl, ASSISTANT_PROMPTS: '[]' }) as Env);
      return slack ? slackFindings(slack, 'sqlite://:memory:', reasonOf) : [];
    },
  );
}

/** The OAuth mode's answers: nothing Slack can check before a workspace installs the app. */
async function oauthAnswers(
  ctx: SetupContext,
  questions: Parameters<typeof askChecked>[1],
  url: string | undefined,
): Promise<void> {
  removeVariables(ctx, TOKEN_MODE, 'any number of workspaces: SLACK_CLIENT_ID');
  await askChecked(
    ctx,
    [
      { name: 'SLACK_CLIENT_ID', message: 'The app’s Client ID (Basic Information → App Credentials)' },
      { name: 'SLACK_CLIENT_SECRET', message: 'Its Client Secret' },
      ...questions,
    ],
    async () => [],
  );
  for (const [name, make] of [
    ['SLACK_STATE_SECRET', () => randomBytes(32).toString('hex')],
    ['SLACK_INSTALLATION_KEY', () => randomBytes(32).toString('base64')],
  ] as const) {
    const known = ctx.answers.known(name);
    const problem = known === undefined ? undefined : ctx.answers.problem(name, known);
    if (problem) throw new SetupProblem(`${problem}.`);
    setVariable(ctx, name, known ?? make());
    if (known === undefined) ctx.report.ok(`${name} generated (kept in the .env file only).`);
  }
  ctx.report.info('Keep SLACK_INSTALLATION_KEY safe: losing it means every workspace installs the app again.');
  ctx.report.block(
    'The install page',
    `Once the bot runs, each workspace's admin opens\n  ${url ?? 'https://<the bot’s public host>'}/slack/install\nand presses "Add to Slack".`,
  );
}

/** Prints the manifest for the mode, or how to print it when the public URL it needs is not known. */
function printManifest(ctx: SetupContext, mode: Mode, socket: boolean, url: string | undefined): void {
  if (url === undefined && (mode === 'oauth' || !socket)) {
    ctx.report.info('npm run slack-manifest -- https://<the bot’s public host> prints the Slack app’s manifest.');
    return;
  }
  const prompts = slackEnv.shape.ASSISTANT_PROMPTS.safeParse(ctx.answers.known('ASSISTANT_PROMPTS'));
  const manifest = slackManifest(commands, {
    ...(url && !socket ? { requestUrl: url } : {}),
    ...(url && mode === 'oauth' ? { redirectUrl: url } : {}),
    ...(prompts.success ? { prompts: prompts.data } : {}),
  });
  const next =
    mode === 'oauth'
      ? 'then copy the Client ID, Client Secret and Signing Secret (Basic Information → App Credentials)'
      : 'install it to your workspace, then copy the Bot User OAuth Token and the Signing Secret';
  ctx.report.block(
    `The Slack app's manifest: at https://api.slack.com/apps choose Create New App → From a manifest, paste it; ${next}${socket ? ', and create an app-level token with connections:write' : ''}.`,
    JSON.stringify(manifest, null, 2),
  );
}
