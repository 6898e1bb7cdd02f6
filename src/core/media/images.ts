/**
 * Images with sharp: generated images (service → file to post) and, later, attachments
 * (user → data URL for vision).
 */
import sharp, { type Metadata } from 'sharp';
import type { Images } from '../service/client.ts';
import { InvalidResponseError } from '../service/errors.ts';
import { ASPECT_RATIO_SIZES, type AspectRatio, type ImageGenerationResult, type ImageResponseFormat } from '../service/schemas.ts';
import type { Logger } from '../../log.ts';

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
 * Reads every image of a §2.4 result: `url` items are fetched through the view endpoint
 * (with auth), `b64_json` decoded, `hxd` decoded (see {@link decodeHxd}). An item carrying
 * several formats yields one image per format present.
 * @param expected the requested aspect ratio; a different real size is logged, never refused
 *   (`upscaled` and other servers may return other sizes).
 * @throws InvalidResponseError when an item holds no image or bytes that are not an image.
 */
export async function imagesFromResult(
  result: ImageGenerationResult,
  images: Images,
  options: { expected?: AspectRatio; log?: Logger; signal?: AbortSignal } = {},
): Promise<GeneratedImage[]> {
  const out: GeneratedImage[] = [];
  for (const item of result.data) {
    const sources: Array<[ImageResponseFormat, () => Promise<Buffer>]> = [];
    if (item.b64_json) sources.push(['b64_json', async () => Buffer.from(item.b64_json!.replace(/^data:[^,]*;base64,/, ''), 'base64')]);
    if (item.hxd) sources.push(['hxd', async () => decodeHxd(item.hxd!)]);
    if (item.url) sources.push(['url', async () => (await images.view(item.url!, { signal: options.signal })).data]);
    if (sources.length === 0) throw new InvalidResponseError('an image result item has no url, b64_json or hxd');
    for (const [source, load] of sources) {
      const data = await load();
      const image = await describeImage(data, source);
      if (item.revised_prompt) image.revisedPrompt = item.revised_prompt;
      if (options.expected) {
        const want = ASPECT_RATIO_SIZES[options.expected];
        if (image.width !== want.width || image.height !== want.height) {
          options.log?.info({ expected: want, got: { width: image.width, height: image.height }, source }, 'generated image has an unexpected size');
        }
      }
      out.push(image);
    }
  }
  return out;
}

async function describeImage(data: Buffer, source: ImageResponseFormat): Promise<GeneratedImage> {
  let meta: Metadata;
  try {
    meta = await sharp(data).metadata();
  } catch {
    throw new InvalidResponseError(`the ${source} image is not a readable image`);
  }
  if (!meta.width || !meta.height || !meta.format) throw new InvalidResponseError(`the ${source} image has no size`);
  const format: string = meta.format;
  return { data, format, mimeType: `image/${format}`, width: meta.width, height: meta.height, source };
}

/** §4.1 image input rule 3 / §8: each image counts about this many tokens in a budget. */
export const IMAGE_TOKENS = 85;

/** §4.1 image input rule 2: the longest side sent, in px. */
export const MAX_IMAGE_SIDE = 1024;

/** Limits on an image a user sends (decompression-bomb and oversize guards). */
export interface ImageInputLimits {
  /** Largest file accepted, in bytes; default 20 MiB. */
  maxBytes: number;
  /** Largest decoded size accepted, in pixels (width × height); default 40 megapixels. */
  maxPixels: number;
}

export const DEFAULT_IMAGE_INPUT_LIMITS: ImageInputLimits = { maxBytes: 20 * 1024 * 1024, maxPixels: 40_000_000 };

/**
 * A user's image that cannot be used: `message` is the sentence for the user (naming the
 * file), `reason` the same without the name, short enough for a list ("not an image the bot
 * can read").
 */
export class ImageInputError extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
    this.name = 'ImageInputError';
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

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

/**
 * Turns an image in any format sharp decodes (JPEG, PNG, WebP, GIF — first frame —, AVIF,
 * TIFF, …) into the data URL the service accepts (§4.1 image input rules 1–2): EXIF
 * orientation applied, longest side at most {@link MAX_IMAGE_SIDE} px, PNG when it has
 * transparency, JPEG otherwise.
 * @param name the file name, for messages.
 * @throws ImageInputError (too many bytes, too many pixels, not an image).
 */
