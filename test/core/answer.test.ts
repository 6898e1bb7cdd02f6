import { describe, expect, it } from 'vitest';
import { extractImageLinks, parseJsonAnswer } from '../../src/core/features/answer.ts';
import { InvalidJsonError } from '../../src/core/service/errors.ts';

describe('JSON mode answers (§4.1 JSON mode rules)', () => {
  it('parses the joined pieces and pretty-prints them', () => {
    const pieces = ['{"na', 'me": "fox", "legs"', ': 4}'];
    expect(parseJsonAnswer(pieces.join(''))).toEqual({ value: { name: 'fox', legs: 4 }, pretty: '{\n  "name": "fox",\n  "legs": 4\n}' });
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
    const text = 'Foxes:\n![red fox](https://img.example/fox.jpg)\nAlso https://cdn.example/a/b.png?w=200, and https://img.example/fox.jpg again. Not https://example.com/page.';
    expect(extractImageLinks(text)).toEqual([
      { url: 'https://img.example/fox.jpg', alt: 'red fox' },
      { url: 'https://cdn.example/a/b.png?w=200', alt: '' },
    ]);
  });

  it('finds nothing in plain text', () => {
    expect(extractImageLinks('no images here, see https://example.com')).toEqual([]);
  });
});
