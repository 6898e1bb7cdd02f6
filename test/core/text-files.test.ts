/**
 * Files as context (issue 19, item 3): what a file is taken for, by its declared type and by
 * its bytes (text-files.ts), how its text is cut, and how it is put in the question.
 */

import { describe, expect, it } from 'vitest';
import { english } from '../../src/core/i18n/words.ts';
import { type Reason, reasonLine } from '../../src/core/media/reasons.ts';
import { fileKindOf, filePart, filesNote, fitPart, readText, sniffText } from '../../src/core/media/text-files.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('sniffText', () => {
  it('takes UTF-8 text with tabs, newlines, accents and emoji', () => {
    expect(sniffText(bytes('naïve café\tété\r\n🦊 ok\n'))).toBe(true);
    expect(sniffText(bytes(''))).toBe(true);
  });

  it('takes a UTF-8 byte order mark and a log with a few ANSI colour escapes', () => {
    expect(sniffText(Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes('hello')]))).toBe(true);
    expect(sniffText(bytes(`\x1b[32mINFO\x1b[0m the server started on port 8080, all good\n`.repeat(20)))).toBe(true);
  });

  it('refuses bytes with a NUL (UTF-16, executables, images)', () => {
    expect(sniffText(bytes('plain text\0 with a NUL'))).toBe(false);
    expect(sniffText(Buffer.from('hello', 'utf16le'))).toBe(false);
    expect(sniffText(Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]))).toBe(false);
  });

  it('refuses bytes that are not valid UTF-8 (Latin-1, random binary)', () => {
    expect(sniffText(Buffer.from('café crème brûlée', 'latin1'))).toBe(false);
    expect(sniffText(Uint8Array.from([0xc3, 0x28, 0x41]))).toBe(false);
  });

  it('refuses text full of control characters', () => {
    expect(sniffText(bytes('a\x01b\x02c\x03d\x04e\x05f\x06g\x07h\x08'))).toBe(false);
  });

  it('takes a sample cut in the middle of a multi-byte character when told it is a prefix', () => {
    const cut = bytes('déjà vu 🦊').subarray(0, -2);
    expect(sniffText(cut, { prefix: true })).toBe(true);
    expect(sniffText(cut)).toBe(false);
  });
});

describe('fileKindOf', () => {
  it('sorts by declared type first', () => {
    expect(fileKindOf({ name: 'a.png', mimeType: 'image/png' })).toEqual({ kind: 'image' });
    expect(fileKindOf({ name: 'a.bin', mimeType: 'application/pdf' })).toEqual({ kind: 'pdf' });
    expect(fileKindOf({ name: 'x', mimeType: 'text/x-python; charset=utf-8' })).toEqual({ kind: 'text' });
    expect(fileKindOf({ name: 'x', mimeType: 'application/json' })).toEqual({ kind: 'text' });
  });

  it('reads a file of no or a generic type by its bytes (never by its name alone)', () => {
    expect(fileKindOf({ name: 'server.log', mimeType: undefined })).toEqual({ kind: 'text' });
    expect(fileKindOf({ name: 'main.rs', mimeType: 'application/octet-stream' })).toEqual({ kind: 'text' });
    expect(fileKindOf({ name: 'report.pdf', mimeType: undefined })).toEqual({ kind: 'pdf' });
  });

  it('names Word documents and other binary formats as unsupported, without a download', () => {
    const docx = fileKindOf({
      name: 'cv.docx',
      mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    });
    expect(docx).toMatchObject({ kind: 'unsupported' });
    expect(english.say(reasonLine((docx as { reason: Reason }).reason))).toMatch(/Word document/);
    expect(fileKindOf({ name: 'cv.docx', mimeType: undefined })).toMatchObject({ kind: 'unsupported' });
    expect(fileKindOf({ name: 'song.mp3', mimeType: 'audio/mpeg' })).toMatchObject({ kind: 'unsupported' });
    expect(fileKindOf({ name: 'a.zip', mimeType: 'application/zip' })).toMatchObject({ kind: 'unsupported' });
  });
});

