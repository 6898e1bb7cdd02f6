/**
 * Splits text that is longer than a platform's message limit into pages, at a line break
 * when possible, so that a Markdown code fence open at the end of a page is closed there and
 * reopened (with its info string, e.g. ```ts) at the start of the next.
 *
 * Prefix-stable: the first page depends only on the first `maxChars` measured characters of the
 * text, so while an answer streams, pages that have been completed never change again; a
 * {@link PageSplitter} keeps them and splits only what came after (O(new text) per call).
 *
 * Linear time: each page reads about `maxChars` characters of the text (fence lines are found
 * by a scan, not by a regular expression that can backtrack on a long line of backticks).
 */
import { isWhitespace } from '../text-scan.ts';
import { carriedLines, type PageBreaks, platformBreak } from './page-breaks.ts';

/** An open fence: its marker (e.g. "```") and the line that opened it (e.g. "```ts"). */
interface OpenFence {
  marker: string;
  openingLine: string;
}

/** Measures text as the platform counts it; defaults to UTF-16 code units (`String.length`). */
export type Measure = (text: string) => number;

const byLength: Measure = (text) => text.length;

const SPACE = 0x20;
const BACKTICK = 0x60;
const TILDE = 0x7e;

/**
 * The fence line in text[start, end) (one line, no `\n`), if it is one: up to 3 spaces, then 3+
 * backticks or tildes (the marker, all of them), then the rest of the line (an info string),
 * which may hold no other line terminator (`\r`, U+2028, U+2029), as `/^ {0,3}(`{3,}|~{3,})(.*)$/`.
 * @returns the marker's span and what the rest holds.
 */
function fenceLineIn(
  text: string,
  start: number,
  end: number,
): { markerStart: number; markerEnd: number; restHasBacktick: boolean; restIsBlank: boolean } | undefined {
  let i = start;
  while (i < end && i - start < 3 && text.charCodeAt(i) === SPACE) i++;
  const c = text.charCodeAt(i);
  if (i >= end || (c !== BACKTICK && c !== TILDE)) return undefined;
  let j = i;
  while (j < end && text.charCodeAt(j) === c) j++;
  if (j - i < 3) return undefined;
  let restHasBacktick = false;
  let restIsBlank = true;
  for (let k = j; k < end; k++) {
    const d = text.charCodeAt(k);
    if (d === 0x0d || d === 0x2028 || d === 0x2029) return undefined;
    if (d === BACKTICK) restHasBacktick = true;
    if (restIsBlank && !isWhitespace(d)) restIsBlank = false;
  }
  return { markerStart: i, markerEnd: j, restHasBacktick, restIsBlank };
}

/** The fence left open at the end of `text`, if any (CommonMark rules, simplified). Linear in the length of `text`. */
export function openFenceAtEnd(text: string): OpenFence | undefined {
  const open = openFenceIn(text);
  return open && { marker: open.marker, openingLine: open.openingLine };
}

/** {@link openFenceAtEnd}, with where its opening line starts in `text` (`lineStart`). */
function openFenceIn(text: string): (OpenFence & { lineStart: number }) | undefined {
  let open: (OpenFence & { lineStart: number }) | undefined;
  for (let start = 0; start <= text.length; ) {
    const found = text.indexOf('\n', start);
    const end = found < 0 ? text.length : found;
    const line = fenceLineIn(text, start, end);
    if (line) {
      const markerLength = line.markerEnd - line.markerStart;
      const markerChar = text.charCodeAt(line.markerStart);
      if (!open) {
        // A backtick fence's info string may not contain backticks.
        if (!(markerChar === BACKTICK && line.restHasBacktick)) {
          const marker = text.slice(line.markerStart, line.markerEnd);
          open = { marker, openingLine: text.slice(start, end).trim(), lineStart: start };
        }
      } else if (markerChar === open.marker.charCodeAt(0) && markerLength >= open.marker.length && line.restIsBlank) {
        open = undefined;
      }
    }
    start = end + 1;
  }
  return open;
}

/** Code units measured at a time by {@link fittingLength} before it searches inside a piece. */
const MEASURED_PIECE = 256;

