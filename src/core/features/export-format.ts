/**
 * The files of `/export` (features/export.ts), from a conversation's stored turns
 * (state/history.ts `StoredMessage`): `conversation.md` (a heading naming the place and the
 * export's time, then each turn: author, time, role, text, and notes of its files and images) and
 * `conversation.json` (an array of {@link ExportTurn}). Only what the store holds: a turn's
 * author is its user id (the bot for an answer), its time the stored one; what is absent is
 * "unknown". Files and images were never stored, only the notes chat.ts appended to the question
 * (`[2 images: a.png, b.jpg]`, `[1 file: notes.txt]`): they are read back from those lines.
 *
 * Both files are bounded in bytes ({@link fitExport}): the oldest turns are left out first, and
 * each file then says so at its top (the Markdown by a line under its heading; the JSON by a first
 * element of role `note`). Their words (headings, notes, the place) are the reader's: the files are
 * for the user who asked ({@link ExportHeader.words}).
 */
import { english, type Sentence, sentence, type Words } from '../i18n/words.ts';
import { parseConversationKey } from '../keys.ts';
import type { StoredMessage } from '../state/history.ts';

/** What is written where the store does not have it. */
export const UNKNOWN = 'unknown';

/** A file a turn had (a note of it: the bot never stores a file's content). */
export interface ExportFile {
  name: string;
  /** `pdf` or `text`, from the name: the bot reads only PDFs and text files as context (media/text-files.ts). */
  kind: 'pdf' | 'text';
}

/** One turn as exported. */
export interface ExportTurn {
  /** `user`, `assistant`, `system`; `note` only for the export's own line saying what was left out. */
  role: StoredMessage['role'] | 'note';
  /** The platform user id of a user's turn; `bot` for the bot's answer; {@link UNKNOWN} when the store has none. */
  author: string;
  /** When it was said, ISO 8601 (UTC); {@link UNKNOWN} without a stored time. */
  time: string;
  /** The text, without the notes of files and images. */
  text: string;
  files: ExportFile[];
  images: Array<{ name: string }>;
}

/** One note line chat.ts writes under a question: `[N file(s)|image(s): a, b]`. */
const NOTE_LINE = /^\[(\d+) (files?|images?): (.+)\]$/;

/** A time in ms since the epoch as ISO 8601, or {@link UNKNOWN}. */
function isoOf(at: number | undefined): string {
  if (typeof at !== 'number' || !Number.isFinite(at)) return UNKNOWN;
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? UNKNOWN : date.toISOString();
}

/** A stored turn as exported: its note lines (chat.ts) read back as files and images. */
export function exportTurnOf(message: StoredMessage): ExportTurn {
  const files: ExportFile[] = [];
  const images: Array<{ name: string }> = [];
  const lines = typeof message.content === 'string' ? message.content.split('\n') : [];
  // The notes are the question's last lines; an answer has none.
  while (message.role === 'user' && lines.length > 0) {
    const note = NOTE_LINE.exec(lines.at(-1)!.trim());
    if (!note) break;
    lines.pop();
    const names = note[3]!.split(', ');
    if (note[2]!.startsWith('image')) images.unshift(...names.map((name) => ({ name })));
    else
      files.unshift(
        ...names.map((name) => ({ name, kind: /\.pdf$/i.test(name) ? ('pdf' as const) : ('text' as const) })),
      );
  }
  const author = message.role === 'assistant' ? 'bot' : (message.userId ?? UNKNOWN);
  return { role: message.role, author, time: isoOf(message.at), text: lines.join('\n'), files, images };
}

/**
 * The place of a conversation key in `words`: `Discord channel 123 (server 456)`, `Slack thread 1.2
 * in channel C1 (workspace T1)`.
 */
export function placeOf(conversationId: string, words: Words = english): string {
  const ref = parseConversationKey(conversationId);
  if (!ref) return conversationId;
  if (ref.platform === 'slack') {
    const values = { channel: ref.channel, team: ref.team ?? '' };
    return ref.thread
      ? words.t('commands.export.place.slack_thread', { ...values, thread: ref.thread })
      : words.t('commands.export.place.slack_channel', values);
  }
  if (ref.user) return words.t('commands.export.place.discord_user_install', { channel: ref.channel });
  return ref.guild
    ? words.t('commands.export.place.discord_channel', { channel: ref.channel, guild: ref.guild })
    : words.t('commands.export.place.discord_dm', { channel: ref.channel });
}

