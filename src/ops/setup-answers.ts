/**
 * Where each answer of `npm run setup` comes from, first found first: its flag (`--service-key`),
 * the environment (the variable's own name, `SERVICE_API_KEY`), then — unattended (`--yes`, or
 * stdin not a terminal) — the value already in `.env`; in a terminal, a question with the
 * `.env` value as its default (a secret: "Enter keeps the current one"). Every answer is checked
 * with the configuration's own schema field (config-env.ts `envSchema`), so a refused value is
 * named in the words the bot would use at start.
 */
import { parseArgs } from 'node:util';
import { envSchema } from '../config-env.ts';
import type { Prompter, Reporter } from './setup-io.ts';

/**
 * The flags that give an answer, and the variable each sets (the same name in the environment).
 * `SETUP_PUBLIC_URL` is the setup's own (the bot's public https URL for Slack's manifest and install page); it is not written.
 */
export const ANSWER_FLAGS = {
  'service-url': 'SERVICE_BASE_URL',
  'service-key': 'SERVICE_API_KEY',
  'chat-model': 'DEFAULT_CHAT_MODEL',
  'image-model': 'DEFAULT_IMAGE_MODEL',
  'store-url': 'STORE_URL',
  'discord-token': 'DISCORD_TOKEN',
  'discord-api-url': 'DISCORD_API_URL',
  'slack-bot-token': 'SLACK_BOT_TOKEN',
  'slack-signing-secret': 'SLACK_SIGNING_SECRET',
  'slack-app-token': 'SLACK_APP_TOKEN',
  'slack-client-id': 'SLACK_CLIENT_ID',
  'slack-client-secret': 'SLACK_CLIENT_SECRET',
  'slack-api-url': 'SLACK_API_URL',
  'public-url': 'SETUP_PUBLIC_URL',
} as const;

/** A variable the setup can answer. */
export type AnswerName = (typeof ANSWER_FLAGS)[keyof typeof ANSWER_FLAGS];

/** The variables whose values are secrets: asked masked, never printed. */
export const SECRET_VARIABLES: ReadonlySet<string> = new Set([
  'SERVICE_API_KEY',
  'DISCORD_TOKEN',
  'SLACK_BOT_TOKEN',
  'SLACK_SIGNING_SECRET',
  'SLACK_APP_TOKEN',
  'SLACK_CLIENT_SECRET',
  'SLACK_STATE_SECRET',
  'SLACK_INSTALLATION_KEY',
  'SLACK_INSTALLATION_KEY_PREVIOUS',
]);

const flagOf = (name: AnswerName) =>
  Object.entries(ANSWER_FLAGS).find(([, variable]) => variable === name)?.[0] ?? name;

/** Thrown when the setup cannot go on unattended; `message` says what to pass or fix. */
export class SetupProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SetupProblem';
  }
}

/** The command line, parsed: the answers given as flags and the setup's own options. */
export interface SetupArgs {
  flags: Partial<Record<AnswerName, string>>;
  /** `--env-file`: the file to read and write (default `.env` in the folder npm runs in). */
  envFile: string | undefined;
  /** `--yes`: never ask, even in a terminal. */
  yes: boolean;
  help: boolean;
}

/**
 * Parses `argv` (without node and the script).
 * @throws SetupProblem naming an unknown flag or a flag without its value.
 */
export function parseSetupArgs(argv: string[]): SetupArgs {
  const options = Object.fromEntries(Object.keys(ANSWER_FLAGS).map((flag) => [flag, { type: 'string' as const }]));
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        ...options,
        'env-file': { type: 'string' },
        yes: { type: 'boolean', short: 'y' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    });
    const flags: Partial<Record<AnswerName, string>> = {};
    for (const [flag, name] of Object.entries(ANSWER_FLAGS)) {
      const value = (values as Record<string, unknown>)[flag];
      if (typeof value === 'string') flags[name] = value;
    }
    return {
      flags,
      envFile: typeof values['env-file'] === 'string' ? values['env-file'] : undefined,
      yes: values.yes === true,
      help: values.help === true,
    };
  } catch (error) {
    throw new SetupProblem(`${(error as Error).message}. npm run setup -- --help lists the flags.`);
  }
}

