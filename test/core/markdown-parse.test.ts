/**
 * The bot's one Markdown parser (src/core/markdown/parse.ts): GitHub's tables and strikethrough
 * on top of CommonMark, raw HTML kept as text, and nesting bounded, so that an answer nested ten
 * thousand deep parses (no stack overflow) into at most MAX_NESTING levels.
 */
import { describe, expect, it } from 'vitest';
import { MAX_NESTING, parseMarkdown } from '../../src/core/markdown/parse.ts';

const types = (markdown: string) => parseMarkdown(markdown).map((t) => t.type);

describe('parseMarkdown', () => {
  it('reads tables, strikethrough, headings and fences', () => {
    const tokens = parseMarkdown('# Title\n\n~~old~~ **new**\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```js\nx\n```');
    expect(tokens.map((t) => t.type)).toContain('table_open');
    expect(tokens.find((t) => t.type === 'heading_open')?.tag).toBe('h1');
    expect(tokens.find((t) => t.type === 'fence')?.info).toBe('js');
    const inline = tokens.filter((t) => t.type === 'inline').flatMap((t) => t.children ?? []);
    expect(inline.map((t) => t.type)).toContain('s_open');
  });

  it('keeps raw HTML as text and does not link bare URLs', () => {
    expect(types('<b>bold?</b> see https://example.com')).not.toContain('html_inline');
    const inline = parseMarkdown('see https://example.com').flatMap((t) => t.children ?? []);
    expect(inline.map((t) => t.type)).not.toContain('link_open');
  });

  it('an answer nested ten thousand deep parses into at most MAX_NESTING levels', () => {
    const quotes = types(`${'> '.repeat(10_000)}deep`).filter((t) => t === 'blockquote_open');
    expect(quotes.length).toBeGreaterThan(0);
    expect(quotes.length).toBeLessThanOrEqual(MAX_NESTING);
    const lists = types(`${'- '.repeat(10_000)}deep`).filter((t) => t === 'bullet_list_open');
    expect(lists.length).toBeLessThanOrEqual(MAX_NESTING);
  });
});
