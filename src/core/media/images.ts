/**
 * Images as the rest of the bot sees them: the shapes of a user's image ready for a chat
 * completion and of a generated image, the errors that name a file for the user, the limits,
 * and the checks that need no decoder (the format read from the first bytes, `hxd` values).
 * Nothing here decodes pixels: sharp runs only in the image workers (image-pool.ts, which
 * runs image-ops.ts in processes of their own), never on the bot's threads.
 */

import type { Logger } from '../../log.ts';
import { english, type Sentence, sentence } from '../i18n/words.ts';
import type { Images } from '../service/client.ts';
import { InvalidResponseError } from '../service/errors.ts';
import {
  ASPECT_RATIO_SIZES,
  type AspectRatio,
  type ImageGenerationResult,
  type ImageResponseFormat,
} from '../service/schemas.ts';
import { megabytes, READABLE_FORMATS, type Reason, reason, reasonSentence } from './reasons.ts';

/** §4.1 image input rule 3 / §8: each image counts about this many tokens in a budget. */
export const IMAGE_TOKENS = 85;

/** §4.1 image input rule 2: the longest side sent, in px. */
export const MAX_IMAGE_SIDE = 1024;

/** The longest side of a reference image sent to image generation, in px (the largest output side, §4.3). */
export const MAX_REFERENCE_SIDE = 1216;

/** The image workers' scheduling priority (nice): below the bot's 0, so that a long decode takes only the CPU the bot leaves. */
export const WORKER_NICE = 10;

/** The argument that makes the worker's file print its own private memory (VmData, KiB) and end (image-processes.ts runtimeReserveKiB). */
export const MEASURE_RESERVE_ARG = '--measure-reserve';

/**
 * The PDF workers' scheduling priority (nice): a little below the image workers' (their CPU
 * weights are about 70 to 110), so that where a PDF and an image compete for a core the image,
 * whose whole request has `IMAGE_PREP_TIMEOUT_MS`, gets most of it; not so far below that a PDF
 * (and its worker's start) starves on a busy machine.
 */
export const PDF_WORKER_NICE = 12;

/** The most memory one worker process may hold by default, in MiB (`WORKER_MEMORY_MB`). */
export const WORKER_MEMORY_MB = 512;

/** Limits on an image a user sends (decompression-bomb and oversize guards). */
export interface ImageInputLimits {
  /** Largest file accepted, in bytes; default 20 MiB. */
  maxBytes: number;
  /** Largest decoded size accepted, in pixels (width × height); default 40 megapixels. */
  maxPixels: number;
}

// maxBytes is MAX_INPUT_IMAGE_BYTES's default (config-env.ts), written here too so that the image
// worker does not load the configuration's schemas; test/core/config.test.ts checks the two agree.
export const DEFAULT_IMAGE_INPUT_LIMITS: ImageInputLimits = { maxBytes: 20 * 1024 * 1024, maxPixels: 40_000_000 };

/**
 * A user's image that cannot be used: `reason` says why (reasons.ts: a list's phrase, "not an
 * image the bot can read", or a sentence naming the file); `message` is that sentence in English, for logs.
 */
export class ImageInputError extends Error {
  /**
   * @param file the file's name, as users read it.
   * @param reason why it cannot be used (`media.reason.*`).
   */
  constructor(
    readonly file: string,
    readonly reason: Reason,
  ) {
    super(english.say(reasonSentence(reason, file)));
    this.name = 'ImageInputError';
  }

  /** The sentence for the user, naming the file. */
  get sentence(): Sentence {
    return reasonSentence(this.reason, this.file);
  }
}

/** An image ready for a chat completion (§2.1 `image_url` part). */
export interface PreparedImage {
  /** `data:image/jpeg;base64,…` or `data:image/png;base64,…`. */
  url: string;
  mimeType: 'image/jpeg' | 'image/png';
  /** Size after resizing, in px. */
  width: number;
  height: number;
  /** Size of the encoded image, in bytes. */
  bytes: number;
  /** The user's file name, for history notes (`[2 images: cat.webp, dog.gif]`). */
  name: string;
}

