/**
 * A GFM table read from markdown-it's tokens (`table_open` … `table_close`) with its cells as
 * their inline tokens (for a renderer that keeps their markup: Slack's rich-text table cells, and
 * the page breaks' row lines), each column's alignment, and its source lines; table-read.ts reads
 * cells as text instead (Discord's monospaced tables). markdown-it gives every row as many cells
 * as the header (missing ones empty, extra ones dropped).
 */
import type { Token } from './parse.ts';

/** A column's alignment, from the delimiter row (`:--`, `:-:`, `--:`); undefined for none. */
export type ColumnAlign = 'left' | 'center' | 'right' | undefined;

/** One table of an answer. */
export interface MarkdownTable {
  /** The header's cells: each the inline tokens of its text. */
  header: Token[][];
  /** The body's rows, each with as many cells as the header. */
  rows: Token[][][];
  align: ColumnAlign[];
  /** Its source lines, [first, end) (the header's line first, the delimiter row's next). */
  lines: [number, number];
  /** The source lines of its body rows, in order. */
  rowLines: number[];
  /** The index of the token after its `table_close`. */
  next: number;
}

/** The alignment a cell's `style` attribute names (markdown-it writes `text-align:…`). */
function alignOf(token: Token): ColumnAlign {
  const style = token.attrGet('style');
  if (style === 'text-align:left') return 'left';
  if (style === 'text-align:center') return 'center';
  if (style === 'text-align:right') return 'right';
  return undefined;
}

/**
 * Reads the table whose `table_open` is `tokens[start]`. Linear in its tokens.
 * @throws Error when `tokens[start]` is not a `table_open` with a source map.
 */
export function readTableTokens(tokens: readonly Token[], start: number): MarkdownTable {
  const open = tokens[start];
  if (open?.type !== 'table_open' || !open.map) throw new Error('not a table');
  const table: MarkdownTable = {
    header: [],
    rows: [],
    align: [],
    lines: [open.map[0], open.map[1]],
    rowLines: [],
    next: tokens.length,
  };
  let inBody = false;
  let row: Token[][] | undefined;
  for (let i = start + 1; i < tokens.length; i++) {
    const token = tokens[i]!;
    switch (token.type) {
      case 'table_close':
        table.next = i + 1;
        return table;
      case 'tbody_open':
        inBody = true;
        break;
      case 'tr_open':
        row = [];
        if (inBody) {
          table.rows.push(row);
          table.rowLines.push(token.map?.[0] ?? table.lines[0]);
        }
        break;
      case 'th_open':
        table.align.push(alignOf(token));
        break;
      case 'inline':
        if (inBody) row?.push(token.children ?? []);
        else table.header.push(token.children ?? []);
        break;
    }
  }
  return table;
}
