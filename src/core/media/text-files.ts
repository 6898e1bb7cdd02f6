/**
 * Files as context (issue 19, item 3), the parts that need no worker: what a user's file is
 * taken for (an image, a PDF, text, or a format the bot does not read) by its declared type,
 * then by its bytes (a text file is valid UTF-8 with no NUL and few control characters: a
 * file name alone never makes a file text), its text cut to a number of characters, and how
 * a file is put in the question (§2.1 `text` part) and noted in the history.
 */
import { english } from '../i18n/words.ts';
import { type Reason, reason, reasonSentence } from './reasons.ts';

/** What a file is taken for, before its bytes are seen. */
export type FileKind =
  | { kind: 'image' }
  | { kind: 'pdf' }
  /** Text when its bytes say so (a declared text type, or none, or a generic one). */
  | { kind: 'text' }
  /** Not read, and not downloaded: `reason` says why (reasons.ts). */
  | { kind: 'unsupported'; reason: Reason };

/** Declared types (without parameters) that are text although not `text/*`. */
const TEXT_TYPES =
  /^application\/(json|ld\+json|x-ndjson|xml|javascript|x-javascript|typescript|x-typescript|x-sh|x-shellscript|x-python|x-ruby|x-perl|x-php|x-httpd-php|sql|x-sql|toml|x-toml|yaml|x-yaml|graphql|csv|x-tex|x-latex|rtf|x-subrip|xhtml\+xml|.*\+json|.*\+xml)$/;

/** Declared types that carry no information: the bytes decide. */
const GENERIC_TYPES: ReadonlySet<string> = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

/** Office formats named as such (their text needs a converter the bot does not have). */
const OFFICE: ReadonlyArray<[RegExp, 'word' | 'spreadsheet' | 'presentation']> = [
  [/wordprocessingml|msword|opendocument\.text|\.(docx?|odt)$/, 'word'],
  [/spreadsheetml|ms-excel|opendocument\.spreadsheet|\.(xlsx?|ods)$/, 'spreadsheet'],
  [/presentationml|ms-powerpoint|opendocument\.presentation|\.(pptx?|odp)$/, 'presentation'],
];

/** The declared type, lower case, without parameters (`text/csv; charset=utf-8` → `text/csv`). */
function typeOf(mimeType: string | undefined): string {
  return (mimeType ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * What a file is taken for by its declared type and name, O(name length). Images are
 * recognized as media/attachments.ts `looksLikeImage` does (checked by the caller first);
 * `application/pdf` or a `.pdf` of no declared type is a PDF (its bytes are checked later);
 * `text/*` and the {@link TEXT_TYPES}, or no or a generic type, are text candidates (the bytes
 * decide, {@link sniffText}); Office documents, audio, video, fonts and archives are refused.
 */
export function fileKindOf(file: { name: string; mimeType: string | undefined }): FileKind {
  const type = typeOf(file.mimeType);
  const name = file.name.toLowerCase();
  if (type.startsWith('image/')) return { kind: 'image' };
  if (type === 'application/pdf' || (GENERIC_TYPES.has(type) && name.endsWith('.pdf'))) return { kind: 'pdf' };
  for (const [pattern, what] of OFFICE)
    if (pattern.test(type) || (GENERIC_TYPES.has(type) && pattern.test(name)))
      return { kind: 'unsupported', reason: reason('media.reason.office', { office: what }) };
  if (type.startsWith('text/') || TEXT_TYPES.test(type) || GENERIC_TYPES.has(type)) return { kind: 'text' };
  return { kind: 'unsupported', reason: reason('media.reason.not_text_type', { type }) };
}

/** Whether bytes begin as a PDF does (`%PDF-`, ISO 32000 §7.5.2), allowing a little junk before it. */
export function looksLikePdf(data: Uint8Array): boolean {
  return Buffer.from(data.subarray(0, 1024)).toString('latin1').includes('%PDF-');
}

/**
 * Whether bytes are text: valid UTF-8 (a byte order mark allowed), no NUL byte, and at most
 * one control character in 50 (tab, line feed, carriage return, form feed and escape, used
 * by colored logs, do not count). O(n).
 * @param options.prefix the bytes are the start of a longer file: a character cut at their end is not an error.
 */
export function sniffText(data: Uint8Array, options: { prefix?: boolean } = {}): boolean {
  return decodeText(data, options.prefix === true) !== undefined;
}

/** The bytes decoded as UTF-8 when they are text by the rule of {@link sniffText}, else undefined. O(n), one decode. */
function decodeText(data: Uint8Array, prefix: boolean): string | undefined {
  if (data.includes(0)) return undefined;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(prefix ? wholeCharacters(data) : data);
  } catch {
    return undefined;
  }
  let controls = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x0c && c !== 0x1b) || c === 0x7f) controls++;
  }
  return controls * 50 <= text.length ? text : undefined;
}

/** The bytes without a UTF-8 sequence cut at their end (at most 3 bytes dropped). */
function wholeCharacters(data: Uint8Array): Uint8Array {
  let end = data.length;
  // Back over continuation bytes (10xxxxxx) to the lead byte of the last character.
  let i = end - 1;
  while (i >= 0 && i > end - 4 && (data[i]! & 0xc0) === 0x80) i--;
  if (i < 0) return data;
  const lead = data[i]!;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  if (i + length > end) end = i;
  return data.subarray(0, end);
}

