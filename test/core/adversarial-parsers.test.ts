/**
 * Every parser of what the model or a user sends (issue 16), on adversarial inputs up to 1 MB:
 * JSON-mode fences, the splitter (fence lines per page), image-link extraction, Slack option
 * parsing, Slack plain-text conversion and mention stripping (Slack and Discord).
 *
 * The bound: each call must take under {@link boundMs} of its input's length (1 s per MB plus
 * 50 ms), at best of three tries. Linear code takes a few ms per MB; code that backtracks
 * super-linearly takes seconds to hours on these shapes, so the bound catches it, and a pause of
 * a busy machine (which hits one try, not three) does not fail it. Each
 * shape is run at sizes growing fourfold from 4 KB, so that super-linear code fails at the
 * first size where it passes its bound, in seconds, instead of hanging on 1 MB.
 */

import { cleanContent, type Message } from 'discord.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import chat from '../../commands/chat.ts';
import { type Measure, openFenceAtEnd, PageSplitter, splitMessage } from '../../src/core/delivery/split.ts';
import { OptionError } from '../../src/core/errors.ts';
import { extractImageLinks } from '../../src/core/features/answer.ts';
import { jsonFenceBody, parseJsonAnswer } from '../../src/core/features/json-answer.ts';
import { InvalidJsonError } from '../../src/core/service/errors.ts';
import { promptOf } from '../../src/platforms/discord/messages.ts';
import { asksForHelp, parseSlashText } from '../../src/platforms/slack/options.ts';
import { escapeSlackText, plainTextOf, slackLength, unescapeSlackText } from '../../src/platforms/slack/text.ts';

const KB = 1024;
const MB = 1024 * KB;

/** The longest a call may take on `length` characters, in ms: 1 s per MB plus 50 ms. */
function boundMs(length: number): number {
  return 50 + (1000 * length) / MB;
}

/** How many times a call over its bound is run again before it fails (see {@link timed}). */
const TRIES = 3;

/**
 * Runs `parse` on `input`, failing when it takes longer than {@link boundMs} each of
 * {@link TRIES} times: a busy machine may pause a call past the bound once (a collection, the
 * scheduler), never super-linear code back to its bound. @returns what it returned.
 */
function timed<T>(label: string, input: string, parse: (text: string) => T): T {
  let fastest = Number.POSITIVE_INFINITY;
  let result: T;
  for (let tried = 0; tried < TRIES && fastest >= boundMs(input.length); tried++) {
    const started = performance.now();
    result = parse(input);
    fastest = Math.min(fastest, performance.now() - started);
  }
  expect(
    fastest,
    `${label} on ${input.length.toLocaleString('en-US')} characters took ${fastest.toFixed(0)} ms at best of ${TRIES}`,
  ).toBeLessThan(boundMs(input.length));
  return result!;
}

/** `motif` repeated to `length` characters (the last repetition cut short). */
function fill(motif: string, length: number): string {
  return motif.repeat(Math.ceil(length / motif.length)).slice(0, length);
}

/** The sizes each shape is run at: 4 KB to `max`, growing fourfold. */
function ladder(max: number): number[] {
  const sizes: number[] = [];
  for (let size = 4 * KB; size < max; size *= 4) sizes.push(size);
  return [...sizes, max];
}

/** A shape of input: text of about `size` characters. */
type Shape = (size: number) => string;

/** Runs `parse` on `shape` at each size of the ladder up to 1 MB, each within its bound. @returns what it returned at 1 MB. */
function grown<T>(label: string, shape: Shape, parse: (text: string) => T): T {
  let result: T | undefined;
  for (const size of ladder(MB)) result = timed(label, shape(size), parse);
  return result as T;
}

