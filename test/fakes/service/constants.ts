/**
 * The fake service's defaults: model lists, API key, image sizes by aspect ratio, and the
 * fixed values of its answers (model `created`, body size limit).
 */
import type { FakeImageModel, FakeModel } from './types.ts';

/** Default `/v1/models`: two chat models (only `fake-vision` takes images) and two image models. */
export const DEFAULT_MODELS: readonly FakeModel[] = [
  { id: 'fake-chat', owned_by: 'fake-service' },
  { id: 'fake-vision', owned_by: 'fake-service', vision: true },
  { id: 'fake-image', owned_by: 'fake-service', type: 'image' },
  { id: 'fake-image-xl', owned_by: 'fake-service', type: 'image' },
];

/** Default `/v1/images/available-models`. */
export const DEFAULT_IMAGE_MODELS: readonly FakeImageModel[] = [
  { display_name: 'Fake Image', description: 'Fast solid-colour images for tests' },
  { display_name: 'Fake Image XL', description: 'The same, with more feeling' },
];

/** The one API key accepted unless the options give another. */
export const DEFAULT_API_KEY = 'sk-fake-service-key';

/** §4.3 output size by aspect ratio. */
export const IMAGE_SIZES = {
  square: { width: 1024, height: 1024 },
  portrait: { width: 832, height: 1216 },
  landscape: { width: 1216, height: 832 },
} as const;

/** The `created` of every model of `/v1/models`. */
export const CREATED = 1_700_000_000;
/** Request bodies above this many bytes are refused (413). */
export const MAX_BODY_BYTES = 25 * 1024 * 1024;
