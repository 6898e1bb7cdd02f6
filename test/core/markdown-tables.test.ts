/**
 * Markdown tables for a platform that does not render them (src/core/markdown/tables.ts and
 * table-layout.ts, issue 39): a table becomes an aligned monospaced block (display widths: CJK
 * and emoji take two columns), a wide one a list; every other byte stays as written; the block
 * cannot be closed from inside (Discord ends a code block at the first ``` anywhere); and hostile
 * tables (ragged, 1,000 rows, 100 columns, long headers on short rows) come out bounded.
 */
import fc from 'fast-check';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { parseMarkdown } from '../../src/core/markdown/parse.ts';
import {
  MAX_RENDERED_CHARS,
  MAX_TABLE_GROWTH,
  mayHoldTable,
  renderTables,
  TABLE_GROWTH_SLACK,
  TABLE_MAX_WIDTH,
  TableRenderer,
} from '../../src/core/markdown/tables.ts';

/** The lines between a rendered block's fences. */
function blockLines(rendered: string): string[] {
  const lines = rendered.split('\n');
  expect(lines[0]).toBe('```');
  expect(lines.at(-1)).toBe('```');
  return lines.slice(1, -1);
}

/** How markdown-it reads `text`: the block tokens' types (a rendered table must be one fence). */
const blockTypes = (text: string) => parseMarkdown(text).map((t) => t.type);

describe('renderTables: a table becomes an aligned monospaced block', () => {
  it('aligns columns by display width, as the delimiter row says (left, right, center)', () => {
    const table = '| Name | Age | City |\n|:-----|----:|:----:|\n| Alice | 30 | Paris |\n| 李小龙 | 7 | 香港 😀 |';
    expect(renderTables(table)).toBe(
      [
        '```',
        'Name   | Age |  City',
        '-------+-----+--------',
        'Alice  |  30 |  Paris',
        '李小龙 |   7 | 香港 😀',
        '```',
      ].join('\n'),
    );
  });

  it('every line of a block has the width of the widest (trailing blanks aside), whatever the script', () => {
    const rows = ['| e | 😀😀 |', '| 中文字 | x |', '| e\u0301 (e and a combining accent) | - |', '| ｆｕｌｌ | ok |'];
    const lines = blockLines(renderTables(`| a | b |\n|---|--:|\n${rows.join('\n')}`));
    // Right-aligned last column with no empty cell: no trailing blanks to drop, so every line is as wide.
    expect(lines.map((line) => stringWidth(line))).toEqual(lines.map(() => 35));
    expect(lines[3]).toBe('中文字                       |    x');
  });

  it('leaves every other byte as the model wrote it: heading, emphasis, links, lists, quotes, code, CRLF', () => {
    const before =
      '# Title\r\n\r\nSome **bold**, *italics*, ~~gone~~ and [a link](https://example.com).\r\n\r\n- one\r\n- two\r\n\r\n> quoted\r\n\r\n';
    const table = '| a | b |\r\n|---|---|\r\n| 1 | 2 |';
    const after = '\r\n\r\n```ts\r\nconst x = 1 | 2;\r\n```\r\nThe end.  \r\n';
    expect(renderTables(before + table + after)).toBe(`${before}\`\`\`\na | b\n--+--\n1 | 2\n\`\`\`${after}`);
  });

  it('returns the very string when there is no table (pipes in code, in prose, a header without its delimiter row)', () => {
    for (const text of [
      'no pipe at all',
      'a | b in prose',
      '```\n| a | b |\n|---|---|\n```',
      '    | a | b |\n    |---|---|',
      '| a | b |\n| not a delimiter |',
      '',
    ])
      expect(renderTables(text)).toBe(text);
    expect(mayHoldTable('a | b')).toBe(true);
    expect(mayHoldTable('no table here')).toBe(false);
  });

  it('a table interrupting a paragraph replaces its own lines only', () => {
    // (GFM: a line after a table without a blank line is one more row.)
    expect(renderTables('Intro line\n| a |\n|---|\n| 1 |\nAfter')).toBe('Intro line\n```\na\n-----\n1\nAfter\n```');
    expect(renderTables('Intro line\n| a |\n|---|\n| 1 |\n\nAfter')).toBe('Intro line\n```\na\n-\n1\n```\n\nAfter');
  });

  it('reduces inline Markdown in cells to its text; links and images keep their address, autolinks once', () => {
    const out = renderTables(
      '| k | v |\n|---|---|\n| **b** _i_ ~~s~~ | [docs](https://e.com) |\n| `code` | <https://a.b> ![pic](https://i.png) |',
    );
    expect(blockLines(out)).toEqual([
      'k     | v',
      '------+--------------------------------',
      'b i s | docs (https://e.com)',
      'code  | https://a.b pic (https://i.png)',
    ]);
  });
});

