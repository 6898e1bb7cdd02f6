/**
 * Markdown tables rewritten for a platform that renders the rest of Markdown but not tables
 * (Discord, issue 39): each table the parser finds (parse.ts, never a regular expression over the
 * text) becomes an aligned monospaced block, or a list when it is wide (table-layout.ts); every
 * other line is the text as written, byte for byte: the output is the input's own slices between
 * the tables' source lines (`Token.map`), so headings, emphasis, links, lists, quotes, code and
 * line endings stay exactly as the model wrote them.
 *
 * A table inside a quote or a list item keeps its container: its block's lines carry the
 * table's own line prefixes (`> `, the item's indent).
 *
 * Cost: one parse of the text (about linear in its length: parse.ts) and each table's rendering,
 * at most {@link MAX_TABLE_GROWTH} times its source (plus {@link TABLE_GROWTH_SLACK}); a table
 * that would take more (a list repeating long headers on many short rows) is left as written.
 */
import { parseMarkdown, type Token } from './parse.ts';
import { type Align, type Cell, TABLE_MAX_WIDTH, type TableCells, tableBlock, tableList } from './table-layout.ts';

export { TABLE_MAX_WIDTH } from './table-layout.ts';

/** A table's rendering takes at most this many times its source's characters… */
export const MAX_TABLE_GROWTH = 4;
/** …plus this many (small tables). */
export const TABLE_GROWTH_SLACK = 1_000;

/** Options of {@link renderTables}. */
export interface TableOptions {
  /** Widest block in display columns; a wider table becomes a list. Default {@link TABLE_MAX_WIDTH}. */
  maxWidth?: number;
}

/**
 * Whether text holding `text` may hold a table: GFM tables need a `|` (markdown-it's table rule
 * refuses a header row without one). O(text); a text without one is returned by
 * {@link renderTables} unchanged without being parsed.
 */
export function mayHoldTable(text: string): boolean {
  return text.includes('|');
}

/**
 * `markdown` with each table as an aligned monospaced block (a list when wider than
 * `maxWidth`), everything else as written. The same string when it holds no table.
 * Time: one parse plus output bounded by {@link MAX_TABLE_GROWTH}; never throws on any text.
 */
export function renderTables(markdown: string, options: TableOptions = {}): string {
  if (!mayHoldTable(markdown)) return markdown;
  const tokens = parseMarkdown(markdown);
  let lines: SourceLines | undefined;
  const parts: string[] = [];
  let copied = 0;
  for (let i = 0; i < tokens.length; i++) {
    const open = tokens[i]!;
    if (open.type !== 'table_open' || !open.map) continue;
    const { cells, close } = readTable(tokens, i);
    i = close;
    lines ??= new SourceLines(markdown);
    const [first, end] = open.map;
    const start = lines.start(first);
    const stop = lines.end(end - 1);
    const rendered = renderOne(cells, lines, open, options.maxWidth ?? TABLE_MAX_WIDTH, stop - start);
    if (rendered === undefined) continue;
    parts.push(markdown.slice(copied, start), rendered);
    copied = stop;
  }
  if (parts.length === 0) return markdown;
  parts.push(markdown.slice(copied));
  return parts.join('');
}

/** One table's replacement for its source lines (no line break after it), or undefined to leave it as written. */
function renderOne(
  cells: TableCells,
  lines: SourceLines,
  open: Token,
  maxWidth: number,
  sourceChars: number,
): string | undefined {
  const first = open.map![0];
  const prefixes = open.level === 0 ? { first: '', rest: '' } : containerPrefixes(lines, first);
  if (!prefixes) return undefined;
  const budget = MAX_TABLE_GROWTH * sourceChars + TABLE_GROWTH_SLACK;
  const body = tableBlock(cells, maxWidth, budget) ?? tableList(cells, budget) ?? tableBlock(cells, Infinity, budget);
  if (body === undefined) return undefined;
  return prefixes.first + body.split('\n').join(`\n${prefixes.rest}`);
}

/**
 * The line prefixes of a table inside containers (quotes, list items): `first` is its first
 * line's quote marks, indent and list markers; `rest` is the delimiter row's (its second line)
 * before the row itself, which starts with `|`, `:` or `-` (a continuation line: quote marks and
 * indent). Undefined when `rest` holds anything else: the table is left as written.
 */
function containerPrefixes(lines: SourceLines, first: number): { first: string; rest: string } | undefined {
  const header = lines.text(first);
  const delimiter = lines.text(first + 1);
  let restEnd = 0;
  while (restEnd < delimiter.length && !'|:-'.includes(delimiter[restEnd]!)) {
    if (!' \t>'.includes(delimiter[restEnd]!)) return undefined;
    restEnd++;
  }
  return { first: header.slice(0, containerPrefixLength(header)), rest: delimiter.slice(0, restEnd) };
}

