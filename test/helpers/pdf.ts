/**
 * Minimal valid PDFs for tests, written by hand (PDF 1.4, ISO 32000-1 §7): `textPdf(pages)`
 * makes one page per string, each with one text object in Helvetica (a standard font, so no
 * font file is embedded), and a cross-reference table with the objects' real byte offsets.
 * `imageOnlyPdf(pages)` makes pages that draw only a rectangle: no text layer, as a scan has.
 * Text is ASCII; `(`, `)` and `\` are escaped.
 */

/** A PDF string literal of ASCII `text`. */
function literal(text: string): string {
  return `(${text.replace(/[\\()]/g, (c) => `\\${c}`)})`;
}

/** A PDF file of the given page content streams (one per page), as bytes. */
function pdfOf(contents: readonly string[]): Buffer {
  const objects: string[] = [];
  const pageCount = contents.length;
  // 1: catalog, 2: pages, 3: font; then per page: the page, its content stream.
  const pageIds = contents.map((_, i) => 4 + i * 2);
  objects.push('<< /Type /Catalog /Pages 2 0 R >>');
  objects.push(`<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pageCount} >>`);
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  contents.forEach((stream, i) => {
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageIds[i]! + 1} 0 R >>`,
    );
    objects.push(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`);
  });
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A PDF with one page per item of `pages`, each showing that text (ASCII) in one text object. */
export function textPdf(pages: readonly string[]): Buffer {
  return pdfOf(pages.map((text) => `BT /F1 12 Tf 72 720 Td ${literal(text)} Tj ET`));
}

/** A PDF of `pages` pages that draw a filled rectangle each and hold no text (like a scan without OCR). */
export function imageOnlyPdf(pages = 1): Buffer {
  return pdfOf(Array.from({ length: pages }, () => '0.5 g 72 72 468 648 re f'));
}
