/**
 * A streamed answer, from the service's chunks to the platform's messages: the text of each
 * network read, written into a StreamingReply; notes under the answer; a stream broken after
 * text was shown keeps that text with the reason. Reports `stream.start` / `stream.end`
 * (time to first text, duration, outcome) on the bot's events.
 */

import { ShownError } from '../errors.ts';
import type { BotEvents } from '../events.ts';
import { english, type Sentence, sentence, type Words } from '../i18n/words.ts';
import type { Button, CommandContext, OutgoingFile } from '../platform.ts';
import { AbortedError, ServiceError } from '../service/errors.ts';
import { failureLine, toldBeforeText } from './answer-session.ts';
import { sendOnce } from './one-off.ts';
import type { StreamingReply } from './streaming-reply.ts';

/** Longest answer kept in the file of an answer over the cap, in characters; past it the stream is ended. */
export const MAX_ANSWER_FILE_CHARS = 8 * 1024 * 1024;

/** The `finish_reason`s explained to the user (catalog `answers.finish.<reason>.empty` / `.note`). */
const FINISH_REASONS = ['content_filter', 'length', 'tool_calls', 'function_call'] as const;
type ExplainedReason = (typeof FINISH_REASONS)[number];

/** Whether a `finish_reason` is one the user is told about. */
function explained(reason: string | undefined): ExplainedReason | undefined {
  return FINISH_REASONS.find((r) => r === reason);
}

/**
 * A line under an answer: a {@link Sentence}, rendered in the place's words when the answer is
 * written, or a text of the answer's own (a file's name line), shown as it is. Sentences are plain
 * data: an answer's state keeps them (answer-state.ts).
 */
export type Note = string | Sentence;

/** A note in `words` (a text as it is). */
export function noteText(note: Note, words: Words): string {
  return typeof note === 'string' ? note : words.say(note);
}

/** The text of a finished answer, as {@link StreamAnswerOptions.finalize} gets it. */
export interface AnswerText {
  /** What the messages show: the answer's first `maxChars` characters. */
  shown: string;
  /** The whole answer (`shown` and what went past the cap, at most {@link MAX_ANSWER_FILE_CHARS} more). */
  whole: string;
}

/** What a finished answer finally shows, in place of its streamed text (e.g. JSON mode: §4.1 JSON mode rule 3). */
export interface FinalAnswer {
  /** The text of the messages (the notes under the answer follow it). */
  text: string;
  /**
   * A file posted after the messages in place of `answer.md`, which is then neither posted nor
   * mentioned; without it, an answer over the cap comes whole as `answer.md`, with a note.
   */
  file?: OutgoingFile;
}

/** Options of {@link streamAnswer}. */
export interface StreamAnswerOptions {
  /** The reply to write into, from {@link beginAnswer} (which may have shown a status in it). */
  reply: StreamingReply;
  /** The place's words, for the answer's public lines (i18n/languages.ts); English when absent. */
  words?: Words | undefined;
  /** Turns the complete answer (the whole of it, past the cap too) into what is finally shown (e.g. pretty JSON). */
  finalize?: (answer: AnswerText) => FinalAnswer;
  /** Short lines under the answer, in `words` when they are Sentences. */
  notes?: readonly Note[];
  events?: BotEvents;
  /** The stream's last `finish_reason` (read when it ended), to explain an empty or cut answer. */
  finishReason?: () => string | undefined;
  /**
   * Longest answer shown in messages, in characters (`MAX_ANSWER_CHARS`); beyond it the whole
   * answer is attached as `answer.md`. Default: no cap.
   */
  maxChars?: number;
  /**
   * The buttons of an answer whose stream ended well (Regenerate), asked for just before its final
   * write, which puts them on its last message. Not asked for an empty answer, or one that comes
   * with a file (`answer.md`, `finalize`'s), which a new answer could not replace in place.
   */
  finalControls?: () => Promise<Button[]>;
  /**
   * Runs once the stream ended well, just before the final write (beside `finalControls`), with
   * the answer's text as shown (what the history keeps): the lines it returns join the notes
   * under the answer (e.g. that the exchange could not be stored). Not called when the stream
   * was stopped or broke.
   */
  beforeFinal?: (answer: string) => Promise<readonly Note[]>;
  /**
   * The feedback buttons (👍 / 👎: features/feedback.ts) of an answer whose stream ended well,
   * asked for (with `finalControls`) just before its final write, after them on its last message;
   * not asked for an empty answer.
   */
  feedback?: () => Promise<Button[]>;
}