/** A decoded generated image. */
export interface GeneratedImage {
  data: Buffer;
  /** Format as sharp read it: `png`, `jpeg`, `webp`, … */
  format: string;
  mimeType: string;
  /** Real pixel size, read from the bytes. */
  width: number;
  height: number;
  /** Which field of the result it came from. */
  source: ImageResponseFormat;
  revisedPrompt?: string;
}

/** A generated image made to fit an upload limit, and what was done to it. */
export interface FittedImage {
  data: Buffer;
  format: string;
  mimeType: string;
  width: number;
  height: number;
  /** Undefined when the image fit as it was; else the note saying what changed (`media.reencoded`: "…re-encoded as JPEG (85%)…"). */
  reencoded: Sentence | undefined;
}

/** An image that fits as it is, as a {@link FittedImage} (nothing re-encoded). */
export function unchangedFit(
  image: Pick<GeneratedImage, 'data' | 'format' | 'mimeType' | 'width' | 'height'>,
): FittedImage {
  const { data, format, mimeType, width, height } = image;
  return { data, format, mimeType, width, height, reencoded: undefined };
}

export const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

/** The platform takes no file this large, however the image is re-encoded. `message` is for the user. */
export class ImageTooLargeError extends Error {
  /** The sentence for the user (`media.image_too_large_for_server`). */
  readonly sentence: Sentence;

  /** @param said the sentence ({@link ImageTooLargeError.of} builds it). */
  constructor(said: Sentence) {
    super(english.say(said));
    this.sentence = said;
    this.name = 'ImageTooLargeError';
  }

  /** The error for an image of `bytes` that cannot be made to fit `maxBytes` (both in bytes). */
  static of(bytes: number, maxBytes: number): ImageTooLargeError {
    return new ImageTooLargeError(
      sentence('media.image_too_large_for_server', { size: megabytes(bytes), max: megabytes(maxBytes) }),
    );
  }
}

/**
 * The raster formats the bot decodes, as sharp names them. Each one's decoding cost is bounded
 * by its pixel count, which is checked from the header before any pixel is decoded. Formats
 * whose cost is not (SVG and other vector or document formats: a 200-byte SVG filter can
 * render for minutes) are refused from their first bytes, before any decoder sees them.
 */
export type RasterFormat = 'jpeg' | 'png' | 'gif' | 'webp' | 'tiff' | 'heif';

/** What the bot tells a user about a file that is not one of its {@link RasterFormat}s. */
export { READABLE_FORMATS };

/** ISO base media brands of HEIF and AVIF still images (the `ftyp` box). */
const HEIF_BRANDS: ReadonlySet<string> = new Set([
  'avif',
  'avis',
  'heic',
  'heix',
  'heim',
  'heis',
  'hevc',
  'hevx',
  'mif1',
  'msf1',
]);

/**
 * The raster format of an image, read from its first bytes (magic numbers), or undefined for
 * anything else (SVG, XML, HTML, PDF, video, text…). Reads at most 12 bytes: O(1).
 */