/** The usage text of `npm run setup -- --help`. */
export function setupUsage(): string {
  const row = (left: string, right: string) => `${`  ${left}`.padEnd(34)}${right}`;
  const rows = Object.entries(ANSWER_FLAGS).map(([flag, name]) => row(`--${flag} <value>`, name));
  return [
    'Usage: npm run setup [-- --flag value …]',
    '',
    'Asks what it is not given. Each answer can come from a flag or from the environment variable of the',
    'same name (better for secrets: a flag shows in the process list); unattended (--yes, or no terminal)',
    'a missing answer stops the setup with the flag and variable to set.',
    '',
    ...rows,
    row('--env-file <path>', 'the file to write (default .env here)'),
    row('--yes, -y', 'never ask'),
  ].join('\n');
}

/** One question: the variable it sets and how it is asked. */
export interface Question {
  name: AnswerName | 'SLACK_STATE_SECRET' | 'SLACK_INSTALLATION_KEY';
  message: string;
  /** Not needed: an empty answer leaves the variable unset. */
  optional?: boolean;
  placeholder?: string;
}

/** The answers: given ones, the `.env` file's, and the questions for the rest. */
export class Answers {
  /**
   * @param flags the values given as flags.
   * @param env the environment (usually `process.env`).
   * @param existing the variables of the `.env` file as it is.
   * @param interactive whether questions may be asked (a terminal, without `--yes`).
   */
  constructor(
    private readonly flags: Partial<Record<string, string>>,
    private readonly env: Record<string, string | undefined>,
    readonly existing: Record<string, string>,
    readonly interactive: boolean,
    private readonly prompter: Prompter,
    private readonly report: Reporter,
  ) {}

  /** The value given as a flag or in the environment (flag first); undefined when neither, or empty. */
  given(name: string): string | undefined {
    const value = this.flags[name] ?? this.env[name];
    return value === '' ? undefined : value;
  }

  /** The given value, else the `.env` file's; undefined when neither. */
  known(name: string): string | undefined {
    return this.given(name) ?? (this.existing[name] || undefined);
  }

  /** What is wrong with `value` for `name`, in the schema's words; undefined when it is good. */
  problem(name: string, value: string): string | undefined {
    const field = (
      envSchema.shape as Record<
        string,
        { safeParse(v: unknown): { success: boolean; error?: { issues: Array<{ message: string }> } } }
      >
    )[name];
    if (name === 'SETUP_PUBLIC_URL' && !/^https:\/\/[^\s/]+/.test(value)) return `${name} must be an https URL`;
    if (/[\r\n]/.test(value)) return `${name} must be one line`;
    const parsed = field?.safeParse(value);
    return parsed && !parsed.success ? `${name} ${parsed.error?.issues[0]?.message ?? 'is malformed'}` : undefined;
  }

  /**
   * The answer to `question`: given, else (unattended) the `.env` file's, else asked.
   * @param options.retry a check refused the last answer: ask, whatever was given.
   * @param options.current the last answer, kept when the question is answered with Enter.
   * @returns the value; undefined for an optional question left empty.
   * @throws SetupProblem unattended, when a required answer is missing or malformed.
   * @throws SetupCancelled when the person cancels.
   */
  async ask(question: Question, options: { retry?: boolean; current?: string | undefined } = {}) {
    const { name } = question;
    const source = `--${flagOf(name as AnswerName)} or ${name}`;
    const given = options.retry ? undefined : this.given(name);
    if (given !== undefined) {
      const problem = this.problem(name, given);
      if (!problem) return given;
      if (!this.interactive) throw new SetupProblem(`${problem} (given as ${source}).`);
      this.report.fail(`${problem}.`);
    }
    const fallback = options.current ?? (this.existing[name] || undefined);
    if (!this.interactive) {
      if (fallback === undefined) {
        if (question.optional) return undefined;
        throw new SetupProblem(`${name} is required: pass ${source.replace(' or ', ' or set ')} in the environment.`);
      }
      const problem = this.problem(name, fallback);
      if (problem) throw new SetupProblem(`${problem} (in the .env file): pass ${source.replace(' or ', ' or set ')}.`);
      return fallback;
    }
    const validate = (value: string) =>
      value === ''
        ? fallback !== undefined || question.optional
          ? undefined
          : `${name} is required`
        : this.problem(name, value);
    const typed = SECRET_VARIABLES.has(name)
      ? await this.prompter.secret({
          message: fallback === undefined ? question.message : `${question.message} (Enter keeps the current one)`,
          validate,
        })
      : await this.prompter.text({
          message: question.message,
          defaultValue: fallback,
          placeholder: question.placeholder,
          validate,
        });
    return typed === '' ? fallback : typed;
  }
}
