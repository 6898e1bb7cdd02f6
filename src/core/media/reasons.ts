/**
 * Why a user's file is not used, in the bot's words (catalog `media.*`), as {@link Sentence}s
 * put into words by whoever knows the reader. A {@link Reason}'s message has two forms, chosen
 * by its `form` select: `line`, the phrase after the file's name in a list ("Not used: a.pdf
 * (too large (…))"), and `sentence`, a whole sentence naming the file ("a.pdf is too large (…)."),
 * so that each language words both its own way.
 */
import type { MessageKey } from '../i18n/catalogs.ts';
import { type MessageValues, type Sentence, sentence } from '../i18n/words.ts';

/** A `media.reason.*` key. */
export type ReasonKey = Extract<MessageKey, `media.reason.${string}`>;

/**
 * A reason a file is not used: a `media.reason.*` message and its values, without its form and
 * the file's name (see {@link reasonLine}, {@link reasonSentence}): its message takes `form`
 * (`line` or `sentence`) and `name`.
 */
export type Reason = Sentence;

/** A {@link Reason}. */
export function reason(key: ReasonKey, values?: MessageValues): Reason {
  return sentence(key, values);
}

/** The reason as the phrase after a file's name in a list: "too large (2.0 MB; files up to 1.0 MB are read)". */
export function reasonLine(said: Reason): Sentence {
  return sentence(said.key, { ...said.values, form: 'line', name: '' });
}

/** The reason as a whole sentence naming the file (`name`, escaped by the caller where it must be): "a.png is too large (…).". */
export function reasonSentence(said: Reason, name: string): Sentence {
  return sentence(said.key, { ...said.values, form: 'sentence', name });
}

/** A size in bytes as users read it: `2.0 MB` (`2,0 MB` in German), MiB to one decimal. */
export function megabytes(bytes: number): Sentence {
  return sentence('media.mb', { mb: Math.round((bytes / 1024 / 1024) * 10) / 10 });
}

/** The formats the bot reads, as a refusal names them ("JPEG, PNG, WebP, GIF, AVIF and TIFF work"). */
export const READABLE_FORMATS: Sentence = sentence('media.formats');