/**
 * The longest prefix length `n` of `text` with `measure(text.slice(0, n)) <= budget` (measure
 * additive and never negative), reading about `n` code units: pieces are measured one after
 * the other (never cutting a surrogate pair), then the piece that overflows is searched.
 */
function fittingLength(text: string, budget: number, measure: Measure): number {
  if (measure === byLength) return Math.min(text.length, Math.max(0, budget));
  let start = 0;
  let used = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + MEASURED_PIECE);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end += 1;
    const cost = measure(text.slice(start, end));
    if (used + cost > budget) {
      let lo = start;
      let hi = end - 1;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (used + measure(text.slice(start, mid)) <= budget) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    }
    used += cost;
    start = end;
  }
  return text.length;
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
 * Splits a text into pages of at most `maxChars` (as `measure` counts), keeping the pages
 * completed so far: while a text grows ({@link append}), {@link pages} splits only what came
 * after them, so a streamed answer costs O(its length) to split however many times it is shown.
 */
export class PageSplitter {
  /** The pages completed: they never change while the text only grows. */
  private readonly done: string[] = [];
  /** The text after the completed pages. */
  private rest = '';
  /** `measure(rest)`, kept up to date by adding the measure of each delta (the measure is additive). */
  private restMeasure = 0;
  /** The fence line (and its line break) that starts the next page; '' for none. */
  private reopen = '';
  /** The last page as last returned (reopen + rest), until either changes. */
  private last: string | undefined;

  /**
   * @param maxChars the platform's limit, e.g. 2000 for Discord `content`.
   * @param measure how the platform counts (e.g. after escaping); must be additive over
   *   concatenation and never negative.
   * @throws RangeError when `maxChars` is too small to make progress (< 16).
   */
  constructor(
    private readonly maxChars: number,
    private readonly measure: Measure = byLength,
    /** The platform's choice of cuts (e.g. at Markdown blocks' ends); the splitter's own when absent. */
    private readonly breaks?: PageBreaks,
  ) {
    if (maxChars < 16) throw new RangeError('maxChars must be at least 16');
  }

  /** Starts afresh with `text` (e.g. an answer replaced by its final form). */
  reset(text: string): void {
    this.done.length = 0;
    this.rest = text;
    this.restMeasure = this.measure === byLength ? text.length : Number.NaN; // measured when first needed
    this.reopen = '';
    this.last = undefined;
  }

  /** Adds `delta` at the end of the text. O(delta). */
  append(delta: string): void {
    if (delta === '') return;
    this.rest += delta;
    this.restMeasure += this.measure(delta);
    this.last = undefined;
  }

  /**
   * The pages of the text: the same as {@link splitMessage} of the whole text, in a new array
   * (the strings of completed pages are the same each time). O(text added since the last call
   * + the number of pages).
   */
  pages(): string[] {
    while (this.cutPage());
    this.last ??= this.reopen + this.rest;
    return [...this.done, this.last];
  }

  /** `head` (a prefix of reopen + rest), long enough to decide the next cut; undefined when reopen + rest fits on one page. */
  private headToCut(reopen: string): string | undefined {
    const { maxChars, measure, rest } = this;
    if (measure === byLength)
      return reopen.length + rest.length <= maxChars ? undefined : reopen + rest.slice(0, maxChars + 1);
    if (Number.isNaN(this.restMeasure)) this.restMeasure = measure(rest);
    if (measure(reopen) + this.restMeasure <= maxChars) return undefined;
    // Read as much as shows the text overflows the page (a measure may count some characters as nothing).
    for (let length = maxChars + 1; ; length *= 2) {
      const head = reopen + rest.slice(0, length);
      if (fittingLength(head, maxChars, measure) < head.length) return head;
      if (length >= rest.length) return undefined;
    }
  }