describe('readText', () => {
  it('decodes UTF-8 without its byte order mark', () => {
    expect(readText(Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes('héllo')]), 100)).toEqual({
      text: 'héllo',
      cut: false,
    });
  });

  it('cuts at maxChars characters, never inside a character', () => {
    // Characters are UTF-16 code units, as the token estimate counts them: 🦊 is two.
    expect(readText(bytes('ab🦊cd'), 3)).toEqual({ text: 'ab', cut: true });
    expect(readText(bytes('ab🦊cd'), 4)).toEqual({ text: 'ab🦊', cut: true });
    expect(readText(bytes('abcdef'), 6)).toEqual({ text: 'abcdef', cut: false });
    const long = readText(bytes('é'.repeat(10_000)), 100);
    expect(long).toEqual({ text: 'é'.repeat(100), cut: true });
  });

  it('returns undefined for bytes that are not text', () => {
    expect(readText(bytes('a\0b'), 10)).toBeUndefined();
  });

  it('reads the start of a longer file (more): a character cut at the end is no error, and the text is cut', () => {
    const start = bytes('abc é').subarray(0, 5); // the é's second byte is not there
    expect(readText(start, 10, { more: true })).toEqual({ text: 'abc ', cut: true });
    expect(readText(bytes('abc'), 10, { more: true })).toEqual({ text: 'abc', cut: true });
    expect(readText(start, 10)).toBeUndefined();
  });
});

describe('filePart and filesNote', () => {
  it('puts a file in a fence no line of it can close: backticks, or tildes where they can be shorter', () => {
    expect(filePart({ name: 'a.md', text: 'x\n' })).toBe('File a.md:\n```\nx\n```');
    expect(filePart({ name: 'b.md', text: 'see ```js\ncode\n```' })).toBe('File b.md:\n~~~\nsee ```js\ncode\n```\n~~~');
    expect(filePart({ name: 'c.md', text: '```\n~~~~\n```' })).toBe('File c.md:\n````\n```\n~~~~\n```\n````');
    expect(filePart({ name: 'r.pdf', text: 'one', pages: 3 })).toBe('File r.pdf (3 pages):\n```\none\n```');
  });

  it('a file of backticks costs its own length, not three times it (the fence is ~~~)', () => {
    const part = filePart({ name: 'ticks.txt', text: '`'.repeat(10_000) });
    expect(part.length).toBeLessThan(10_000 + 40);
    expect(part.endsWith('\n~~~')).toBe(true);
  });

  it('fitPart holds the whole part (name line, fences, text) within the budget, whatever the runs', () => {
    const hostile = `${'`'.repeat(3_000)}\n${'~'.repeat(3_000)}\n${'x'.repeat(4_000)}`;
    for (const budget of [50, 500, 3_100, 6_500, 9_000]) {
      const fitted = fitPart({ name: 'h.md', text: hostile }, budget);
      expect(fitted).toBeDefined();
      expect(filePart(fitted!).length).toBeLessThanOrEqual(budget);
      expect(hostile.startsWith(fitted!.text)).toBe(true);
    }
    // Untouched when it fits; nothing when not one character of text fits.
    expect(fitPart({ name: 'a.txt', text: 'abc' }, 100)).toEqual({ name: 'a.txt', text: 'abc' });
    expect(fitPart({ name: 'a.txt', text: 'abc' }, 10)).toBeUndefined();
  });

  it('notes files by name', () => {
    expect(filesNote([])).toBeUndefined();
    expect(filesNote([{ name: 'a.py' }])).toBe('[1 file: a.py]');
    expect(filesNote([{ name: 'a.py' }, { name: 'b.csv' }])).toBe('[2 files: a.py, b.csv]');
  });
});