export function sniffRasterFormat(data: Uint8Array): RasterFormat | undefined {
  const b = data;
  const ascii = (from: number, to: number) => String.fromCharCode(...b.subarray(from, to));
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (
    b.length >= 8 &&
    b[0] === 0x89 &&
    ascii(1, 4) === 'PNG' &&
    b[4] === 0x0d &&
    b[5] === 0x0a &&
    b[6] === 0x1a &&
    b[7] === 0x0a
  )
    return 'png';
  if (b.length >= 6 && (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a')) return 'gif';
  if (b.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  if (
    b.length >= 4 &&
    ((b[0] === 0x49 && b[1] === 0x49 && b[2] === 0x2a && b[3] === 0x00) ||
      (b[0] === 0x4d && b[1] === 0x4d && b[2] === 0x00 && b[3] === 0x2a))
  )
    return 'tiff';
  if (b.length >= 12 && ascii(4, 8) === 'ftyp' && HEIF_BRANDS.has(ascii(8, 12))) return 'heif';
  return undefined;
}

/** Whether the first non-blank bytes look like markup (`<svg`, `<?xml`, `<html`): said in the refusal. */
function looksLikeMarkup(data: Uint8Array): boolean {
  for (let i = 0; i < Math.min(data.length, 512); i++) {
    const c = data[i]!;
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0xef || c === 0xbb || c === 0xbf) continue;
    return c === 0x3c;
  }
  return false;
}

/**
 * Refuses a user's file that is not one of the {@link RasterFormat}s, from its first bytes.
 * @returns the format.
 * @throws ImageInputError naming the file (an SVG drawing is named as such).
 */
export function checkRasterInput(data: Uint8Array, name: string): RasterFormat {
  const format = sniffRasterFormat(data);
  if (format) return format;
  if (looksLikeMarkup(data) && /<svg[\s>]/i.test(Buffer.from(data.subarray(0, 4096)).toString('latin1')))
    throw new ImageInputError(name, reason('media.reason.svg', { formats: READABLE_FORMATS }));
  throw new ImageInputError(name, reason('media.reason.unreadable_image', { formats: READABLE_FORMATS }));
}

/**
 * Decodes an `hxd` value. Its shape is "not shown" in the spec (§4.3); assumption: the image
 * bytes as a hex string (optionally `0x`-prefixed), else base64 (optionally a data URL).
 * @throws InvalidResponseError when it is neither.
 */
export function decodeHxd(value: string): Buffer {
  const text = value.trim().replace(/^0x/i, '');
  if (text.length % 2 === 0 && /^[0-9a-f]+$/i.test(text)) return Buffer.from(text, 'hex');
  const b64 = text.replace(/^data:[^,]*;base64,/, '');
  if (/^[A-Za-z0-9+/\r\n]+=*$/.test(b64)) return Buffer.from(b64, 'base64');
  throw new InvalidResponseError('the hxd image field is neither hex nor base64');
}

/**
 * Reads a generated image's format and size from its bytes (in an image worker: see
 * ImagePool.describe). @throws InvalidResponseError when the bytes are not an image.
 */
export type DescribeImage = (data: Buffer, source: ImageResponseFormat) => Promise<GeneratedImage>;

/**
 * Reads every image of a §2.4 result: `url` items are fetched through the view endpoint
 * (with auth), `b64_json` decoded, `hxd` decoded (see {@link decodeHxd}). An item carrying
 * several formats yields one image per format present.
 * @param options.describe reads each image's format and size, refusing what is not a raster image
 *   (ImagePool.describe: off the bot's threads).
 * @param options.expected the requested aspect ratio; a different real size is logged, never refused
 *   (`upscaled` and other servers may return other sizes).
 * @throws InvalidResponseError when an item holds no image or bytes that are not an image.
 */
export async function imagesFromResult(
  result: ImageGenerationResult,
  images: Images,
  options: { describe: DescribeImage; expected?: AspectRatio; log?: Logger; signal?: AbortSignal },
): Promise<GeneratedImage[]> {
  const out: GeneratedImage[] = [];
  for (const item of result.data) {
    const sources: Array<[ImageResponseFormat, () => Promise<Buffer>]> = [];
    if (item.b64_json)
      sources.push(['b64_json', async () => Buffer.from(item.b64_json!.replace(/^data:[^,]*;base64,/, ''), 'base64')]);
    if (item.hxd) sources.push(['hxd', async () => decodeHxd(item.hxd!)]);
    if (item.url) sources.push(['url', async () => (await images.view(item.url!, { signal: options.signal })).data]);
    if (sources.length === 0) throw new InvalidResponseError('an image result item has no url, b64_json or hxd');
    for (const [source, load] of sources) {
      const data = await load();
      const image = await options.describe(data, source);
      if (item.revised_prompt) image.revisedPrompt = item.revised_prompt;
      if (options.expected) {
        const want = ASPECT_RATIO_SIZES[options.expected];
        if (image.width !== want.width || image.height !== want.height) {
          options.log?.info(
            { expected: want, got: { width: image.width, height: image.height }, source },
            'generated image has an unexpected size',
          );
        }
      }
      out.push(image);
    }
  }
  return out;
}
