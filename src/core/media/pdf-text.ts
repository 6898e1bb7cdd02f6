/**
 * A PDF's text, with unpdf (pdf.js's serverless build: pure JavaScript, no native code, no
 * fonts or images rendered). Runs only in the bot's worker processes (image-worker.ts, op
 * `pdfText`), never on the bot's thread: parsing a hostile PDF costs what its author makes it
 * cost, and only a process can be stopped at any instruction (the pool kills it at the
 * deadline). Within that, the work is bounded here: at most `maxPages` pages are read, and
 * reading stops once `maxChars` characters are in hand.
 */

import { getDocumentProxy } from 'unpdf';

/** The caps of one extraction. */
export interface PdfTextLimits {
  /** Pages read at most (`MAX_PDF_PAGES`). */
  maxPages: number;
  /** Characters kept at most (`MAX_FILE_CHARS`, or less left of the request's budget). */
  maxChars: number;
}

/** What was read of a PDF. */
export interface PdfText {
  /** The pages' text, pages separated by a blank line; at most `maxChars` characters. */
  text: string;
  /** Pages read. */
  pages: number;
  /** Pages the document has. */
  totalPages: number;
  /** Whether text was left out: pages past `maxPages`, or characters past `maxChars`. */
  cut: boolean;
}

/**
 * Reads the text of a PDF's first pages (text items joined as pdf.js orders them, a line
 * break where pdf.js marks one), until `maxPages` pages or `maxChars` characters.
 * @throws Error (pdf.js's InvalidPDFException, PasswordException…) for bytes that are not a
 *   PDF it can open.
 */
export async function extractPdfText(data: Uint8Array, limits: PdfTextLimits): Promise<PdfText> {
  // pdf.js takes ownership of (detaches) the buffer it is given: a copy of its own.
  const document = await getDocumentProxy(new Uint8Array(data), {
    verbosity: 0,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
  });
  try {
    const totalPages = document.numPages;
    const pages = Math.min(totalPages, limits.maxPages);
    let text = '';
    let read = 0;
    while (read < pages && text.length < limits.maxChars) {
      const page = await document.getPage(read + 1);
      const content = await page.getTextContent();
      const pageText = content.items
        .map((item) => ('str' in item ? `${item.str}${item.hasEOL ? '\n' : ''}` : ''))
        .join('')
        .trim();
      page.cleanup();
      read += 1;
      if (pageText) text += `${text ? '\n\n' : ''}${pageText}`;
    }
    const cut = read < totalPages || text.length > limits.maxChars;
    return { text: text.slice(0, limits.maxChars), pages: read, totalPages, cut };
  } finally {
    await document.loadingTask.destroy();
  }
}
