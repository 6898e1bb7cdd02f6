/**
 * An answer's Markdown as Slack shows it in a posted or updated message (issue 39), the way its
 * native stream shows it: Block Kit's `markdown` block, which takes standard Markdown and renders
 * it as Slack does the stream's `markdown_text` (headings, bold, italics, strikethrough, links,
 * lists, quotes, code blocks), its `&` and `<` escaped so that no mention can form (`>` kept:
 * it marks a quote; the stream's text escapes it too, text.ts `escapeSlackMarkdown`). Tables, which the markdown block does not render, become a `table` block (the first
 * one that fits: table-block.ts) or a code block of monospaced lines. The `text` Slack wants
 * beside blocks (notifications, screen readers) is the same Markdown in mrkdwn (mrkdwn.ts).
 *
 * The Markdown is read once, with the bot's one parser (core/markdown/parse.ts), and the
 * markdown blocks carry the answer's own source between tables (their source lines: `map`),
 * never text rewritten by regular expressions. Linear in the page's length.
 */
import type { KnownBlock } from '@slack/types';
import { parseMarkdown, type Token } from '../../core/markdown/parse.ts';
import { lineStarts, linesEnd, normalizeSource } from '../../core/markdown/source.ts';
import { containerPrefixes, SourceLines } from '../../core/markdown/table-read.ts';
import { type MarkdownTable, readTableTokens } from '../../core/markdown/table-tokens.ts';
import { monospaceTable, tableBlock } from './table-block.ts';
import { escapeSlackMarkdown, slackLength } from './text.ts';

/** Characters the markdown blocks of one message may hold together (Block Kit reference, "Markdown block"). */
export const MARKDOWN_BLOCK_CHARS = 12_000;

/** How tables are shown: the first that fits as a `table` block, or every one as monospaced lines. */
export type TableRendering = 'block' | 'monospace';

/** `text` without its leading blank lines and trailing whitespace (a line's own indentation kept). */
function trimBlankLines(text: string): string {
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) start = i + 1;
    else if (c !== 0x20 && c !== 0x09) break;
  }
  return text.slice(start).trimEnd();
}

/** A thematic break, which the markdown block does not render (Block Kit reference, "Markdown block"). */
export const RULE = '──────────';

/**
 * A change to the page's source, where the parser's tokens put it: a span replaced by text, or a
 * table (by a table block, or monospaced lines).
 */
interface Edit {
  from: number;
  to: number;
  text: string;
  table?: MarkdownTable;
}

/**
 * What the markdown block does not render, found in the tokens, in the source's order: tables
 * (a nested one as monospaced lines in place); top-level thematic breaks (a line of {@link RULE}); task list items' `[ ]` / `[x]` (☐ /
 * ☑). Linear in the tokens.
 */
function editsOf(source: string, tokens: readonly Token[], starts: readonly number[]): Edit[] {
  const edits: Edit[] = [];
  let lines: SourceLines | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.type === 'table_open') {
      const table = readTableTokens(tokens, i);
      const from = starts[table.lines[0]]!;
      const to = linesEnd(starts, table.lines[1], source);
      lines ??= new SourceLines(source);
      const edit = token.level === 0 ? { from, to, text: '', table } : nestedTable(lines, table, from, to);
      if (edit) edits.push(edit);
      i = table.next - 1;
    } else if (token.type === 'hr' && token.level === 0 && token.map) {
      edits.push({ from: starts[token.map[0]]!, to: linesEnd(starts, token.map[0] + 1, source), text: RULE });
    } else if (token.type === 'list_item_open') {
      const box = checkboxAt(source, starts, tokens[i + 1], tokens[i + 2]);
      if (box) edits.push(box);
    }
  }
  return edits;
}

/**
 * A table inside a list item or a quote (no block can stand there): its monospaced lines in a
 * code block in place, each line after the table's own container prefixes (table-read.ts
 * `containerPrefixes`: the first line's, with a list marker, then the delimiter row's). Unpadded
 * when padding would make it longer than its source; left as written when the prefixes cannot be
 * read.
 */
function nestedTable(lines: SourceLines, table: MarkdownTable, from: number, to: number): Edit | undefined {
  const prefixes = containerPrefixes(lines, table.lines[0]);
  if (!prefixes) return undefined;
  const [first, ...rest] = monospaceTable(table, to - from).split('\n');
  return { from, to, text: [prefixes.first + first, ...rest.map((line) => prefixes.rest + line)].join('\n') };
}

/** A task item's `[ ]` or `[x]` (the first `[` of its first line: only the marker and spaces precede it), as ☐ or ☑. */
function checkboxAt(
  source: string,
  starts: readonly number[],
  paragraph: Token | undefined,
  inline: Token | undefined,
): Edit | undefined {
  const first = inline?.children?.[0];
  if (paragraph?.type !== 'paragraph_open' || inline?.type !== 'inline' || !inline.map || first?.type !== 'text')
    return undefined;
  const box = first.content.slice(0, 4);
  if (box !== '[ ] ' && box !== '[x] ' && box !== '[X] ') return undefined;
  const at = source.indexOf('[', starts[inline.map[0]]);
  return at < 0 ? undefined : { from: at, to: at + 3, text: box === '[ ] ' ? '☐' : '☑' };
}

/**
 * The blocks that show `markdown` (one page of an answer: the core keeps a page within
 * SLACK_MESSAGE_LIMITS, so its markdown blocks stay far within {@link MARKDOWN_BLOCK_CHARS}):
 * markdown blocks for its text, with a table block in place of its first table that fits one
 * (`tables: 'block'`, one a message) and the other tables as code blocks in the markdown;
 * thematic breaks and task items' boxes as characters the markdown block shows ({@link editsOf}).
 * None for blank text.
 */
export function markdownBlocks(markdown: string, tables: TableRendering = 'block'): KnownBlock[] {
  const source = normalizeSource(markdown);
  const tokens = parseMarkdown(source);
  const starts = lineStarts(source);
  const blocks: KnownBlock[] = [];
  let pending: string[] = [];
  let used = 0;
  const flush = () => {
    const text = trimBlankLines(pending.join(''));
    pending = [];
    if (text === '') return;
    // Never past the payload's limit (a page is far within it: this only bounds what callers pass).
    const kept = text.slice(0, Math.max(0, MARKDOWN_BLOCK_CHARS - used));
    if (kept === '') return;
    used += kept.length;
    blocks.push({ type: 'markdown', text: kept });
  };
  let tableLeft = tables === 'block';
  // Characters the markdown blocks would hold with every table as its own source.
  let planned = slackLength(source);
  let from = 0;
  for (const edit of editsOf(source, tokens, starts)) {
    pending.push(escapeSlackMarkdown(source.slice(from, edit.from)));
    from = edit.to;
    if (!edit.table) {
      pending.push(escapeSlackMarkdown(edit.text));
      continue;
    }
    const own = slackLength(source.slice(edit.from, edit.to));
    const block = tableLeft ? tableBlock(edit.table) : undefined;
    if (block) {
      flush();
      blocks.push(block);
      tableLeft = false;
      planned -= own;
    } else {
      const shown = escapeSlackMarkdown(monospaceTable(edit.table, MARKDOWN_BLOCK_CHARS - planned + own));
      planned += shown.length - own;
      pending.push(shown);
    }
  }
  pending.push(escapeSlackMarkdown(source.slice(from)));
  flush();
  return blocks;
}
