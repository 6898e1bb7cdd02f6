/**
 * One Markdown table laid out for a platform that does not render tables (issue 39): an aligned
 * monospaced block in a code fence where it is narrow enough to read, else a list with one item a
 * row. Platform-neutral: a table as cells (tables.ts reads them from the parser's tokens), out as
 * Markdown that every platform renders.
 *
 * Display width (how many columns of a monospaced font a cell takes: a CJK character or an emoji
 * takes two, a combining mark none) is `string-width`'s: it follows Unicode's East Asian Width
 * and emoji data, which the bot has no business keeping tables of, and segments graphemes with
 * `Intl.Segmenter`.
 */
import stringWidth from 'string-width';

/** How a column is aligned (its delimiter row: `:--` left, `--:` right, `:-:` center; none: left). */
export type Align = 'left' | 'right' | 'center';

/** One cell: its text for a monospaced block, and its Markdown as written for a list. */
export interface Cell {
  /** The cell's inline Markdown reduced to its text (links keep their address), on one line. */
  text: string;
  /** The cell's Markdown as written, trimmed (the `\|` escapes of the table read as `|`). */
  markdown: string;
}

/** A table as the parser read it: every row has one cell a column (GFM: missing cells are empty, extra ones dropped). */
export interface TableCells {
  align: Align[];
  header: Cell[];
  rows: Cell[][];
}

/**
 * Widest block, in display columns, before a table becomes a list. Discord's code blocks do not
 * scroll on mobile: they wrap, and a wrapped row breaks the alignment that made the block worth
 * having. 60 columns fit Discord's desktop chat column, its tablet and landscape layouts (about
 * 80–100 columns of its code font) with room for the avatar and a narrower window; a phone in
 * portrait shows about 40, where a table of 41–60 columns still wraps (a list would serve it
 * better there, but far worse on every wider screen).
 */
export const TABLE_MAX_WIDTH = 60;

/** Between two cells of a row, and between their dashes in the rule under the header. */
const CELL_GAP = ' | ';
const RULE_GAP = '-+-';

/**
 * The table as an aligned monospaced block in a ``` fence, or undefined when it is wider than
 * `maxWidth` display columns or would take more than `maxChars` characters. Cells are padded by
 * display width (string-width), each line's trailing spaces dropped. No line of it can end the
 * fence: the cells' backticks are kept apart ({@link blockText}).
 */
export function tableBlock(table: TableCells, maxWidth: number, maxChars: number): string | undefined {
  const header = table.header.map((c) => measured(c.text));
  const rows = table.rows.map((row) => row.map((c) => measured(c.text)));
  const widths = header.map((cell) => Math.max(1, cell.width));
  for (const row of rows)
    for (let col = 0; col < row.length; col++) widths[col] = Math.max(widths[col]!, row[col]!.width);
  const total = widths.reduce((sum, w) => sum + w, 0) + CELL_GAP.length * (widths.length - 1);
  if (total > maxWidth) return undefined;
  const out = new Bounded(maxChars);
  out.add('```');
  out.add(line(header, widths, table.align));
  out.add(widths.map((w) => '-'.repeat(w)).join(RULE_GAP));
  for (const row of rows) if (!out.add(line(row, widths, table.align))) return undefined;
  return out.add('```') ? out.lines.join('\n') : undefined;
}

/**
 * The table as a list: one item a row, its cells as `**Header**: value` lines (the value's
 * Markdown as written: a list is rendered, a code block is not), empty cells left out; a header
 * cell without text is named `Column n`. A table without rows is its headers on one line.
 * Undefined when it would take more than `maxChars` characters.
 */
export function tableList(table: TableCells, maxChars: number): string | undefined {
  const labels = table.header.map((c, i) => `**${escapeInline(c.text) || `Column ${i + 1}`}**`);
  const out = new Bounded(maxChars);
  if (table.rows.length === 0) return out.add(labels.join(' · ')) ? out.lines.join('\n') : undefined;
  for (const row of table.rows) {
    const pairs = row.flatMap((cell, i) => (cell.markdown === '' ? [] : [`${labels[i]}: ${cell.markdown}`]));
    if (pairs.length === 0) continue;
    if (!out.add(`- ${pairs[0]}`)) return undefined;
    for (const pair of pairs.slice(1)) if (!out.add(`  ${pair}`)) return undefined;
  }
  return out.lines.join('\n');
}

/** Lines added while their characters (with a line break each) stay within a budget. */
class Bounded {
  readonly lines: string[] = [];
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  /** Adds `text` as a line. @returns false (and adds nothing) past the budget. */
  add(text: string): boolean {
    this.chars += text.length + 1;
    if (this.chars > this.maxChars) return false;
    this.lines.push(text);
    return true;
  }
}

/** A cell's text as a block shows it ({@link blockText}) and its display width. */
interface Measured {
  text: string;
  width: number;
}

function measured(text: string): Measured {
  const shown = blockText(text);
  return { text: shown, width: stringWidth(shown) };
}

/** One row of the block: each cell padded to its column's width as its column is aligned, trailing spaces dropped. */
function line(cells: readonly Measured[], widths: readonly number[], align: readonly Align[]): string {
  const padded = cells.map(({ text, width }, col) => {
    const room = widths[col]! - width;
    if (align[col] === 'right') return ' '.repeat(room) + text;
    if (align[col] === 'center') return ' '.repeat(room >> 1) + text + ' '.repeat(room - (room >> 1));
    return text + ' '.repeat(room);
  });
  return padded.join(CELL_GAP).trimEnd();
}

const BACKTICK = 0x60;
/** Between two backticks of a cell in a block: a zero-width space (no width, nothing shown). */
const BACKTICK_GAP = '\u200b';

/**
 * A cell's text as a block shows it: control characters and line or paragraph separators as
 * spaces (a cell is one line; a tab has no width one can count), and no two backticks side by
 * side. A longer fence (text-files.ts `fenceFor`) would not do: Discord ends a code block at the
 * first ``` anywhere in it, whatever the fence that opened it, so a cell's ``` is broken up by
 * zero-width spaces instead, which neither Discord nor CommonMark read as a fence.
 */
function blockText(text: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const control = c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029;
    const pair = c === BACKTICK && i > 0 && text.charCodeAt(i - 1) === BACKTICK;
    if (!control && !pair) continue;
    out += text.slice(from, i) + (control ? ' ' : BACKTICK_GAP);
    from = control ? i + 1 : i;
  }
  return (out + text.slice(from)).trim();
}

/** Characters that Discord's and CommonMark's inline Markdown read as marks in a header's label. */
const INLINE_MARKS = new Set(['\\', '*', '_', '~', '`', '|', '[', ']', '<', '>']);

/** `text` with each inline mark escaped by a backslash, so that a label in `**…**` shows as written. */
function escapeInline(text: string): string {
  let out = '';
  for (const ch of text.trim()) out += INLINE_MARKS.has(ch) ? `\\${ch}` : ch;
  return out;
}
