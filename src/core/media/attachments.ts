/**
 * From a user's attachments to the images a chat completion takes (§4.1 image input): picks
 * the image files, at most `maxCount`, refuses by declared size before downloading, downloads
 * each with the byte cap, converts each in an image worker (image-pool.ts: off the bot's
 * threads, all of one request within one deadline). Nothing is silently dropped: every file
 * not used is returned with a short reason, and platform-wide refusals (a missing Slack scope)
 * as one notice.
 */

import type { Logger } from '../../log.ts';
import { OptionError } from '../errors.ts';
import { type Sentence, sentence } from '../i18n/words.ts';
import { type Attachment, AttachmentAccessError } from '../platform.ts';
import { DownloadError } from './download.ts';
import { fileList } from './file-lines.ts';
import type { ImagePool } from './image-pool.ts';
import { ImageInputError, type ImageInputLimits, type PreparedImage } from './images.ts';
import { megabytes, READABLE_FORMATS, type Reason, reason, reasonLine, reasonSentence } from './reasons.ts';

/** Caps on the images of one request. */
export interface ImageAttachmentLimits extends ImageInputLimits {
  /** Most images sent with one request (`MAX_INPUT_IMAGES`, default 4). */
  maxCount: number;
}

/** A file that was not used, and why (reasons.ts: "not an image"). */
export interface SkippedAttachment {
  name: string;
  reason: Reason;
}

/** What {@link collectImages} made of a list of attachments. */
export interface CollectedImages {
  /** Ready to send, in the order the user attached them. */
  images: PreparedImage[];
  /** The attachment each image was made from: `sources[i]` is `images[i]`'s (the same object as given). */
  sources: Attachment[];
  skipped: SkippedAttachment[];
  /** Sentences about the files as a whole (each at most once), e.g. a missing scope. */
  notices: Sentence[];
}

/** File name extensions of the raster formats the bot reads (images.ts RasterFormat; heif covers AVIF). */
const IMAGE_EXTENSIONS: ReadonlySet<string> = new Set([
  'jpg',
  'jpeg',
  'jfif',
  'png',
  'gif',
  'webp',
  'tif',
  'tiff',
  'heif',
  'heic',
  'avif',
]);

/** The extension of a file name, lower case, or undefined. O(length). */
function extensionOf(name: string): string | undefined {
  const dot = name.lastIndexOf('.');
  return dot >= 0 && dot < name.length - 1 ? name.slice(dot + 1).toLowerCase() : undefined;
}

/** Whether a file is an SVG drawing by its type or name: refused without a download (its render time is unbounded). */
export function isSvg(attachment: Pick<Attachment, 'name' | 'mimeType'>): boolean {
  return (
    attachment.mimeType?.toLowerCase().startsWith('image/svg') === true ||
    ['svg', 'svgz'].includes(extensionOf(attachment.name) ?? '')
  );
}

/** Whether a file looks like an image the bot reads by its type or name (the bytes are checked later). */
export function looksLikeImage(attachment: Pick<Attachment, 'name' | 'mimeType'>): boolean {
  if (isSvg(attachment)) return false;
  if (attachment.mimeType?.toLowerCase().startsWith('image/')) return true;
  const extension = extensionOf(attachment.name);
  return extension !== undefined && IMAGE_EXTENSIONS.has(extension);
}

/** The short reason a file that is not an image the bot reads is skipped ("an SVG drawing, …"). */
export function notImageReason(attachment: Pick<Attachment, 'name' | 'mimeType'>): Reason {
  return reason(isSvg(attachment) ? 'media.reason.svg' : 'media.reason.not_image', { formats: READABLE_FORMATS });
}

/** What converting a request's images needs: the workers, the user's line among them, and the request's signal. */
export interface ImageWork {
  images: ImagePool;
  /** The user (`<platform>:<user id>`): users take turns in the workers' line. */
  key: string;
  signal: AbortSignal;
  log?: Logger;
}

/**
 * Downloads and prepares the image attachments (concurrently, order kept), every conversion
 * in an image worker and all of them within one deadline (`IMAGE_PREP_TIMEOUT_MS` from the
 * first file downloaded): a file past it is skipped as "took too long to process".
 * @param attachments the message's own files first, then those of the message it replies to.
 * @throws only the abort of `work.signal`; every per-file failure is in the result.
 */
