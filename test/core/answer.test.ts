import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractImageLinks } from '../../src/core/features/answer.ts';
import { jsonFenceBody, parseJsonAnswer } from '../../src/core/features/json-answer.ts';
import { InvalidJsonError } from '../../src/core/service/errors.ts';

describe('JSON mode answers (§4.1 JSON mode rules)', () => {
  it('parses the joined pieces and pretty-prints them', () => {
    const pieces = ['{"na', 'me": "fox", "legs"', ': 4}'];
    expect(parseJsonAnswer(pieces.join(''))).toEqual({
      value: { name: 'fox', legs: 4 },
      pretty: '{\n  "name": "fox",\n  "legs": 4\n}',
    });
  });

  it('tolerates a ```json fence around the answer', () => {
    expect(parseJsonAnswer('```json\n[1, 2]\n```').value).toEqual([1, 2]);
  });

  it('keeps the raw text when the answer is not valid JSON', () => {
    try {
      parseJsonAnswer('{"name": "fox",');
      throw new Error('expected InvalidJsonError');
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidJsonError);
      expect((error as InvalidJsonError).raw).toBe('{"name": "fox",');
      expect((error as InvalidJsonError).code).toBe('invalid_json');
    }
  });
});

describe('image results of web search "images" mode', () => {
  it('finds Markdown images and bare image links once each, in order', () => {
    const text =
      'Foxes:\n![red fox](https://img.example/fox.jpg)\nAlso https://cdn.example/a/b.png?w=200, and https://img.example/fox.jpg again. Not https://example.com/page.';
    expect(extractImageLinks(text)).toEqual([
      { url: 'https://img.example/fox.jpg', alt: 'red fox' },
      { url: 'https://cdn.example/a/b.png?w=200', alt: '' },
    ]);
  });

  it('finds nothing in plain text', () => {
    expect(extractImageLinks('no images here, see https://example.com')).toEqual([]);
  });
});

/**
 * The linear scanners against the regular expressions they replaced (issue 16), on inputs small
 * enough for those expressions: the same results. (The adversarial sizes are in adversarial-parsers.test.ts.)
 */
describe('the scanners find what the expressions they replaced found', () => {
  const OLD_FENCE = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/i;
  const OLD_MARKDOWN_IMAGE = /!\[([^\]]*)\]\((https?:\/\/[^\s)]+)(?:\s+"[^"]*")?\)/g;
  const OLD_BARE_IMAGE_URL =
    /(?<![(\w])(https?:\/\/[^\s<>()"']+?\.(?:png|jpe?g|gif|webp|avif)(?:\?[^\s<>()"',]*)?)(?=[\s)>"',.]|$)/gi;
  const oldImageLinks = (text: string) => {
    const out: Array<{ url: string; alt: string }> = [];
    const add = (url: string, alt: string) => {
      if (!out.some((l) => l.url === url)) out.push({ url, alt });
    };
    for (const m of text.matchAll(OLD_MARKDOWN_IMAGE)) add(m[2]!, m[1]!);
    for (const m of text.replace(OLD_MARKDOWN_IMAGE, ' ').matchAll(OLD_BARE_IMAGE_URL)) add(m[1]!, '');
    return out;
  };
  const joined = (pieces: readonly string[], max: number) =>
    fc.array(fc.constantFrom(...pieces), { maxLength: max }).map((a) => a.join(''));

  it("property: jsonFenceBody is the fence expression's capture", () => {
    const space = joined([' ', '\n', '\t', '\r', '\u2028', '\u00a0', '\u3000'], 5);
    const body = joined(['{', '}', '"a"', ':', '1', '`', '```', 'x', ' ', '\n', 'json'], 6);
    const info = fc.constantFrom('', 'json', 'JSON', 'Json', 'js', 'jsonx', ' json');
    const closing = fc.constantFrom('```', '``', '````', '```x', '');
    fc.assert(
      fc.property(space, info, space, body, space, closing, space, (a, b, c, d, e, f, g) => {
        const raw = `${a}\`\`\`${b}${c}${d}${e}${f}${g}`;
        expect(jsonFenceBody(raw)).toBe(OLD_FENCE.exec(raw)?.[1]);
      }),
      { numRuns: 3000 },
    );
  });

  it('property: extractImageLinks finds the links the image expressions found', () => {
    const pieces = [
      '![',
      '](',
      ']',
      '(',
      ')',
      'http://',
      'https://',
      'HTTP://',
      'a',
      '.png',
      '.PNG',
      '.jpg',
      '.jpeg',
      '.webp',
      '.gif',
      '.avif',
      '?',
      ',',
      '.',
      ' ',
      '\n',
      '"',
      "'",
      '<',
      '>',
      '_',
      'x.png?a.b',
      '![a](https://x/y.png)',
      '![a](http://x "t")',
    ];
    fc.assert(
      fc.property(joined(pieces, 20), (text) => {
        expect(extractImageLinks(text)).toEqual(oldImageLinks(text));
      }),
      { numRuns: 3000 },
    );
  });

  it("keeps the expressions' readings of the edge cases", () => {
    // The opening line break is the last one of the whitespace after the fence; the body ends at the first line break before the closing one.
    expect(jsonFenceBody(' ```JSON \n \n[1]\n \n ```  ')).toBe('[1]');
    expect(jsonFenceBody('```json\n[1]\n```\n[2]\n```')).toBe('[1]\n```\n[2]');
    expect(jsonFenceBody('```\n\n```')).toBe('');
    expect(jsonFenceBody('```jsonx\n[1]\n```')).toBeUndefined();
    expect(parseJsonAnswer('```JSON\n{"a": [1]}\n```\n').value).toEqual({ a: [1] });
    expect(
      extractImageLinks('![a](https://x/1.png "title") (https://x/2.png) https://x/3.PNG?q=1.5( HTTPS://x/4.gif.'),
    ).toEqual([
      { url: 'https://x/1.png', alt: 'a' },
      { url: 'https://x/3.PNG?q=1', alt: '' },
      { url: 'HTTPS://x/4.gif', alt: '' },
    ]);
  });
});
