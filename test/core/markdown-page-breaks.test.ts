/**
 * Markdown-aware page breaks (core/markdown/page-breaks.ts, the splitter's PageBreaks seam):
 * pages end between blocks, list items or table rows, a table going on with its header; a long
 * paragraph is cut where no inline construct spans; pages stay prefix-stable as the text grows.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PageSplitter, splitMessage } from '../../src/core/delivery/split.ts';
import { constructCount } from '../../src/core/markdown/inline.ts';
import { markdownPageBreaks } from '../../src/core/markdown/page-breaks.ts';
import { parseMarkdown } from '../../src/core/markdown/parse.ts';
import { slackLength } from '../../src/platforms/slack/text.ts';

const split = (text: string, max: number) => splitMessage(text, max, slackLength, markdownPageBreaks);

/** The rows of every table a page holds, as markdown-it reads the page alone. */
function tableRowsOf(page: string): number {
  return parseMarkdown(page).filter((t) => t.type === 'tr_open').length;
}

describe('markdown page breaks', () => {
  it('cuts a table between its rows and starts the next page with its header and delimiter rows, so every row is read as a table row', () => {
    const rows = Array.from(
      { length: 60 },
      (_, i) => `| row ${i} | **value ${i}** | [link](https://example.com/${i}) |`,
    );
    const text = ['Intro with **bold**.', '', '| A | B | C |', '|:--|:-:|--:|', ...rows, '', 'The end.'].join('\n');
    const pages = split(text, 1000);
    expect(pages.length).toBeGreaterThan(3);
    let bodyRows = 0;
    for (const page of pages) {
      expect(slackLength(page)).toBeLessThanOrEqual(1000);
      const lines = page.split('\n').filter((l) => l.startsWith('| row'));
      if (lines.length) expect(page).toContain('| A | B | C |\n|:--|:-:|--:|\n');
      // Each page's rows are a table's: markdown-it reads them as rows (header + body), none as text.
      const read = tableRowsOf(page);
      bodyRows += read > 0 ? read - 1 : 0;
      expect(read === 0 ? 0 : read - 1).toBe(lines.length);
    }
    expect(bodyRows).toBe(60);
    expect(pages.at(-1)!.endsWith('The end.')).toBe(true);
  });

  it('ends a page between blocks or list items before cutting inside one', () => {
    const items = Array.from({ length: 30 }, (_, i) => `- item ${i} with **bold text ${i}** in it`).join('\n');
    const text = `# Heading\n\n${'A first paragraph. '.repeat(20).trim()}\n\n${items}\n\nLast paragraph.`;
    const pages = split(text, 700);
    expect(pages.length).toBeGreaterThan(1);
    for (const page of pages) {
      // Every page starts a block: a heading, a paragraph, or a list item; never the inside of one.
      expect(page).toMatch(/^(# |A first|- item|Last)/);
      expect(page).not.toMatch(/\*\*bold text \d+$/m);
    }
    expect(pages.join('\n').replace(/\n+/g, '\n')).toBe(text.replace(/\n+/g, '\n'));
  });

  it('cuts a paragraph longer than a page where no bold, italics, link or code span is open', () => {
    const words = Array.from({ length: 400 }, (_, i) =>
      i % 5 === 2 ? `**bold words ${i}**` : i % 7 === 3 ? `[a link ${i}](https://example.com/${i})` : `word${i}`,
    );
    const text = words.join(' ');
    const pages = split(text, 500);
    expect(pages.length).toBeGreaterThan(3);
    const whole = constructCount(parseMarkdown(text));
    const parts = pages.reduce((sum, page) => sum + constructCount(parseMarkdown(page)), 0);
    expect(parts).toBe(whole);
  });

  it('leaves code blocks to the splitter: a fence longer than a page is closed and reopened', () => {
    const code = Array.from({ length: 80 }, (_, i) => `line ${i} of code`).join('\n');
    const pages = split(`Before.\n\n\`\`\`py\n${code}\n\`\`\`\n\nAfter.`, 400);
    expect(pages.length).toBeGreaterThan(3);
    for (const page of pages.slice(0, -1)) expect(page.endsWith('\n```')).toBe(true);
    for (const page of pages.slice(1, -1)) expect(page.startsWith('```py\n')).toBe(true);
    expect(pages.at(-1)!.endsWith('After.')).toBe(true);
  });

  it('adversarial: deep nesting, one huge row, carriage returns, a header longer than half a page: pages still fit and lose nothing', () => {
    const cases = [
      `${'> '.repeat(500)}deep\n`.repeat(10),
      '- '.repeat(5000),
      `| ${'x'.repeat(3000)} | y |\n|---|---|\n| ${'z'.repeat(2000)} | w |\n| a | b |`,
      `| ${'h '.repeat(400)}|\n|---|\n${'| cell |\n'.repeat(100)}`,
      'line\r\n'.repeat(900),
      `**${'unclosed bold '.repeat(300)}`,
      `${'[x]('.repeat(1000)}`,
    ];
    for (const text of cases) {
      const pages = split(text, 1000);
      for (const page of pages) expect(slackLength(page)).toBeLessThanOrEqual(1000);
      const kept = pages.join('').replace(/\s/g, '').length;
      expect(kept).toBeGreaterThanOrEqual(text.replace(/\s/g, '').length);
    }
  });

  it('property: a text split as it grows gives the pages of the whole (prefix-stable)', () => {
    const piece = fc.constantFrom(
      '| a | **b** |\n',
      '|---|---|\n',
      '\n',
      '- item **x**\n',
      '# Head\n',
      'some words ',
      '```\n',
      '[l](https://e.x) ',
      '> quote\n',
      '<@U1> & ',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 120 }), fc.array(fc.nat(40), { maxLength: 20 }), (pieces, steps) => {
        const text = pieces.join('');
        const splitter = new PageSplitter(300, slackLength, markdownPageBreaks);
        splitter.reset('');
        let at = 0;
        for (const step of steps) {
          const next = Math.min(text.length, at + step * 5);
          splitter.append(text.slice(at, next));
          splitter.pages();
          at = next;
        }
        splitter.append(text.slice(at));
        expect(splitter.pages()).toEqual(split(text, 300));
      }),
      { numRuns: 150 },
    );
  });
});
