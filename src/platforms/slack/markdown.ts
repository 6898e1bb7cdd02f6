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
import { parseMarkdown } from '../../core/markdown/parse.ts';
import { lineStarts, linesEnd, normalizeSource } from '../../core/markdown/source.ts';
import { readTable } from '../../core/markdown/tables.ts';
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

/**
 * The blocks that show `markdown` (one page of an answer: the core keeps a page within
 * SLACK_MESSAGE_LIMITS, so its markdown blocks stay far within {@link MARKDOWN_BLOCK_CHARS}):
 * markdown blocks for its text, with a table block in place of its first table that fits one
 * (`tables: 'block'`, one a message) and the other tables as code blocks in the markdown. None
 * for blank text.
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
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.level !== 0 || token.type !== 'table_open') continue;
    const table = readTable(tokens, i);
    const start = starts[table.lines[0]]!;
    const end = linesEnd(starts, table.lines[1], source);
    pending.push(escapeSlackMarkdown(source.slice(from, start)));
    const block = tableLeft ? tableBlock(table) : undefined;
    if (block) {
      flush();
      blocks.push(block);
      tableLeft = false;
      planned -= slackLength(source.slice(start, end));
    } else {
      const own = slackLength(source.slice(start, end));
      const shown = escapeSlackMarkdown(monospaceTable(table, MARKDOWN_BLOCK_CHARS - planned + own));
      planned += shown.length - own;
      pending.push(shown);
    }
    from = end;
    i = table.next - 1;
  }
  pending.push(escapeSlackMarkdown(source.slice(from)));
  flush();
  return blocks;
}
