/**
 * How long until a quota or a spending cap resets, in the reader's words (catalog `errors.wait.*`):
 * "in 42 s", "in 3 min", "in 3 h 5 min" ("in 3 Std. 5 Min."), the end of a refusal or a /usage line.
 */
import { type Sentence, sentence } from '../i18n/words.ts';

/** How long until something resets, as the end of a sentence (`errors.wait.*`): "in 42 s", "in 3 h 5 min". */
export function waitIn(ms: number): Sentence {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  if (seconds < 120) return sentence('errors.wait.seconds', { seconds });
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 120) return sentence('errors.wait.minutes', { minutes });
  return sentence('errors.wait.hours', { hours: Math.floor(minutes / 60), minutes: minutes % 60 });
}
