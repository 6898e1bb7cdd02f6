/**
 * From a user's attachments that are not images to the files a chat completion takes as
 * context (issue 19, item 3): text files (text/*, JSON, CSV, source code, logs: their bytes
 * must be UTF-8 text, text-files.ts) decoded here, PDFs read in a PDF worker (pdf-text.ts
 * through the PDF pool: apart from the image workers, a deadline, a page, a character and a
 * memory cap). Nothing is silently dropped or cut: files not used come back with a reason,
 * files cut with what was kept.
 *
 * Everything is bounded before it is spent (issue 38):
 * - at most `maxFiles` files of a message are read (the rest named as over the limit), each
 *   declared at most `maxBytes`, all together downloading at most `maxMessageBytes`;
 * - the files are read one after another, in the order attached, each given what is left of the
 *   request's character budget (`maxTotalChars`, the history budget less the question) before
 *   it is downloaded or parsed: a text file is downloaded only as far as that budget can use
 *   (ranged downloads: about one byte a character for ASCII, three at most), a PDF is parsed
 *   for at most that many characters, and a file that finds no budget left is not downloaded;
 * - the budget holds the whole text part (its name line and fences, text-files.ts `fitPart`);
 * - the message's PDFs share one deadline, `pdfTimeoutMs` from the first.
 */

import type { CoreLimits } from '../../config.ts';
import type { Logger } from '../../log.ts';
import { OptionError } from '../errors.ts';
import { type Sentence, sentence } from '../i18n/words.ts';
import { type Attachment, AttachmentAccessError } from '../platform.ts';
import { estimateTextTokens } from '../tokens.ts';
import { isSvg, notImageReason, optionRefused, type SkippedAttachment } from './attachments.ts';
import { DownloadError } from './download.ts';
import { fileList } from './file-lines.ts';
import type { ImagePool } from './image-pool.ts';
import { megabytes, type Reason, reason, reasonSentence } from './reasons.ts';
import {
  type ContextFile,
  FileInputError,
  fileKindOf,
  filePart,
  fitPart,
  looksLikePdf,
  readText,
} from './text-files.ts';

/** Caps on the files of one request. */
export interface FileLimits {
  /** Largest file downloaded, in bytes (`MAX_INPUT_IMAGE_BYTES`). */
  maxBytes: number;
  /** Characters read of one file (`MAX_FILE_CHARS`). */
  maxChars: number;
  /** Characters of all the request's file parts together ({@link filesCharBudget}). */
  maxTotalChars: number;
  /** Files of one message read, at most (`MAX_FILES_PER_MESSAGE`). */
  maxFiles: number;
  /** Bytes downloaded for one message's files together, at most (`MAX_FILE_BYTES_PER_MESSAGE`). */
  maxMessageBytes: number;
  /** Pages of a PDF read (`MAX_PDF_PAGES`). */
  maxPdfPages: number;
  /** How long the message's PDFs may take together, waiting for a worker included, in ms (`PDF_TIMEOUT_MS`). */
  pdfTimeoutMs: number;
}

/** A file used in part: its name and what was kept ("the first 100,000 characters": `media.kept.*`). */
export interface CutFile {
  name: string;
  kept: Sentence;
}

/** What {@link collectFiles} made of a list of attachments. */
export interface CollectedFiles {
  /** Ready to send, in the order the user attached them. */
  files: ContextFile[];
  skipped: SkippedAttachment[];
  cut: CutFile[];
  /** Sentences about the files as a whole (each at most once), e.g. a missing Slack scope. */
  notices: Sentence[];
}