  /** Completes the next page, if the rest does not fit on one. @returns whether it did. */
  private cutPage(): boolean {
    const { maxChars, measure, reopen } = this;
    const head = this.headToCut(reopen);
    if (head === undefined) return false;
    let reserve = 4; // "\n```"
    for (;;) {
      const window = fittingLength(head, maxChars - reserve, measure);
      const chosen = platformBreak(this.breaks, head, window, reopen.length);
      let { cut, skip } = chosen ?? chooseCut(head, window, reopen.length);
      let open = chosen?.reopen !== undefined ? undefined : openFenceIn(head.slice(0, cut));
      // A fenced block (code, a rendered table) opened in the page's second half starts the next
      // page instead, whole there when it fits on one; this page stays at least half full.
      if (!chosen && open && open.lineStart - 1 >= Math.max(reopen.length, Math.floor(window / 2))) {
        cut = open.lineStart - 1;
        skip = 1;
        open = undefined;
      }
      const page = head.slice(0, cut);
      // A construct the platform's cut goes on with (a table's header), else a code fence left open.
      const carried = chosen?.reopen !== undefined ? carriedLines(chosen.reopen, measure, maxChars) : this.carry(open);
      const closing = carried?.closing ?? '';
      if (measure(page + closing) <= maxChars) {
        this.complete(page + closing, cut + skip - reopen.length, carried?.reopen ?? '');
        return true;
      }
      reserve = Math.max(reserve + 1, Math.max(closing.length, measure(closing)) + 1);
      // A safety net for measures that count fence lines oddly: the page is as short as it gets
      // (its reopened fence line and one character) and still too long, or the fence lines take
      // half the page.
      if (window < reopen.length || reserve > maxChars / 2) return this.cutWithoutFence();
    }
  }

  /**
   * How a fence open at the end of a page is carried to the next: the line that closes it, and
   * the line that reopens it (its opening line, or only its marker when that line is long).
   * Undefined when there is no open fence, or when even the marker's lines would take half a
   * page (pages would carry almost nothing else).
   */
  private carry(open: OpenFence | undefined): { closing: string; reopen: string } | undefined {
    if (!open) return undefined;
    const closing = `\n${open.marker}`;
    for (const line of [open.openingLine, open.marker]) {
      const reopen = `${line}\n`;
      if (this.measure(reopen) + this.measure(closing) <= this.maxChars / 2) return { closing, reopen };
    }
    return undefined;
  }

  /** Completes a page from the rest as plain text, without the fence line that would have reopened it. */
  private cutWithoutFence(): boolean {
    const { maxChars, measure } = this;
    const head = this.headToCut('');
    if (head === undefined) {
      this.reopen = '';
      this.last = undefined;
      return false;
    }
    const { cut, skip } = chooseCut(head, fittingLength(head, maxChars, measure), 0);
    this.complete(head.slice(0, cut), cut + skip, '');
    return true;
  }

  private complete(page: string, consumed: number, reopen: string): void {
    this.done.push(page);
    if (this.measure === byLength) this.restMeasure -= consumed;
    else if (!Number.isNaN(this.restMeasure)) this.restMeasure -= this.measure(this.rest.slice(0, consumed));
    this.rest = this.rest.slice(consumed);
    this.reopen = reopen;
    this.last = undefined;
  }
}

/**
 * Splits `text` into pages of at most `maxChars` (as `measure` counts). Linear in the length of `text`.
 * @param text the whole message (Markdown).
 * @param maxChars the platform's limit, e.g. 2000 for Discord `content`.
 * @param measure how the platform counts (e.g. after escaping); must be additive over concatenation.
 * @param breaks the platform's choice of cuts ({@link PageBreaks}); the splitter's own when absent.
 * @returns one page when the text fits; the pages joined are the text, but for the line break
 *   at each cut and the fence lines added to close and reopen code blocks (a fence opened by a
 *   line longer than about half a page is reopened with its marker alone; one whose marker
 *   would take half a page is not carried over).
 * @throws RangeError when `maxChars` is too small to make progress (< 16).
 */
export function splitMessage(
  text: string,
  maxChars: number,
  measure: Measure = byLength,
  breaks?: PageBreaks,
): string[] {
  const splitter = new PageSplitter(maxChars, measure, breaks);
  splitter.reset(text);
  return splitter.pages();
}