/** The pieces adversarial inputs are made of: fence openers, whitespace, backticks, brackets, quotes, tags, dashes. */
const PIECES = [
  '```',
  '```json',
  '```JSON',
  '~~~',
  '````',
  ' ',
  '  ',
  '\n',
  '\t',
  '\r',
  '\r\n',
  '\u2028',
  '\u00a0',
  '`',
  '``',
  '![',
  '](',
  '[',
  ']',
  '(',
  ')',
  'http://',
  'https://',
  'HTTP://',
  '.png',
  '.jpg',
  '?',
  ',',
  '.',
  '/',
  'x',
  'a b',
  '"',
  "'",
  '“',
  '”',
  '„',
  '{',
  '}',
  '<',
  '>',
  '|',
  '@',
  '#',
  '!',
  '<@U123',
  '<@U123|',
  '<@U123>',
  '<@',
  '<@!',
  '<@123>',
  '<#',
  '<#C1|',
  '<!',
  '<!here',
  '<!subteam^S1|',
  '<http://',
  '<mailto:',
  '&lt;',
  '&gt;',
  '&amp;',
  '--',
  '—',
  '–',
  '-',
  '--json',
  '--model',
  '--web-search=',
  'help',
  ':',
  '😀',
  '\\',
  '*',
  '_',
] as const;

/** A Discord message with `content`, enough for promptOf (cleanContent finds no members, users or channels). */
function discordMessage(content: string): Message {
  const none = { cache: new Map() };
  return { content, channel: { guild: null, type: 1, client: { users: none, channels: none } } } as unknown as Message;
}

