/**
 * Splits text that is longer than a platform's message limit into pages, at a line break
 * when possible, so that a Markdown code fence open at the end of a page is closed there and
 * reopened (with its info string, e.g. ```ts) at the start of the next.
 *
 * Prefix-stable: the first page depends only on the first `maxChars` measured characters of the
 * text, so while an answer streams, pages that have been completed never change again.
 */

/** A fence line: up to 3 spaces, then 3+ backticks or tildes, then an optional info string. */
const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** An open fence: its marker (e.g. "```") and the line that opened it (e.g. "```ts"). */
interface OpenFence {
  marker: string;
  openingLine: string;
}

/** Measures text as the platform counts it; defaults to UTF-16 code units (`String.length`). */
export type Measure = (text: string) => number;

const byLength: Measure = (text) => text.length;

/** The fence left open at the end of `text`, if any (CommonMark rules, simplified). */
export function openFenceAtEnd(text: string): OpenFence | undefined {
  let open: OpenFence | undefined;
  for (const line of text.split('\n')) {
    const match = FENCE_LINE.exec(line);
    if (!match) continue;
    const marker = match[1]!;
    const rest = match[2]!;
    if (!open) {
      // A backtick fence's info string may not contain backticks.
      if (marker[0] === '`' && rest.includes('`')) continue;
      open = { marker, openingLine: line.trim() };
    } else if (marker[0] === open.marker[0] && marker.length >= open.marker.length && rest.trim() === '') {
      open = undefined;
    }
  }
  return open;
}

/** The longest prefix length `n` of `text` with `measure(text.slice(0, n)) <= budget`. */
function fittingLength(text: string, budget: number, measure: Measure): number {
  if (measure === byLength) return Math.min(text.length, Math.max(0, budget));
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(text.slice(0, mid)) <= budget) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Where to cut `text` so that its first `cut` characters make a page: the last line break in
 * the second half of the window, else the last space there, else the window's end (never
 * inside a surrogate pair). `skip` is how many characters after the cut are dropped (the
 * break itself).
 */
function chooseCut(text: string, window: number, minCut: number): { cut: number; skip: number } {
  const floor = Math.max(minCut, Math.floor(window / 2));
  const newline = text.lastIndexOf('\n', window);
  if (newline >= floor && newline <= window) return { cut: newline, skip: 1 };
  const space = text.lastIndexOf(' ', window);
  if (space >= floor && space <= window) return { cut: space, skip: 1 };
  let cut = Math.max(window, minCut + 1);
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff && cut - 1 > minCut) cut -= 1;
  return { cut, skip: 0 };
}

/**
 * Splits `text` into pages of at most `maxChars` (as `measure` counts).
 * @param text the whole message (Markdown).
 * @param maxChars the platform's limit, e.g. 2000 for Discord `content`.
 * @param measure how the platform counts (e.g. after escaping); must be additive over concatenation.
 * @returns one page when the text fits; the pages joined are the text, but for the line break
 *   at each cut and the fence lines added to close and reopen code blocks.
 * @throws RangeError when `maxChars` is too small to make progress (< 16).
 */
export function splitMessage(text: string, maxChars: number, measure: Measure = byLength): string[] {
  if (maxChars < 16) throw new RangeError('maxChars must be at least 16');
  const pages: string[] = [];
  let rest = text;
  let reopen = '';
  for (;;) {
    const candidate = reopen + rest;
    if (measure(candidate) <= maxChars) {
      pages.push(candidate);
      return pages;
    }
    let reserve = 4; // "\n```"
    for (;;) {
      const window = fittingLength(candidate, maxChars - reserve, measure);
      const { cut, skip } = chooseCut(candidate, window, reopen.length);
      const page = candidate.slice(0, cut);
      const open = openFenceAtEnd(page);
      const closing = open ? `\n${open.marker}` : '';
      if (measure(page + closing) > maxChars) {
        reserve = Math.max(reserve + 1, closing.length + 1);
        if (reserve > maxChars / 2) throw new RangeError('a code fence line is too long to split around');
        continue;
      }
      pages.push(page + closing);
      rest = candidate.slice(cut + skip);
      reopen = open ? `${open.openingLine}\n` : '';
      break;
    }
  }
}
