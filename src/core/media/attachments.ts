/**
 * From a user's attachments to the images a chat completion takes (§4.1 image input): picks
 * the image files, at most `maxCount`, refuses by declared size before downloading, downloads
 * each with the byte cap, converts with {@link prepareImageInput}. Nothing is silently dropped:
 * every file not used is returned with a short reason, and platform-wide refusals (a missing
 * Slack scope) as one notice.
 */
import sharp from 'sharp';
import { AttachmentAccessError, type Attachment } from '../platform.ts';
import { DownloadError } from './download.ts';
import { ImageInputError, prepareImageInput, type ImageInputLimits, type PreparedImage } from './images.ts';
import { OptionError } from '../command.ts';
import type { Logger } from '../../log.ts';

/** Caps on the images of one request. */
export interface ImageAttachmentLimits extends ImageInputLimits {
  /** Most images sent with one request (`MAX_INPUT_IMAGES`, default 4). */
  maxCount: number;
}

/** A file that was not used, and why (a short phrase: "not an image"). */
export interface SkippedAttachment {
  name: string;
  reason: string;
}

/** What {@link collectImages} made of a list of attachments. */
export interface CollectedImages {
  /** Ready to send, in the order the user attached them. */
  images: PreparedImage[];
  skipped: SkippedAttachment[];
  /** Sentences about the files as a whole (each at most once), e.g. a missing scope. */
  notices: string[];
}

/** File name extensions of the formats this build of sharp decodes (heif covers AVIF). */
const IMAGE_EXTENSIONS: ReadonlySet<string> = new Set(
  Object.entries(sharp.format)
    .filter(([id, format]) => id !== 'raw' && format.input.buffer)
    .flatMap(([id]) => (id === 'jpeg' ? ['jpg', 'jpeg', 'jfif'] : id === 'tiff' ? ['tif', 'tiff'] : id === 'heif' ? ['heif', 'heic', 'avif'] : [id])),
);

/** Whether a file looks like an image by its type or name (the bytes are checked later). */
export function looksLikeImage(attachment: Pick<Attachment, 'name' | 'mimeType'>): boolean {
  if (attachment.mimeType?.toLowerCase().startsWith('image/')) return true;
  const extension = /\.([a-z0-9]+)$/i.exec(attachment.name)?.[1]?.toLowerCase();
  return extension !== undefined && IMAGE_EXTENSIONS.has(extension);
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

/**
 * Downloads and prepares the image attachments (concurrently, order kept).
 * @param attachments the message's own files first, then those of the message it replies to.
 * @throws only the abort of `signal`; every per-file failure is in the result.
 */
export async function collectImages(
  attachments: readonly Attachment[],
  limits: ImageAttachmentLimits,
  options: { signal: AbortSignal; log?: Logger },
): Promise<CollectedImages> {
  const skipped: SkippedAttachment[] = [];
  const notices = new Set<string>();
  const chosen: Attachment[] = [];
  for (const attachment of attachments) {
    if (!looksLikeImage(attachment)) skipped.push({ name: attachment.name, reason: 'not an image' });
    else if (chosen.length >= limits.maxCount) skipped.push({ name: attachment.name, reason: `over the limit of ${limits.maxCount} images a message` });
    else if (attachment.size > limits.maxBytes) skipped.push({ name: attachment.name, reason: `too large (${mb(attachment.size)}; images up to ${mb(limits.maxBytes)} are read)` });
    else chosen.push(attachment);
  }
  const results = await Promise.all(
    chosen.map(async (attachment): Promise<PreparedImage | undefined> => {
      try {
        const data = await attachment.fetch({ maxBytes: limits.maxBytes, signal: options.signal });
        return await prepareImageInput(data, attachment.name, limits);
      } catch (error) {
        if (options.signal.aborted) throw error;
        if (error instanceof AttachmentAccessError) notices.add(error.message);
        else if (error instanceof ImageInputError) skipped.push({ name: attachment.name, reason: error.reason });
        else if (error instanceof DownloadError) skipped.push({ name: attachment.name, reason: error.reason.replace(/^is /, '') });
        else throw error;
        options.log?.info({ file: attachment.name, err: error instanceof Error ? error.message : String(error) }, 'attachment not used');
        return undefined;
      }
    }),
  );
  return { images: results.filter((image): image is PreparedImage => image !== undefined), skipped, notices: [...notices] };
}

/** The line under an answer that names the files not used: "Not used: a.pdf (not an image), …". */
export function skippedLine(skipped: readonly SkippedAttachment[]): string | undefined {
  if (skipped.length === 0) return undefined;
  return `Not used: ${skipped.map((s) => `${s.name} (${s.reason})`).join(', ')}.`;
}

/** The history note for images sent with a turn: `[2 images: cat.webp, dog.gif]`. */
export function imagesNote(images: readonly Pick<PreparedImage, 'name'>[]): string | undefined {
  if (images.length === 0) return undefined;
  return `[${images.length} image${images.length > 1 ? 's' : ''}: ${images.map((i) => i.name).join(', ')}]`;
}

/**
 * The image given to an attachment option (/chat `image`, /imagine `reference_image`),
 * downloaded with the caps and converted by `prepare` (default: the chat input form).
 * @throws OptionError naming the option and why the file cannot be used; the abort of `signal`.
 */
export async function optionImage(
  option: string,
  attachment: Attachment,
  limits: ImageInputLimits,
  signal: AbortSignal,
  prepare: (data: Uint8Array, name: string, limits: ImageInputLimits) => Promise<PreparedImage> = prepareImageInput,
): Promise<PreparedImage> {
  if (!looksLikeImage(attachment)) throw new OptionError(`\`${option}\`: ${attachment.name} is not an image (JPEG, PNG, WebP, GIF, AVIF and TIFF work).`);
  if (attachment.size > limits.maxBytes) throw new OptionError(`\`${option}\`: ${attachment.name} is too large (${mb(attachment.size)}; images up to ${mb(limits.maxBytes)} are read).`);
  try {
    return await prepare(await attachment.fetch({ maxBytes: limits.maxBytes, signal }), attachment.name, limits);
  } catch (error) {
    if (signal.aborted) throw error;
    if (error instanceof ImageInputError || error instanceof DownloadError || error instanceof AttachmentAccessError) {
      throw new OptionError(`\`${option}\`: ${error.message}`);
    }
    throw error;
  }
}
