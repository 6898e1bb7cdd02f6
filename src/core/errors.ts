/**
 * The errors that become a sentence for the user, and the reference that ties a sentence to its
 * log line. A leaf module: it imports nothing of the core, so that every part of it (features,
 * quotas, media, delivery) can throw these without importing the runner (command.ts).
 */

import type { MessageKey } from './i18n/catalogs.ts';
import { english, type MessageValues, type Sentence, sentence, type Words } from './i18n/words.ts';

/**
 * Input the bot cannot act on (a mention with nothing to answer, files it cannot use);
 * `message` is the sentence for the user. Logged at info level, code `invalid_input`. This
 * error and its kinds are the user's own to fix: the runner tells them without a reference
 * (docs/operator-guide.md, "Logs"), which every other failure's sentence carries.
 */
export class InputError extends Error {
  readonly code: string = 'invalid_input';
  /** What the user is told, in words not yet chosen (the runner renders it in the user's language). */
  readonly sentence: Sentence;

  /**
   * @param said the sentence for the user (i18n/words.ts), or its catalog key and values;
   *   `message` is its English, for the log.
   */
  constructor(said: Sentence | MessageKey, values?: MessageValues) {
    const s = typeof said === 'string' ? sentence(said, values) : said;
    super(english.say(s));
    this.sentence = s;
    this.name = new.target.name;
  }

  /** The sentence in `words`' language. */
  told(words: Words): string {
    return words.say(this.sentence);
  }
}

/** An option value the user gave that the command cannot take; `message` is for the user. */
export class OptionError extends InputError {
  override readonly code = 'invalid_option';
}

/** The user may not do this (an admin command); `message` is for the user. Code `forbidden`. */
export class ForbiddenError extends InputError {
  override readonly code = 'forbidden';
}

/**
 * Wraps an error the command has already shown to the user (e.g. appended to a partly
 * streamed answer): runCommand logs it once and sends nothing more.
 */
export class ShownError extends Error {
  /** @param cause the error shown. */
  constructor(override readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'ShownError';
  }
}

/**
 * A sentence about a failure with its reference id, e.g. `… Try again in a minute. (ref K7M2QX)`:
 * for failures an operator may need to trace (the service's, the platform's, the bot's own),
 * never for an {@link InputError} (docs/operator-guide.md, "Logs").
 */
export function withReference(said: Sentence, ref: string): Sentence {
  return sentence('common.with_reference', { sentence: said, ref });
}
