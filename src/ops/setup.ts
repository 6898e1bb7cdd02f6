/**
 * `npm run setup`: the bot's configuration, asked and checked in the terminal, written to `.env`.
 * In order: the service (URL and key, proved by its model lists; the default models picked
 * among them), the platforms (Discord: the token, the commands registered, the install links;
 * Slack: the manifest, the tokens and their scopes, or the OAuth install page), then the whole
 * configuration validated by `loadConfig` (so the bot never refuses what setup wrote), the file
 * written (its other variables kept; atomically, mode 0600), `npm run doctor`'s checks run on
 * it, and the command that starts the bot.
 *
 * Every answer can come from a flag or the environment (setup-answers.ts), so the same command
 * runs unattended (`--yes`, or no terminal): a missing or refused answer then ends it with exit
 * code 1 and nothing written. No secret is ever printed (setup-io.ts `scrubbing`).
 * Exit codes: 0 written and the doctor content, 1 a problem (said), 130 cancelled.
 */
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as clack from '@clack/prompts';
import { ConfigError, ENV_VARIABLES, loadConfig, urlCredentials } from '../config.ts';
import { runDoctor } from './doctor.ts';
import { Answers, parseSetupArgs, SECRET_VARIABLES, SetupProblem, setupUsage } from './setup-answers.ts';
import { changedEnvText, type EnvFile, readEnvFile, writeEnvFile } from './setup-env-file.ts';
import {
  clackPrompter,
  clackReporter,
  type Prompter,
  plainReporter,
  type Reporter,
  SetupCancelled,
  scrubbing,
} from './setup-io.ts';
import { slackStep } from './setup-slack.ts';
import { discordStep, quietSetting, removeVariables, type SetupContext, serviceStep } from './setup-steps.ts';

/** Slack's credentials, in either mode: removed together when Slack is not chosen. */
const SLACK_CREDENTIALS = [
  'SLACK_BOT_TOKEN',
  'SLACK_SIGNING_SECRET',
  'SLACK_APP_TOKEN',
  'SLACK_CLIENT_ID',
  'SLACK_CLIENT_SECRET',
  'SLACK_STATE_SECRET',
  'SLACK_INSTALLATION_KEY',
  'SLACK_INSTALLATION_KEY_PREVIOUS',
];

/** What a setup run is given: the command line, the environment, and how it asks and prints. */
export interface SetupOptions {
  argv: string[];
  env: Record<string, string | undefined>;
  /** The folder `.env` is in by default (npm's INIT_CWD, else the working directory). */
  cwd: string;
  /** Whether questions may be asked (a terminal); `--yes` turns it off. */
  terminal: boolean;
  prompter: Prompter;
  reporter: Reporter;
}

/** Which platforms to set up: the ones given, else (in a terminal) asked, else the file's. */
async function platformsOf(ctx: SetupContext): Promise<{ discord: boolean; slack: boolean }> {
  const { answers } = ctx;
  const known = {
    discord: answers.known('DISCORD_TOKEN') !== undefined,
    slack: answers.known('SLACK_BOT_TOKEN') !== undefined || answers.known('SLACK_CLIENT_ID') !== undefined,
  };
  if (!answers.interactive) {
    if (known.discord || known.slack) return known;
    throw new SetupProblem(
      'No platform is given: pass --discord-token (DISCORD_TOKEN), --slack-bot-token (SLACK_BOT_TOKEN) or --slack-client-id (SLACK_CLIENT_ID), as a flag or in the environment.',
    );
  }
  const given = {
    discord: answers.given('DISCORD_TOKEN') !== undefined,
    slack: answers.given('SLACK_BOT_TOKEN') !== undefined || answers.given('SLACK_CLIENT_ID') !== undefined,
  };
  for (;;) {
    const discord =
      given.discord ||
      (await ctx.prompter.confirm({
        message: 'Connect the bot to Discord?',
        initialValue: known.discord || !known.slack,
      }));
    const slack =
      given.slack || (await ctx.prompter.confirm({ message: 'Connect the bot to Slack?', initialValue: known.slack }));
    if (discord || slack) return { discord, slack };
    ctx.report.fail('The bot needs at least one platform.');
  }
}

/**
 * Validates the whole configuration the file will hold (loadConfig), writes it, and runs the
 * doctor on what `npm start` will read: the file, under the environment's variables.
 * @returns the exit code: 0 when the doctor finds nothing, 1 otherwise.
 * @throws SetupProblem (nothing written) when the configuration would be refused.
 */