/** The length of a line's container prefix: blanks, quote marks, and list markers (`-`, `+`, `*`, `1.`, `1)`) each before a blank. */
function containerPrefixLength(line: string): number {
  let i = 0;
  for (;;) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (line[i] === '>') {
      i++;
      continue;
    }
    let end = i;
    while (end < line.length && end - i < 9 && line[end]! >= '0' && line[end]! <= '9') end++;
    if (end > i) end = line[end] === '.' || line[end] === ')' ? end + 1 : i;
    else if ('-+*'.includes(line[i] ?? '|')) end = i + 1;
    if (end === i || (line[end] !== ' ' && line[end] !== '\t')) return i;
    i = end;
  }
}

/** The cells of the table opened at `tokens[open]`, and the index of its `table_close`. */
function readTable(tokens: readonly Token[], open: number): { cells: TableCells; close: number } {
  const align: Align[] = [];
  const rows: Cell[][] = [];
  let i = open + 1;
  for (; i < tokens.length && tokens[i]!.type !== 'table_close'; i++) {
    const token = tokens[i]!;
    if (token.type === 'tr_open') rows.push([]);
    else if (token.type === 'th_open') align.push(alignOf(token));
    else if (token.type === 'inline')
      rows.at(-1)?.push({ text: plainText(token.children ?? []), markdown: token.content.trim() });
  }
  const [header = [], ...body] = rows;
  // markdown-it gives every row one cell a header cell (GFM); kept so whatever the parser does.
  const empty: Cell = { text: '', markdown: '' };
  const fitted = body.map((row) => header.map((_, col) => row[col] ?? empty));
  return { cells: { align, header, rows: fitted }, close: i };
}

/** A cell's alignment from markdown-it's `style="text-align:…"`. */
function alignOf(token: Token): Align {
  const style = String(token.attrGet('style') ?? '');
  return style.endsWith('right') ? 'right' : style.endsWith('center') ? 'center' : 'left';
}

/**
 * Inline tokens as their text: emphasis, strikethrough and code marks dropped, an image as its alt
 * text; a link or image followed by its address in parentheses, unless it shows its address.
 */
function plainText(children: readonly Token[]): string {
  let out = '';
  const links: Array<{ href: string; from: number; autolink: boolean }> = [];
  for (const token of children) {
    switch (token.type) {
      case 'text':
      case 'text_special':
      case 'code_inline':
        out += token.content;
        break;
      case 'softbreak':
      case 'hardbreak':
        out += ' ';
        break;
      case 'link_open':
        links.push({
          href: String(token.attrGet('href') ?? ''),
          from: out.length,
          autolink: token.markup === 'autolink',
        });
        break;
      case 'link_close': {
        const link = links.pop();
        if (link && !link.autolink) out += addressAfter(out.slice(link.from), link.href);
        break;
      }
      case 'image': {
        const alt = plainText(token.children ?? []);
        out += alt + addressAfter(alt, String(token.attrGet('src') ?? ''));
        break;
      }
    }
  }
  return out;
}

/** ` (href)` after a link's text, or nothing when there is no address or the text is it. */
function addressAfter(text: string, href: string): string {
  return href === '' || text.trim() === href ? '' : ` (${href})`;
}

/**
 * Where each line of a text starts and ends, its line breaks read as markdown-it reads them
 * (`\r\n`, `\r` or `\n`: its `normalize` rule), so that `Token.map` line numbers index them.
 */
class SourceLines {
  /** Start offset of each line, then past the end. */
  private readonly starts: number[] = [0];
  /** End offset of each line (before its line break). */
  private readonly ends: number[] = [];

  constructor(private readonly source: string) {
    for (let i = 0; i < source.length; i++) {
      const c = source.charCodeAt(i);
      if (c !== 0x0a && c !== 0x0d) continue;
      this.ends.push(i);
      if (c === 0x0d && source.charCodeAt(i + 1) === 0x0a) i++;
      this.starts.push(i + 1);
    }
    this.ends.push(source.length);
  }

  /** Offset of line `line`'s first character. */
  start(line: number): number {
    return this.starts[Math.min(line, this.starts.length - 1)]!;
  }

  /** Offset just past line `line`'s last character (before its line break). */
  end(line: number): number {
    return this.ends[Math.min(line, this.ends.length - 1)]!;
  }

  /** Line `line`'s text, without its line break. */
  text(line: number): string {
    return this.source.slice(this.start(line), this.end(line));
  }
}
