/**
 * The core's dependencies in one object, built by the composition root (src/main.ts) and
 * handed to every command. Tests build it with fakes.
 */
import type { ServiceClient } from './service/client.ts';
import { isImageModel } from './service/client.ts';
import type Keyv from 'keyv';
import { ConversationStore } from './state/history.ts';
import { Claims } from './state/claims.ts';
import { Downloader } from './media/download.ts';
import type { ImageAttachmentLimits } from './media/attachments.ts';
import { DEFAULT_IMAGE_INPUT_LIMITS } from './media/images.ts';
import { BotEvents } from './command.ts';
import type { Logger } from '../log.ts';
import { InvalidResponseError } from './service/errors.ts';

/** Everything a command may use. */
export interface Core {
  service: ServiceClient;
  /** The keyv store behind every kind of state (state/store.ts). */
  store: Keyv;
  history: ConversationStore;
  /** Once-only markers (event de-duplication). */
  claims: Claims;
  /** Capped downloads of users' files. */
  downloader: Downloader;
  /** Caps on the images users send. */
  inputImages: ImageAttachmentLimits;
  models: ModelDefaults;
  events: BotEvents;
  log: Logger;
}

/**
 * Default models. The chat model is `DEFAULT_CHAT_MODEL`, else the first non-image model that
 * `/v1/models` lists (looked up once, then cached for `ttlMs`). The image model is
 * `DEFAULT_IMAGE_MODEL`, else left to the server (§4.3: omit `user_selected_model`).
 * Per-channel defaults set by admins will live here too (a later issue).
 */
export class ModelDefaults {
  private cached: { model: string; at: number } | undefined;

  constructor(
    private readonly service: ServiceClient,
    private readonly configured: ModelSettings,
    private readonly ttlMs = 5 * 60_000,
  ) {}

  /**
   * The model for a chat completion.
   * @throws ServiceError subclasses when the list must be fetched and fails; InvalidResponseError
   *   when the service lists no chat model.
   */
  async chatModel(signal?: AbortSignal): Promise<string> {
    if (this.configured.chat) return this.configured.chat;
    if (this.cached && performance.now() - this.cached.at < this.ttlMs) return this.cached.model;
    const models = await this.service.models.list({ ...(signal ? { signal } : {}) });
    const first = models.find((m) => !isImageModel(m));
    if (!first) throw new InvalidResponseError('the service lists no chat model');
    this.cached = { model: first.id, at: performance.now() };
    return first.id;
  }

  /**
   * The model for a request with images: `DEFAULT_VISION_MODEL`, else the chat model.
   * @throws as {@link chatModel}.
   */
  async visionModel(signal?: AbortSignal): Promise<string> {
    return this.configured.vision ?? (await this.chatModel(signal));
  }

  /** The `user_selected_model` for image generation, or undefined to let the server choose. */
  imageModel(): string | undefined {
    return this.configured.image;
  }
}

/** Configured default models (environment); undefined: decided as each getter says. */
export interface ModelSettings {
  chat: string | undefined;
  image: string | undefined;
  vision?: string | undefined;
}

/**
 * Builds a Core from its parts: the service client, the keyv store (history and claims are
 * made on it), the logger, the default models, and the caps on users' images (defaults:
 * 4 images of at most 20 MiB and 40 megapixels each).
 */
export function createCore(parts: {
  service: ServiceClient;
  store: Keyv;
  log: Logger;
  defaults: ModelSettings;
  inputImages?: Partial<ImageAttachmentLimits>;
  downloader?: Downloader;
}): Core {
  return {
    service: parts.service,
    store: parts.store,
    history: new ConversationStore(parts.store),
    claims: new Claims(parts.store),
    downloader: parts.downloader ?? new Downloader(),
    inputImages: { maxCount: 4, ...DEFAULT_IMAGE_INPUT_LIMITS, ...parts.inputImages },
    log: parts.log,
    events: new BotEvents(),
    models: new ModelDefaults(parts.service, parts.defaults),
  };
}

/** Closes what the core holds open: the store's connection and the download sockets. */
export async function closeCore(core: Core): Promise<void> {
  await Promise.allSettled([core.store.disconnect(), core.downloader.close()]);
}
