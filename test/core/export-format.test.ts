/**
 * /export's files (src/core/features/export-format.ts): a stored turn read back with its notes of
 * files and images as their own fields, what the store lacks said as "unknown", and the bound on
 * each file's bytes (the oldest turns left out first, said at each file's top).
 */
import { describe, expect, it } from 'vitest';
import { exportTurnOf, fitExport, UNKNOWN } from '../../src/core/features/export-format.ts';
import type { StoredMessage } from '../../src/core/state/history.ts';

const AT = Date.UTC(2026, 10, 29, 12, 0, 0);

describe('exportTurnOf', () => {
  it("reads a question's notes of files and images (chat.ts) back as files and images, the text without them", () => {
    const turn = exportTurnOf({
      role: 'user',
      content: 'Look at these.\n[2 files: notes.txt, report.PDF]\n[1 image: cat.webp]',
      at: AT,
      userId: 'U1',
    });
    expect(turn).toEqual({
      role: 'user',
      author: 'U1',
      time: '2026-11-29T12:00:00.000Z',
      text: 'Look at these.',
      files: [
        { name: 'notes.txt', kind: 'text' },
        { name: 'report.PDF', kind: 'pdf' },
      ],
      images: [{ name: 'cat.webp' }],
    });
  });

  it('says "unknown" for an author or a time the store does not have, and leaves an answer\'s bracketed lines as text', () => {
    const stored = { role: 'user', content: 'Hi' } as unknown as StoredMessage;
    expect(exportTurnOf(stored)).toMatchObject({ author: UNKNOWN, time: UNKNOWN, text: 'Hi' });
    const answer = exportTurnOf({ role: 'assistant', content: 'Sure.\n[1 file: a.py]', at: AT });
    expect(answer).toMatchObject({ author: 'bot', text: 'Sure.\n[1 file: a.py]', files: [] });
  });
});

describe('fitExport', () => {
  const turns = Array.from({ length: 10 }, (_, n) =>
    exportTurnOf({ role: n % 2 ? 'assistant' : 'user', content: `${n}: ${'x'.repeat(400)}`, at: AT + n, userId: 'U1' }),
  );
  const header = { conversationId: 'discord:1:2', at: AT };

  it('keeps every turn and says nothing of leaving out when they fit', () => {
    const fitted = fitExport(turns, header, 1_000_000);
    expect(fitted).toMatchObject({ leftOut: 0, kept: 10 });
    expect(fitted.markdown).not.toContain('left out');
    expect(JSON.parse(fitted.json)).toHaveLength(10);
  });

  it.each([1_500, 3_000, 4_000])(
    'keeps each file within %i bytes, the newest turns kept, and says how many went',
    (max) => {
      const fitted = fitExport(turns, header, max);
      expect(Buffer.byteLength(fitted.markdown)).toBeLessThanOrEqual(max);
      expect(Buffer.byteLength(fitted.json)).toBeLessThanOrEqual(max);
      expect(fitted.leftOut + fitted.kept).toBe(10);
      expect(fitted.leftOut).toBeGreaterThan(0);
      const json = JSON.parse(fitted.json) as Array<{ role: string; text: string }>;
      expect(json[0]).toMatchObject({
        role: 'note',
        text: expect.stringContaining(`The ${fitted.leftOut} oldest turns`),
      });
      expect(json.slice(1).map((t) => t.text)).toEqual(turns.slice(fitted.leftOut).map((t) => t.text));
      expect(fitted.markdown.split('\n')[4]).toContain(`The ${fitted.leftOut} oldest turns`);
    },
  );

  it('leaves every turn out, and says so, when not even the newest fits', () => {
    const fitted = fitExport(turns, header, 600);
    expect(fitted).toMatchObject({ leftOut: 10, kept: 0 });
    expect(fitted.markdown).toContain('The 10 oldest turns were left out');
  });
});
