/**
 * Reading a Markdown table (tables.ts): its cells from markdown-it's tokens (inline Markdown
 * reduced to text for a block, kept as written for a list), its lines in the source (`Token.map`
 * line numbers, line breaks read as markdown-it reads them), and the prefixes of the containers
 * (quotes, list items) it sits in.
 */
import type { Token } from './parse.ts';
import type { Align, Cell, TableCells } from './table-layout.ts';

/**
 * The line prefixes of a table inside containers (quotes, list items): `first` is its first
 * line's quote marks, indent and list markers; `rest` is the delimiter row's (its second line)
 * before the row itself, which starts with `|`, `:` or `-` (a continuation line: quote marks and
 * indent). Undefined when `rest` holds anything else: the table is left as written.
 */
export function containerPrefixes(lines: SourceLines, first: number): { first: string; rest: string } | undefined {
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
export function readTable(tokens: readonly Token[], open: number): { cells: TableCells; close: number } {
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
export class SourceLines {
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
