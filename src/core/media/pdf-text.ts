/**
 * A PDF's text, with unpdf (pdf.js's serverless build: pure JavaScript, no native code, no
 * fonts or images rendered). Runs only in the bot's worker processes (image-worker.ts, op
 * `pdfText`), never on the bot's thread: parsing a hostile PDF costs what its author makes it
 * cost, and only a process can be stopped at any instruction (the pool kills it at the
 * deadline, and ends it past its memory cap: image-processes.ts). Within that, the work is
 * bounded here: at most `maxPages` pages are read, and reading stops once `maxChars` characters
 * are in hand — within a page too: its text is read as pdf.js's stream of text chunks
 * (`streamTextContent`), and that stream is cancelled at the budget, which stops pdf.js
 * decoding the page's content any further (its evaluator gives up at its next time slot). That
 * holds where pdf.js inflates as it parses, i.e. without DecompressionStream, which the worker
 * removes before loading this module (image-worker.ts): with it, pdf.js inflates a content
 * stream whole before reading a byte of it.
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

/** A page of an opened document (unpdf's pdf.js `PDFPageProxy`), as far as it is read here. */
type Page = Awaited<ReturnType<Awaited<ReturnType<typeof getDocumentProxy>>['getPage']>>;

/**
 * A page's text (items joined as pdf.js orders them, a line break where it marks one), read
 * chunk by chunk until its end or until more than `budget` characters are in hand, when the
 * stream is cancelled. @throws what pdf.js throws for the page's content.
 */
async function pageTextUpTo(page: Page, budget: number): Promise<string> {
  const reader = page.streamTextContent().getReader();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text;
      for (const item of value.items) if ('str' in item) text += `${item.str}${item.hasEOL ? '\n' : ''}`;
      if (text.length > budget) return text;
    }
  } finally {
    // Stops pdf.js reading the page's content past what was taken (no-op after its end); pdf.js
    // wants an Error as the reason (without one its cancel fails before marking the stream closed).
    await reader.cancel(new Error('the text budget is reached')).catch(() => undefined);
  }
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
      const pageText = (await pageTextUpTo(page, limits.maxChars - text.length)).trim();
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
