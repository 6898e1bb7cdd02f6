/**
 * Slack slash commands carry one `text` field; options are written `--name value`
 * (e.g. `/imagine a red fox --aspect_ratio landscape --style natural`), and the rest of the
 * text is the command's main option (its first required string option, e.g. `prompt`).
 *
 * The parser is strict, so that nothing a user meant as an option silently becomes prompt
 * text: an unknown `--flag`, another command's option, `--prompt`, a short `-s`, an option
 * given twice and a boolean with a value other than true/false are named back with the right
 * form. Phones type `—` (em dash) or `–` for `--`: both are read as `--`. Text in quotes
 * ("…" or “…”) is prompt text as written, flags and all.
 */
import type { Command, CommandOption } from '../../core/command.ts';
import { OptionError } from '../../core/errors.ts';
import { type Sentence, sentence } from '../../core/i18n/words.ts';
import { flagForm, mainOptionOf } from '../../core/option-forms.ts';
import { isWhitespace, NextIndex } from '../../core/text-scan.ts';
import { unescapeSlackText } from './text.ts';

/** Words a boolean flag may take as its value (`--json yes`). */
const BOOLEAN_WORDS = new Map([
  ['true', 'true'],
  ['yes', 'true'],
  ['on', 'true'],
  ['false', 'false'],
  ['no', 'false'],
  ['off', 'false'],
]);

/** Closing quote of each opening quote that protects text. */
const QUOTES: Record<string, string> = { '"': '"', '“': '”', '„': '“' };

/** A flag at position `i` (at a word start): `--name`, `—name`, `–name`, or a short `-x`. */
const FLAG = /^(?:--|[—–])([A-Za-z][\w-]*)(=)?|^-([A-Za-z])(?=\s|$)/;

/** Where a closing quote next occurs in the text, at or after a position (-1: nowhere). */
type ClosingQuotes = (close: string, from: number) => number;

/**
 * The closing quotes of `text`, each search resuming where the last one for that quote stopped:
 * a text of many opening quotes and no closing one would otherwise be read to its end from each.
 */
function closingQuotesOf(text: string): ClosingQuotes {
  const finders = new Map<string, NextIndex>();
  return (close, from) => {
    let finder = finders.get(close);
    if (!finder) {
      finder = new NextIndex(text, close);
      finders.set(close, finder);
    }
    return finder.at(from);
  };
}

/** Reads a value after a flag: a quoted string, or the next word. */
function readValue(text: string, from: number, closing: ClosingQuotes): { value: string; end: number } | undefined {
  let i = from;
  while (i < text.length && /[ \t]/.test(text[i]!)) i++;
  if (i >= text.length || text[i] === '\n') return undefined;
  const close = QUOTES[text[i]!];
  if (close) {
    const end = closing(close, i + 1);
    if (end > i) return { value: text.slice(i + 1, end), end: end + 1 };
  }
  if (FLAG.test(text.slice(i))) return undefined;
  let end = i;
  while (end < text.length && !/\s/.test(text[end]!)) end++;
  return { value: text.slice(i, end), end };
}

/**
 * Parses slash-command `text` into raw option values, by the command's definition, in time
 * linear in the length of `text`.
 * @param others every command (to say which command an unknown option belongs to).
 * @returns option name → raw string value (an option named without a value maps to `''`,
 *   which `checkOptions` reports); the main option holds the rest of the text.
 * @throws OptionError naming every unknown, malformed or repeated option, with the right form.
 */
export function parseSlashText(
  command: Command,
  text: string,
  others: readonly Command[] = [],
): Record<string, string> {
  return new SlashTextParser(command, others, unescapeSlackText(text)).parse();
}

/** One pass over a command's text: flags and their values out, the rest kept as the main option's text. */
class SlashTextParser {
  private readonly main: CommandOption | undefined;
  private readonly options: Map<string, CommandOption>;
  private readonly closing: ClosingQuotes;
  private readonly out: Record<string, string> = {};
  private readonly problems: Sentence[] = [];
  /** The main option's text: the source but for the flags and their values, copied a run at a time. */
  private readonly restParts: string[] = [];
  /** Where the current run of main text began; -1 right after a flag (the next run starts where the scan goes on). */
  private runStart = 0;
  private i = 0;

  constructor(
    private readonly command: Command,
    private readonly others: readonly Command[],
    private readonly source: string,
  ) {
    this.main = mainOptionOf(command);
    this.options = new Map(command.options.filter((o) => o !== this.main).map((o) => [o.name, o]));
    this.closing = closingQuotesOf(source);
  }

  /** @throws OptionError as {@link parseSlashText}. */
  parse(): Record<string, string> {
    const { source } = this;
    while (this.i < source.length) {
      if (this.runStart < 0) this.runStart = this.i;
      const atWordStart = this.i === 0 || isWhitespace(source.charCodeAt(this.i - 1));
      if (atWordStart && this.skipQuoted()) continue;
      const flag = atWordStart ? FLAG.exec(source.slice(this.i)) : null;
      if (!flag) {
        this.i++;
        continue;
      }
      this.restParts.push(source.slice(this.runStart, this.i));
      this.runStart = -1;
      this.i += flag[0].length;
      this.takeFlag(flag);
    }
    if (this.runStart >= 0) this.restParts.push(source.slice(this.runStart));
    return this.finish(this.restParts.join(''));
  }

  /** At an opening quote that closes later: steps over the quoted text (prompt text as written). */
  private skipQuoted(): boolean {
    const quote = QUOTES[this.source[this.i]!];
    if (!quote) return false;
    const end = this.closing(quote, this.i + 1);
    if (end <= this.i) return false;
    this.i = end + 1;
    return true;
  }

