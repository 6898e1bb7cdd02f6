/**
 * The parts of `npm run setup` that ask and check (setup.ts runs them in order): the service
 * (its URL and key, proved by its model lists, then the default models picked among them) and
 * Discord (the token, proved by Discord's `/users/@me` and `/applications/@me`, which also give
 * the application id; the commands registered; the install links printed). Each check is the
 * doctor's own (doctor.ts); a refused answer is said, then asked again in a terminal, or ends
 * the setup unattended (a {@link SetupProblem}). Slack's part is setup-slack.ts.
 */
import { opsEnv } from '../config-env.ts';
import type { ModelLists } from '../core/models/catalog.ts';
import { deployCommands } from '../platforms/discord/deploy.ts';
import { discordInstallLinks } from '../platforms/discord/install-links.ts';
import { discordIdentity, type Finding, reasonOf, serviceFailure, serviceLists } from './doctor.ts';
import { type AnswerName, type Answers, type Question, SECRET_VARIABLES, SetupProblem } from './setup-answers.ts';
import type { Prompter, Reporter } from './setup-io.ts';

/** What the steps share: where answers come from, how to ask and print, and what to write. */
export interface SetupContext {
  answers: Answers;
  prompter: Prompter;
  report: Reporter;
  /** The variables to write: a string sets one, undefined removes its lines. */
  changes: Record<string, string | undefined>;
  /** Every secret known so far, scrubbed from whatever is printed. */
  secrets: Set<string>;
}

export const pass = (text: string): Finding => ({ ok: true, text });
export const fail = (text: string): Finding => ({ ok: false, text });

/** Records `value` for `name` in the changes (a secret also among the values to scrub). */
export function setVariable(ctx: SetupContext, name: string, value: string | undefined): void {
  ctx.changes[name] = value;
  if (value && SECRET_VARIABLES.has(name)) ctx.secrets.add(value);
}

/** Removes `names` from the file where it has them, saying so. */
export function removeVariables(ctx: SetupContext, names: readonly string[], why: string): void {
  const present = names.filter((name) => ctx.answers.existing[name]);
  for (const name of present) ctx.changes[name] = undefined;
  if (present.length > 0) ctx.report.info(`${present.join(', ')} removed from the .env file (${why}).`);
}

/**
 * A variable that is never asked (a proxy's URL, the store): the given value is written, the
 * file's kept. @returns the value in force; @throws SetupProblem when the given one is malformed.
 */
export function quietSetting(ctx: SetupContext, name: AnswerName): string | undefined {
  const given = ctx.answers.given(name);
  if (given === undefined) return ctx.answers.existing[name] || undefined;
  const problem = ctx.answers.problem(name, given);
  if (problem) throw new SetupProblem(`${problem}.`);
  setVariable(ctx, name, given);
  return given;
}

/**
 * Asks `questions` until `check` passes: the findings are printed; when one fails, the questions
 * are asked again in a terminal (Enter keeps an answer), and unattended the setup ends.
 * @returns the answers, by variable.
 * @throws SetupProblem unattended, when the check fails.
 */
export async function askChecked(
  ctx: SetupContext,
  questions: readonly Question[],
  check: (values: Record<string, string | undefined>) => Promise<Finding[]>,
): Promise<Record<string, string | undefined>> {
  const values: Record<string, string | undefined> = {};
  for (let retry = false; ; retry = true) {
    for (const question of questions) {
      values[question.name] = await ctx.answers.ask(question, { retry, current: values[question.name] });
      setVariable(ctx, question.name, values[question.name]);
    }
    const findings = await check(values);
    for (const finding of findings) (finding.ok ? ctx.report.ok : ctx.report.fail)(finding.text);
    if (findings.every((f) => f.ok)) return values;
    if (!ctx.answers.interactive)
      throw new SetupProblem(
        'Setup stopped at the check above: fix that answer (its flag or variable) and run it again.',
      );
    ctx.report.info('Answer again (Enter keeps an answer).');
  }
}

