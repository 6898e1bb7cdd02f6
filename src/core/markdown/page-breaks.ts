/**
 * Markdown-aware page breaks (the core's PageBreaks seam: delivery/page-breaks.ts), for a platform
 * that renders each message's Markdown on its own (Slack): a page ends where a construct ends, so
 * that no page starts with the rest of one rendered raw.
 *
 * In order of preference, the last of these within the second half of the page:
 * - between two top-level blocks (paragraphs, headings, lists, quotes, code blocks, tables);
 * - between two items of a top-level list (the next page starts a list at that item);
 * - between two rows of a table: the next page starts with the table's header and delimiter
 *   rows again (`reopen`), so that its rows are still a table.
 * With none there (one paragraph longer than half a page), a line break or space inside the
 * block that no inline construct (bold, italics, strikethrough, link, code span, image) spans:
 * its two halves read apart hold as many constructs as the block does, the half after it read
 * for at least {@link INLINE_LOOKAHEAD} characters (so that the construct's end is seen), tried
 * from the end, at most {@link MAX_INLINE_TRIES} of them; else the splitter's own cut (a code
 * block is closed and reopened there).
 *
 * Cuts between blocks are read from `head`'s whole lines (its last line may be cut short); the
 * choice depends on `head` alone, so pages stay prefix-stable. Time: two parses of the head, and
 * at most {@link MAX_INLINE_TRIES} × 2 parses of one block of it (markdown-it: about linear).
 */
import type { PageBreak, PageBreaks } from '../delivery/page-breaks.ts';
import { constructCount } from './inline.ts';
import { parseMarkdown, type Token } from './parse.ts';
import { lineStarts, linesEnd } from './source.ts';
import { type MarkdownTable, readTableTokens } from './table-tokens.ts';

/** Cuts inside a block tried before leaving the choice to the splitter. */
const MAX_INLINE_TRIES = 16;
/**
 * Characters read past a cut inside a block, at most: a construct that the cut would split must
 * close within the head to be seen (the head ends where the page could end), so such a cut is at
 * least this far from the head's end (or a quarter of the page, when that is less).
 */
const INLINE_LOOKAHEAD = 500;

/** Top-level blocks that a blank line after them ends, whatever comes next. */
const ENDED_BY_BLANK: ReadonlySet<string> = new Set([
  'paragraph_open',
  'heading_open',
  'table_open',
  'blockquote_open',
  'fence',
  'hr',
]);

/** Cuts at Markdown blocks' ends (see the file's comment). */
export const markdownPageBreaks: PageBreaks = { choose: chooseBreak };

/** What a head was read as: its whole lines, their tokens, where each line starts, and the cuts allowed. */
interface Head {
  text: string;
  tokens: Token[];
  starts: number[];
  floor: number;
  window: number;
}

function chooseBreak(head: string, window: number, minCut: number): PageBreak | undefined {
  // markdown-it reads `\r` as a line break and NUL as U+FFFD: its lines would not be the head's.
  if (head.includes('\r') || head.includes('\0')) return undefined;
  const floor = Math.max(minCut + 1, Math.floor(window / 2));
  const end = head.lastIndexOf('\n');
  if (end > floor) {
    const text = head.slice(0, end);
    const found = structuralBreak({ text, tokens: parseMarkdown(text), starts: lineStarts(text), floor, window });
    if (found) return found;
  }
  // Inside one block: read with the head's last line, whole or not (a construct it cuts short is
  // missing from the block and from the half after the cut alike).
  return inlineBreak({ text: head, tokens: parseMarkdown(head), starts: lineStarts(head), floor, window });
}

