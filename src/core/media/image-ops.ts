/**
 * The image operations, with sharp: a user's image → the data URL a chat completion takes
 * (§4.1 image input rules 1–2) or a reference image (§4.3); a generated image → its format
 * and size, and a version that fits a platform's upload limit. They decode pixels, so they run
 * in the image workers (image-worker.ts, driven by image-pool.ts), each in a process of its
 * own: sharp works on libuv's threads, which the store's SQLite queries need, and a decode
 * runs as long as its input makes it. Only raster formats are decoded
 * ({@link checkRasterInput}); the pixel count is read from the header before any pixel is.
 */
import sharp, { type Metadata } from 'sharp';
import { sentence } from '../i18n/words.ts';
import { InvalidResponseError } from '../service/errors.ts';
import type { ImageResponseFormat } from '../service/schemas.ts';
import {
  checkRasterInput,
  DEFAULT_IMAGE_INPUT_LIMITS,
  type FittedImage,
  type GeneratedImage,
  ImageInputError,
  type ImageInputLimits,
  ImageTooLargeError,
  MAX_IMAGE_SIDE,
  MAX_REFERENCE_SIDE,
  type PreparedImage,
  READABLE_FORMATS,
  sniffRasterFormat,
  unchangedFit,
} from './images.ts';
import { megabytes, reason } from './reasons.ts';

/**
 * Reads a generated image's format and size from its header (no pixels decoded).
 * @throws InvalidResponseError when the bytes are not a raster image the bot reads.
 */
export async function describeImage(data: Buffer, source: ImageResponseFormat): Promise<GeneratedImage> {
  if (!sniffRasterFormat(data))
    throw new InvalidResponseError(`the ${source} image is not a raster image the bot reads`);
  let meta: Metadata;
  try {
    meta = await sharp(data, { limitInputPixels: DEFAULT_IMAGE_INPUT_LIMITS.maxPixels }).metadata();
  } catch {
    throw new InvalidResponseError(`the ${source} image is not a readable image`);
  }
  if (!meta.width || !meta.height || !meta.format) throw new InvalidResponseError(`the ${source} image has no size`);
  const format: string = meta.format;
  return { data, format, mimeType: `image/${format}`, width: meta.width, height: meta.height, source };
}

/**
 * Turns a raster image (JPEG, PNG, WebP, GIF — first frame —, AVIF/HEIF, TIFF) into the data
 * URL the service accepts (§4.1 image input rules 1–2): EXIF orientation applied, longest side
 * at most {@link MAX_IMAGE_SIDE} px, PNG when it has transparency, JPEG otherwise.
 * @param name the file name, for messages.
 * @throws ImageInputError (too many bytes, too many pixels, not a raster image, damaged).
 */
export async function prepareImageInput(
  data: Uint8Array,
  name: string,
  limits: ImageInputLimits = DEFAULT_IMAGE_INPUT_LIMITS,
): Promise<PreparedImage> {
  if (data.byteLength > limits.maxBytes) {
    throw new ImageInputError(
      name,
      reason('media.reason.image_too_large', { size: megabytes(data.byteLength), max: megabytes(limits.maxBytes) }),
    );
  }
  // SVG and other formats whose decoding cost is not bounded by their pixel count never reach sharp.
  checkRasterInput(data, name);
  let meta: Metadata;
  try {
    // Only the header is read here (no pixels are decoded), so the size can be named below;
    // every decoding step after it has limitInputPixels, which refuses a decompression bomb.
    meta = await sharp(data, { limitInputPixels: false, animated: false }).metadata();
  } catch {
    throw new ImageInputError(name, reason('media.reason.unreadable_image', { formats: READABLE_FORMATS }));
  }
  const pixels = (meta.width ?? 0) * (meta.pageHeight ?? meta.height ?? 0);
  if (!meta.width || !meta.height || pixels > limits.maxPixels) {
    throw new ImageInputError(
      name,
      reason('media.reason.too_many_pixels', {
        width: String(meta.width ?? '?'),
        height: String(meta.height ?? '?'),
        megapixels: Math.round(limits.maxPixels / 1e6),
      }),
    );
  }
  try {
    // An alpha channel alone (GIF palettes, many PNGs) does not mean transparency: check pixels.
    const alpha =
      meta.hasAlpha === true &&
      !(await sharp(data, { limitInputPixels: limits.maxPixels, animated: false }).stats()).isOpaque;
    const pipeline = sharp(data, { limitInputPixels: limits.maxPixels, animated: false })
      .rotate()
      .resize({ width: MAX_IMAGE_SIDE, height: MAX_IMAGE_SIDE, fit: 'inside', withoutEnlargement: true });
    const { data: out, info } = await (alpha
      ? pipeline.png({ compressionLevel: 9 })
      : pipeline.flatten({ background: '#ffffff' }).jpeg({ quality: 85, mozjpeg: true })
    ).toBuffer({ resolveWithObject: true });
    const mimeType = alpha ? 'image/png' : 'image/jpeg';
    return {
      url: `data:${mimeType};base64,${out.toString('base64')}`,
      mimeType,
      width: info.width,
      height: info.height,
      bytes: out.byteLength,
      name,
    };
  } catch {
    throw new ImageInputError(name, reason('media.reason.damaged'));
  }
}