/** Every parser under test: a name, how to call it (checking what is cheap to check), and its worst shapes known. */
const PARSERS: Array<{
  name: string;
  parse: (text: string) => unknown;
  /** Shapes known to be the worst for this parser (or for the expression it replaced). */
  shapes: Record<string, Shape>;
  /** Pieces that matter most to this parser (texts open with a head and repeat a motif): most random texts are made of these. */
  focus: { heads: readonly string[]; motif: readonly string[] };
}> = [
  {
    name: 'parseJsonAnswer (JSON-mode fences)',
    focus: {
      heads: ['```', '```json', ' ```JSON', '```\n', '\n```json '],
      motif: [' ', '\n', '\t', '\r\n', ' \n', '`', '[', 'x'],
    },
    parse: (text) => {
      try {
        return parseJsonAnswer(text);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidJsonError);
        return error;
      }
    },
    shapes: {
      'a fence, then spaces and line breaks': (n) => `\`\`\`${fill(' \n', n)}`,
      'a json fence, then whitespace': (n) => `\`\`\`json\n${fill(' \t\n ', n)}`,
      'a json fence, line breaks, and a closing fence': (n) => `\`\`\`json${fill('\n', n)}\`\`\``,
      'fence openers and line breaks': (n) => fill('```\n', n),
      backticks: (n) => fill('`', n),
      'whitespace, then a fence': (n) => `${fill(' \n', n)}\`\`\``,
      'a fence around brackets and whitespace': (n) => `\`\`\`json\n[${fill(' \n', n)}]\n\`\`\``,
    },
  },
  {
    name: 'splitMessage (Discord: 2,000 characters)',
    focus: { heads: ['```', '~~~', '```ts\n', '````', ''], motif: ['`', '~', ' ', '\n', '\r', 'x', '😀', '```\n'] },
    parse: (text) => {
      const pages = splitMessage(text, 2000);
      for (const page of pages) expect(page.length).toBeLessThanOrEqual(2000);
      return pages;
    },
    shapes: {
      'a fence, then spaces': (n) => `\`\`\`\n${fill(' ', n)}`,
      'a fence, then spaces and line breaks': (n) => `\`\`\`\n${fill(' \n', n)}`,
      'fence openers and line breaks': (n) => fill('```\n', n),
      'lines of 1,900 backticks ended by a carriage return': (n) => fill(`${'`'.repeat(1900)}\r`, n),
      'fence lines with 3,000 characters of info string': (n) => fill(`~~~${'x'.repeat(3000)}\n`, n),
      'a fence of 1,500 backticks': (n) => `${'`'.repeat(1500)}\n${fill('code ', n)}`,
      'line breaks': (n) => fill('\n', n),
      'emoji (surrogate pairs)': (n) => fill('😀', n),
    },
  },
  {
    name: 'splitMessage (Slack: 3,900 characters after escaping)',
    focus: { heads: ['```', '~~~\n', ''], motif: ['`', ' ', '\n', '&', '<', '>', 'x'] },
    parse: (text) => {
      const pages = splitMessage(text, 3900, slackLength);
      for (const page of pages) expect(slackLength(page)).toBeLessThanOrEqual(3900);
      return pages;
    },
    shapes: {
      'a fence, then angle brackets': (n) => `\`\`\`\n${fill('<', n)}`,
      'ampersands and spaces': (n) => fill('& ', n),
      'a fence, then spaces and line breaks': (n) => `\`\`\`\n${fill(' \n', n)}`,
    },
  },
  {
    name: 'openFenceAtEnd (fence lines of a page)',
    focus: { heads: ['```', '~~~', ''], motif: ['`', '~', ' ', '\n', '\r', '\u2028', 'x', '```\n'] },
    parse: (text) => openFenceAtEnd(text),
    shapes: {
      'backticks ended by a carriage return': (n) => `${fill('`', n)}\r`,
      'tildes ended by a line separator': (n) => `${fill('~', n)}\u2028`,
      'fence openers and line breaks': (n) => fill('```\n', n),
    },
  },
  {
    name: 'PageSplitter (a streamed answer, 1,000 pieces)',
    focus: { heads: ['```', '~~~', '```ts\n', ''], motif: ['`', ' ', '\n', '\r', 'x', '```\n'] },
    parse: (text) => {
      const splitter = new PageSplitter(2000);
      const step = Math.ceil(text.length / 1000);
      for (let i = 0; i < text.length; i += step) {
        splitter.append(text.slice(i, i + step));
        if ((i / step) % 10 === 0) splitter.pages();
      }
      return splitter.pages();
    },
    shapes: {
      'a fence, then spaces and line breaks': (n) => `\`\`\`\n${fill(' \n', n)}`,
      'fence openers and line breaks': (n) => fill('```\n', n),
    },
  },
  {
    name: 'extractImageLinks (web search images)',
    focus: {
      heads: ['', '![', 'http://', '('],
      motif: ['![', '](', ']', '(', ')', 'http://', 'https://', '.png', '?', ',', '.', ' ', '"', 'x'],
    },
    parse: (text) => extractImageLinks(text),
    shapes: {
      'image openers': (n) => fill('![', n),
      'image openers with links and no closing parenthesis': (n) => fill('![](http://', n),
      'images whose title never closes': (n) => fill('![a](https://x "', n),
      'links without an extension': (n) => fill('http://', n),
      'links glued to links': (n) => fill('https://x', n),
      'a link with many queries ending in a parenthesis': (n) => `http://a.png?${fill('.png?', n)}(`,
      'links with a query ending in a parenthesis': (n) => fill('http://a.png?b(', n),
      'a long link with dots and no extension': (n) => `http://${fill('a.', n)}`,
    },
  },
  {
    name: 'parseSlashText (Slack options)',
    focus: { heads: ['', '--model ', '„'], motif: ['„', '“', '"', ' ', '--model', '--json', '—', '-', '=', 'x'] },
    parse: (text) => {
      try {
        return parseSlashText(chat, text, [chat]);
      } catch (error) {
        expect(error).toBeInstanceOf(OptionError);
        return error;
      }
    },
    shapes: {
      'opening quotes that never close': (n) => fill('„ ', n),
      'curly quotes that never close': (n) => fill('“ ', n),
      'a flag whose quoted value never closes': (n) => fill('--model “ ', n),
      dashes: (n) => fill('-- ', n),
      'em dashes': (n) => fill('— ', n),
      words: (n) => fill('x ', n),
      spaces: (n) => fill(' ', n),
    },
  },
  {
    name: 'asksForHelp (Slack)',
    focus: { heads: ['', ' '], motif: [' ', '\n', 'help', '-h', '?', 'x'] },
    parse: (text) => asksForHelp(text),
    shapes: {
      'spaces, then help': (n) => `${fill(' ', n)}help`,
      'spaces, then a word': (n) => `${fill(' ', n)}x`,
    },
  },
  {
    name: 'plainTextOf (Slack mentions, channels, links)',
    focus: {
      heads: ['', ' ', '<'],
      motif: ['<@U123', '<@U1', '|', '<', '>', ' ', '<#C1', '<!', '<http://', '<mailto:', 'x', '&lt;'],
    },
    parse: (text) => plainTextOf(text, 'U123'),
    shapes: {
      spaces: (n) => fill(' ', n),
      'mentions of the bot among spaces': (n) => fill(' <@U123> ', n),
      'mention openers with a label and no closing bracket': (n) => fill('<@U123|', n),
      'user mentions with a label and no closing bracket': (n) => fill('<@U1|', n),
      'links without a label, then one closing bracket': (n) => `${fill('<http://', n)}>`,
      'mail links with an empty label': (n) => `${fill('<mailto:', n)}|>`,
      'channel links without a closing bracket': (n) => fill('<#C1|', n),
      'angle brackets': (n) => fill('<', n),
      'escaped angle brackets': (n) => fill('&lt;', n),
    },
  },
  {
    name: 'escapeSlackText and slackLength (Slack)',
    focus: { heads: [''], motif: ['&', '<', '>', '&lt;', 'x'] },
    parse: (text) => {
      const escaped = escapeSlackText(text);
      expect(escaped.length).toBe(slackLength(text));
      return unescapeSlackText(escaped);
    },
    shapes: {
      'ampersands and angle brackets': (n) => fill('&<>', n),
    },
  },
  {
    name: 'promptOf (Discord mention stripping)',
    focus: { heads: ['', 'a'], motif: ['<@', '<@!', '123', '>', ' ', '\n', '\t', 'x'] },
    parse: (text) => promptOf(discordMessage(text), '123'),
    shapes: {
      spaces: (n) => fill(' ', n),
      'mentions of the bot among spaces': (n) => fill(' <@123> ', n),
      'mention openers': (n) => fill('<@!', n),
      'other mentions among spaces': (n) => fill(' <@1234> ', n),
    },
  },
];