/** What reading the files needs: the PDF workers, the user's line among them, and the request's signal. */
export interface FileWork {
  pdfs: ImagePool;
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

/** The {@link FileLimits} of a question `prompt`, from the core's limits and the byte cap of one file (`MAX_INPUT_IMAGE_BYTES`). */
export function fileLimits(limits: CoreLimits, maxBytes: number, prompt: string): FileLimits {
  return { ...limits.files, maxBytes, maxTotalChars: filesCharBudget(limits.historyTokenBudget, prompt) };
}

/** What was kept of a file cut to `count` characters, `budget` when the conversation's budget cut it: "the first 100,000 characters". */
const keptChars = (count: number, budget: boolean) =>
  sentence('media.kept.chars', { count, budget: budget ? 'yes' : 'no' });

/** One file read, or why not. */
type Read = { file: ContextFile; kept?: Sentence } | { skipped: Reason } | { notice: Sentence };

/** What is left for the message's files as they are read in turn. */
interface Left {
  /** Characters of the request's budget. */
  chars: number;
  /** Bytes of the message's download budget. */
  bytes: number;
  /** When the message's PDFs must be read by (ms since the epoch), set by the first. */
  pdfDeadline?: number;
}

/** Why a file found no room. */
const NO_ROOM = reason('media.reason.no_room');

/**
 * Reads the files one after another in the order attached (see the file's comment for every
 * bound): text decoded here, PDFs in a PDF worker, each cut to `limits.maxChars` and to what is
 * left of `limits.maxTotalChars`. Images are not for this function (media/attachments.ts collectImages).
 * @throws only the abort of `work.signal`; every per-file failure is in the result.
 */
export async function collectFiles(
  attachments: readonly Attachment[],
  limits: FileLimits,
  work: FileWork,
): Promise<CollectedFiles> {
  const result: CollectedFiles = { files: [], skipped: [], cut: [], notices: [] };
  const chosen: Attachment[] = [];
  for (const attachment of attachments) {
    const refused = refusal(attachment, limits, chosen.length);
    if (refused) result.skipped.push({ name: attachment.name, reason: refused });
    else chosen.push(attachment);
  }
  if (chosen.some((a) => fileKindOf(a).kind === 'pdf')) work.pdfs.warm();
  const left: Left = { chars: limits.maxTotalChars, bytes: limits.maxMessageBytes };
  for (const attachment of chosen) {
    const { name } = attachment;
    const read = left.chars > 0 ? await readFile(attachment, limits, work, left) : { skipped: NO_ROOM };
    if ('notice' in read) {
      if (!result.notices.some((n) => n.key === read.notice.key)) result.notices.push(read.notice);
      continue;
    }
    if ('skipped' in read) {
      result.skipped.push({ name, reason: read.skipped });
      continue;
    }
    const fitted = fitPart(read.file, left.chars);
    if (!fitted) {
      result.skipped.push({ name, reason: NO_ROOM });
      continue;
    }
    let { kept } = read;
    if (fitted.text.length < read.file.text.length) kept = keptChars(fitted.text.length, true);
    left.chars -= filePart(fitted).length;
    result.files.push(fitted);
    if (kept) result.cut.push({ name, kept });
  }
  return result;
}

/** Why a file is not read at all, before any download; undefined when it is read. */
function refusal(attachment: Attachment, limits: FileLimits, chosen: number): Reason | undefined {
  const kind = fileKindOf(attachment);
  // SVG and image types the bot does not decode are not read as text either (SVG is never read).
  if (isSvg(attachment) || kind.kind === 'image') return notImageReason(attachment);
  if (kind.kind === 'unsupported') return kind.reason;
  if (attachment.size > limits.maxBytes)
    return reason('media.reason.too_large', {
      size: megabytes(attachment.size),
      max: megabytes(limits.maxBytes),
      what: 'file',
    });
  if (chosen >= limits.maxFiles) return reason('media.reason.over_count', { max: limits.maxFiles, what: 'file' });
  return undefined;
}

/** The reason for a file past the message's download budget. */
const overMessageBytes = (limits: FileLimits) =>
  reason('media.reason.over_message_bytes', { max: megabytes(limits.maxMessageBytes) });

/**
 * Downloads and reads one file within what is `left` (which it lowers by the bytes downloaded).
 * @throws only the abort of `work.signal`.
 */
async function readFile(attachment: Attachment, limits: FileLimits, work: FileWork, left: Left): Promise<Read> {
  const { name } = attachment;
  try {
    if (fileKindOf(attachment).kind === 'pdf') return await readPdf(attachment, limits, work, left);
    const chars = Math.min(limits.maxChars, left.chars);
    // The first bytes: one a character (all of it for ASCII), and enough to tell a PDF by.
    const first = await fetchRange(attachment, { start: 0, length: Math.max(chars, 1024) }, limits, work, left);
    if (first === undefined) return { skipped: overMessageBytes(limits) };
    if (looksLikePdf(first.data)) return await readPdf(attachment, limits, work, left);
    let data = first.data;
    let more = first.more;
    const partial = more ? readText(data, chars, { more }) : undefined;
    if (partial && partial.text.length < chars) {
      // Characters of more than one byte: the rest of the budget, at most 3 bytes each.
      const rest = await fetchRange(
        attachment,
        { start: data.byteLength, length: (chars - partial.text.length) * 3 + 3 },
        limits,
        work,
        left,
      );
      if (rest) {
        data = Buffer.concat([data, rest.data]);
        more = rest.more;
      }
    }
    const read = readText(data, chars, { more });
    if (!read) return { skipped: reason('media.reason.binary') };
    if (!read.cut) return { file: { name, text: read.text } };
    return { file: { name, text: read.text }, kept: keptChars(read.text.length, chars < limits.maxChars) };
  } catch (error) {
    if (work.signal.aborted) throw error;
    work.log?.info({ file: name, err: error instanceof Error ? error.message : String(error) }, 'attachment not used');
    if (error instanceof AttachmentAccessError) return { notice: error.sentence };
    if (error instanceof FileInputError) return { skipped: error.reason };
    if (error instanceof DownloadError) return { skipped: error.reason };
    throw error;
  }
}

/**
 * Downloads bytes [start, start + length) of a file, within the message's byte budget.
 * @returns the bytes and whether the file goes on past them (as far as its declared size or the
 *   bytes received tell); undefined when no byte of the budget is left.
 * @throws DownloadError, AttachmentAccessError; the abort of `work.signal`.
 */
async function fetchRange(
  attachment: Attachment,
  range: { start: number; length: number },
  limits: FileLimits,
  work: FileWork,
  left: Left,
): Promise<{ data: Uint8Array; more: boolean } | undefined> {
  const length = Math.min(range.length, left.bytes, limits.maxBytes - range.start);
  if (length <= 0) return undefined;
  const data = await attachment.fetch({ maxBytes: length, signal: work.signal, range: { ...range, length } });
  left.bytes -= data.byteLength;
  const end = range.start + data.byteLength;
  const more = attachment.size > 0 ? attachment.size > end : data.byteLength === length;
  return { data, more };
}

/**
 * Downloads a PDF whole (within the message's byte budget) and reads its text in a PDF worker,
 * at most what is left of the character budget, by the message's PDF deadline.
 * @throws FileInputError (see ImagePool.pdfText); DownloadError; the abort of `work.signal`.
 */
async function readPdf(attachment: Attachment, limits: FileLimits, work: FileWork, left: Left): Promise<Read> {
  const { name } = attachment;
  if (attachment.size > left.bytes) return { skipped: overMessageBytes(limits) };
  const maxBytes = Math.min(limits.maxBytes, left.bytes);
  let data: Uint8Array;
  try {
    data = await attachment.fetch({ maxBytes, signal: work.signal });
  } catch (error) {
    if (error instanceof DownloadError && error.code === 'too_large' && maxBytes < limits.maxBytes)
      return { skipped: overMessageBytes(limits) };
    throw error;
  }
  left.bytes -= data.byteLength;
  if (!looksLikePdf(data)) return { skipped: reason('media.reason.not_pdf') };
  const maxChars = Math.min(limits.maxChars, left.chars);
  left.pdfDeadline ??= Date.now() + limits.pdfTimeoutMs;
  const pdf = await work.pdfs.pdfText(
    data,
    name,
    { maxPages: limits.maxPdfPages, maxChars },
    { key: work.key, deadline: left.pdfDeadline, signal: work.signal },
  );
  if (pdf.text.trim() === '') return { skipped: reason('media.reason.no_text_layer') };
  const file = { name, text: pdf.text, pages: pdf.pages };
  if (!pdf.cut) return { file };
  const budget = maxChars < limits.maxChars ? 'yes' : 'no';
  const pages = { pages: pdf.pages, total: pdf.totalPages };
  const kept =
    pdf.pages < pdf.totalPages
      ? pdf.text.length >= maxChars
        ? sentence('media.kept.pages_chars', { ...pages, count: pdf.text.length, budget })
        : sentence('media.kept.pages', pages)
      : keptChars(pdf.text.length, budget === 'yes');
  return { file, kept };
}

/** The line under an answer that names the files read in part: "Read in part: a.log (the first 100,000 characters)." (`media.read_in_part`). */
export function cutLine(cut: readonly CutFile[]): Sentence | undefined {
  if (cut.length === 0) return undefined;
  return sentence('media.read_in_part', { files: fileList(cut.map((c) => ({ name: c.name, detail: c.kept }))) });
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
): Promise<{ files: ContextFile[]; notes: Sentence[] }> {
  const { files, skipped, cut, notices } = await collectFiles([attachment], limits, work);
  if (notices.length) throw new OptionError(optionRefused(option, notices[0]!));
  if (skipped.length) throw new OptionError(optionRefused(option, reasonSentence(skipped[0]!.reason, attachment.name)));
  const line = cutLine(cut);
  return { files, notes: line ? [line] : [] };
}
