/**
 * The Slack rendering of an answer's Markdown (platforms/slack/markdown.ts, mrkdwn.ts,
 * table-block.ts, answer-rendering.ts) on adversarial input: every result is checked by the fake
 * Slack's Block Kit validation (test/fakes/slack/blocks.ts: as Slack refuses, `invalid_blocks`),
 * no mention can form, nothing is left raw that Slack would not render.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../src/log.ts';
import { AnswerRendering } from '../../src/platforms/slack/answer-rendering.ts';
import { MARKDOWN_BLOCK_CHARS, markdownBlocks } from '../../src/platforms/slack/markdown.ts';
import { mrkdwnOf } from '../../src/platforms/slack/mrkdwn.ts';
import { parseBlocks } from '../fakes/slack/blocks.ts';
import { richTextMentions } from '../fakes/slack/table-blocks.ts';
import { mentionsIn } from '../fakes/slack/wire.ts';

type Block = { type: string; text?: string; rows?: unknown[][]; column_settings?: unknown[] };

/** Renders `markdown`, checks the blocks as the fake Slack does, and returns them. */
function render(markdown: string, tables: 'block' | 'monospace' = 'block'): Block[] {
  const blocks = markdownBlocks(markdown, tables);
  expect(() => parseBlocks(blocks)).not.toThrow();
  return blocks as Block[];
}

const markdownText = (blocks: Block[]) =>
  blocks
    .filter((b) => b.type === 'markdown')
    .map((b) => b.text!)
    .join('\n');

const table = (rows: number, columns: number, cell = (r: number, c: number) => `r${r}c${c}`) =>
  [
    `| ${Array.from({ length: columns }, (_, c) => `H${c}`).join(' | ')} |`,
    `|${'---|'.repeat(columns)}`,
    ...Array.from(
      { length: rows },
      (_, r) => `| ${Array.from({ length: columns }, (_, c) => cell(r, c)).join(' | ')} |`,
    ),
  ].join('\n');