describe.each(PARSERS)('$name on adversarial inputs up to 1 MB', ({ name, parse, shapes, focus }) => {
  it.each(Object.entries(shapes))('%s: each size within 1 s per MB plus 50 ms', (shape, make) => {
    for (const size of ladder(MB)) timed(`${name}, ${shape}`, make(size), parse);
  });

  it('random repetitions of adversarial pieces (fast-check), 4 KB to 64 KB: each within its bound', () => {
    // A short motif repeated (what makes a backtracking expression super-linear), after a head:
    // of this parser's pieces three times in four, of all the pieces otherwise.
    const text = (heads: readonly string[], motif: readonly string[]) =>
      fc
        .tuple(
          fc.array(fc.constantFrom(...heads), { minLength: 1, maxLength: 2 }),
          fc.array(fc.constantFrom(...motif), { minLength: 1, maxLength: 6 }),
        )
        .map(([head, repeated]) => ({ head: head.join(''), motif: repeated.join('') }));
    const texts = fc.oneof(
      { arbitrary: text(focus.heads, focus.motif), weight: 3 },
      { arbitrary: text(PIECES, PIECES), weight: 1 },
    );
    fc.assert(
      fc.property(texts, ({ head, motif }) => {
        for (const size of ladder(64 * KB)) timed(name, head + fill(motif, size), parse);
      }),
      { numRuns: 25, endOnFailure: true },
    );
  });
});