async function writeAndCheck(
  ctx: SetupContext,
  path: string,
  file: EnvFile,
  env: Record<string, string | undefined>,
  onWritten: () => void,
): Promise<number> {
  const { report, changes } = ctx;
  const values: Record<string, string> = { ...file.values };
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) delete values[name];
    else values[name] = value;
  }
  try {
    loadConfig(values);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) report.fail(`The configuration would be refused: ${problem}.`);
    throw new SetupProblem('Fix the variables above (in the .env file or as flags).');
  }
  writeEnvFile(path, changedEnvText(file, changes));
  onWritten();
  const set = Object.keys(changes).filter((name) => changes[name] !== undefined);
  report.ok(`Wrote ${path} (readable by you alone): ${set.join(', ')}.`);

  report.step('npm run doctor');
  const fromEnv = ENV_VARIABLES.filter((name) => env[name] !== undefined).map((name) => [name, env[name]]);
  const findings = await runDoctor({ ...values, ...Object.fromEntries(fromEnv) });
  for (const finding of findings) (finding.warning ? report.warn : finding.ok ? report.ok : report.fail)(finding.text);
  const failed = findings.filter((f) => !f.ok).length;
  if (failed > 0) {
    report.end(`${failed} problem${failed > 1 ? 's' : ''} found (above): fix them, then run npm run doctor.`);
    return 1;
  }
  report.end('All is well. Start the bot with: npm start');
  return 0;
}

/** The secrets known before any question (an error may quote one): given, or in the file. */
function knownSecrets(answers: Answers, file: EnvFile): string[] {
  const secrets = [...SECRET_VARIABLES].flatMap((name) => [answers.given(name), file.values[name]]);
  const urls = [answers.given('STORE_URL'), file.values.STORE_URL];
  return [...secrets, ...urls.flatMap((url) => (url ? urlCredentials(url) : []))].filter(
    (s): s is string => typeof s === 'string' && s !== '',
  );
}

/** The platforms chosen, each set up; the credentials of one not chosen are removed from the file. */
async function platformSteps(ctx: SetupContext): Promise<void> {
  const platforms = await platformsOf(ctx);
  if (platforms.discord) await discordStep(ctx);
  else removeVariables(ctx, ['DISCORD_TOKEN', 'DISCORD_APPLICATION_ID'], 'Discord not chosen');
  if (platforms.slack) await slackStep(ctx);
  else removeVariables(ctx, SLACK_CREDENTIALS, 'Slack not chosen');
}

/** Runs the setup; resolves with the exit code. Never throws. */
export async function runSetup(options: SetupOptions): Promise<number> {
  const secrets = new Set<string>();
  const report = scrubbing(options.reporter, () => [...secrets]);
  let written = false;
  try {
    const args = parseSetupArgs(options.argv);
    if (args.help) {
      options.reporter.block('genbot setup', setupUsage());
      return 0;
    }
    const path = args.envFile ? resolve(options.cwd, args.envFile) : join(options.cwd, '.env');
    const file = readEnvFile(path);
    const interactive = options.terminal && !args.yes;
    const answers = new Answers(args.flags, options.env, file.values, interactive, options.prompter, report);
    for (const secret of knownSecrets(answers, file)) secrets.add(secret);
    const ctx: SetupContext = { answers, prompter: options.prompter, report, changes: {}, secrets };
    report.info(`Setting up ${path}${file.text ? ' (its other variables are kept)' : ''}.`);
    await serviceStep(ctx);
    await platformSteps(ctx);
    quietSetting(ctx, 'STORE_URL');

    return await writeAndCheck(ctx, path, file, options.env, () => {
      written = true;
    });
  } catch (error) {
    if (error instanceof SetupCancelled) {
      report.end(error.message);
      return 130;
    }
    const message = error instanceof Error ? error.message : String(error);
    report.fail(error instanceof SetupProblem ? message : `The setup could not finish: ${message}`);
    report.end(written ? 'The .env file was written.' : 'Nothing was written.');
    return 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const terminal = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const argv = process.argv.slice(2);
  const interactive = terminal && !argv.includes('--yes') && !argv.includes('-y');
  if (interactive) clack.intro('genbot setup');
  const code = await runSetup({
    argv,
    env: process.env,
    cwd: process.env.INIT_CWD ?? process.cwd(),
    terminal,
    prompter: clackPrompter,
    reporter: interactive ? clackReporter : plainReporter((text) => process.stdout.write(text)),
  });
  process.exit(code);
}
