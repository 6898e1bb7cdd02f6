/**
 * Pages and fenced blocks (src/core/delivery/split.ts): a fenced block (code, or a table rendered
 * as a monospaced block for Discord) opened in the second half of a page starts the next page, so
 * that a block that fits on a page is shown whole on one; one opened in the first half is closed
 * at the cut and reopened, as before.
 */
import { describe, expect, it } from 'vitest';
import { openFenceAtEnd, PageSplitter, splitMessage } from '../../src/core/delivery/split.ts';

const block = (lines: number) =>
  `\`\`\`\n${Array.from({ length: lines }, (_, i) => `row ${i} | value ${i}`).join('\n')}\n\`\`\``;

describe('splitMessage and fenced blocks', () => {
  it('a block opened in the second half of a page starts the next page, whole; one opened in the first half is cut as before', () => {
    const intro = `${'Some prose. '.repeat(130).trim()}`;
    const table = block(30);
    const text = `${intro}\n\n${table}\n\nAfter.`;
    expect(splitMessage(text, 2000)).toEqual([`${intro}\n`, `${table}\n\nAfter.`]);
    // The same pages when the text comes in pieces (PageSplitter: each page made once).
    const splitter = new PageSplitter(2000);
    for (let i = 0; i < text.length; i += 37) {
      splitter.append(text.slice(i, i + 37));
      splitter.pages();
    }
    expect(splitter.pages()).toEqual(splitMessage(text, 2000));
    // Opened in the first half: closed at the cut and reopened, the page at least half full.
    const early = splitMessage(`${'y'.repeat(500)}\n${block(100)}`, 2000);
    expect(early[0]!.startsWith(`${'y'.repeat(500)}\n\`\`\`\nrow 0`)).toBe(true);
    expect(early[0]!.endsWith('\n```')).toBe(true);
    expect(early[1]!.startsWith('```\n')).toBe(true);
  });

  it('a block longer than a page opened in its second half starts the next page, then goes on as before', () => {
    const intro = 'x'.repeat(1500);
    const pages = splitMessage(`${intro}\n${block(200)}`, 2000);
    expect(pages[0]).toBe(intro);
    expect(pages[1]!.startsWith('```\nrow 0 | value 0\n')).toBe(true);
    for (const page of pages) {
      expect(page.length).toBeLessThanOrEqual(2000);
      expect(openFenceAtEnd(page)).toBeUndefined();
    }
    expect(pages.at(-1)!.endsWith('row 199 | value 199\n```')).toBe(true);
  });
});