describe('renderTables: adversarial tables', () => {
  it('ragged rows: a short row gets empty cells, a long row loses the cells past the header (GFM), empty cells stay empty', () => {
    const out = renderTables('| a | b | c |\n|---|---|---|\n| 1 |\n| 1 | 2 | 3 | 4 | 5 |\n|  |  | x |');
    expect(blockLines(out)).toEqual(['a | b | c', '--+---+--', '1 |   |', '1 | 2 | 3', '  |   | x']);
  });

  it('escaped pipes and backticks in cells: the block is one fence, no ``` inside it (Discord would end it there)', () => {
    const table = '| code | text |\n|---|---|\n| ` a ``` b ` | \\| piped \\| |\n| ```` | `` ` `` |\n| ``` | ~~~ |';
    const out = renderTables(table);
    expect(out.split('```')).toHaveLength(3); // the opening and closing fences only
    expect(blockTypes(out)).toEqual(['fence']);
    const lines = blockLines(out);
    expect(lines[2]).toBe('a `\u200b`\u200b` b | | piped |');
    // What shows (zero-width spaces aside) is the cells' text.
    expect(lines.slice(3).map((l) => l.replaceAll('\u200b', ''))).toEqual(['````    | `', '```     | ~~~']);
  });

  it('alignment rows with colons and blanks, and a header of empty cells', () => {
    const out = renderTables('|   |  |\n| :-: | ---: |\n| ab | c |');
    expect(blockLines(out)).toEqual(['   |', '---+--', 'ab | c']);
    expect(blockTypes(out)).toEqual(['fence']);
  });

  it('1,000 rows: one block of 1,002 lines, the cells of every row at the same columns, within the growth bound', () => {
    const rows = Array.from({ length: 1000 }, (_, i) => `| ${i} | row ${i % 7 === 0 ? 'seven' : ''} |`);
    const table = `| n | label |\n|--:|---|\n${rows.join('\n')}`;
    const out = renderTables(table);
    const lines = blockLines(out);
    expect(lines).toHaveLength(1002);
    expect(lines[2]).toBe('  0 | row seven');
    expect(lines[1001]).toBe('999 | row');
    for (const line of [lines[0]!, ...lines.slice(2)]) expect(line.indexOf(' | ')).toBe(3);
    expect(out.length).toBeLessThanOrEqual(MAX_TABLE_GROWTH * table.length + TABLE_GROWTH_SLACK);
    expect(blockTypes(out)).toEqual(['fence']);
  });

  it('100 columns: wider than a line, so a list of one item a row, `**Header**: value` lines, empty cells left out', () => {
    const header = `| ${Array.from({ length: 100 }, (_, i) => `h${i}`).join(' | ')} |`;
    const rule = `|${'---|'.repeat(100)}`;
    const row = (r: number) =>
      `| ${Array.from({ length: 100 }, (_, i) => (i === 50 ? '' : `r${r}c${i}`)).join(' | ')} |`;
    const table = [header, rule, ...Array.from({ length: 30 }, (_, r) => row(r))].join('\n');
    const out = renderTables(table);
    const lines = out.split('\n');
    expect(lines.filter((l) => l.startsWith('- '))).toHaveLength(30);
    expect(lines).toHaveLength(30 * 99);
    expect(lines[0]).toBe('- **h0**: r0c0');
    expect(lines[1]).toBe('  **h1**: r0c1');
    expect(out).not.toContain('**h50**');
    expect(out.length).toBeLessThanOrEqual(MAX_TABLE_GROWTH * table.length + TABLE_GROWTH_SLACK);
  });

  it('a wide table list keeps the cells as written (Discord renders a list), with headers escaped and named when empty', () => {
    const wide = 'x'.repeat(TABLE_MAX_WIDTH);
    const out = renderTables(`| Na*me | | Notes |\n|---|---|---|\n| **Bob** | 3 | ${wide} [link](https://e.com) |`);
    expect(out).toBe(`- **Na\\*me**: **Bob**\n  **Column 2**: 3\n  **Notes**: ${wide} [link](https://e.com)`);
  });

  it('long headers repeated on many short rows: left as written past the growth bound', () => {
    const headers = Array.from({ length: 3 }, (_, i) => `${'H'.repeat(200)}${i}`);
    const table = `| ${headers.join(' | ')} |\n|---|---|---|\n${'|a|b|c|\n'.repeat(2000)}`;
    const out = renderTables(table);
    expect(out).toBe(table);
    expect(out.length).toBeLessThanOrEqual(MAX_TABLE_GROWTH * table.length + TABLE_GROWTH_SLACK);
  });

  it('a table in a quote or a list item keeps its container on every line', () => {
    expect(renderTables('> | a | b |\n> |---|---|\n> | 1 | 2 |\n\nout')).toBe(
      '> ```\n> a | b\n> --+--\n> 1 | 2\n> ```\n\nout',
    );
    expect(renderTables('- | a | b |\n  |---|---|\n  | 1 | 2 |\n- next')).toBe(
      '- ```\n  a | b\n  --+--\n  1 | 2\n  ```\n- next',
    );
    const nested = parseMarkdown(renderTables('1. item\n\n   > | a |\n   > |---|\n   > | 1 |\n'));
    expect(nested.filter((t) => t.type === 'fence').map((t) => t.content)).toEqual(['a\n-\n1\n']);
  });

  it('property: any text renders without throwing, and a text without a table comes back unchanged', () => {
    const piece = fc.constantFrom(
      '|',
      '| a |',
      '|---|',
      ':-:',
      '`',
      '```',
      '\\|',
      '> ',
      '- ',
      '\n',
      '\r\n',
      ' ',
      'x',
      '中',
      '😀',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 80 }), (pieces) => {
        const text = pieces.join('');
        const out = renderTables(text);
        if (!blockTypes(text).includes('table_open')) expect(out).toBe(text);
        else expect(blockTypes(out)).not.toContain('table_open');
      }),
      { numRuns: 500 },
    );
  });

  it('past MAX_RENDERED_CHARS the text is shown as written (one render parses at most that much)', () => {
    const table = '| a | b |\n|---|---|\n| 1 | 2 |\n\n';
    const text = table.repeat(Math.ceil((MAX_RENDERED_CHARS * 2) / table.length));
    const out = renderTables(text);
    const cut = text.lastIndexOf('\n', MAX_RENDERED_CHARS) + 1;
    expect(out.endsWith(text.slice(cut))).toBe(true);
    expect(out.slice(0, out.length - (text.length - cut))).toBe(renderTables(text.slice(0, cut)));
    // Every table before the cut rendered, every one after it as written.
    expect(out.slice(0, out.length - (text.length - cut))).not.toContain('|---|');
    expect(text.slice(cut)).toContain('|---|');
  });
});

