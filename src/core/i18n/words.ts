/**
 * The bot's words in one locale: ICU MessageFormat messages from the catalogs (catalogs.ts)
 * formatted with intl-messageformat, plurals and numbers by the locale's `Intl` rules, and
 * {@link Sentence}s, the words a failure or a note carries until it is known who reads them.
 */
import { IntlMessageFormat } from 'intl-messageformat';
import { flatCatalog, type MessageKey } from './catalogs.ts';
import { type Locale, SHIPPED_LOCALES, SOURCE_LOCALE } from './locales.ts';

/**
 * What a message's placeholder takes: text (inserted as is: Markdown the caller escaped where it
 * must), a number (formatted by `{n, number}` or a plural), a Date (`{at, date, medium}`,
 * `{at, time, short}`), or another {@link Sentence}, rendered first in the same locale (a hint
 * that ends a refusal, a cap's name inside its refusal).
 */
export type MessageValue = string | number | Date | Sentence;

/** The values of a message's placeholders, by name. */
export type MessageValues = Readonly<Record<string, MessageValue>>;

/**
 * A message not yet put into words: its key and its values. Errors and notes carry one, so the
 * sentence is rendered in the language of whoever reads it (the runner, an ephemeral reply, a
 * public note) and in English for the log.
 */
export interface Sentence {
  readonly key: MessageKey;
  readonly values?: MessageValues;
}

/** A {@link Sentence} for `key` with `values`. */
export function sentence(key: MessageKey, values?: MessageValues): Sentence {
  return values ? { key, values } : { key };
}

/**
 * Whole sentences one after the other (`common.pair`: a space between them, none in Japanese), as
 * one Sentence; undefined entries left out; undefined when none is left. For sentences that each
 * stand alone (the reasons after a refusal), never for pieces of one.
 */
export function joinSentences(parts: ReadonlyArray<Sentence | undefined>): Sentence | undefined {
  const said = parts.filter((p): p is Sentence => p !== undefined);
  if (said.length === 0) return undefined;
  return said.reduce((first, second) => sentence('common.pair', { first, second }));
}

/** Whether a value is a {@link Sentence} (an object with a string `key`). */
export function isSentence(value: unknown): value is Sentence {
  return typeof value === 'object' && value !== null && typeof (value as Sentence).key === 'string';
}

/** How deep {@link Sentence}s may nest in each other's values before the rest is cut (a loop's guard). */
const MAX_NESTING = 4;

/**
 * Named date and time formats messages may use besides ICU's own (`short`, `medium`, …):
 * `{at, date, utc}` and `{at, time, utc}` show a moment in UTC (a spending cap's period ends at
 * 00:00 UTC, whatever the server's time zone), the time on a 24-hour clock.
 */
const FORMATS = {
  date: { utc: { timeZone: 'UTC', year: 'numeric', month: 'short', day: 'numeric' } },
  time: { utc: { timeZone: 'UTC', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' } },
} as const;

/**
 * The words of one locale. A message missing from its catalog (a test keeps that from shipping)
 * is taken from English; a key no catalog has is shown as the key itself, never thrown.
 */
export class Words {
  private readonly formats = new Map<string, IntlMessageFormat | undefined>();

  /** @param messages the locale's flattened catalog; `source` English's, for missing keys. */
  constructor(
    readonly locale: Locale,
    private readonly messages: ReadonlyMap<string, string>,
    private readonly source: ReadonlyMap<string, string>,
  ) {}

  /**
   * The message `key` in this locale with `values` put in (nested Sentences rendered first).
   * A message that fails to format (a value of the wrong kind) is logged by no one and falls
   * back to English, then to the key: words are never worth a failed reply.
   */
  t(key: MessageKey, values?: MessageValues): string {
    return this.render(key, values, 0);
  }

  /** Whether this locale's catalog (or English, its fallback) has `key`. */
  has(key: string): boolean {
    return this.messages.has(key) || this.source.has(key);
  }

  /** A {@link Sentence} in this locale. */
  say(said: Sentence): string {
    return this.render(said.key, said.values, 0);
  }

  private render(key: string, values: MessageValues | undefined, depth: number): string {
    const plain: Record<string, string | number | Date> = {};
    for (const [name, value] of Object.entries(values ?? {})) {
      plain[name] = isSentence(value)
        ? depth < MAX_NESTING
          ? this.render(value.key, value.values, depth + 1)
          : ''
        : value;
    }
    for (const format of [this.format(key, this.messages, this.locale), this.format(key, this.source, SOURCE_LOCALE)]) {
      if (!format) continue;
      try {
        return String(format.format(plain));
      } catch {
        // A value of the wrong kind for its placeholder: the next catalog, then the key.
      }
    }
    return key;
  }

  private format(key: string, messages: ReadonlyMap<string, string>, locale: Locale): IntlMessageFormat | undefined {
    const cacheKey = `${locale}\u0000${key}`;
    if (this.formats.has(cacheKey)) return this.formats.get(cacheKey);
    const message = messages.get(key);
    let format: IntlMessageFormat | undefined;
    if (message !== undefined) {
      try {
        // `ignoreTag`: `<@U123>` and `<https://…|…>` in Slack text are not ICU tags.
        format = new IntlMessageFormat(message, locale, FORMATS, { ignoreTag: true });
      } catch {
        format = undefined;
      }
    }
    this.formats.set(cacheKey, format);
    return format;
  }
}

const flat = new Map<Locale, Map<string, string>>();
const words = new Map<Locale, Words>();

/** The catalog of `locale`, flattened once. */
function messagesOf(locale: Locale): Map<string, string> {
  let messages = flat.get(locale);
  if (!messages) {
    messages = flatCatalog(locale);
    flat.set(locale, messages);
  }
  return messages;
}

/** The (one, cached) {@link Words} of a shipped locale. */
export function wordsOf(locale: Locale): Words {
  let w = words.get(locale);
  if (!w) {
    w = new Words(locale, messagesOf(locale), messagesOf(SOURCE_LOCALE));
    words.set(locale, w);
  }
  return w;
}

/** English words: what log lines and metrics use, and the catalog every other is checked against. */
export const english: Words = wordsOf(SOURCE_LOCALE);

/** Every shipped locale's words, English first. */
export function allWords(): Words[] {
  return SHIPPED_LOCALES.map(wordsOf);
}
