import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openFenceAtEnd, PageSplitter, splitMessage } from '../../src/core/delivery/split.ts';
import { slackLength } from '../../src/platforms/slack/text.ts';

/** Every fence in `page` is closed by its end. */
const balanced = (page: string) => openFenceAtEnd(page) === undefined;

describe('splitMessage', () => {
  it('returns text that fits as one page, unchanged', () => {
    expect(splitMessage('hello\nworld', 2000)).toEqual(['hello\nworld']);
    expect(splitMessage('x'.repeat(2000), 2000)).toEqual(['x'.repeat(2000)]);
  });

  it('cuts at the last line break and drops it', () => {
    const text = `${'a'.repeat(1500)}\n${'b'.repeat(1000)}`;
    expect(splitMessage(text, 2000)).toEqual(['a'.repeat(1500), 'b'.repeat(1000)]);
  });

  it('closes a code fence at the cut and reopens it with its language on the next page', () => {
    const code = Array.from({ length: 120 }, (_, i) => `const line${i} = ${i}; // some code here`).join('\n');
    const text = `Here is the code:\n\n\`\`\`ts\n${code}\n\`\`\`\nDone.`;
    const pages = splitMessage(text, 2000);
    expect(pages.length).toBeGreaterThan(1);
    for (const page of pages) {
      expect(page.length).toBeLessThanOrEqual(2000);
      expect(balanced(page)).toBe(true);
    }
    expect(pages[0]!.endsWith('\n```')).toBe(true);
    expect(pages[1]!.startsWith('```ts\n')).toBe(true);
    expect(pages.at(-1)!.endsWith('Done.')).toBe(true);
  });

  it('keeps tilde and long backtick fences with their own markers', () => {
    const text = `~~~~py\n${'print(1)\n'.repeat(400)}~~~~\nafter`;
    const pages = splitMessage(text, 1000);
    expect(pages[0]!.endsWith('\n~~~~')).toBe(true);
    expect(pages[1]!.startsWith('~~~~py\n')).toBe(true);
    pages.forEach((p) => expect(balanced(p)).toBe(true));
  });

  it('hard-cuts a line with no spaces without splitting a surrogate pair', () => {
    const text = '😀'.repeat(1500);
    const pages = splitMessage(text, 2000);
    expect(pages.join('')).toBe(text);
    pages.forEach((p) => expect(p.length).toBeLessThanOrEqual(2000));
    pages.forEach((p) => expect(p).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/));
  });

  it('respects a platform measure (Slack escaping makes & count five)', () => {
    const measure = (s: string) => s.length + 4 * (s.match(/&/g)?.length ?? 0);
    const text = '& '.repeat(3000);
    const pages = splitMessage(text, 3900, measure);
    pages.forEach((p) => expect(measure(p)).toBeLessThanOrEqual(3900));
    expect(pages.join(' ').replace(/\s+/g, ' ').trim()).toBe(text.trim());
  });

  it('property: pages fit, fences balance, and no text is lost', () => {
    const line = fc.oneof(
      fc.constantFrom('```', '```js', '~~~', 'text', '', '  indented', '`inline` code'),
      fc.string({ maxLength: 120 }),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 200 }), fc.integer({ min: 40, max: 2000 }), (lines, max) => {
        const text = lines.join('\n');
        const pages = splitMessage(text, max);
        for (const page of pages) expect(page.length).toBeLessThanOrEqual(max);
        if (pages.length > 1) for (const page of pages) expect(balanced(page) || page === pages.at(-1)).toBe(true);
        // Removing the added fence lines and cut whitespace recovers the text's non-space characters.
        const strip = (s: string) => s.replace(/\s+/g, '');
        const added = pages.length - 1;
        expect(strip(pages.join('')).length).toBeGreaterThanOrEqual(strip(text).length);
        expect(strip(pages.join('')).length).toBeLessThanOrEqual(strip(text).length + added * 2 * 40);
      }),
      { numRuns: 300 },
    );
  });

  it('property: the first page never changes once the text has grown past the limit', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 300, maxLength: 600 }), fc.string({ maxLength: 300 }), (base, more) => {
        const max = 200;
        const before = splitMessage(base, max)[0];
        const after = splitMessage(base + more, max)[0];
        expect(after).toBe(before);
      }),
      { numRuns: 300 },
    );
  });

  it('property: a text split as it grows (PageSplitter) gives the pages of the whole', () => {
    const line = fc.oneof(
      fc.constantFrom('```', '```js', '~~~', '````', 'text', '', '  indented', '`inline` code', '```\r', 'a & b < c'),
      fc.string({ maxLength: 120 }),
    );
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 150 }),
        fc.integer({ min: 40, max: 2000 }),
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1 }),
        (lines, max, slack, steps) => {
          const text = lines.join('\n');
          const measure = slack ? slackLength : undefined;
          const splitter = new PageSplitter(max, measure);
          for (let i = 0, k = 0; i < text.length; k++) {
            const step = steps[k % steps.length]!;
            splitter.append(text.slice(i, i + step));
            i += step;
            if (k % 3 === 0) splitter.pages();
          }
          expect(splitter.pages()).toEqual(splitMessage(text, max, measure));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a fence opened by a line longer than half a page is reopened with its marker alone, each page still carrying text', () => {
    const text = `~~~${'x'.repeat(3000)}\n${'code line\n'.repeat(1000)}~~~\nafter`;
    const pages = splitMessage(text, 2000);
    expect(pages.length).toBeLessThan(12);
    for (const page of pages) {
      expect(page.length).toBeLessThanOrEqual(2000);
      expect(openFenceAtEnd(page)).toBeUndefined();
    }
    expect(pages[1]!.startsWith('~~~\n')).toBe(true);
    expect(pages.at(-1)!.endsWith('after')).toBe(true);
  });

  it('a fence marker that would take half a page is not carried over (the pages are cut as text)', () => {
    const marker = '`'.repeat(1200);
    const text = `${marker}\n${'code line\n'.repeat(500)}`;
    const pages = splitMessage(text, 2000);
    for (const page of pages) expect(page.length).toBeLessThanOrEqual(2000);
    expect(pages.join('\n').replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''));
  });

  it('a line of backticks ended by a carriage return is not a fence line (as before), and is read in linear time', () => {
    const line = `${'`'.repeat(200_000)}\r`;
    const started = performance.now();
    expect(openFenceAtEnd(line)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(250);
    expect(openFenceAtEnd('```ts\r\ncode')).toBeUndefined();
    expect(openFenceAtEnd('```ts\ncode')).toEqual({ marker: '```', openingLine: '```ts' });
  });
});