describe('TableRenderer: a text rendered at each write as it grows', () => {
  // Not with link reference definitions (`[ref]: url`): a table's cells whose definition is in
  // another part of the text (rendered at another write) keep `[ref]` as written (tables.ts).
  it('property: rendering each state of a growing text gives, at every state, what rendering it whole gives', () => {
    const line = fc.constantFrom(
      '| a | b |',
      '|---|--:|',
      '| 1 | 22 |',
      '',
      '',
      'prose | with a pipe',
      '- item',
      '  | x |',
      '  |---|',
      '> | q |',
      '> |---|',
      '    indented',
      '```',
      '# heading',
      '[link][ref] | [ref]',
    );
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1 }),
        (lines, steps) => {
          const text = lines.join('\n');
          const renderer = new TableRenderer();
          for (let i = 0, k = 0; i < text.length; k++) {
            i = Math.min(text.length, i + steps[k % steps.length]!);
            expect(renderer.render(text.slice(0, i))).toBe(renderTables(text.slice(0, i)));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps what no later text changes: the earlier tables of a long answer are not parsed again at each write', () => {
    const section = (i: number) => `## Part ${i}\n\n| k | v |\n|---|---|\n| ${i} | ${'x'.repeat(i % 5)} |\n\n`;
    const text = Array.from({ length: 200 }, (_, i) => section(i)).join('');
    expect(text.length).toBeLessThan(MAX_RENDERED_CHARS);
    const renderer = new TableRenderer();
    let out = '';
    for (let i = 1; i <= 200; i++) out = renderer.render(Array.from({ length: i }, (_, j) => section(j)).join(''));
    expect(out).toBe(renderTables(text));
    // What it keeps: all but the last blocks; the next write parses only what follows.
    const kept = (renderer as unknown as { stable: string }).stable;
    expect(kept.length).toBeGreaterThan(text.length - section(199).length - 1);
    expect(text.startsWith(kept)).toBe(true);
  });
});