export async function prepareImageInput(data: Uint8Array, name: string, limits: ImageInputLimits = DEFAULT_IMAGE_INPUT_LIMITS): Promise<PreparedImage> {
  if (data.byteLength > limits.maxBytes) {
    const reason = `too large (${mb(data.byteLength)}; images up to ${mb(limits.maxBytes)} are accepted)`;
    throw new ImageInputError(`${name} is ${reason}.`, reason);
  }
  let meta: Metadata;
  try {
    // Only the header is read here (no pixels are decoded), so the size can be named below;
    // every decoding step after it has limitInputPixels, which refuses a decompression bomb.
    meta = await sharp(data, { limitInputPixels: false, animated: false }).metadata();
  } catch {
    throw new ImageInputError(`${name} is not an image the bot can read (JPEG, PNG, WebP, GIF, AVIF and TIFF work).`, 'not an image the bot can read');
  }
  const pixels = (meta.width ?? 0) * (meta.pageHeight ?? meta.height ?? 0);
  if (!meta.width || !meta.height || pixels > limits.maxPixels) {
    const reason = `too large to process (${meta.width ?? '?'}×${meta.height ?? '?'} px; at most ${(limits.maxPixels / 1e6).toFixed(0)} megapixels)`;
    throw new ImageInputError(`${name} is ${reason}.`, reason);
  }
  try {
    // An alpha channel alone (GIF palettes, many PNGs) does not mean transparency: check pixels.
    const alpha = meta.hasAlpha === true && !(await sharp(data, { limitInputPixels: limits.maxPixels, animated: false }).stats()).isOpaque;
    const pipeline = sharp(data, { limitInputPixels: limits.maxPixels, animated: false })
      .rotate()
      .resize({ width: MAX_IMAGE_SIDE, height: MAX_IMAGE_SIDE, fit: 'inside', withoutEnlargement: true });
    const { data: out, info } = await (alpha ? pipeline.png({ compressionLevel: 9 }) : pipeline.flatten({ background: '#ffffff' }).jpeg({ quality: 85, mozjpeg: true })).toBuffer({ resolveWithObject: true });
    const mimeType = alpha ? 'image/png' : 'image/jpeg';
    return { url: `data:${mimeType};base64,${out.toString('base64')}`, mimeType, width: info.width, height: info.height, bytes: out.byteLength, name };
  } catch {
    throw new ImageInputError(`${name} could not be converted (the file may be damaged).`, 'damaged or unreadable');
  }
}

/** The longest side of a reference image sent to image generation, in px (the largest output side, §4.3). */
export const MAX_REFERENCE_SIDE = 1216;

/**
 * Turns a user's image into the reference image form of §4.3: a `data:image/png;base64` URL,
 * EXIF orientation applied, longest side at most {@link MAX_REFERENCE_SIDE} px.
 * @throws ImageInputError as {@link prepareImageInput}.
 */
export async function prepareReferenceImage(data: Uint8Array, name: string, limits: ImageInputLimits = DEFAULT_IMAGE_INPUT_LIMITS): Promise<PreparedImage> {
  const checked = await prepareImageInput(data, name, limits);
  try {
    const { data: out, info } = await sharp(data, { limitInputPixels: limits.maxPixels, animated: false })
      .rotate()
      .resize({ width: MAX_REFERENCE_SIDE, height: MAX_REFERENCE_SIDE, fit: 'inside', withoutEnlargement: true })
      .png({ compressionLevel: 9 })
      .toBuffer({ resolveWithObject: true });
    return { url: `data:image/png;base64,${out.toString('base64')}`, mimeType: 'image/png', width: info.width, height: info.height, bytes: out.byteLength, name: checked.name };
  } catch {
    throw new ImageInputError(`${name} could not be converted (the file may be damaged).`, 'damaged or unreadable');
  }
}

/** A generated image made to fit an upload limit, and what was done to it. */
export interface FittedImage {
  data: Buffer;
  format: string;
  mimeType: string;
  width: number;
  height: number;
  /** Undefined when the image fit as it was; else what changed, for the caption ("JPEG, 85%"). */
  reencoded: string | undefined;
}

/** The platform takes no file this large, however the image is re-encoded. `message` is for the user. */
export class ImageTooLargeError extends Error {
  constructor(bytes: number, maxBytes: number) {
    super(`The image is too large for this server (${mb(bytes)}; files up to ${mb(maxBytes)} are taken here), even re-encoded.`);
    this.name = 'ImageTooLargeError';
  }
}

/**
 * Makes an image fit `maxBytes` (a Discord interaction's `attachment_size_limit`): as it is
 * when it fits; else JPEG at falling quality, then smaller, down to 512 px on the long side.
 * @throws ImageTooLargeError when nothing fits.
 */
export async function fitImageFile(image: Pick<GeneratedImage, 'data' | 'format' | 'mimeType' | 'width' | 'height'>, maxBytes: number | undefined): Promise<FittedImage> {
  if (maxBytes === undefined || image.data.byteLength <= maxBytes) return { ...image, reencoded: undefined };
  const longest = Math.max(image.width, image.height);
  for (const side of [longest, 2048, 1536, 1024, 768, 512].filter((s) => s <= longest)) {
    for (const quality of side === longest ? [90, 80, 70] : [80]) {
      const { data, info } = await sharp(image.data, { limitInputPixels: DEFAULT_IMAGE_INPUT_LIMITS.maxPixels })
        .resize({ width: side, height: side, fit: 'inside', withoutEnlargement: true })
        .flatten({ background: '#ffffff' })
        .jpeg({ quality, mozjpeg: true })
        .toBuffer({ resolveWithObject: true });
      if (data.byteLength <= maxBytes) {
        return { data, format: 'jpeg', mimeType: 'image/jpeg', width: info.width, height: info.height, reencoded: `re-encoded as JPEG (${quality}%) to fit this server's ${mb(maxBytes)} limit` };
      }
    }
  }
  throw new ImageTooLargeError(image.data.byteLength, maxBytes);
}