export async function collectImages(
  attachments: readonly Attachment[],
  limits: ImageAttachmentLimits,
  work: ImageWork,
): Promise<CollectedImages> {
  /** One deadline for the request's conversions, from the first file downloaded. */
  let deadline: number | undefined;
  const skipped: SkippedAttachment[] = [];
  // One notice per kind (its catalog key): said once however many files it concerns.
  const notices = new Map<string, Sentence>();
  const chosen: Attachment[] = [];
  for (const attachment of attachments) {
    if (!looksLikeImage(attachment)) skipped.push({ name: attachment.name, reason: notImageReason(attachment) });
    else if (chosen.length >= limits.maxCount)
      skipped.push({
        name: attachment.name,
        reason: reason('media.reason.over_count', { max: limits.maxCount, what: 'image' }),
      });
    else if (attachment.size > limits.maxBytes)
      skipped.push({
        name: attachment.name,
        reason: tooLarge(attachment.size, limits.maxBytes),
      });
    else chosen.push(attachment);
  }
  if (chosen.length > 0) work.images.warm();
  const results = await Promise.all(
    chosen.map(async (attachment): Promise<PreparedImage | undefined> => {
      try {
        const data = await attachment.fetch({ maxBytes: limits.maxBytes, signal: work.signal });
        deadline ??= work.images.deadline();
        return await work.images.prepareInput(data, attachment.name, limits, {
          key: work.key,
          deadline,
          signal: work.signal,
        });
      } catch (error) {
        if (work.signal.aborted) throw error;
        if (error instanceof AttachmentAccessError) notices.set(error.sentence.key, error.sentence);
        else if (error instanceof ImageInputError) skipped.push({ name: attachment.name, reason: error.reason });
        else if (error instanceof DownloadError) skipped.push({ name: attachment.name, reason: error.reason });
        else throw error;
        work.log?.info(
          { file: attachment.name, err: error instanceof Error ? error.message : String(error) },
          'attachment not used',
        );
        return undefined;
      }
    }),
  );
  const used = results.flatMap((image, i) => (image ? [{ image, source: chosen[i]! }] : []));
  return {
    images: used.map((u) => u.image),
    sources: used.map((u) => u.source),
    skipped,
    notices: [...notices.values()],
  };
}

/** The line under an answer that names the files not used: "Not used: a.pdf (not an image), …" (`media.not_used`; at most 5 named: file-lines.ts). */
export function skippedLine(skipped: readonly SkippedAttachment[]): Sentence | undefined {
  if (skipped.length === 0) return undefined;
  return sentence('media.not_used', {
    files: fileList(skipped.map((s) => ({ name: s.name, detail: reasonLine(s.reason) }))),
  });
}

/** An image over the bytes read: "too large (2.0 MB; images up to 1.0 MB are read)". */
function tooLarge(size: number, maxBytes: number): Reason {
  return reason('media.reason.too_large', { size: megabytes(size), max: megabytes(maxBytes), what: 'image' });
}

/** The history note for images sent with a turn: `[2 images: cat.webp, dog.gif]`. */
export function imagesNote(images: readonly Pick<PreparedImage, 'name'>[]): string | undefined {
  if (images.length === 0) return undefined;
  return `[${images.length} image${images.length > 1 ? 's' : ''}: ${images.map((i) => i.name).join(', ')}]`;
}

/**
 * The image given to an attachment option (/chat `image`, /imagine `reference_image`),
 * downloaded with the caps and converted in an image worker, as the chat input form
 * (`input`) or a reference image (`reference`), within `IMAGE_PREP_TIMEOUT_MS`.
 * @throws OptionError naming the option and why the file cannot be used; the abort of `work.signal`.
 */
export async function optionImage(
  option: string,
  attachment: Attachment,
  limits: ImageInputLimits,
  work: ImageWork,
  form: 'input' | 'reference' = 'input',
): Promise<PreparedImage> {
  const { signal } = work;
  if (!looksLikeImage(attachment)) {
    throw new OptionError(optionRefused(option, reasonSentence(notImageReason(attachment), attachment.name)));
  }
  if (attachment.size > limits.maxBytes)
    throw new OptionError(
      optionRefused(option, reasonSentence(tooLarge(attachment.size, limits.maxBytes), attachment.name)),
    );
  work.images.warm();
  try {
    const data = await attachment.fetch({ maxBytes: limits.maxBytes, signal });
    const job = { key: work.key, signal };
    return await (form === 'reference'
      ? work.images.prepareReference(data, attachment.name, limits, job)
      : work.images.prepareInput(data, attachment.name, limits, job));
  } catch (error) {
    if (signal.aborted) throw error;
    if (error instanceof ImageInputError || error instanceof DownloadError)
      throw new OptionError(optionRefused(option, error.sentence));
    if (error instanceof AttachmentAccessError) throw new OptionError(optionRefused(option, error.sentence));
    throw error;
  }
}

/**
 * The refusal of a file given to an attachment option (`media.option_refused`): "`image`: a.svg is an SVG drawing, …".
 * @param said the sentence naming the file and why it is refused.
 */
export function optionRefused(option: string, said: Sentence): Sentence {
  return sentence('media.option_refused', { option, reason: said });
}