  /** A flag just read (the scan is past it): its value taken, or the problem named. */
  private takeFlag(flag: RegExpExecArray): void {
    if (flag[3] !== undefined) {
      const guess = [...this.options.values()].find((o) => o.name.startsWith(flag[3]!.toLowerCase()));
      this.problems.push(
        guess
          ? sentence('slack.options.short_flag_guess', { flag: flag[3], guess: flagForm(guess) })
          : sentence('slack.options.short_flag', { flag: flag[3] }),
      );
      return;
    }
    const written = flag[0].replace(/=$/, '');
    const name = flag[1]!.toLowerCase().replace(/-/g, '_');
    const option = this.options.get(name);
    const value = readValue(this.source, this.i, this.closing);
    if (!option) {
      if (value && flag[2]) this.i = value.end;
      this.problems.push(this.notAnOption(name, written));
      return;
    }
    if (this.out[name] !== undefined) this.problems.push(sentence('slack.options.twice', { name }));
    if (option.type === 'boolean') {
      this.takeBoolean(name, value);
      return;
    }
    this.out[name] = value ? value.value : '';
    if (value) this.i = value.end;
  }

  /** A boolean flag: alone (true), or with one of {@link BOOLEAN_WORDS}. */
  private takeBoolean(name: string, value: { value: string; end: number } | undefined): void {
    const word = value ? BOOLEAN_WORDS.get(value.value.toLowerCase()) : undefined;
    if (value && word === undefined) {
      this.problems.push(
        this.main
          ? sentence('slack.options.boolean_after_main', { name, value: value.value, main: this.main.name })
          : sentence('slack.options.boolean_after_text', { name, value: value.value }),
      );
      this.i = value.end;
      return;
    }
    this.out[name] = word ?? 'true';
    if (value) this.i = value.end;
  }

  /** The sentence for a flag that is not one of the command's options. */
  private notAnOption(name: string, written: string): Sentence {
    const { command, main } = this;
    if (main && name === main.name)
      return sentence('slack.options.main_is_text', { main: main.name, command: command.name, written });
    const owner = this.others.find((c) => c !== command && c.options.some((o) => o.name === name));
    return owner
      ? sentence('slack.options.other_command', { written, owner: owner.name, command: command.name })
      : sentence('slack.options.no_such', { command: command.name, written });
  }

  /** The values with the main option's text, or every problem in one OptionError. */
  private finish(rest: string): Record<string, string> {
    const { command, main, options, problems } = this;
    // A command without free text (/settings, /models…) would drop these words unread, so that
    // `/settings chat_model:x` (Discord's form) changed nothing and said nothing: name them.
    const extra = rest.trim();
    // A word that is the one choice of a string option not given (`/forget me`) is that option.
    const chosen = main || !extra ? undefined : choiceWord(command, extra, this.out);
    if (chosen) this.out[chosen] = extra.toLowerCase();
    else if (!main && extra) {
      const colon = /^([A-Za-z][\w-]*):/.exec(extra);
      const named = colon ? options.get(colon[1]!.toLowerCase().replace(/-/g, '_')) : undefined;
      const shown = extra.length > 60 ? `${extra.slice(0, 59)}…` : extra;
      problems.push(
        named
          ? sentence('slack.options.no_text_named', { command: command.name, extra: shown, form: flagForm(named) })
          : sentence('slack.options.no_text', { command: command.name, extra: shown }),
      );
    }
    if (problems.length) {
      const forms = [...options.values()].map((o) => `\`${flagForm(o)}\``).join(', ');
      // One problem a line (a list, each line a whole sentence), then the command's options.
      const listed = linesOf(problems.slice(0, MAX_PROBLEMS_SHOWN));
      throw new OptionError(
        forms
          ? sentence('slack.options.summary', { problems: listed, command: command.name, forms })
          : sentence('slack.options.summary_none', { problems: listed, command: command.name }),
      );
    }
    // Where a flag was taken out, two spaces are left between words: close the gap (line indents stay).
    if (main) this.out[main.name] = rest.replace(/(?<=\S) {2,}(?=\S)/g, ' ').trim();
    return this.out;
  }
}

/**
 * Problems of one command text told at most: their lines nest as Sentences (a balanced tree of
 * `slack.options.lines`, within words.ts's nesting bound of 4 under the summary).
 */
const MAX_PROBLEMS_SHOWN = 8;

/** Sentences one a line, as one Sentence (halves joined by `slack.options.lines`, so the nesting stays shallow). */
function linesOf(list: readonly Sentence[]): Sentence {
  if (list.length === 1) return list[0]!;
  const half = Math.ceil(list.length / 2);
  return sentence('slack.options.lines', { first: linesOf(list.slice(0, half)), rest: linesOf(list.slice(half)) });
}

/**
 * The string option (not given yet) that has `word` among its choices, for a command without free
 * text: `/forget me` is `/forget --scope me`. @returns its name, or undefined.
 */
function choiceWord(command: Command, word: string, given: Record<string, string>): string | undefined {
  const lower = word.toLowerCase();
  return command.options.find(
    (o) => o.type === 'string' && given[o.name] === undefined && o.choices?.some((c) => String(c.value) === lower),
  )?.name;
}

/** Whether slash-command text asks for help (`help`, `--help`, `-h`, `?`). */
export function asksForHelp(text: string): boolean {
  return /^\s*(help|--help|-h|\?)\s*$/i.test(text);
}
