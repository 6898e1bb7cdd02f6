/**
 * The one Markdown parser of the bot: models answer in standard Markdown (CommonMark with GitHub's
 * tables and strikethrough), and each platform renders what it can of it (issue 39). Every
 * renderer reads the same tokens from here, never the text with regular expressions.
 *
 * markdown-it, chosen over micromark (the unified ecosystem) and marked after a measurement on
 * hostile input of 20,000 characters (answers are model output: hostile too): micromark took
 * 70 s on `- - - …` and overflowed the stack on nested quotes, marked overflowed it on nested
 * quotes; markdown-it caps nesting ({@link MAX_NESTING}) and stayed at 1–120 ms on every shape
 * tried. Raw HTML is not parsed as HTML (it stays text), and bare URLs are not turned into links.
 */
import MarkdownIt from 'markdown-it';

/** One token of markdown-it's stream. */
export type Token = ReturnType<InstanceType<typeof MarkdownIt>['parse']>[number];

/**
 * How deep blocks and inline constructs nest before the rest is read as text (markdown-it's
 * `maxNesting`; its own default is 100). Deep enough for any answer a person reads; bounded so
 * that no answer costs more than its length to parse.
 */
export const MAX_NESTING = 20;

const parser = new MarkdownIt('commonmark', { html: false, linkify: false, maxNesting: MAX_NESTING }).enable([
  'table',
  'strikethrough',
]);

/**
 * The block tokens of `markdown` (markdown-it's token stream: `heading_open`, `paragraph_open`,
 * `inline` with `children`, `fence`, `table_open`… each with its source lines in `map`).
 * Time about linear in the text's length (measured above); callers pass what they show, which
 * `MAX_ANSWER_CHARS` bounds.
 */
export function parseMarkdown(markdown: string): Token[] {
  return parser.parse(markdown, {});
}