/** A file's text and whether it was cut. */
export interface ReadText {
  text: string;
  /** Whether characters past `maxChars` were left out. */
  cut: boolean;
}

/**
 * Decodes a text file's first `maxChars` characters (UTF-16 code units, never half a
 * surrogate pair), reading at most 3 bytes a character of it (UTF-8 takes at most 3 bytes per
 * UTF-16 unit: a 5 MB log cut to 100,000 characters decodes 300 KB), without its byte order mark.
 * @param options.more the bytes are only the start of the file (a ranged download): a character
 *   cut at their end is not an error, and the text is said to be cut.
 * @returns undefined when those bytes are not text ({@link sniffText}).
 */
export function readText(data: Uint8Array, maxChars: number, options: { more?: boolean } = {}): ReadText | undefined {
  let bytes = data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? data.subarray(3) : data;
  const sampled = bytes.length > maxChars * 3;
  if (sampled) bytes = bytes.subarray(0, maxChars * 3);
  const prefix = sampled || options.more === true;
  const text = decodeText(bytes, prefix);
  if (text === undefined) return undefined;
  if (text.length <= maxChars) return { text, cut: prefix };
  const last = text.charCodeAt(maxChars - 1);
  // Not half a surrogate pair: the pair is left out whole.
  const end = last >= 0xd800 && last <= 0xdbff ? maxChars - 1 : maxChars;
  return { text: text.slice(0, end), cut: true };
}

/** A file's text as it goes into the question. */
export interface ContextFile {
  /** The user's file name. */
  name: string;
  text: string;
  /** A PDF's pages read. */
  pages?: number;
}

/** The longest run of `char` (a single UTF-16 unit) in `text`. O(n). */
function longestRun(text: string, char: number): number {
  let longest = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    run = text.charCodeAt(i) === char ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

/** `` ` `` */
const BACKTICK = 0x60;
/** `~` */
const TILDE = 0x7e;

/**
 * The fence around a file's text: of backticks or of tildes (CommonMark's two fences; one never
 * closes the other), whichever can be shorter, one longer than the longest run of its character
 * in the text and at least 3. A file of backticks is fenced with `~~~`, not with a fence as long as itself.
 */
function fenceFor(text: string): string {
  const backticks = Math.max(3, longestRun(text, BACKTICK) + 1);
  const tildes = Math.max(3, longestRun(text, TILDE) + 1);
  return backticks <= tildes ? '`'.repeat(backticks) : '~'.repeat(tildes);
}

/**
 * The text part of a file (§2.1 `text` part): `File <name>:` (`File <name> (3 pages):` for a
 * PDF) and the text in a fence that no line of it can close ({@link fenceFor}).
 */
export function filePart(file: ContextFile): string {
  const fence = fenceFor(file.text);
  const pages = file.pages === undefined ? '' : ` (${file.pages} page${file.pages === 1 ? '' : 's'})`;
  const body = file.text.endsWith('\n') ? file.text : `${file.text}\n`;
  return `File ${file.name}${pages}:\n${fence}\n${body}${fence}`;
}

/**
 * The file with its text cut so that its whole part ({@link filePart}: the name, the fences and
 * the text) takes at most `maxChars` characters: the budget a file is given holds its fences too.
 * The text is first cut as if its fences were the shortest (3), then by what the part is still
 * over: a cut only shortens the fence, so one more cut settles it. Never half a surrogate pair.
 * @returns undefined when no character of the text fits.
 */
export function fitPart(file: ContextFile, maxChars: number): ContextFile | undefined {
  const frame = filePart({ ...file, text: '' }).length;
  let fitted = file.text.length > maxChars - frame ? { ...file, text: cutAt(file.text, maxChars - frame) } : file;
  for (let round = 0; round < 3; round++) {
    const over = filePart(fitted).length - maxChars;
    if (over <= 0) return fitted.text === '' ? undefined : fitted;
    if (over >= fitted.text.length) return undefined;
    fitted = { ...fitted, text: cutAt(fitted.text, fitted.text.length - over) };
  }
  return undefined;
}

/** `text`'s first `end` UTF-16 units, one fewer where the last would be half a surrogate pair. */
function cutAt(text: string, end: number): string {
  if (end <= 0) return '';
  const last = text.charCodeAt(end - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? end - 1 : end);
}

/** The history note for files sent with a turn: `[2 files: a.py, b.csv]` (their content is not kept). */
export function filesNote(files: readonly Pick<ContextFile, 'name'>[]): string | undefined {
  if (files.length === 0) return undefined;
  return `[${files.length} file${files.length > 1 ? 's' : ''}: ${files.map((f) => f.name).join(', ')}]`;
}

/**
 * A user's file that cannot be used as context: `reason` says why (reasons.ts: the phrase for
 * the warning line, or a sentence naming the file); `message` is that sentence in English, for logs.
 */
export class FileInputError extends Error {
  constructor(
    readonly file: string,
    readonly reason: Reason,
  ) {
    super(english.say(reasonSentence(reason, file)));
    this.name = 'FileInputError';
  }

  /** The error for `name` and a `reason` ("has no text layer"). */
  static of(name: string, reason: Reason): FileInputError {
    return new FileInputError(name, reason);
  }
}
