/**
 * The service's model lists, cached: text models from `/v1/models` (§4.5, without the image
 * models, §2.5) and image models from `/v1/images/available-models` (§4.4, display name and
 * description). Autocomplete must answer within Discord's 3 s from this cache and never fail;
 * /models and /settings want fresh lists and say when the service is down.
 */

import type { Logger } from '../../log.ts';
import { isImageModel, type ServiceClient } from '../service/client.ts';
import type { ImageModel } from '../service/schemas.ts';

/** The lists at one moment. */
export interface ModelLists {
  /** Chat / completion model ids, in the service's order. */
  text: string[];
  /** Ids the `/v1/models` listing marks as image models (`type: image`). */
  imageIds: string[];
  /** Image models by display name (what `user_selected_model` takes), with descriptions. */
  image: ImageModel[];
  /** `performance.now()` when fetched, in ms. */
  fetchedAt: number;
}

/** Options of {@link ModelCatalog}. */
export interface ModelCatalogOptions {
  /** Lists older than this are fetched again when asked for, in ms (default 60,000). */
  ttlMs?: number;
  log?: Logger;
  /** Monotonic time in ms (tests). */
  now?: () => number;
}

/** Cached model lists; one per bot. */
export class ModelCatalog {
  private cached: ModelLists | undefined;
  private inflight: Promise<ModelLists> | undefined;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly service: ServiceClient,
    private readonly options: ModelCatalogOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 60_000;
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * The lists, fetched again when the cached ones are older than the TTL (one fetch at a time).
   * @throws ServiceError subclasses when a list cannot be fetched (the service is down, the key refused…).
   */
  async lists(signal?: AbortSignal): Promise<ModelLists> {
    if (this.cached && this.now() - this.cached.fetchedAt < this.ttlMs) return this.cached;
    return this.refresh(signal);
  }

  /**
   * The lists fetched now, whatever the cache holds (joining a fetch already under way), e.g.
   * when the cached ones lack what a lookup needs (no chat model: the service may list one now).
   * @throws as {@link lists}.
   */
  fresh(signal?: AbortSignal): Promise<ModelLists> {
    return this.refresh(signal);
  }

  /**
   * The lists for autocomplete: never throws and never waits longer than `maxWaitMs`. Stale
   * lists are returned at once (and refreshed in the background); with none cached, a fetch
   * is awaited up to `maxWaitMs`.
   * @returns undefined when nothing could be had in time (the caller shows no choices).
   */
  async quick(maxWaitMs = 2_000): Promise<ModelLists | undefined> {
    if (this.cached) {
      if (this.now() - this.cached.fetchedAt >= this.ttlMs) this.refresh().catch(() => undefined);
      return this.cached;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), maxWaitMs);
    });
    try {
      return await Promise.race([this.refresh().catch(() => undefined), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private refresh(signal?: AbortSignal): Promise<ModelLists> {
    this.inflight ??= (async () => {
      try {
        const options = signal ? { signal } : {};
        const [models, image] = await Promise.all([
          this.service.models.list(options),
          this.service.images.availableModels(options),
        ]);
        const lists: ModelLists = {
          text: models.filter((m) => !isImageModel(m)).map((m) => m.id),
          imageIds: models.filter(isImageModel).map((m) => m.id),
          image,
          fetchedAt: this.now(),
        };
        this.cached = lists;
        return lists;
      } catch (error) {
        this.options.log?.warn(
          { err: error instanceof Error ? error.message : String(error) },
          'model lists could not be fetched',
        );
        throw error;
      } finally {
        this.inflight = undefined;
      }
    })();
    return this.inflight;
  }
}

/** A choice for autocomplete: what is shown (`name`, ≤ 100 characters) and what is sent (`value`). */
export interface ModelChoice {
  name: string;
  value: string;
}

/**
 * The choices matching what a user typed (case-insensitive substring of the id or display
 * name; prefix matches first), at most `limit` (Discord allows 25).
 * @param kind `text` for /chat and /complete; `image` for /imagine (labels carry descriptions).
 */
export function modelChoices(
  lists: ModelLists | undefined,
  kind: 'text' | 'image',
  typed: string,
  limit = 25,
): ModelChoice[] {
  if (!lists) return [];
  const query = typed.trim().toLowerCase();
  const all: ModelChoice[] =
    kind === 'text'
      ? lists.text.map((id) => ({ name: id, value: id }))
      : lists.image.map((m) => ({
          name: m.description ? `${m.display_name} — ${m.description}` : m.display_name,
          value: m.display_name,
        }));
  const score = (c: ModelChoice) => {
    const value = c.value.toLowerCase();
    if (!query || value.startsWith(query)) return 0;
    if (value.includes(query)) return 1;
    if (c.name.toLowerCase().includes(query)) return 2;
    return -1;
  };
  return all
    .map((choice, index) => ({ choice, index, rank: score(choice) }))
    .filter((c) => c.rank >= 0 && c.choice.value.length <= 100)
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .slice(0, limit)
    .map(({ choice }) => ({
      name: choice.name.length > 100 ? `${choice.name.slice(0, 99)}…` : choice.name,
      value: choice.value,
    }));
}