/** The service: URL and key until `/v1/models` answers, then the default models. */
export async function serviceStep(ctx: SetupContext): Promise<void> {
  ctx.report.step('The generation service');
  let lists: ModelLists | undefined;
  await askChecked(
    ctx,
    [
      {
        name: 'SERVICE_BASE_URL',
        message: 'The service’s base URL (OpenAI-compatible, with or without /v1)',
        placeholder: 'https://api.example.com/v1',
      },
      { name: 'SERVICE_API_KEY', message: 'Its API key' },
    ],
    async (values) => {
      const baseUrl = values.SERVICE_BASE_URL as string;
      try {
        lists = await serviceLists({ baseUrl, apiKey: values.SERVICE_API_KEY as string });
        return [
          pass(
            `The service at ${baseUrl} accepts the key: ${lists.text.length} text models, ${lists.image.length} image models.`,
          ),
        ];
      } catch (error) {
        return [fail(serviceFailure(baseUrl, error))];
      }
    },
  );
  const found = lists as ModelLists;
  await pickModel(ctx, 'DEFAULT_CHAT_MODEL', 'The default chat model', found.text);
  await pickModel(
    ctx,
    'DEFAULT_IMAGE_MODEL',
    'The default image model',
    found.image.map((m) => m.display_name),
  );
}

/** A default model: given and listed, kept; in a terminal, picked among `listed`; unattended and unlisted, refused. */
async function pickModel(ctx: SetupContext, name: AnswerName, message: string, listed: string[]): Promise<void> {
  const { answers } = ctx;
  const among = (model: string | undefined) => listed.find((m) => m.toLowerCase() === model?.toLowerCase());
  const given = answers.given(name);
  const current = answers.known(name);
  const unlisted = `${name} ${current} is not listed by the service (it lists ${listed.slice(0, 8).join(', ') || 'none'}${listed.length > 8 ? ', …' : ''})`;
  if (given !== undefined && among(given)) return setVariable(ctx, name, among(given));
  if (!answers.interactive) {
    if (current === undefined) return ctx.report.info(`${name} is not set: the bot uses the service’s first model.`);
    if (among(current)) return ctx.report.ok(`${name} ${current} is listed by the service.`);
    throw new SetupProblem(
      `${unlisted}: pass --${name === 'DEFAULT_CHAT_MODEL' ? 'chat' : 'image'}-model or set ${name}.`,
    );
  }
  if (current !== undefined && !among(current)) ctx.report.fail(`${unlisted}.`);
  if (listed.length === 0) return ctx.report.info(`The service lists no such model: ${name} stays unset.`);
  const choice = await ctx.prompter.select({
    message,
    options: listed.map((model) => ({ value: model, label: model })),
    initialValue: among(current) ?? listed[0],
  });
  setVariable(ctx, name, choice);
}

/** The admins in force (ADMIN_USER_IDS, ADMIN_ROLE_IDS), for the commands' registration. */
function adminsOf(answers: Answers) {
  const ids = (name: 'ADMIN_USER_IDS' | 'ADMIN_ROLE_IDS') => {
    const parsed = opsEnv.shape[name].safeParse(answers.known(name));
    return parsed.success ? parsed.data : [];
  };
  return { userIds: ids('ADMIN_USER_IDS'), roleIds: ids('ADMIN_ROLE_IDS') };
}

/** Discord: the token until Discord accepts it, the application id from it, the commands registered, the install links. */
export async function discordStep(ctx: SetupContext): Promise<void> {
  ctx.report.step('Discord');
  const apiUrl = quietSetting(ctx, 'DISCORD_API_URL');
  let applicationId = '';
  const values = await askChecked(
    ctx,
    [{ name: 'DISCORD_TOKEN', message: 'The bot token (Developer Portal → your application → Bot → Reset Token)' }],
    async (answers) => {
      const identity = await discordIdentity(answers.DISCORD_TOKEN as string, apiUrl);
      if (!identity.ok) return identity.findings;
      applicationId = identity.application.id;
      return [pass(`Discord accepts the token: the bot is ${identity.bot.username}, of application ${applicationId}.`)];
    },
  );
  setVariable(ctx, 'DISCORD_APPLICATION_ID', applicationId);
  const token = values.DISCORD_TOKEN as string;
  try {
    const registered = await deployCommands({ token, applicationId, apiUrl, admins: adminsOf(ctx.answers) });
    ctx.report.ok(`Registered ${registered.length} commands globally (slash commands and message actions).`);
  } catch (error) {
    ctx.report.fail(`Discord refused the commands (${reasonOf(error)}): npm run deploy-commands registers them again.`);
  }
  const links = discordInstallLinks(applicationId);
  ctx.report.block(
    'Install the bot',
    [
      'In a server (its admin opens this link):',
      `  ${links.server}`,
      'For yourself, in any server, group DM or DM (allow User Install under Installation first):',
      `  ${links.user}`,
    ].join('\n'),
  );
}