/**
 * How an answer ended: `done` (the stream ended and every message was written), `stopped`
 * (Stop, or a shutdown, aborted it after text was shown: `error` is the AbortedError), `cut`
 * (the stream broke on a fault after text was shown, or the platform refused a continuation:
 * `error` says which; the user was told in the message) or `failed` (no text was shown: `error`
 * is what to throw, a ShownError when a status line became the sentence, else the error itself
 * for the runner to tell).
 */
export type AnswerEnding = 'done' | 'stopped' | 'cut' | 'failed';

/** What {@link streamAnswer} produced. */
export interface StreamedAnswer {
  /** The answer's text as shown (at most `maxChars`; as far as it went when not `done`): what the history may keep. */
  text: string;
  /** True when the answer was longer than `maxChars` (the whole of it went out as a file). */
  capped: boolean;
  ending: AnswerEnding;
  /** Why it did not end `done`: the service's error, or the platform's refusal of a continuation (`cut`). */
  error?: unknown;
}

/** The `stream.start` event when made, and `stream.end` with the timings (ms) and an outcome (one object per answer, no closures). */
class StreamTimer {
  private readonly started = performance.now();
  private firstTokenMs: number | undefined;

  constructor(
    private readonly platform: CommandContext['platform'],
    private readonly events: BotEvents | undefined,
  ) {
    events?.emit('stream.start', { platform });
  }

  /** A delta arrived: the first one's time is kept. */
  firstToken(): void {
    this.firstTokenMs ??= performance.now() - this.started;
  }

  end(outcome: string): void {
    this.events?.emit('stream.end', {
      platform: this.platform,
      firstTokenMs: this.firstTokenMs,
      durationMs: performance.now() - this.started,
      outcome,
    });
  }
}

/**
 * Characters of one note under an answer, at most (past it, cut with `…`). The notes the bot
 * writes bound their lists already (media/file-lines.ts); this holds whatever else a note
 * carries (a name, a platform's reason) to a line that never makes pages of its own.
 */
export const MAX_NOTE_CHARS = 1_000;

/** Notes under one answer, at most (the rest are counted in a last line). */
export const MAX_NOTES = 6;

/**
 * Lines under the answer in `words` (the place's), each as `_⚠️ note_`, after a blank line;
 * empty without notes. Bounded: {@link MAX_NOTES} of {@link MAX_NOTE_CHARS}.
 */
function notesText(notes: readonly Note[], words: Words): string {
  if (notes.length === 0) return '';
  const shown = notes.slice(0, MAX_NOTES).map((note) => {
    const n = noteText(note, words);
    return n.length > MAX_NOTE_CHARS
      ? `${Array.from(n)
          .slice(0, MAX_NOTE_CHARS - 1)
          .join('')}…`
      : n;
  });
  const more = notes.length - shown.length;
  if (more > 0) shown.push(words.t('answers.stream.more_notes', { count: more }));
  return `\n\n${shown.map((n) => `_⚠️ ${n}_`).join('\n')}`;
}

/**
 * Streams text deltas into the reply and finishes it. Nothing whitespace-only is ever sent;
 * an empty answer says why when the service said (`finish_reason`); an answer over the cap
 * shows its first `maxChars` characters and comes whole as a Markdown file. A stream that
 * breaks after text was shown keeps that text with the reason appended, and says how it ended.
 * @returns the text shown, whether it was capped, and how it ended (`failed`: before any text).
 * @throws what the platform throws for a write.
 */
export async function streamAnswer(
  ctx: CommandContext,
  deltas: AsyncIterable<string>,
  options: StreamAnswerOptions,
): Promise<StreamedAnswer> {
  const { reply } = options;
  const words = options.words ?? english;
  const notes = [...(options.notes ?? [])];
  const cap = options.maxChars ?? Number.POSITIVE_INFINITY;
  const timer = new StreamTimer(ctx.platform, options.events);
  // The deltas are appended up to `cap` characters; what goes past it collects in `overflow`
  // (at most MAX_ANSWER_FILE_CHARS, then the stream is left). In this function's own loop: one
  // frame per answer waits on the stream, not one per layer.
  let overflow = '';
  try {
    for await (const delta of deltas) {
      timer.firstToken();
      const room = cap - reply.content.length;
      if (room >= delta.length) reply.append(delta);
      else {
        if (room > 0) reply.append(delta.slice(0, room));
        overflow += room > 0 ? delta.slice(room) : delta;
        if (overflow.length > MAX_ANSWER_FILE_CHARS) break;
      }
    }
  } catch (error) {
    timer.end(error instanceof ServiceError ? error.code : 'internal');
    if (reply.content.trim() === '' || !(error instanceof ServiceError))
      return {
        text: '',
        capped: false,
        ending: 'failed',
        error: await toldBeforeText(ctx, reply, error, words),
      };
    const partial = reply.content;
    await reply.finish(`${partial}\n\n⚠️ ${failureLine(error, ctx, words)}${notesText(notes, words)}`);
    const ending = error instanceof AbortedError ? 'stopped' : 'cut';
    return { text: partial, capped: overflow !== '', ending, error };
  }
  try {
    return await finishAnswer(ctx, options, { notes, words }, cap, overflow);
  } finally {
    timer.end('done');
  }
}

