/**
 * Why a user's file is not used, in each shipped language (issue 42): a reason reads as a phrase
 * in the line under an answer ("Not used: a.bin (too large (…))") and as a sentence naming the
 * file in an option's refusal, each language wording both its own way; sizes and counts in the
 * reader's number format; names as given; English as it was.
 */
import { describe, expect, it } from 'vitest';
import { allWords, english, wordsOf } from '../../src/core/i18n/words.ts';
import { notImageReason, optionRefused, skippedLine } from '../../src/core/media/attachments.ts';
import { DownloadError } from '../../src/core/media/download.ts';
import { cutLine } from '../../src/core/media/files.ts';
import { megabytes, reason, reasonSentence } from '../../src/core/media/reasons.ts';

const MiB = 1024 * 1024;
const tooLarge = reason('media.reason.too_large', { size: megabytes(2.5 * MiB), max: megabytes(MiB), what: 'file' });

describe('file reasons in the reader’s language', () => {
  it('the line under an answer: each file with its phrase, sizes with the locale’s decimal mark, the rest counted', () => {
    const skipped = [
      { name: 'big.bin', reason: tooLarge },
      ...Array.from({ length: 6 }, (_, i) => ({
        name: `n${i}.svg`,
        reason: notImageReason({ name: `n${i}.svg`, mimeType: undefined }),
      })),
    ];
    const line = skippedLine(skipped)!;
    expect(english.say(line)).toMatch(
      /^Not used: big\.bin \(too large \(2\.5 MB; files up to 1\.0 MB are read\)\), n0\.svg \(an SVG drawing, which the bot does not read \(JPEG, PNG, WebP, GIF, AVIF and TIFF work\)\), .* and 2 more\.$/,
    );
    expect(wordsOf('de').say(line)).toMatch(
      /^Nicht verwendet: big\.bin \(zu groß \(2,5 MB; Dateien bis 1,0 MB werden gelesen\)\), n0\.svg \(eine SVG-Zeichnung, die der Bot nicht liest .* und 2 weitere\.$/,
    );
    expect(wordsOf('ja').say(line)).toMatch(
      /^使用されなかったファイル: big\.bin \(大きすぎます \(2\.5 MB、.*\)\)、n0\.svg .*、ほか 2 件。$/,
    );
    for (const words of allWords()) expect(words.say(line), words.locale).not.toMatch(/[{}]|media\./);
  });

  it('an option’s refusal: a sentence naming the file, the option as written', () => {
    const refused = optionRefused('image', reasonSentence(tooLarge, 'big.bin'));
    expect(english.say(refused)).toBe('`image`: big.bin is too large (2.5 MB; files up to 1.0 MB are read).');
    expect(wordsOf('fr').say(refused)).toBe(
      '`image` : big.bin est trop lourd (2,5 Mo ; les fichiers jusqu’à 1,0 Mo sont lus).',
    );
    expect(wordsOf('es').say(refused)).toBe(
      '`image`: big.bin es demasiado grande (2,5 MB; se leen archivos de hasta 1,0 MB).',
    );
  });

  it('what was kept of a file, with counts in the locale’s grouping', () => {
    const line = cutLine([
      { name: 'log.txt', kept: { key: 'media.kept.chars', values: { count: 100_000, budget: 'yes' } } },
    ])!;
    expect(english.say(line)).toBe(
      "Read in part: log.txt (the first 100,000 characters, to fit the conversation's budget).",
    );
    expect(wordsOf('de').say(line)).toBe(
      'Teilweise gelesen: log.txt (die ersten 100.000 Zeichen, passend zum Budget der Unterhaltung).',
    );
    expect(wordsOf('pt-BR').say(line)).toBe(
      'Lidos em parte: log.txt (os primeiros 100.000 caracteres, para caber no orçamento da conversa).',
    );
  });

  it('a download failure: English for the log, the reader’s words for the user', () => {
    const timeout = new DownloadError('timeout', 'cat.png', reason('media.reason.download_timeout'));
    expect(timeout.message).toBe('cat.png took too long to download.');
    expect(wordsOf('de').say(timeout.sentence)).toBe('Der Download von cat.png dauerte zu lange.');
    expect(wordsOf('ja').say(skippedLine([{ name: 'cat.png', reason: timeout.reason }])!)).not.toContain(
      'took too long',
    );
  });
});
