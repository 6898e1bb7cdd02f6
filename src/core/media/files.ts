/**
 * From a user's attachments that are not images to the files a chat completion takes as
 * context (issue 19, item 3): text files (text/*, JSON, CSV, source code, logs: their bytes
 * must be UTF-8 text, text-files.ts) decoded here, PDFs read in a worker (pdf-text.ts through
 * the image pool: a deadline, a page and a character cap). Every file is downloaded with the
 * byte cap (`MAX_INPUT_IMAGE_BYTES`), cut to `MAX_FILE_CHARS` characters, and the files of one
 * request together to what is left of the history budget. Nothing is silently dropped or cut:
 * files not used come back with a reason, files cut with what was kept.
 */

import type { Logger } from '../../log.ts';
import { OptionError } from '../errors.ts';
import { type Attachment, AttachmentAccessError } from '../platform.ts';
import { estimateTextTokens } from '../tokens.ts';
import { isSvg, notImageReason, type SkippedAttachment } from './attachments.ts';
import { DownloadError } from './download.ts';
import type { ImagePool } from './image-pool.ts';
import { mb } from './images.ts';
import { type ContextFile, FileInputError, fileKindOf, looksLikePdf, readText } from './text-files.ts';

/** Caps on the files of one request. */
export interface FileLimits {
  /** Largest file downloaded, in bytes (`MAX_INPUT_IMAGE_BYTES`). */
  maxBytes: number;
  /** Characters read of one file (`MAX_FILE_CHARS`). */
  maxChars: number;
  /** Characters of all the request's files together ({@link filesCharBudget}). */
  maxTotalChars: number;
  /** Pages of a PDF read (`MAX_PDF_PAGES`). */
  maxPdfPages: number;
  /** How long reading one PDF may take, waiting for a worker included, in ms (`PDF_TIMEOUT_MS`). */
  pdfTimeoutMs: number;
}

/** A file used in part: its name and what was kept ("the first 100,000 characters"). */
export interface CutFile {
  name: string;
  kept: string;
}

/** What {@link collectFiles} made of a list of attachments. */
export interface CollectedFiles {
  /** Ready to send, in the order the user attached them. */
  files: ContextFile[];
  skipped: SkippedAttachment[];
  cut: CutFile[];
  /** Sentences about the files as a whole (each at most once), e.g. a missing Slack scope. */
  notices: string[];
}

/** What reading the files needs: the workers (PDFs), the user's line among them, and the request's signal. */
export interface FileWork {
  images: ImagePool;
  /** The user (`<platform>:<user id>`). */
  key: string;
  signal: AbortSignal;
  log?: Logger;
}

/** Tokens kept free of files for the channel's system prompt and the answer's context, out of the budget. */
const BUDGET_MARGIN_TOKENS = 200;

/**
 * Characters the files of a question may take: the history budget (`HISTORY_TOKEN_BUDGET`,
 * estimated tokens as tokens.ts counts them, 4 characters each) less the question's own tokens
 * and {@link BUDGET_MARGIN_TOKENS}; never below 0.
 */
export function filesCharBudget(historyTokenBudget: number, prompt: string): number {
  return Math.max(0, (historyTokenBudget - estimateTextTokens(prompt) - BUDGET_MARGIN_TOKENS) * 4);
}

/** `100000` → `100,000`. */
const count = (n: number) => n.toLocaleString('en-US');

/** One file read, or why not. */
type Read = { file: ContextFile; kept?: string } | { skipped: string } | { notice: string };

/**
 * Downloads and reads the files (concurrently, order kept): text decoded here, PDFs in a
 * worker, each cut to `limits.maxChars`, then all of them to `limits.maxTotalChars` in the
 * order attached. Images are not for this function (media/attachments.ts collectImages).
 * @throws only the abort of `work.signal`; every per-file failure is in the result.
 */
export async function collectFiles(
  attachments: readonly Attachment[],
  limits: FileLimits,
  work: FileWork,
): Promise<CollectedFiles> {
  if (attachments.some((a) => fileKindOf(a).kind === 'pdf')) work.images.warm();
  const reads = await Promise.all(attachments.map((attachment) => readFile(attachment, limits, work)));
  const result: CollectedFiles = { files: [], skipped: [], cut: [], notices: [] };
  let left = limits.maxTotalChars;
  reads.forEach((read, i) => {
    const { name } = attachments[i]!;
    if ('notice' in read) {
      if (!result.notices.includes(read.notice)) result.notices.push(read.notice);
    } else if ('skipped' in read) result.skipped.push({ name, reason: read.skipped });
    else if (left === 0) result.skipped.push({ name, reason: "no room left in the conversation's budget" });
    else {
      let { file, kept } = read;
      if (file.text.length > left) {
        file = { ...file, text: file.text.slice(0, left) };
        kept = `the first ${count(left)} characters, to fit the conversation's budget`;
      }
      left -= file.text.length;
      result.files.push(file);
      if (kept) result.cut.push({ name, kept });
    }
  });
  return result;
}