/** The last cut between blocks, list items or table rows within [floor, window]. */
function structuralBreak(head: Head): PageBreak | undefined {
  const { text, starts, floor, window } = head;
  let best: PageBreak | undefined;
  for (const { line, reopen, blank } of breakLines(head)) {
    if (line <= 0 || line >= starts.length) continue;
    // The cut is the line break that ends the line before; a blank line there is dropped with it.
    const cut = starts[line]! - 1;
    if (cut < floor || cut > window) continue;
    if (best && (cut < best.cut || (cut === best.cut && reopen !== undefined))) continue;
    const skip = blank ? linesEnd(starts, line + 1, text) + 1 - cut : 1;
    best = reopen === undefined ? { cut, skip } : { cut, skip, reopen };
  }
  return best;
}

/**
 * The lines a page may start at: each top-level block's first, the blank line after a block that
 * it ends, each item's of a top-level list, and each table row's but the first (with the header
 * and delimiter rows to start the page with).
 */
function* breakLines(head: Head): Generator<{ line: number; reopen?: string; blank?: boolean }> {
  const { tokens } = head;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.level !== 0 || token.nesting === -1 || !token.map) continue;
    yield { line: token.map[0] };
    if (endedByBlank(head, token)) yield { line: token.map[1], blank: true };
    if (token.type === 'bullet_list_open' || token.type === 'ordered_list_open') {
      for (let j = i + 1; j < tokens.length && tokens[j]!.level > 0; j++) {
        const item = tokens[j]!;
        if (item.type === 'list_item_open' && item.level === 1 && item.map) yield { line: item.map[0] };
      }
    } else if (token.type === 'table_open') {
      const table = readTableTokens(tokens, i);
      yield* rowBreaks(head, table);
      i = table.next - 1;
    }
  }
}

/**
 * Whether a blank line follows the block and ends it for certain (not a list item, nor an
 * indented code block, which go on after one), so that it may end a page even when what
 * follows is cut short by the head.
 */
function endedByBlank(head: Head, token: Token): boolean {
  const { text, starts } = head;
  const after = token.map?.[1];
  if (after === undefined || after >= starts.length || !ENDED_BY_BLANK.has(token.type)) return false;
  return text.slice(starts[after], linesEnd(starts, after + 1, text)).trim() === '';
}

/** A table's rows but the first, each with the header and delimiter rows (and their line breaks) to reopen it. */
function* rowBreaks(head: Head, table: MarkdownTable): Generator<{ line: number; reopen: string }> {
  const { text, starts } = head;
  const first = table.lines[0];
  if (first + 2 >= starts.length) return;
  const reopen = text.slice(starts[first], starts[first + 2]);
  for (const line of table.rowLines.slice(1)) yield { line, reopen };
}

/**
 * A cut inside the top-level block at the page's end, at a line break or space that no inline
 * construct spans: its two halves read apart hold as many constructs as the block.
 */
function inlineBreak(head: Head): PageBreak | undefined {
  const { text, tokens, starts, floor, window } = head;
  const block = tokens.find(
    (t) =>
      t.level === 0 &&
      t.nesting !== -1 &&
      t.map &&
      starts[t.map[0]]! <= window &&
      window < linesEnd(starts, t.map[1], text),
  );
  if (
    !block?.map ||
    !['paragraph_open', 'heading_open', 'bullet_list_open', 'ordered_list_open', 'blockquote_open'].includes(block.type)
  )
    return undefined;
  const from = starts[block.map[0]]!;
  const to = linesEnd(starts, block.map[1], text);
  const whole = constructCount(parseMarkdown(text.slice(from, to)));
  const low = Math.max(floor, from + 1);
  const high = Math.min(window, text.length - Math.min(INLINE_LOOKAHEAD, Math.floor(window / 4)));
  let tries = 0;
  for (const separator of ['\n', ' ']) {
    for (let at = text.lastIndexOf(separator, high); at >= low && tries < MAX_INLINE_TRIES; tries++) {
      const halves =
        constructCount(parseMarkdown(text.slice(from, at))) + constructCount(parseMarkdown(text.slice(at + 1, to)));
      if (halves === whole) return { cut: at, skip: 1 };
      at = at > 0 ? text.lastIndexOf(separator, at - 1) : -1;
    }
  }
  return undefined;
}
