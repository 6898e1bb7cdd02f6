/**
 * JSON mode's post-processing of a finished answer (§4.1 JSON mode rules 1–3): the JSON inside a
 * fence (or the whole text), parsed and pretty-printed, in time linear in the answer's length
 * (scans, no regular expression that can backtrack).
 */
import type { AnswerText, FinalAnswer } from '../delivery/answer-stream.ts';
import type { Words } from '../i18n/words.ts';
import type { CommandContext } from '../platform.ts';
import { InvalidJsonError } from '../service/errors.ts';

const BACKTICK = 0x60;

/** Whether `text` holds three backticks at `at`. */
function fenceAt(text: string, at: number): boolean {
  return (
    at >= 0 &&
    text.charCodeAt(at) === BACKTICK &&
    text.charCodeAt(at + 1) === BACKTICK &&
    text.charCodeAt(at + 2) === BACKTICK
  );
}

/** Whether `text` holds "json" in any case at `at`. */
function jsonWordAt(text: string, at: number): boolean {
  // `| 0x20` lowers an ASCII capital and maps nothing else onto these four letters.
  return (
    (text.charCodeAt(at) | 0x20) === 0x6a &&
    (text.charCodeAt(at + 1) | 0x20) === 0x73 &&
    (text.charCodeAt(at + 2) | 0x20) === 0x6f &&
    (text.charCodeAt(at + 3) | 0x20) === 0x6e
  );
}

/**
 * The text inside a Markdown code fence that wraps a whole answer: optional whitespace, "```"
 * with the info string "json" (any case) or none, whitespace up to a line break, the body, a
 * line break, whitespace, "```" and optional whitespace to the end. The body is the shortest
 * one (it ends at the first line break of the whitespace before the closing "```"), and the
 * opening line break the last one before the body; the same text the regular expression
 * `/^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/i` captures, found in linear time (that
 * expression backtracks: an opening fence followed by 4,000 characters of spaces and line
 * breaks took it 2.3 s, and 1 MB would take days).
 * @returns the body, or undefined when `raw` is not one fenced block.
 */
export function jsonFenceBody(raw: string): string | undefined {
  // Whitespace is skipped with trimStart/trimEnd: native, and their whitespace is exactly `\s`.
  const open = raw.length - raw.trimStart().length;
  if (!fenceAt(raw, open)) return undefined;
  const info = jsonWordAt(raw, open + 3) ? open + 7 : open + 3;
  // The closing fence is the last non-whitespace of the text, after whitespace holding a line break.
  const close = raw.trimEnd().length - 3;
  if (close <= info || !fenceAt(raw, close)) return undefined;
  const spaceStart = Math.max(info, raw.slice(0, close).trimEnd().length);
  const lastBreak = raw.lastIndexOf('\n', close - 1);
  if (lastBreak < spaceStart) return undefined;
  // After the opening fence (and its "json"): whitespace holding the opening line break, the
  // last one there that leaves a closing line break after it.
  const spaceEnd = lastBreak - raw.slice(info, lastBreak).trimStart().length;
  const opening = spaceEnd > info ? raw.lastIndexOf('\n', spaceEnd - 1) : -1;
  if (opening < info) return undefined;
  // The closing line break: the first one of the whitespace before the closing fence, after the opening one.
  const closing = raw.indexOf('\n', Math.max(spaceStart, opening + 1));
  return raw.slice(opening + 1, closing);
}

/**
 * Parses a JSON-mode answer. The streamed pieces must be joined first (rule 3): pass the
 * whole text. A Markdown fence around the JSON (```json … ```) is tolerated (see
 * {@link jsonFenceBody}). Linear in the length of `raw`.
 * @returns the value and its pretty-printed form (2-space indent).
 * @throws InvalidJsonError keeping `raw` for the user.
 */
export function parseJsonAnswer(raw: string): { value: unknown; pretty: string } {
  const text = jsonFenceBody(raw) ?? raw;
  try {
    const value: unknown = JSON.parse(text);
    return { value, pretty: JSON.stringify(value, null, 2) };
  } catch (cause) {
    throw new InvalidJsonError(raw, cause);
  }
}

/**
 * What a JSON-mode answer finally shows (§4.1 JSON mode rule 3), from the whole answer (past
 * MAX_ANSWER_CHARS too): the value pretty-printed in a fence when that fits in `maxChars`
 * characters, else a one-line summary and the pretty JSON as `answer.json`; an answer that does
 * not parse keeps its text as shown, with a warning (and comes whole as `answer.md` when capped).
 * The summary and the file's description are in `words` (the place's).
 */
export function showJson(ctx: CommandContext, answer: AnswerText, maxChars: number, words: Words): FinalAnswer {
  try {
    const { pretty } = parseJsonAnswer(answer.whole);
    const block = `\`\`\`json\n${pretty}\n\`\`\``;
    if (block.length <= maxChars) return { text: block };
    return {
      text: words.t('answers.json.in_file', { chars: pretty.length }),
      file: {
        name: 'answer.json',
        data: Buffer.from(pretty),
        mimeType: 'application/json',
        description: words.t('answers.json.file_description'),
      },
    };
  } catch (error) {
    if (!(error instanceof InvalidJsonError)) throw error;
    ctx.log.info({ code: error.code, chars: answer.whole.length }, 'JSON mode answer is not valid JSON');
    return { text: `${answer.shown}\n\n⚠️ ${words.say(error.sentence)}` };
  }
}