/** Downloads and reads one file. @throws only the abort of `work.signal`. */
async function readFile(attachment: Attachment, limits: FileLimits, work: FileWork): Promise<Read> {
  const { name } = attachment;
  const kind = fileKindOf(attachment);
  // SVG and image types the bot does not decode are not read as text either (SVG is never read).
  if (isSvg(attachment) || kind.kind === 'image') return { skipped: notImageReason(attachment) };
  if (kind.kind === 'unsupported') return { skipped: kind.reason };
  if (attachment.size > limits.maxBytes)
    return { skipped: `too large (${mb(attachment.size)}; files up to ${mb(limits.maxBytes)} are read)` };
  try {
    const data = await attachment.fetch({ maxBytes: limits.maxBytes, signal: work.signal });
    if (looksLikePdf(data)) return await readPdf(data, name, limits, work);
    if (kind.kind === 'pdf') return { skipped: 'not a PDF the bot can read' };
    const read = readText(data, limits.maxChars);
    if (!read) return { skipped: 'not a text file (binary data); text files, PDFs and images are read' };
    return {
      file: { name, text: read.text },
      ...(read.cut ? { kept: `the first ${count(read.text.length)} characters` } : {}),
    };
  } catch (error) {
    if (work.signal.aborted) throw error;
    work.log?.info({ file: name, err: error instanceof Error ? error.message : String(error) }, 'attachment not used');
    if (error instanceof AttachmentAccessError) return { notice: error.message };
    if (error instanceof FileInputError) return { skipped: error.reason };
    if (error instanceof DownloadError) return { skipped: error.reason.replace(/^is /, '') };
    throw error;
  }
}

/** Reads a PDF's text in a worker. @throws FileInputError (see ImagePool.pdfText); the abort of `work.signal`. */
async function readPdf(data: Uint8Array, name: string, limits: FileLimits, work: FileWork): Promise<Read> {
  const pdf = await work.images.pdfText(
    data,
    name,
    { maxPages: limits.maxPdfPages, maxChars: limits.maxChars },
    { key: work.key, deadline: Date.now() + limits.pdfTimeoutMs, signal: work.signal },
  );
  if (pdf.text.trim() === '')
    return { skipped: 'has no text layer (a scan? the bot reads the text of a PDF, not its pictures)' };
  const file = { name, text: pdf.text, pages: pdf.pages };
  if (!pdf.cut) return { file };
  const kept =
    pdf.pages < pdf.totalPages
      ? `the first ${pdf.pages} of ${pdf.totalPages} pages${pdf.text.length >= limits.maxChars ? `, ${count(pdf.text.length)} characters` : ''}`
      : `the first ${count(pdf.text.length)} characters`;
  return { file, kept };
}

/** The line under an answer that names the files read in part: "Read in part: a.log (the first 100,000 characters).". */
export function cutLine(cut: readonly CutFile[]): string | undefined {
  if (cut.length === 0) return undefined;
  return `Read in part: ${cut.map((c) => `${c.name} (${c.kept})`).join(', ')}.`;
}

/**
 * A file given to an attachment option (/chat `image`) that is not an image, read as context
 * with {@link collectFiles} (the same caps).
 * @returns the file, and the notes for under the answer (what was cut).
 * @throws OptionError naming the option and why the file cannot be used; the abort of `work.signal`.
 */
export async function optionFile(
  option: string,
  attachment: Attachment,
  limits: FileLimits,
  work: FileWork,
): Promise<{ files: ContextFile[]; notes: string[] }> {
  const { files, skipped, cut, notices } = await collectFiles([attachment], limits, work);
  if (notices.length) throw new OptionError(`\`${option}\`: ${notices[0]}`);
  if (skipped.length) throw new OptionError(`\`${option}\`: ${attachment.name} ${normalized(skipped[0]!.reason)}.`);
  const line = cutLine(cut);
  return { files, notes: line ? [line] : [] };
}

/** A skip reason as the end of a sentence after the file's name: "is not …", "has no …", "is too large …". */
function normalized(reason: string): string {
  return /^(is|has|took|could|came|points) /.test(reason) ? reason : `is ${reason}`;
}