describe('Slack markdown blocks', () => {
  it('passes headings, emphasis, links, lists, quotes and code on as standard Markdown, `&` and `<` escaped, and a table as a table block of rich text', () => {
    const blocks = render(
      '## Title\n\n**b** _i_ ~~s~~ [l](https://e.com) `c`\n\n1. one\n2. two\n\n> q\n\n| A | B |\n|---|:-:|\n| **x** | y |',
    );
    expect(blocks.map((b) => b.type)).toEqual(['markdown', 'table']);
    expect(blocks[0]!.text).toBe('## Title\n\n**b** _i_ ~~s~~ [l](https://e.com) `c`\n\n1. one\n2. two\n\n> q');
    expect(blocks[1]!.column_settings).toEqual([
      { align: 'left', is_wrapped: true },
      { align: 'center', is_wrapped: true },
    ]);
    expect(JSON.stringify(blocks[1]!.rows![1]![0])).toContain('{"type":"text","text":"x","style":{"bold":true}}');
  });

  it('shows what the markdown block does not render in forms it does: a thematic break as a rule, task boxes as ☐ and ☑', () => {
    const blocks = render('Intro\n\n---\n\n- [ ] todo\n- [x] done\n  1. [ ] nested\n\n> - [X] quoted\n\n* * *');
    expect(blocks).toEqual([
      {
        type: 'markdown',
        text: 'Intro\n\n──────────\n\n- ☐ todo\n- ☑ done\n  1. ☐ nested\n\n> - ☑ quoted\n\n──────────',
      },
    ]);
    expect(mrkdwnOf('- [ ] todo\n- [x] done', 3900)).toBe('• ☐ todo\n• ☑ done');
  });

  it("shows a table inside a list item or a quote as monospaced lines in place, under the container's prefix", () => {
    const blocks = render(
      '1. Options:\n\n   | Plan | Price |\n   |---|--:|\n   | **Pro** | $10 |\n\n> | a | b |\n> |---|---|\n> | 1 | 2 |',
    );
    expect(blocks).toEqual([
      {
        type: 'markdown',
        text: '1. Options:\n\n   ```\n   Plan | Price\n   -----+------\n   Pro  | $10\n   ```\n\n> ```\n> a   | b\n> ----+----\n> 1   | 2\n> ```',
      },
    ]);
  });

  it('shows one table a message as a table block; the others, and tables past 100 rows, 20 columns or 10,000 characters, as monospaced code blocks', () => {
    const two = render(`${table(2, 2)}\n\ntext\n\n${table(2, 2)}`);
    expect(two.map((b) => b.type)).toEqual(['table', 'markdown']);
    expect(two[1]!.text).toBe('text\n\n```\nH0   | H1\n-----+-----\nr0c0 | r0c1\nr1c0 | r1c1\n```');
    for (const big of [table(100, 2), table(3, 21), table(40, 3, () => 'w'.repeat(90))]) {
      const blocks = render(big);
      expect(blocks.map((b) => b.type)).toEqual(['markdown']);
      expect(blocks[0]!.text).toMatch(/^```\n/);
      expect(blocks[0]!.text).not.toContain('|---|');
    }
    expect(render(table(99, 20, () => 'x')).map((b) => b.type)).toEqual(['table']);
    expect(render(table(2, 2), 'monospace').map((b) => b.type)).toEqual(['markdown']);
  });

  it('keeps every markdown block of a message within 12,000 characters together: a wide table is left unpadded', () => {
    const wide = table(120, 3, (r, c) => (r === 0 && c === 0 ? 'x'.repeat(2000) : 'y'));
    const blocks = render(`${table(2, 2)}\n\n${wide}`);
    const total = blocks.filter((b) => b.type === 'markdown').reduce((n, b) => n + b.text!.length, 0);
    expect(total).toBeLessThanOrEqual(MARKDOWN_BLOCK_CHARS);
    expect(markdownText(blocks)).toContain('\ny | y | y\n');
  });

  it('makes no mention out of model text: escaped in markdown, literal text in table cells, links only to web addresses', () => {
    const hostile =
      '<!channel> <@U123> <!subteam^S1|x> &lt;!here&gt; [<!here>](javascript:alert(1)) [x](slack://user?id=U1)\n\n' +
      '| <@U123> | [<!channel>](https://e.com/<!here>) |\n|---|---|\n| <!everyone> | ![<@U1>](https://e.com/i.png) |';
    const blocks = render(hostile);
    expect(markdownText(blocks)).not.toMatch(/<[@!#]/);
    expect(mentionsIn(markdownText(blocks))).toEqual([]);
    expect(richTextMentions(blocks)).toEqual([]);
    const cells = JSON.stringify(blocks.find((b) => b.type === 'table')!.rows);
    expect(cells).toContain('"text":"<@U123>"');
    expect(cells).toContain('{"type":"link","url":"https://e.com/%3C!here%3E","text":"<!channel>"}');
    expect(cells).not.toContain('javascript:');
    const text = mrkdwnOf(hostile, 3900);
    expect(mentionsIn(text)).toEqual([]);
    expect(text).not.toMatch(/<[@!#]/);
    expect(text).not.toContain('<javascript');
    expect(text).not.toContain('<slack:');
  });

  it('renders hostile nesting and huge inputs within bounds, blocks valid, the fallback text within a message', () => {
    const inputs = [
      `${'> '.repeat(5000)}deep`,
      '- '.repeat(10000),
      `${'*'.repeat(3000)}x${'*'.repeat(3000)}`,
      `${'['.repeat(3000)}a${']('.repeat(1500)}`,
      `| a |\n|---|\n${'| `x` |\n'.repeat(3000)}`,
      '`'.repeat(5000),
      `${'\u0000\r\n'.repeat(2000)}| a | b |\r\n|---|---|\r\n| c | d |`,
      table(50, 20, () => '```'),
    ];
    for (const input of inputs) {
      const blocks = render(input);
      const total = blocks.filter((b) => b.type === 'markdown').reduce((n, b) => n + b.text!.length, 0);
      expect(total).toBeLessThanOrEqual(MARKDOWN_BLOCK_CHARS);
      expect(mrkdwnOf(input, 3900).length).toBeLessThanOrEqual(3900);
    }
    // A cell's backticks cannot close the code block around a monospaced table.
    const fenced = render(`${table(1, 1)}\n\n${table(2, 21, () => '```')}`)[1]!.text!;
    expect(fenced.startsWith('````\n')).toBe(true);
    expect(fenced.endsWith('\n````')).toBe(true);
  });
});

describe('Slack mrkdwn fallback text', () => {
  it('writes each construct in mrkdwn and keeps a paragraph without markup as written', () => {
    const md =
      '# H\n\n**b** *i* ~~s~~ [l](https://e.com/a?b=1&c=2) `x<y`\n\n- a\n  - b\n\n> q\n\n| A | B |\n|---|---|\n| 1 | 2 |\n\n---\n\nplain text  ';
    expect(mrkdwnOf(md, 3900)).toBe(
      '*H*\n\n*b* _i_ ~s~ <https://e.com/a?b=1&amp;c=2|l> `x&lt;y`\n\n• a\n    • b\n\n> q\n\n```\nA | B\n----+----\n1 | 2\n```\n\n──────────\n\nplain text  ',
    );
  });

  it('cuts past the limit after a whole line, never inside a link or an entity', () => {
    const md = Array.from({ length: 200 }, (_, i) => `line ${i} with [a link](https://example.com/${i}) & more`).join(
      '\n\n',
    );
    const text = mrkdwnOf(md, 1000);
    expect(text.length).toBeLessThanOrEqual(1000);
    expect(text.endsWith('…')).toBe(true);
    expect(text.lastIndexOf('<')).toBeLessThan(text.lastIndexOf('>'));
    expect(text).not.toMatch(/&[a-z]*…$/);
  });
});

describe('AnswerRendering', () => {
  const log = { warn: vi.fn(), info: vi.fn(), debug: vi.fn() } as unknown as Logger;
  /** Slack's refusal as @slack/web-api throws it: the result in `data`, naming a block by JSON pointer. */
  const refusal = (index?: number) =>
    Object.assign(new Error('An API error occurred: invalid_blocks'), {
      data: {
        ok: false,
        error: 'invalid_blocks',
        ...(index === undefined
          ? {}
          : { response_metadata: { messages: [`[ERROR] unsupported [json-pointer:/blocks/${index}/type]`] } }),
      },
    });
  const message = { content: `Intro\n\n${table(2, 2)}` };

  it('where Slack refuses a table block (invalid_blocks), sends the message once more with its tables monospaced, and keeps them so for the rest of the answer', async () => {
    const rendering = new AnswerRendering(log);
    const sent: Block[][] = [];
    const refusing = async (blocks: unknown) => {
      sent.push(blocks as Block[]);
      const at = (blocks as Block[]).findIndex((b) => b.type === 'table');
      if (at >= 0) throw refusal(at);
      return 'ok';
    };
    await expect(rendering.send(message, refusing)).resolves.toBe('ok');
    expect(sent.map((blocks) => blocks.map((b) => b.type))).toEqual([['markdown', 'table'], ['markdown']]);
    await rendering.send(message, refusing);
    expect(sent.length).toBe(3);
  });

  it("where Slack refuses the markdown block, shows the answer in mrkdwn sections; a refusal of another block, or another error, is the caller's", async () => {
    const rendering = new AnswerRendering(log);
    const sent: Block[][] = [];
    const noMarkdown = async (blocks: unknown, text: string) => {
      sent.push(blocks as Block[]);
      const at = (blocks as Block[]).findIndex((b) => b.type === 'markdown');
      if (at >= 0) throw refusal(at);
      return text;
    };
    const text = await rendering.send({ content: '**Bold** answer.' }, noMarkdown);
    expect(text).toBe('*Bold* answer.');
    expect(sent.at(-1)).toEqual([{ type: 'section', text: { type: 'mrkdwn', text: '*Bold* answer.' } }]);

    const images = { content: 'Foxes.', imageLinks: [{ url: 'https://e.com/f.png', alt: 'fox' }] };
    let calls = 0;
    const noImages = async () => {
      calls++;
      throw refusal(1);
    };
    await expect(new AnswerRendering(log).send(images, noImages)).rejects.toThrow('invalid_blocks');
    expect(calls).toBe(1);
    const failing = async () => {
      throw Object.assign(new Error('msg_too_long'), { data: { error: 'msg_too_long' } });
    };
    await expect(new AnswerRendering(log).send(message, failing)).rejects.toThrow('msg_too_long');
  });
});
