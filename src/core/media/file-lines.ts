/**
 * The lines under an answer that name a question's files ("Not used: …", "Read in part: …"),
 * bounded whatever the files are called and however many there are: at most
 * {@link MAX_LISTED_FILES} are named, each name cut to {@link MAX_NAME_CHARS} characters (its
 * start and its extension kept), the rest counted ("and 20 more"). A reply chain of 25 messages
 * with long-named images makes one short line, not pages of notes.
 */
import { type Sentence, sentence } from '../i18n/words.ts';

/** Files named in one line, at most. */
export const MAX_LISTED_FILES = 5;

/** Characters of a file's name in a line, at most. */
export const MAX_NAME_CHARS = 60;

/** Characters kept from a long name's end (its extension, and a little before it). */
const NAME_TAIL = 12;

/**
 * A file's name as shown in a line: whole when it is at most `max` characters, else its start,
 * `…` and its last characters (`a-very-long-report-name…ummary-v2.pdf`). Never half a surrogate pair.
 */
export function shortName(name: string, max = MAX_NAME_CHARS): string {
  const chars = [...name];
  if (chars.length <= max) return name;
  return `${chars.slice(0, max - NAME_TAIL - 1).join('')}…${chars.slice(-NAME_TAIL).join('')}`;
}

/**
 * `a.pdf (why), b.txt (why) and 3 more` (catalog `media.list`): the first {@link MAX_LISTED_FILES}
 * entries as `<short name> (<detail>)`, then how many were left out, in the reader's language.
 * @param entries each file's name and its detail (a reason's line: reasons.ts `reasonLine`, or what was kept).
 */
export function fileList(entries: readonly { name: string; detail: Sentence }[]): Sentence {
  const listed = entries.slice(0, MAX_LISTED_FILES);
  const values: Record<string, string | number | Sentence> = {
    count: String(Math.max(1, listed.length)),
    more: entries.length - listed.length,
  };
  for (let i = 0; i < MAX_LISTED_FILES; i++) {
    values[`n${i + 1}`] = listed[i] ? shortName(listed[i]!.name) : '';
    values[`d${i + 1}`] = listed[i]?.detail ?? '';
  }
  return sentence('media.list', values);
}