describe('what the parsers return on 1 MB inputs (each size from 4 KB within its bound)', () => {
  /** What parseJsonAnswer threw (undefined when it returned). */
  const jsonError = (text: string): unknown => {
    try {
      parseJsonAnswer(text);
    } catch (caught) {
      return caught;
    }
    return undefined;
  };

  it('a fence followed by 1 MB of whitespace is not valid JSON, and says so quickly', () => {
    const shape: Shape = (n) => `\`\`\`json\n${fill(' \n\t', n)}`;
    const error = grown('parseJsonAnswer', shape, jsonError);
    expect(error).toBeInstanceOf(InvalidJsonError);
    expect((error as InvalidJsonError).raw).toBe(shape(MB));
    expect(grown('parseJsonAnswer', (n) => `\`\`\`${fill(' \n', n)}`, jsonError)).toBeInstanceOf(InvalidJsonError);
  });

  it('a fenced JSON value of 1 MB is parsed, fence and whitespace around it tolerated', () => {
    const value = Array.from({ length: 40_000 }, (_, i) => ({ i, s: `item ${i}` }));
    const json = JSON.stringify(value, null, 1);
    expect(json.length).toBeGreaterThan(MB);
    expect(grown('parseJsonAnswer', (n) => `\`\`\`json\n[${fill(' \n', n)}]\n\`\`\``, parseJsonAnswer).value).toEqual(
      [],
    );
    expect(timed('parseJsonAnswer', `  \`\`\`JSON  \n${json}\n \n\`\`\` \n`, parseJsonAnswer).value).toEqual(value);
  });

  it('jsonFenceBody finds the body the expression it replaces found', () => {
    expect(jsonFenceBody('```json\n{"a":1}\n```')).toBe('{"a":1}');
    expect(jsonFenceBody('```\n\n```')).toBe('');
    // The opening line break is the last one before the body; the body ends at the first line break before the closing fence.
    expect(jsonFenceBody(' ```JSON \n \n[1]\n \n ```  ')).toBe('[1]');
    expect(jsonFenceBody('```json\n[1]\n```\n[2]\n```')).toBe('[1]\n```\n[2]');
    expect(jsonFenceBody('```jsonx\n[1]\n```')).toBeUndefined();
    expect(jsonFenceBody('```json [1] ```')).toBeUndefined();
    expect(grown('jsonFenceBody', (n) => `\`\`\`${fill(' \n', n)}`, jsonFenceBody)).toBeUndefined();
  });

  it('a 1 MB answer streamed in pieces splits into the same pages as the whole, each within the limit', () => {
    const shape: Shape = (n) => `Here:\n\`\`\`ts\n${'const x = 1; // a line of code\n'.repeat(n / 32)}\`\`\`\nDone.`;
    const whole = grown('splitMessage', shape, (t) => splitMessage(t, 2000));
    const streamed = grown('PageSplitter', shape, (t) => {
      const splitter = new PageSplitter(2000);
      for (let i = 0; i < t.length; i += 1000) {
        splitter.append(t.slice(i, i + 1000));
        splitter.pages();
      }
      return splitter.pages();
    });
    expect(streamed).toEqual(whole);
    expect(whole.length).toBeGreaterThan(500);
    for (const page of whole) {
      expect(page.length).toBeLessThanOrEqual(2000);
      expect(openFenceAtEnd(page)).toBeUndefined();
    }
    expect(whole[1]!.startsWith('```ts\n')).toBe(true);
    expect(whole.at(-1)!.endsWith('Done.')).toBe(true);
  });

  it('a fence opened by a line too long to repeat on every page is reopened with its marker alone', () => {
    const measure: Measure = slackLength;
    const shape: Shape = (n) => `~~~${'x'.repeat(5000)}\n${fill('code\n', n)}`;
    const pages = grown('splitMessage', shape, (t) => splitMessage(t, 3900, measure));
    expect(pages[1]!.startsWith('~~~\n')).toBe(true);
    expect(pages.length).toBeGreaterThan(MB / 3900);
    for (const page of pages) expect(measure(page)).toBeLessThanOrEqual(3900);
    // Nothing lost: the pages are the text but for the cut whitespace and the fence lines added.
    const kept = (t: string) => t.replace(/[\s~]+/g, '');
    expect(kept(pages.join(''))).toBe(kept(shape(MB)));
  });

  it('image links: none in 1 MB of openers, every one of 20,000 distinct images', () => {
    expect(grown('extractImageLinks', (n) => fill('![', n), extractImageLinks)).toEqual([]);
    expect(grown('extractImageLinks', (n) => fill('http://', n), extractImageLinks)).toEqual([]);
    const images = Array.from(
      { length: 20_000 },
      (_, i) => `![n${i}](https://img.example/${i}.png) https://cdn.example/${i}.jpg?w=1,`,
    ).join('\n');
    const links = timed('extractImageLinks', images, extractImageLinks);
    expect(links).toHaveLength(40_000);
    expect(links[0]).toEqual({ url: 'https://img.example/0.png', alt: 'n0' });
    expect(links[1]).toEqual({ url: 'https://img.example/1.png', alt: 'n1' });
    expect(links[20_000]).toEqual({ url: 'https://cdn.example/0.jpg?w=1', alt: '' });
  });

  it("Slack text: whitespace and the bot's mentions come to nothing; other tags are read", () => {
    const plain = (t: string) => plainTextOf(t, 'U123');
    expect(grown('plainTextOf', (n) => fill(' ', n), plain)).toBe('');
    expect(grown('plainTextOf', (n) => ' <@U123|bot> '.repeat(Math.floor(n / 13)), plain)).toBe('');
    expect(grown('plainTextOf', (n) => fill('&lt;', n), plain)).toBe(fill('<', MB / 4));
    expect(grown('plainTextOf', (n) => `${fill('<@U1|', n)}>`, plain)).toBe(`@${fill('<@U1|', MB).slice(5)}`);
  });

  it('Slack options: unclosed quotes are prompt text; a quoted value that never closes is the next word', () => {
    const parse = (t: string) => parseSlashText(chat, t, [chat]);
    expect(grown('parseSlashText', (n) => fill('„ ', n), parse)).toEqual({ prompt: fill('„ ', MB).trim() });
    expect(grown('parseSlashText', (n) => `--model “x ${fill('word ', n)}`, parse)).toEqual({
      model: '“x',
      prompt: fill('word ', MB).trim(),
    });
  });

  it("Discord: the bot's mentions and the whitespace around them come to nothing", () => {
    const prompt = (t: string) => promptOf(discordMessage(t), '123');
    expect(grown('promptOf', (n) => ' <@123> <@!123>\n'.repeat(n / 16), prompt)).toBe('');
    expect(grown('promptOf', (n) => `a${fill(' ', n)}<@123>${fill('\t', n)}b${fill(' ', n)}`, prompt)).toBe('a b');
  });
});

describe('promptOf (Discord) removes what the expression it replaced removed', () => {
  it("property: the same prompt as with the bot's mention removed by `\\s*<@!?id>\\s*`", () => {
    const pieces = ['<@', '<@!', '123', '1234', '>', ' ', '\n', '\t', 'a', '<@123>', '<@!123>', '<@!1234>', '\u00a0'];
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...pieces), { maxLength: 25 }).map((a) => a.join('')),
        (content) => {
          const message = discordMessage(content);
          const old = cleanContent(content.replace(/\s*<@!?123>\s*/g, ' '), message.channel).trim();
          expect(promptOf(message, '123')).toBe(old);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