/**
 * Writes the last text of an answer whose stream ended: the notes (why it stopped, that it was
 * capped), the answer (or what `finalize` made of the whole of it) or the sentence of an empty
 * one, then its file: `finalize`'s, else `answer.md` when it was capped. In `lines.words` (the place's).
 * @throws what the platform throws for a write, except a refused continuation (a ShownError:
 *   the answer ends `cut`).
 */
async function finishAnswer(
  ctx: CommandContext,
  options: StreamAnswerOptions,
  lines: { notes: Note[]; words: Words },
  cap: number,
  overflow: string,
): Promise<StreamedAnswer> {
  const { reply } = options;
  const { notes, words } = lines;
  const answer = reply.content;
  const reason = explained(options.finishReason?.());
  if (answer.trim() !== '' && reason) notes.push(sentence(`answers.finish.${reason}.note`));
  const whole = answer + overflow.slice(0, MAX_ANSWER_FILE_CHARS);
  const final = options.finalize ? options.finalize({ shown: answer, whole }) : { text: answer };
  const capped = overflow !== '';
  const file = final.file ?? (capped ? answerFile(whole, words) : undefined);
  if (capped && !final.file)
    notes.push(
      sentence(overflow.length > MAX_ANSWER_FILE_CHARS ? 'answers.stream.capped_cut' : 'answers.stream.capped', {
        cap,
      }),
    );
  const empty = emptyLine(capped && !final.file ? cap : undefined, reason, words);
  const shown = final.text.trim() !== '';
  const [regenerate = [], feedback = [], later = []] = await Promise.all([
    shown && !file ? options.finalControls?.() : undefined,
    shown ? options.feedback?.() : undefined,
    options.beforeFinal ? options.beforeFinal(answer) : undefined,
  ]);
  notes.push(...later);
  const controls = regenerate.length || feedback.length ? [...regenerate, ...feedback] : undefined;
  try {
    await reply.finish(`${shown ? final.text : empty}${notesText(notes, words)}`, {
      emptyText: empty,
      ...(controls ? { controls } : {}),
    });
    if (file) await sendOnce(reply.scheduler, ctx.reply, { content: '', files: [file] }, reply.messageCount);
  } catch (error) {
    // A continuation the platform refused, told in the first message: the text came whole, the messages did not.
    if (error instanceof ShownError) return { text: answer, capped, ending: 'cut', error: error.cause };
    throw error;
  }
  ctx.log.debug(
    {
      chars: answer.length + overflow.length,
      messages: reply.messageCount,
      writes: reply.writes,
      capped,
      file: file?.name,
    },
    'answer streamed',
  );
  return { text: answer, capped, ending: 'done' };
}

/**
 * What an answer shows when its messages have no text, in `words`: why it is empty
 * (`finish_reason`), or, for an answer whose first `cap` characters are blank, that they are (the
 * rest of it is in answer.md, as its note says: it is not empty).
 */
function emptyLine(cap: number | undefined, reason: ExplainedReason | undefined, words: Words): string {
  if (cap !== undefined) return words.t('answers.stream.blank_head', { cap });
  return reason
    ? words.t('answers.stream.empty_because', { reason: sentence(`answers.finish.${reason}.empty`) })
    : words.t('answers.stream.empty');
}

/** The whole answer as `answer.md` (its description, the file's alt text, in `words`). */
function answerFile(text: string, words: Words): OutgoingFile {
  return {
    name: 'answer.md',
    data: Buffer.from(text),
    mimeType: 'text/markdown',
    description: words.t('answers.stream.file_description'),
  };
}