/**
 * Turns a user's image into the reference image form of §4.3: a `data:image/png;base64` URL,
 * EXIF orientation applied, longest side at most {@link MAX_REFERENCE_SIDE} px.
 * @throws ImageInputError as {@link prepareImageInput}.
 */
export async function prepareReferenceImage(
  data: Uint8Array,
  name: string,
  limits: ImageInputLimits = DEFAULT_IMAGE_INPUT_LIMITS,
): Promise<PreparedImage> {
  const checked = await prepareImageInput(data, name, limits);
  try {
    const { data: out, info } = await sharp(data, { limitInputPixels: limits.maxPixels, animated: false })
      .rotate()
      .resize({ width: MAX_REFERENCE_SIDE, height: MAX_REFERENCE_SIDE, fit: 'inside', withoutEnlargement: true })
      .png({ compressionLevel: 9 })
      .toBuffer({ resolveWithObject: true });
    return {
      url: `data:image/png;base64,${out.toString('base64')}`,
      mimeType: 'image/png',
      width: info.width,
      height: info.height,
      bytes: out.byteLength,
      name: checked.name,
    };
  } catch {
    throw new ImageInputError(name, reason('media.reason.damaged'));
  }
}

/**
 * Makes an image fit `maxBytes` (a Discord interaction's `attachment_size_limit`): as it is
 * when it fits; else JPEG at falling quality, then smaller, down to 512 px on the long side.
 * @throws ImageTooLargeError when nothing fits.
 */
export async function fitImageFile(
  image: Pick<GeneratedImage, 'data' | 'format' | 'mimeType' | 'width' | 'height'>,
  maxBytes: number | undefined,
): Promise<FittedImage> {
  if (maxBytes === undefined || image.data.byteLength <= maxBytes) return unchangedFit(image);
  if (!sniffRasterFormat(image.data))
    throw new InvalidResponseError('the generated image is not a raster image the bot reads');
  const longest = Math.max(image.width, image.height);
  for (const side of [longest, 2048, 1536, 1024, 768, 512].filter((s) => s <= longest)) {
    for (const quality of side === longest ? [90, 80, 70] : [80]) {
      const { data, info } = await sharp(image.data, { limitInputPixels: DEFAULT_IMAGE_INPUT_LIMITS.maxPixels })
        .resize({ width: side, height: side, fit: 'inside', withoutEnlargement: true })
        .flatten({ background: '#ffffff' })
        .jpeg({ quality, mozjpeg: true })
        .toBuffer({ resolveWithObject: true });
      if (data.byteLength <= maxBytes) {
        return {
          data,
          format: 'jpeg',
          mimeType: 'image/jpeg',
          width: info.width,
          height: info.height,
          reencoded: sentence('media.reencoded', { quality: quality / 100, max: megabytes(maxBytes) }),
        };
      }
    }
  }
  throw ImageTooLargeError.of(image.data.byteLength, maxBytes);
}
