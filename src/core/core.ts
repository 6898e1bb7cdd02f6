/**
 * The core's dependencies in one object, built by the composition root (src/main.ts) and
 * handed to every command. Tests build it with fakes.
 */
import type { ServiceClient } from './service/client.ts';
import { isImageModel } from './service/client.ts';
import type { ConversationStore } from './state/history.ts';
import { BotEvents } from './command.ts';
import type { Logger } from '../log.ts';
import { InvalidResponseError } from './service/errors.ts';

/** Everything a command may use. */
export interface Core {
  service: ServiceClient;
  history: ConversationStore;
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
    private readonly configured: { chat: string | undefined; image: string | undefined },
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

  /** The `user_selected_model` for image generation, or undefined to let the server choose. */
  imageModel(): string | undefined {
    return this.configured.image;
  }
}

/** Builds a Core from its parts. */
export function createCore(parts: Omit<Core, 'events' | 'models'> & { defaults: { chat: string | undefined; image: string | undefined } }): Core {
  return {
    service: parts.service,
    history: parts.history,
    log: parts.log,
    events: new BotEvents(),
    models: new ModelDefaults(parts.service, parts.defaults),
  };
}
