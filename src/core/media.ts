/**
 * Images with sharp: generated images (service → file to post) and, later, attachments
 * (user → data URL for vision).
 */
import sharp, { type Metadata } from 'sharp';
import type { Images } from './service/client.ts';
import { InvalidResponseError } from './service/errors.ts';
import { ASPECT_RATIO_SIZES, type AspectRatio, type ImageGenerationResult, type ImageResponseFormat } from './service/schemas.ts';
import type { Logger } from '../log.ts';

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
