/**
 * How Discord shows an answer's Markdown (issue 39). Discord renders most of what models write:
 * headings (`#` to `###`), bold, italics, strikethrough, links, lists, quotes, inline code and
 * code blocks; those are sent exactly as the model wrote them. It does not render tables: each
 * becomes an aligned monospaced block, or a list when wider than a Discord line
 * (core/markdown/tables.ts). Applied to every page of a streamed answer (delivery/answer-pages.ts),
 * never to the history.
 */
import { mayHoldTable, TableRenderer } from '../../core/markdown/tables.ts';
import type { MarkdownRendering } from '../../core/platform.ts';

/** Discord's rendering of an answer's Markdown: tables as monospaced blocks or lists, the rest as written. */
export const DISCORD_RENDERING: MarkdownRendering = {
  touches: mayHoldTable,
  renderer: () => new TableRenderer(),
};
