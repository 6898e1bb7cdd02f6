/**
 * The image endpoints: `POST /v1/images/generations` (§4.3: the body checked strictly, a real
 * PNG of the aspect ratio's size, one item with every requested format), `GET
 * /v1/images/view/<id>` (the stored PNGs of `url` results) and `GET
 * /v1/images/available-models` (§4.4: a bare array, or `{ data }` with `imageModelsEnvelope`).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import sharp from 'sharp';
import { IMAGE_SIZES } from './constants.ts';
import { apiError, invalid } from './errors.ts';
import { send, sendJson } from './respond.ts';
import type { ServiceState } from './state.ts';
import type { FakeRoute, ImageFormat, ImageRequestBody } from './types.ts';
import { now } from './util.ts';
import {
  checkBoolean,
  checkEnum,
  checkImageDataUrl,
  checkNumber,
  checkString,
  clip,
  describe,
  type Json,
  rejectUnknown,
  shown,
} from './validation.ts';

const IMAGE_FIELDS = [
  'prompt',
  'style',
  'aspect_ratio',
  'response_format',
  'user_selected_model',
  'negative_prompt',
  'seed',
  'disable_safety_checker',
  'force_prompt_enhancement',
  'reference_image_url',
  'reference_image',
  'denoising_strength',
] as const;
const IMAGE_FORMATS: readonly ImageFormat[] = ['url', 'b64_json', 'hxd'];

/** `response_format`: one format or a non-empty array of them. */
function checkResponseFormat(body: Json): void {
  if (!('response_format' in body)) return;
  const rf = body.response_format;
  const list = Array.isArray(rf) ? rf : [rf];
  const what = "expected 'url', 'b64_json', 'hxd' or a non-empty array of them";
  if (Array.isArray(rf) && rf.length === 0) {
    throw invalid('response_format', `Invalid 'response_format': ${what}, but got an empty array instead.`);
  }
  for (const f of list) {
    if (!IMAGE_FORMATS.includes(f as ImageFormat)) {
      throw invalid('response_format', `Invalid value for 'response_format': ${what}, but got ${shown(f)} instead.`);
    }
  }
}

/** `user_selected_model`: a display_name of `/v1/images/available-models` (404 otherwise). */
function checkUserSelectedModel(state: ServiceState, body: Json): void {
  if (!('user_selected_model' in body)) return;
  checkString(body, 'user_selected_model', { nonEmpty: true });
  const name = body.user_selected_model as string;
  if (!state.imageModels.some((m) => m.display_name === name)) {
    throw apiError(
      404,
      `The image model '${clip(name)}' does not exist. 'user_selected_model' takes a display_name from /v1/images/available-models: ${state.imageModels.map((m) => `'${m.display_name}'`).join(', ')}.`,
      'user_selected_model',
      'model_not_found',
    );
  }
}

/** `reference_image_url`: an http(s) URL. */
function checkReferenceImageUrl(body: Json): void {
  if (!('reference_image_url' in body)) return;
  checkString(body, 'reference_image_url', { nonEmpty: true });
  let ok = false;
  try {
    const u = new URL(body.reference_image_url as string);
    ok = u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    ok = false;
  }
  if (!ok) {
    throw invalid(
      'reference_image_url',
      `Invalid 'reference_image_url': expected an http(s) URL, but got ${shown(body.reference_image_url)} instead.`,
    );
  }
}

