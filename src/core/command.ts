/**
 * Platform-neutral slash commands: the definition type that files under commands/ satisfy,
 * option checking shared by both adapters, and the one place that runs a command, turns
 * any error into a message for the user, and logs it once.
 */

import type { Texted } from './command-words.ts';
import type { Core } from './core.ts';
import { ForbiddenError, InputError, OptionError, ShownError, withReference } from './errors.ts';
import type { CommandOutcome } from './events.ts';
import type { MessageKey } from './i18n/catalogs.ts';
import { type Sentence, sentence } from './i18n/words.ts';
import type { Attachment, CommandContext, ComponentContext, ReplyChannel } from './platform.ts';
import { sentenceOf } from './sentences.ts';
import { ServiceError } from './service/errors.ts';

/**
 * Option value types; both platforms can express these. `attachment`: a file (a Discord
 * upload; on Slack an https URL or a Slack file link), handed over in `ctx.files`.
 */
export type OptionType = 'string' | 'integer' | 'number' | 'boolean' | 'attachment';

/** Where an option's autocomplete choices come from (Discord autocomplete; Slack help lists them). */
export type AutocompleteSource = 'text_models' | 'image_models';

/** One option of a command (Discord application command option; Slack `--name value`); its words: {@link Texted}. */
export interface CommandOption extends Texted {
  /** 1–32 lowercase characters (Discord's rule), e.g. `aspect_ratio`; the same in every locale. */
  name: string;
  /** 1–100 characters, English: the catalog's `${text}.description` (the other locales read it with `text`). */
  description: string;
  type: OptionType;
  required?: boolean;
  /** Allowed values (at most 25); `name`, 1–100 characters, English: the catalog's `text` (none: the same everywhere). */
  choices?: ReadonlyArray<{ name: string; value: string | number; text?: MessageKey | undefined }>;
  minValue?: number;
  maxValue?: number;
  /** Longest string value, in characters. */
  maxLength?: number;
  /** Choices offered while typing, from the service's live lists (string options only). */
  autocomplete?: AutocompleteSource;
}

/** A command, defined once in commands/<name>.ts and served by every adapter; its words: {@link Texted} (`commands.command.<name>`). */
export interface Command extends Texted {
  /** 1–32 lowercase characters, e.g. `chat` (Slack: `/chat`). */
  name: string;
  /** 1–100 characters, English (Slack's manifest; Discord's default): the catalog's `${text}.description`. */
  description: string;
  options: readonly CommandOption[];
  /** Checked at run time as well as hidden from non-admins on Discord. */
  adminOnly?: boolean;
  /**
   * Slack shows nobody a slash command's text: the question is posted in the channel,
   * attributed and quoted, and answered in its thread (whose conversation also keeps the
   * exchange). Channels only; a DM is answered as it is.
   */
  showsQuestion?: boolean;
  /**
   * Its answer is public and comes after slow work (the store, quotas, images, the service): the
   * platform acknowledges the invocation before any of that work, not when the feature asks
   * (Discord: deferReply at the top of the interaction's handler, within the 3 s of
   * docs/platform-limits.md; Slack acked already). Unset for commands that answer the invoker
   * alone (/settings, /usage, a private /models), which a public "is thinking…" would announce.
   * Options the definition refuses are refused before it; a later refusal (a quota, an admin
   * right) comes after it: the "thinking…" reply is removed and the sentence shown to the
   * invoker alone.
   */
  defersAtOnce?: boolean;
  /**
   * Its one answer is for the invoker alone and may carry files (/export): Discord defers it, when
   * it takes more than 2 s, as an ephemeral reply ("thinking…" shown to the invoker alone), and its
   * files never go to the channel. Exclusive with {@link defersAtOnce}.
   */
  answersPrivately?: boolean;
  /**
   * Its answer may open a thread on the question (Discord: its `thread` option true, or the
   * channel's `auto_thread` setting on): the adapter shows the question, opens a thread on it
   * and answers there, the thread being the conversation. Slack answers a channel's command in
   * its question's thread already ({@link showsQuestion}).
   */
  opensThread?: boolean;
  /** Invocations shown by Slack's `/<name> help` (without the slash command itself). */
  examples?: readonly string[];
  execute(ctx: CommandContext, core: Core): Promise<void>;
  /**
   * Handles a press of one of this command's buttons (ids `<name>:<args…>`), e.g. paging.
   * @throws like execute (the presser is told).
   */
  onComponent?(ctx: ComponentContext, core: Core): Promise<void>;
}

/**
 * An option's range in words (catalog `errors.range.*`): `from 0 to 2`, `at least 1`, `at most 5`;
 * undefined when it has none.
 */
