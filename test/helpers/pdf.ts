/**
 * Minimal valid PDFs for tests, written by hand (PDF 1.4, ISO 32000-1 §7): `textPdf(pages)`
 * makes one page per string, each with one text object in Helvetica (a standard font, so no
 * font file is embedded), and a cross-reference table with the objects' real byte offsets.
 * `imageOnlyPdf(pages)` makes pages that draw only a rectangle: no text layer, as a scan has.
 * `inflatingPdf(bytes, fill)` makes one page whose content stream is compressed (FlateDecode,
 * §7.4.4) from `bytes` of blanks or of text operators: a decompression bomb of ~1 MB per GiB.
 * Text is ASCII; `(`, `)` and `\` are escaped.
 */
import { createDeflate } from 'node:zlib';

/** A PDF string literal of ASCII `text`. */
function literal(text: string): string {
  return `(${text.replace(/[\\()]/g, (c) => `\\${c}`)})`;
}

/** A content stream: its bytes, and the dictionary entries that describe them (e.g. `/Filter /FlateDecode`). */
type Content = string | { data: Buffer; filter: string };

/** A PDF file of the given page content streams (one per page), as bytes. */
function pdfOf(contents: readonly Content[]): Buffer {
  const latin1 = (text: string) => Buffer.from(text, 'latin1');
  const objects: Buffer[] = [];
  const pageCount = contents.length;
  // 1: catalog, 2: pages, 3: font; then per page: the page, its content stream.
  const pageIds = contents.map((_, i) => 4 + i * 2);
  objects.push(latin1('<< /Type /Catalog /Pages 2 0 R >>'));
  objects.push(latin1(`<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pageCount} >>`));
  objects.push(latin1('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'));
  contents.forEach((content, i) => {
    objects.push(
      latin1(
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageIds[i]! + 1} 0 R >>`,
      ),
    );
    const { data, filter } = typeof content === 'string' ? { data: latin1(content), filter: '' } : content;
    objects.push(
      Buffer.concat([latin1(`<< /Length ${data.length}${filter} >>\nstream\n`), data, latin1('\nendstream')]),
    );
  });
  const parts: Buffer[] = [latin1('%PDF-1.4\n')];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(length);
    for (const part of [latin1(`${i + 1} 0 obj\n`), body, latin1('\nendobj\n')]) {
      parts.push(part);
      length += part.length;
    }
  });
  let tail = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) tail += `${String(offset).padStart(10, '0')} 00000 n \n`;
  tail += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`;
  parts.push(latin1(tail));
  return Buffer.concat(parts);
}

/**
 * A one-page PDF whose content stream inflates to `bytes` bytes (FlateDecode, zlib level 9:
 * ~1 MB of file per GiB): of blanks (`fill: 'blank'`, no text at all), or of text operators
 * showing `lorem ipsum …` lines (`fill: 'text'`, far more text than any budget). Built as a
 * stream, in 1 MiB steps, never holding the inflated bytes.
 */
export async function inflatingPdf(bytes: number, fill: 'blank' | 'text'): Promise<Buffer> {
  const line = Buffer.from(`BT /F1 12 Tf 72 720 Td (${'lorem ipsum '.repeat(8)}) Tj ET\n`, 'latin1');
  const step =
    fill === 'blank'
      ? Buffer.alloc(1024 * 1024, 0x20)
      : Buffer.concat(Array.from({ length: Math.floor((1024 * 1024) / line.length) }, () => line));
  const deflate = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve, reject) => deflate.on('end', resolve).on('error', reject));
  for (let written = 0; written < bytes; written += step.length)
    if (!deflate.write(step)) await new Promise((resolve) => deflate.once('drain', resolve));
  deflate.end();
  await ended;
  return pdfOf([{ data: Buffer.concat(out), filter: ' /Filter /FlateDecode' }]);
}

/** A PDF with one page per item of `pages`, each showing that text (ASCII) in one text object. */
export function textPdf(pages: readonly string[]): Buffer {
  return pdfOf(pages.map((text) => `BT /F1 12 Tf 72 720 Td ${literal(text)} Tj ET`));
}

/** A PDF of `pages` pages that draw a filled rectangle each and hold no text (like a scan without OCR). */
export function imageOnlyPdf(pages = 1): Buffer {
  return pdfOf(Array.from({ length: pages }, () => '0.5 g 72 72 468 648 re f'));
}
