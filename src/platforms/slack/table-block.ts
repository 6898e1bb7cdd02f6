/**
 * A Markdown table on Slack (docs/platform-limits.md, Slack, "Answers' Markdown"): Block Kit's
 * `table` block where it fits, its cells `rich_text` (bold, italics, strikethrough, code and links
 * kept; a mention can only be a `user` / `broadcast` element, which is never made, so the cells'
 * text is literal), or else the table as monospaced lines for a code block.
 *
 * Slack's table block: at most 100 rows of at most 20 cells (Block Kit reference, "Table block"),
 * one table a message (`only_one_table_allowed`), and at most 10,000 characters in its cells
 * together (not on Slack's page: measured by others, vercel/chat's Slack adapter `LIMITS` and
 * getnao/nao #1178). A cell may not be empty, so an empty one holds a space.
 */
import type { RichTextBlock, RichTextElement, TableBlock } from '@slack/types';
import { plainText, webLink } from '../../core/markdown/inline.ts';
import type { Token } from '../../core/markdown/parse.ts';
import type { MarkdownTable } from '../../core/markdown/table-tokens.ts';

/** Rows a table block may hold (the header's included). */
const TABLE_ROWS = 100;
/** Cells a row of a table block may hold. */
const TABLE_COLUMNS = 20;
/** Characters the cells of a table block may hold together. */
const TABLE_CELL_CHARS = 10_000;

type Style = NonNullable<Extract<RichTextElement, { type: 'text' }>['style']>;

/** The style the open markers give (counts of each marker open). */
function styleOf(open: { bold: number; italic: number; strike: number }, code = false): Style | undefined {
  const style: Style = {};
  if (open.bold) style.bold = true;
  if (open.italic) style.italic = true;
  if (open.strike) style.strike = true;
  if (code) style.code = true;
  return Object.keys(style).length ? style : undefined;
}

/** One cell's inline tokens as rich text elements (its text and links, styled); a space for an empty cell. */
function cellElements(children: readonly Token[]): RichTextElement[] {
  const out: RichTextElement[] = [];
  const open = { bold: 0, italic: 0, strike: 0 };
  const text = (value: string, code = false) => {
    if (value === '') return;
    const style = styleOf(open, code);
    out.push(style ? { type: 'text', text: value, style } : { type: 'text', text: value });
  };
  let link: { url: string | undefined; href: string; label: Token[] } | undefined;
  for (const token of children) {
    if (link && token.type !== 'link_close') {
      link.label.push(token);
      continue;
    }
    switch (token.type) {
      case 'text':
        text(token.content);
        break;
      case 'code_inline':
        text(token.content, true);
        break;
      case 'softbreak':
      case 'hardbreak':
        text(' ');
        break;
      case 'strong_open':
      case 'strong_close':
        open.bold += token.nesting;
        break;
      case 'em_open':
      case 'em_close':
        open.italic += token.nesting;
        break;
      case 's_open':
      case 's_close':
        open.strike += token.nesting;
        break;
      case 'link_open': {
        const href = String(token.attrGet('href') ?? '');
        link = { url: webLink(href), href, label: [] };
        break;
      }
      case 'link_close':
        if (link) out.push(...linkElements(link, styleOf(open)));
        link = undefined;
        break;
      case 'image': {
        const src = String(token.attrGet('src') ?? '');
        out.push(...linkElements({ url: webLink(src), href: src, label: token.children ?? [] }, styleOf(open)));
        break;
      }
    }
  }
  return out.length ? out : [{ type: 'text', text: ' ' }];
}

/** A link as a `link` element (a web address), else its label and address as text. */
function linkElements(
  link: { url: string | undefined; href: string; label: readonly Token[] },
  style: Style | undefined,
): RichTextElement[] {
  const label = plainText(link.label);
  if (link.url) return [{ type: 'link', url: link.url, text: label || link.url, ...(style ? { style } : {}) }];
  const shown = label && link.href ? `${label} (${link.href})` : label || link.href;
  return shown ? [{ type: 'text', text: shown, ...(style ? { style } : {}) }] : [];
}

/** The characters of a cell's elements. */
function cellChars(elements: readonly RichTextElement[]): number {
  let chars = 0;
  for (const e of elements) {
    if (e.type === 'text') chars += e.text.length;
    else if (e.type === 'link') chars += (e.text ?? '').length + e.url.length;
  }
  return chars;
}

/**
 * The table as a `table` block, or undefined when it does not fit one: more than
 * {@link TABLE_ROWS} rows or {@link TABLE_COLUMNS} columns, or more than
 * {@link TABLE_CELL_CHARS} characters. Every column wraps its text; alignment as the delimiter
 * row has it. Linear in the table's tokens.
 */
export function tableBlock(table: MarkdownTable): TableBlock | undefined {
  const columns = table.header.length;
  if (columns === 0 || columns > TABLE_COLUMNS || table.rows.length + 1 > TABLE_ROWS) return undefined;
  let chars = 0;
  const rows: RichTextBlock[][] = [];
  for (const row of [table.header, ...table.rows]) {
    const cells = row.map((children) => {
      const elements = cellElements(children);
      chars += cellChars(elements);
      return { type: 'rich_text' as const, elements: [{ type: 'rich_text_section' as const, elements }] };
    });
    if (chars > TABLE_CELL_CHARS) return undefined;
    rows.push(cells);
  }
  return {
    type: 'table',
    column_settings: table.align.map((align) => ({ align: align ?? 'left', is_wrapped: true })),
    rows,
  };
}

/** The longest run of backticks in `text`. */
function longestBacktickRun(text: string): number {
  let longest = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    run = text.charCodeAt(i) === 0x60 ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

/**
 * The table as a fenced code block of monospaced lines: its cells' text without markup (a link
 * as its label and address), separated by ` | `, a line of dashes under the header (no `|---|`
 * line: that would be Markdown's own). Padded into columns when that fits `budget` characters,
 * else unpadded (never longer than the table's cells and separators). The fence is longer than
 * any run of backticks in the cells.
 */
export function monospaceTable(table: MarkdownTable, budget: number): string {
  const rows = [table.header, ...table.rows].map((row) => row.map((cell) => plainText(cell)));
  const widths = table.header.map(() => 3);
  for (const row of rows) {
    row.forEach((cell, column) => {
      widths[column] = Math.max(widths[column] ?? 3, cell.length);
    });
  }
  const line = (cells: string[], pad: boolean) =>
    (pad ? cells.map((cell, column) => cell.padEnd(widths[column]!)) : cells).join(' | ').trimEnd();
  const build = (pad: boolean) => {
    const rule = widths.map((width) => '-'.repeat(pad ? width : 3)).join('-+-');
    return [line(rows[0]!, pad), rule, ...rows.slice(1).map((cells) => line(cells, pad))].join('\n');
  };
  // The padded size, counted before it is built: a wide table of many rows would be large.
  const paddedChars = rows.length * (widths.reduce((sum, width) => sum + width + 3, 0) + 1);
  const body = paddedChars <= budget ? build(true) : build(false);
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(body) + 1));
  return `${fence}\n${body}\n${fence}`;
}