/** What the export's files are about: the place, when, and how many of the stored turns were left out. */
export interface ExportHeader {
  conversationId: string;
  /** When the export was made, ms since the epoch. */
  at: number;
  /** The oldest turns left out to keep within the size bound. */
  leftOut: number;
  /** The words the files speak: the asker's (absent: English). */
  words?: Words | undefined;
}

/** The sentence saying how many of the oldest turns were left out, or undefined when none was. */
export function leftOutNote(leftOut: number): Sentence | undefined {
  if (leftOut <= 0) return undefined;
  return sentence('commands.export.left_out', { count: leftOut });
}

/** One turn in Markdown, in `words`: a heading (author, time, role: the data's own terms), the text, the notes. */
function markdownTurn(turn: ExportTurn, words: Words): string {
  const notes = [
    ...turn.files.map((f) => words.t('commands.export.file.file', { name: f.name, kind: f.kind })),
    ...turn.images.map((i) => words.t('commands.export.file.image', { name: i.name })),
  ];
  return [
    `## ${turn.author} · ${turn.time} · ${turn.role}`,
    '',
    turn.text === '' ? words.t('commands.export.file.no_text') : turn.text,
    ...(notes.length ? ['', ...notes] : []),
    '',
    '',
  ].join('\n');
}

/** The Markdown file's heading: the place, the export's time, what was left out. */
function markdownHead(header: ExportHeader, turns: number): string {
  const words = header.words ?? english;
  const note = leftOutNote(header.leftOut);
  return [
    words.t('commands.export.file.heading', { place: placeOf(header.conversationId, words) }),
    '',
    words.t('commands.export.file.exported', { at: isoOf(header.at), count: turns }),
    ...(note ? ['', `> ${words.say(note)}`] : []),
    '',
    '',
  ].join('\n');
}

/** The JSON file's note element (role `note`) saying what was left out. */
function jsonNote(header: ExportHeader): ExportTurn | undefined {
  const note = leftOutNote(header.leftOut);
  if (!note) return undefined;
  const text = (header.words ?? english).say(note);
  return { role: 'note', author: 'bot', time: isoOf(header.at), text, files: [], images: [] };
}

/** `conversation.md` of the turns. */
export function exportMarkdown(header: ExportHeader, turns: readonly ExportTurn[]): string {
  const words = header.words ?? english;
  return markdownHead(header, turns.length) + turns.map((t) => markdownTurn(t, words)).join('');
}

/** `conversation.json` of the turns: a JSON array, the note of what was left out first when there is one. */
export function exportJson(header: ExportHeader, turns: readonly ExportTurn[]): string {
  const note = jsonNote(header);
  return `${JSON.stringify(note ? [note, ...turns] : turns, null, 2)}\n`;
}

/** The two files' texts, and how many of the oldest turns they leave out. */
export interface FittedExport {
  markdown: string;
  json: string;
  leftOut: number;
  kept: number;
}

/**
 * The export of `turns` (oldest first) with each file within `maxBytes` (UTF-8): the newest turns
 * that fit, the oldest left out first and said so at each file's top. Linear in the turns.
 * @param maxBytes the largest file, in bytes (at least a few hundred: the heading and the note).
 */
export function fitExport(
  turns: readonly ExportTurn[],
  header: Omit<ExportHeader, 'leftOut'>,
  maxBytes: number,
): FittedExport {
  // Room for the heading and the note at the worst (every turn left out), then the newest turns that fit.
  const worst = { ...header, leftOut: turns.length };
  let md = Buffer.byteLength(exportMarkdown(worst, []));
  let json = Buffer.byteLength(exportJson(worst, []));
  let first = turns.length;
  while (first > 0) {
    const turn = turns[first - 1]!;
    const mdNext = md + Buffer.byteLength(markdownTurn(turn, header.words ?? english));
    // Each element of the pretty-printed array: its lines indented by 2, and its separator.
    const element = JSON.stringify(turn, null, 2);
    const jsonNext = json + Buffer.byteLength(element) + 2 * element.split('\n').length + 2;
    if (mdNext > maxBytes || jsonNext > maxBytes) break;
    md = mdNext;
    json = jsonNext;
    first -= 1;
  }
  // The estimate is checked on the files themselves: one more turn out while either is over.
  for (;;) {
    const kept = turns.slice(first);
    const done = { ...header, leftOut: first };
    const markdown = exportMarkdown(done, kept);
    const text = exportJson(done, kept);
    if ((Buffer.byteLength(markdown) <= maxBytes && Buffer.byteLength(text) <= maxBytes) || first >= turns.length)
      return { markdown, json: text, leftOut: first, kept: kept.length };
    first += 1;
  }
}
