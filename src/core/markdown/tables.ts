/**
 * Markdown tables rewritten for a platform that renders the rest of Markdown but not tables
 * (Discord, issue 39): each table the parser finds (parse.ts, never a regular expression over the
 * text) becomes an aligned monospaced block, or a list when it is wide (table-layout.ts); every
 * other line is the text as written, byte for byte: the output is the input's own slices between
 * the tables' source lines (`Token.map`), so headings, emphasis, links, lists, quotes, code and
 * line endings stay exactly as the model wrote them. A table inside a quote or a list item keeps
 * its container: its block's lines carry the table's own line prefixes (`> `, the item's indent).
 *
 * Cost, for a text streamed and rendered at each write ({@link TableRenderer}): the start of the
 * text that no later text can change (up to the last block after a blank line, that block not a
 * list or indented code) is rendered once and kept, so a write parses only the blocks after it
 * (one difference from rendering the whole text at once: a table's `[text][label]` cells whose
 * link reference definition is in another part stay as written, which is how Discord shows
 * reference links anywhere);
 * at most {@link MAX_RENDERED_CHARS} of the text are rendered (the rest is shown as written); a
 * table takes at most {@link MAX_TABLE_GROWTH} times its source (plus {@link TABLE_GROWTH_SLACK}),
 * else it is left as written (a list repeating long headers on many short rows).
 */
import { parseMarkdown, type Token } from './parse.ts';
import { TABLE_MAX_WIDTH, type TableCells, tableBlock, tableList } from './table-layout.ts';
import { containerPrefixes, readTable, SourceLines } from './table-read.ts';

export { TABLE_MAX_WIDTH } from './table-layout.ts';

/** A table's rendering takes at most this many times its source's characters… */
export const MAX_TABLE_GROWTH = 4;
/** …plus this many (small tables). */
export const TABLE_GROWTH_SLACK = 1_000;
/**
 * Characters of a text rendered, at most (twice `MAX_ANSWER_CHARS`' default; 20 Discord
 * messages): past them (an answer allowed up to 1,000,000 characters) the text is shown as
 * written, so that one render parses at most this much (bench/markdown.bench.ts).
 */
export const MAX_RENDERED_CHARS = 40_000;

/** Options of {@link renderTables} and {@link TableRenderer}. */
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
 * `markdown` with each table (in its first {@link MAX_RENDERED_CHARS}) as an aligned monospaced
 * block (a list when wider than `maxWidth`), everything else as written; the same string when it
 * holds no table. Never throws. Time: one parse of at most {@link MAX_RENDERED_CHARS}, and output
 * bounded by {@link MAX_TABLE_GROWTH}.
 */
export function renderTables(markdown: string, options: TableOptions = {}): string {
  return new TableRenderer(options).render(markdown);
}

/**
 * {@link renderTables} for one text that grows (a streamed answer, rendered at each write): the
 * rendering of the text's stable start is kept, and a text that starts with it parses only what
 * comes after it. A text that does not (a final text that replaced the answer) is rendered afresh.
 */
export class TableRenderer {
  /** The text's start that no later text changes, and its rendering. */
  private stable = '';
  private stableRendered = '';

  constructor(private readonly options: TableOptions = {}) {}

  /** {@link renderTables} of `markdown`. */
  render(markdown: string): string {
    if (!mayHoldTable(markdown)) return markdown;
    if (!markdown.startsWith(this.stable)) {
      this.stable = '';
      this.stableRendered = '';
    }
    const from = this.stable.length;
    let to = Math.min(markdown.length, MAX_RENDERED_CHARS);
    if (to < markdown.length) to = Math.max(from, markdown.lastIndexOf('\n', to) + 1);
    const tail = markdown.slice(from, to);
    const part = renderPart(tail, this.options.maxWidth ?? TABLE_MAX_WIDTH);
    const before = this.stableRendered;
    if (part.stable > 0) {
      this.stable = markdown.slice(0, from + part.stable);
      this.stableRendered = before + part.stableRendered;
    }
    const rendered = before + part.rendered + markdown.slice(to);
    return rendered === markdown ? markdown : rendered;
  }
}

/**
 * One parse of `text`: its rendering; and how long a start of it is stable (`stable`, at a
 * line's start: no text added after `text` changes how that start parses) with the rendering of
 * that start alone.
 */
function renderPart(text: string, maxWidth: number): { rendered: string; stable: number; stableRendered: string } {
  if (!mayHoldTable(text)) return { rendered: text, stable: 0, stableRendered: '' };
  const tokens = parseMarkdown(text);
  const lines = new SourceLines(text);
  const stable = lines.start(stableLines(tokens));
  const parts: string[] = [];
  let copied = 0;
  let stableRendered: string | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const open = tokens[i]!;
    if (open.type !== 'table_open' || !open.map) continue;
    const { cells, close } = readTable(tokens, i);
    i = close;
    const start = lines.start(open.map[0]);
    const stop = lines.end(open.map[1] - 1);
    const rendered = renderOne(cells, lines, open, maxWidth, stop - start);
    if (rendered === undefined) continue;
    if (stableRendered === undefined && start >= stable)
      stableRendered = [...parts, text.slice(copied, stable)].join('');
    parts.push(text.slice(copied, start), rendered);
    copied = stop;
  }
  if (parts.length === 0) return { rendered: text, stable, stableRendered: text.slice(0, stable) };
  stableRendered ??= [...parts, text.slice(copied, stable)].join('');
  parts.push(text.slice(copied));
  return { rendered: parts.join(''), stable, stableRendered };
}

/**
 * The first line of the last top-level block that follows a blank line after a block that
 * cannot go on past it (a paragraph, heading, table, quote, closed fence…; not a list, whose
 * item goes on after a blank line when the next line is indented, nor indented code): no text
 * added later changes how the lines before it parse. 0 when there is none.
 */
function stableLines(tokens: readonly Token[]): number {
  let stable = 0;
  let previous: Token | undefined;
  for (const token of tokens) {
    if (token.level !== 0 || token.nesting === -1 || !token.map) continue;
    const after = previous?.map?.[1];
    if (previous && after !== undefined && after < token.map[0] && !GOES_ON.has(previous.type)) stable = token.map[0];
    previous = token;
  }
  return stable;
}

/** Top-level blocks that a blank line does not end. */
const GOES_ON = new Set(['bullet_list_open', 'ordered_list_open', 'code_block']);

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