/** Checks an image generation body field by field, in the spec's order. */
function validateImage(state: ServiceState, body: Json): ImageRequestBody {
  rejectUnknown(body, IMAGE_FIELDS);
  checkString(body, 'prompt', { required: true, nonEmpty: true });
  checkEnum(body, 'style', ['vivid', 'natural', 'preview', 'upscaled']);
  checkEnum(body, 'aspect_ratio', ['square', 'portrait', 'landscape']);
  checkResponseFormat(body);
  checkUserSelectedModel(state, body);
  checkString(body, 'negative_prompt');
  if ('seed' in body && !(typeof body.seed === 'number' && Number.isSafeInteger(body.seed))) {
    throw invalid(
      'seed',
      `Invalid type for 'seed': expected an integer, but got ${typeof body.seed === 'number' ? String(body.seed) : describe(body.seed)} instead.`,
    );
  }
  checkBoolean(body, 'disable_safety_checker');
  checkBoolean(body, 'force_prompt_enhancement');
  checkReferenceImageUrl(body);
  if ('reference_image' in body) checkImageDataUrl('reference_image', body.reference_image, ['png']);
  checkNumber(body, 'denoising_strength', 0, 1);
  if (body.disable_safety_checker === true && !state.options.allowDisableSafetyChecker) {
    throw apiError(
      403,
      "Your account does not have permission to use 'disable_safety_checker'.",
      'disable_safety_checker',
      'permission_denied',
      'permission_error',
    );
  }
  return body as unknown as ImageRequestBody;
}

/** The PNG: one colour from the prompt, seed, style and negative prompt; or noise (`noisyImages`). */
async function renderPng(
  state: ServiceState,
  body: ImageRequestBody,
  width: number,
  height: number,
  seed: number | null,
): Promise<Buffer> {
  const hash = createHash('sha256')
    .update(JSON.stringify([body.prompt, seed, body.style ?? 'vivid', body.negative_prompt ?? '']))
    .digest();
  return state.options.noisyImages
    ? await sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
        .png()
        .toBuffer()
    : await sharp({ create: { width, height, channels: 3, background: { r: hash[0]!, g: hash[1]!, b: hash[2]! } } })
        .png()
        .toBuffer();
}

/** Answers `POST /v1/images/generations`: `{ created, [seed,] data: [item] }`. */
export async function handleImages(state: ServiceState, raw: Json, res: ServerResponse): Promise<void> {
  const body = validateImage(state, raw);
  const ratio = body.aspect_ratio ?? 'square';
  const { width, height } = IMAGE_SIZES[ratio];
  const seed = body.seed ?? (state.options.reportSeed ? randomBytes(4).readUInt32BE(0) : null);
  const png = await renderPng(state, body, width, height, seed);

  const formats =
    body.response_format === undefined
      ? ['url']
      : Array.isArray(body.response_format)
        ? body.response_format
        : [body.response_format];
  const item: Record<string, string> = {};
  if (formats.includes('url')) {
    const id = `img_${randomBytes(10).toString('hex')}`;
    state.images.set(id, png);
    item.url = `${state.baseUrl}/v1/images/view/${id}`;
  }
  if (formats.includes('b64_json')) item.b64_json = png.toString('base64');
  if (formats.includes('hxd')) item.hxd = png.toString('hex');
  if (body.force_prompt_enhancement === true) {
    item.revised_prompt = `A detailed, high-quality ${ratio} image of ${body.prompt}, with balanced composition and soft lighting.`;
  }
  sendJson(state, res, 'images', '/v1/images/generations', 200, {
    created: now(),
    ...(state.options.reportSeed ? { seed } : {}),
    data: [item],
  });
}

/** Answers `GET /v1/images/available-models`. */
export function handleImageModels(state: ServiceState, route: FakeRoute, path: string, res: ServerResponse): void {
  const list = state.imageModels.map((m) => ({ ...m }));
  sendJson(state, res, route, path, 200, state.options.imageModelsEnvelope ? { data: list } : list);
}

/** Answers `GET /v1/images/view/<id>` with a stored PNG (404 `image_not_found` otherwise). */
export function handleView(state: ServiceState, route: FakeRoute, path: string, res: ServerResponse): void {
  const id = decodeURIComponent(path.slice('/v1/images/view/'.length));
  const png = state.images.get(id);
  if (!png) throw apiError(404, `No image with id '${clip(id)}'.`, null, 'image_not_found');
  send(state, res, route, path, 200, png, { 'content-type': 'image/png', 'cache-control': 'private, max-age=3600' });
}
