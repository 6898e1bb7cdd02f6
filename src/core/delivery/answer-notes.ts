/**
 * What a streamed answer (streaming-reply.ts) says about its own delivery, under its text: that
 * the platform held its writes back (a wait named beyond MAX_HOLD_MS: bucket.ts), and, in the
 * first message, that a continuation could not be posted.
 */
import type { Logger } from '../../log.ts';
import type { Words } from '../i18n/words.ts';
import type { MessageHandle, ReplyChannel } from '../platform.ts';
import { refusingWrites } from '../sentences.ts';
import { unmarked } from './answer-pages.ts';
import type { NamedWait } from './bucket.ts';

/**
 * The final text of an answer a platform held back: the text, then the sentence saying the
 * platform is refusing the bot's writes (sentences.ts `refusingWrites`) as a note line
 * (`_⚠️ …_`, in `words`: the place's), after the answer's notes when it ends with some, else after a blank line.
 */
export function withHeldNote(text: string, wait: NamedWait, words: Words): string {
  const note = `_⚠️ ${words.say(refusingWrites(wait))}_`;
  return /\n_⚠️ [^\n]*_$/.test(text) ? `${text}\n${note}` : `${text}\n\n${note}`;
}

/**
 * When a continuation could not be posted (a missing permission, the platform failing), the
 * first message says what is missing and why (`answer.channel.explain`), so the user is not left
 * with half an answer: its text as shown (`shown`, possibly marked), cut to fit, then the note,
 * in `answer.words` (the place's).
 * @returns whether the note was written (not without a first message shown; a failure is logged).
 */
export async function noteInFirst(
  first: MessageHandle | undefined,
  shown: string | undefined,
  answer: { channel: ReplyChannel; log: Logger | undefined; words: Words },
  error: unknown,
): Promise<boolean> {
  if (!first || shown === undefined) return false;
  const { channel, log, words } = answer;
  const explained = channel.explain?.(error);
  const reason = explained ? words.say(explained) : words.t('answers.stream.platform_refused');
  const note = `\n\n${words.t('answers.stream.rest_not_posted', { reason })}`;
  const { maxChars, measure = (t: string) => t.length } = channel.limits;
  let head = unmarked(shown).content;
  while (head.length > 0 && measure(head + note) > maxChars)
    head = head.slice(0, Math.max(0, head.length - (measure(head + note) - maxChars) - 1));
  try {
    await first.edit({ content: `${head}${note}` });
    return true;
  } catch (noteError) {
    log?.warn({ err: noteError }, 'could not note the missing continuation in the first message');
    return false;
  }
}