export function rangeOf(option: Pick<CommandOption, 'minValue' | 'maxValue'>): Sentence | undefined {
  const { minValue: min, maxValue: max } = option;
  if (min !== undefined && max !== undefined) return sentence('errors.range.between', { min, max });
  if (min !== undefined) return sentence('errors.range.at_least', { min });
  if (max !== undefined) return sentence('errors.range.at_most', { max });
  return undefined;
}

/** The refusal of a value outside an option's range (`errors.option.between|at_least|at_most`); option names stay as written. */
function outOfRange(option: CommandOption): Sentence {
  const { name, minValue: min, maxValue: max } = option;
  if (min !== undefined && max !== undefined) return sentence('errors.option.between', { name, min, max });
  if (min !== undefined) return sentence('errors.option.at_least', { name, min });
  return sentence('errors.option.at_most', { name, max: max ?? 0 });
}

/** Option names or values as a list of code spans: `` `a`, `b`, `c` `` (identifiers: not translated). */
function codeList(items: ReadonlyArray<string | number>): string {
  return items.map((i) => `\`${i}\``).join(', ');
}

/** Whether option values pass the command's definition ({@link checkOptions}, a check of values only: no I/O). */
export function optionsPass(command: Command, options: Record<string, unknown>): boolean {
  try {
    checkOptions(command, options);
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks option values against a command's definition (required, type, choices, ranges,
 * length) and returns them typed. Discord checks most of this client-side; Slack does not.
 * @throws OptionError with a sentence (`errors.option.*`) naming the option and what it accepts.
 */
export function checkOptions(
  command: Command,
  raw: Record<string, unknown>,
): Record<string, string | number | boolean | undefined> {
  const out: Record<string, string | number | boolean | undefined> = {};
  for (const name of Object.keys(raw)) {
    if (!command.options.some((o) => o.name === name)) {
      throw new OptionError('errors.option.unknown', {
        command: command.name,
        name,
        options: codeList(command.options.map((o) => o.name)),
      });
    }
  }
  for (const option of command.options) {
    const given = raw[option.name];
    // Whitespace alone is no text: a blank prompt is refused on every platform alike.
    const blank = typeof given === 'string' && given.trim() === '';
    if (given === undefined || blank) {
      const { name, description } = option;
      if (option.required)
        throw new OptionError('errors.option.required', { command: command.name, name, description });
      // An option named without a value (Slack: `--style` at the end) is a mistake worth saying.
      if (blank) throw new OptionError('errors.option.needs_value', { name, description });
      continue;
    }
    const value = typedValue(option, given);
    if (option.choices && !option.choices.some((c) => c.value === value)) {
      throw new OptionError('errors.option.one_of', {
        name: option.name,
        choices: codeList(option.choices.map((c) => c.value)),
      });
    }
    out[option.name] = value;
  }
  return out;
}

/**
 * One given option value as its type: a number within the range, a boolean from true/false/yes/no,
 * a string within `maxLength`, an attachment's reference as is.
 * @throws OptionError naming the option and what it accepts.
 */
function typedValue(option: CommandOption, given: unknown): string | number | boolean {
  if (option.type === 'attachment') return String(given);
  if (option.type === 'integer' || option.type === 'number') {
    const n = typeof given === 'number' ? given : Number(given);
    if (!Number.isFinite(n) || (option.type === 'integer' && !Number.isInteger(n)))
      throw new OptionError(option.type === 'integer' ? 'errors.option.whole_number' : 'errors.option.number', {
        name: option.name,
      });
    if (
      (option.minValue !== undefined && n < option.minValue) ||
      (option.maxValue !== undefined && n > option.maxValue)
    )
      throw new OptionError(outOfRange(option));
    return n;
  }
  if (option.type === 'boolean') {
    const text = String(given).toLowerCase();
    if (typeof given !== 'boolean' && !['true', 'false', 'yes', 'no'].includes(text))
      throw new OptionError('errors.option.boolean', { name: option.name });
    return given === true || text === 'true' || text === 'yes';
  }
  const value = String(given);
  if (option.maxLength !== undefined && value.length > option.maxLength)
    throw new OptionError('errors.option.too_long', { name: option.name, length: value.length, max: option.maxLength });
  return value;
}

export type { CommandOutcome } from './events.ts';

/** The log line of each kind of refused input. */
const INPUT_LOG_MESSAGES: Record<string, string> = {
  invalid_option: 'invalid command option',
  forbidden: 'admin command refused',
  invalid_input: 'input not usable',
};

/** Option values and files an adapter reads from a request (Slack parses its text). */
export interface RawInvocation {
  options: Record<string, unknown>;
  files?: Record<string, Attachment>;
}

/**
 * Runs a command: checks admin rights at run time and the options against the definition,
 * then executes it, as {@link runInvocation}.
 * @param read reads the raw options (and files) when they need parsing that can fail with an
 *   OptionError for the user (Slack's text); default `ctx.options` and `ctx.files`.
 */
export function runCommand(
  command: Command,
  ctx: CommandContext,
  core: Core,
  read?: () => Promise<RawInvocation>,
): Promise<CommandOutcome> {
  // When the user asked (unless the adapter says): a long answer's notice counts from it (features/answer-notice.ts).
  const startedAt = ctx.startedAt ?? performance.now();
  return runInvocation(command.name, ctx, core, async () => {
    if (command.adminOnly && !(await ctx.user.isAdmin()))
      throw new ForbiddenError('common.admins_only', { command: command.name });
    const raw = read ? await read() : { options: ctx.options, files: ctx.files };
    // Returned, not awaited: this frame is not kept for as long as the command runs (runInvocation awaits it).
    return command.execute(
      { ...ctx, startedAt, options: checkOptions(command, raw.options), files: raw.files ?? ctx.files },
      core,
    );
  });
}

/**
 * Handles a press of a command's button (`<command>:<args…>`) on either platform: a button of
 * no known command is told it no longer works; else the command's `onComponent` runs, which
 * checks the presser's rights when the press runs, against the current configuration and what
 * the bot stored (who asked, who may press, what the presser may set). Stop buttons are
 * delivery/stops.ts's.
 * @param command the command named by the button id, if it still exists.
 * @throws what `onComponent` throws (ForbiddenError for a presser without the right).
 */
export async function runComponent(command: Command | undefined, ctx: ComponentContext, core: Core): Promise<void> {
  if (!command?.onComponent) {
    ctx.log.warn('a button of no known command was pressed');
    await ctx.sendEphemeral((await core.languages.forUser(ctx)).t('common.button_gone'));
    return;
  }
  await command.onComponent(ctx, core);
}

/**
 * What {@link runInvocation} needs of an invocation: where it is, a logger, and a way to tell the
 * user. `log` is the invocation's own, bound (pino child bindings) to its `ref` and to its name as
 * `command`: runInvocation's lines do not repeat them (a key written twice in one JSON line).
 */
export type InvocationTarget = Pick<CommandContext, 'platform' | 'conversationId' | 'log' | 'ref' | 'locale'> & {
  reply: Pick<ReplyChannel, 'sendEphemeral' | 'explain' | 'isDeleted'>;
};

/**
 * Runs one invocation (a command, `mention` for a mention or DM, `<command>:button` for a
 * press of a command's button): on failure tells the
 * user (ephemerally where the platform allows) and logs once, then emits `command.done`. An
 * InputError (the user's own mistake: an option, a right, a quota) is told as it is; any other
 * failure's sentence ends with the invocation's reference, which its log lines carry (docs/operator-guide.md, "Logs").
 * A reply deleted while it was written (ReplyChannel.isDeleted) is the user's choice: nothing is
 * said, and the outcome's code is `reply_deleted`.
 * Never throws: the bot survives any invocation.
 * @param name the command's name, or `mention`.
 */
export async function runInvocation(
  name: string,
  ctx: InvocationTarget,
  core: Core,
  work: () => Promise<void>,
): Promise<CommandOutcome> {
  const started = performance.now();
  let errorCode: string | undefined;
  try {
    await work();
  } catch (thrown) {
    const shown = thrown instanceof ShownError;
    const error = shown ? thrown.cause : thrown;
    // A reply only its user sees: in their language (i18n/languages.ts).
    const words = await core.languages.forUser(ctx);
    const tell = (said: Sentence) => (shown ? Promise.resolve() : ctx.reply.sendEphemeral(words.say(said)));
    if (error instanceof InputError) {
      errorCode = error.code;
      ctx.log.info({ code: error.code, reason: error.message }, INPUT_LOG_MESSAGES[error.code] ?? 'input not usable');
      await tell(error.sentence);
    } else if (error instanceof ServiceError) {
      errorCode = error.code;
      ctx.log.warn({ code: error.code, status: error.status, err: error.message }, 'service call failed');
      await tell(withReference(sentenceOf(error, ctx), ctx.ref));
    } else if (ctx.reply.isDeleted?.(error)) {
      // The user (or a moderator) deleted the answer while it was written: their choice, no failure to tell.
      errorCode = 'reply_deleted';
      ctx.log.info({ err: error }, 'the reply was deleted while it was written; the answer stopped');
    } else {
      const explained = ctx.reply.explain?.(error);
      errorCode = explained ? 'platform_refused' : 'internal';
      if (explained) ctx.log.warn({ err: error }, 'platform refused a write');
      else ctx.log.error({ err: error }, 'command failed');
      await tell(withReference(explained ?? sentenceOf(error), ctx.ref));
    }
  }
  const outcome: CommandOutcome = {
    platform: ctx.platform,
    command: name,
    conversationId: ctx.conversationId,
    ok: errorCode === undefined,
    durationMs: performance.now() - started,
    ...(errorCode ? { errorCode } : {}),
  };
  core.events.emit('command.done', outcome);
  return outcome;
}
