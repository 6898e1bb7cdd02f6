/**
 * Which model a request uses, and why: a channel's setting (/settings), else the operator's
 * default (environment), else the service's (the first chat model `/v1/models` lists; for
 * images, omitting `user_selected_model` lets the server choose, §4.3).
 */
import type { FallbackModels } from '../../config-fallback.ts';
import { NoChatModelError } from '../sentences.ts';
import type { ChannelSettings, SettingsStore } from '../state/settings.ts';
import type { ModelCatalog } from './catalog.ts';

/** Configured default models (environment); undefined: decided as {@link ModelDefaults} says. */
export interface ModelSettings {
  chat: string | undefined;
  image: string | undefined;
  vision?: string | undefined;
  /** The models that answer in turn when the one asked is unavailable (FALLBACK_*_MODELS); none when absent. */
  fallbacks?: FallbackModels | undefined;
}

const NO_FALLBACKS: FallbackModels = { chat: [], image: [] };

/** Where a value came from, as /settings shows it. */
export type SettingSource = 'channel' | 'environment' | 'service';

/** A resolved value and its source; `value` undefined means "the server's choice". */
export interface Resolved {
  value: string | undefined;
  source: SettingSource;
}

/** Everything a channel's requests use. */
export interface ChannelModels {
  chat: Resolved & { value: string };
  /** For requests with images: the channel's vision model, the environment's, else the chat model (the very same object). */
  vision: Resolved & { value: string };
  image: Resolved;
  /** The channel's system prompt, if any. */
  systemPrompt: string | undefined;
}

/** Resolves models per channel. */
export class ModelDefaults {
  constructor(
    private readonly catalog: ModelCatalog,
    private configured: ModelSettings,
    private readonly settings: SettingsStore,
    /** Told when a channel's settings cannot be read (the store is down): the defaults apply. */
    private readonly onSettingsError: (error: unknown) => void = () => undefined,
  ) {}

  /** The operator's default models from now on (a configuration reload): requests already resolved keep theirs. */
  configure(models: ModelSettings): void {
    this.configured = { ...models };
  }

  /**
   * The fallback models of the configuration now (FALLBACK_CHAT_MODELS, FALLBACK_IMAGE_MODELS):
   * read by each request, so a reload applies them to the next one (service/fallback.ts).
   */
  get fallbacks(): FallbackModels {
    return this.configured.fallbacks ?? NO_FALLBACKS;
  }

  /**
   * The models (and system prompt) of a channel.
   * @param channelKey e.g. `discord:<guild>:<channel>`; undefined: environment and service defaults only.
   * @throws ServiceError subclasses when the service's default is needed and the list fails;
   *   NoChatModelError when the service lists no chat model, even when asked again.
   */
  async forChannel(channelKey: string | undefined, signal?: AbortSignal): Promise<ChannelModels> {
    const channel: ChannelSettings = channelKey
      ? await this.settings.get(channelKey).catch((error: unknown): ChannelSettings => {
          this.onSettingsError(error);
          return {};
        })
      : {};
    const chat = await this.pick(channel.chatModel, this.configured.chat, signal);
    const vision: Resolved & { value: string } = channel.visionModel
      ? { value: channel.visionModel, source: 'channel' }
      : this.configured.vision
        ? { value: this.configured.vision, source: 'environment' }
        : chat;
    const image: Resolved = channel.imageModel
      ? { value: channel.imageModel, source: 'channel' }
      : this.configured.image
        ? { value: this.configured.image, source: 'environment' }
        : { value: undefined, source: 'service' };
    return { chat, vision, image, systemPrompt: channel.systemPrompt };
  }

  /** The chat model of a channel (see {@link forChannel}). */
  async chatModel(signal?: AbortSignal, channelKey?: string): Promise<string> {
    return (await this.forChannel(channelKey, signal)).chat.value;
  }

  private async pick(
    channel: string | undefined,
    environment: string | undefined,
    signal?: AbortSignal,
  ): Promise<Resolved & { value: string }> {
    if (channel) return { value: channel, source: 'channel' };
    if (environment) return { value: environment, source: 'environment' };
    // A list without a chat model (only image models, or nothing readable as one) is not trusted
    // for the catalog's TTL: it is fetched again once before the lookup fails.
    const first = (await this.catalog.lists(signal)).text[0] ?? (await this.catalog.fresh(signal)).text[0];
    if (!first) throw new NoChatModelError();
    return { value: first, source: 'service' };
  }
}
