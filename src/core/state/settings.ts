/**
 * Per-channel settings admins choose with /settings, in keyv under `settings:<channel key>`
 * (`discord:<guild|dm>:<channel>`, a thread taking its parent's; `slack:<team>:<channel>`).
 * Values survive restarts and are shared by every instance using the store.
 */
import type Keyv from 'keyv';
import { storeKeys, workspaceOf } from '../keys.ts';

/** What one channel overrides; an absent field falls back to the environment's default. */
export interface ChannelSettings {
  /** Chat model id for /chat and mentions without images. */
  chatModel?: string;
  /** Image model display name for /imagine (`user_selected_model`). */
  imageModel?: string;
  /** Model id for requests with images. */
  visionModel?: string;
  /** Sent as the first `system` message of every chat in the channel. */
  systemPrompt?: string;
  /** Discord: a /chat or a mention in the channel is answered in a new thread (`auto_thread`). */
  autoThread?: boolean;
  /**
   * `false`: an answer here that took longer than NOTIFY_AFTER_SECONDS does not notify its asker
   * (`/settings notify:false`); absent: it does (features/answer-notice.ts).
   */
  notify?: boolean;
  /**
   * The language of the bot's public messages here (`/settings locale`, a shipped locale such as
   * `de` or `pt-BR`; core/i18n/languages.ts); absent: the place's own (Discord's guild locale).
   */
  locale?: string;
}

/** A change of settings: a value per field, `undefined` clearing it. */
export type SettingsUpdate = { [K in keyof ChannelSettings]?: ChannelSettings[K] | undefined };

/** The names of the settings, as /settings spells them. */
export const SETTING_NAMES = [
  'chat_model',
  'image_model',
  'vision_model',
  'system_prompt',
  'auto_thread',
  'notify',
  'locale',
] as const;
export type SettingName = (typeof SETTING_NAMES)[number];

/** The field of {@link ChannelSettings} behind each setting name. */
export const SETTING_FIELDS: Record<SettingName, keyof ChannelSettings> = {
  chat_model: 'chatModel',
  image_model: 'imageModel',
  vision_model: 'visionModel',
  system_prompt: 'systemPrompt',
  auto_thread: 'autoThread',
  notify: 'notify',
  locale: 'locale',
};

/**
 * How long a channel's settings, once read, are used without reading the store again, in ms.
 * This instance's own /settings changes apply at once; another instance's within this time.
 */
export const SETTINGS_CACHE_MS = 10_000;

/** At most this many channels' settings are kept in memory (the table starts afresh when full). */
const CACHED_CHANNELS = 10_000;

/** At most this many channels of a workspace are listed as having settings (the oldest change drops out). */
const LISTED_CHANNELS = 1_000;

/**
 * Reads and writes channel settings. Every /chat, mention and /imagine reads its channel's
 * before its history; they are kept in memory for {@link SETTINGS_CACHE_MS} (one read serves
 * concurrent callers), so a busy channel costs one store read per that time, not one a message.
 */
export class SettingsStore {
  private readonly cache = new Map<string, { settings: ChannelSettings; until: number }>();
  private readonly reading = new Map<string, Promise<ChannelSettings>>();
  /** Counts updates: a read that began before one is not remembered (it may hold the old value). */
  private updates = 0;

  /** @param cacheMs how long read settings are used (tests shorten it). */
  constructor(
    private readonly keyv: Keyv,
    private readonly cacheMs = SETTINGS_CACHE_MS,
  ) {}

  /** The channel's settings (empty when none were set). @throws what the store throws. */
  async get(channelKey: string): Promise<ChannelSettings> {
    const cached = this.cache.get(channelKey);
    if (cached && cached.until > Date.now()) return { ...cached.settings };
    let read = this.reading.get(channelKey);
    if (!read) {
      const updates = this.updates;
      read = this.read(channelKey)
        .then((settings) => {
          if (updates === this.updates) this.remember(channelKey, settings);
          return settings;
        })
        .finally(() => this.reading.delete(channelKey));
      this.reading.set(channelKey, read);
    }
    return { ...(await read) };
  }

  /**
   * Applies `changes` (an `undefined` value clears that setting) to what the store holds (not
   * to what this instance remembers) and returns the result; the channel joins (or, with
   * nothing left, leaves) its workspace's {@link channelsWithSettings}.
   * Concurrent updates are rare (admins); the last write wins, of the list too.
   */
  async update(channelKey: string, changes: SettingsUpdate): Promise<ChannelSettings> {
    const next: Record<string, unknown> = { ...(await this.read(channelKey)) };
    for (const [field, value] of Object.entries(changes)) {
      if (value === undefined) delete next[field];
      else next[field] = value;
    }
    const present = Object.keys(next).length > 0;
    if (!present) await this.keyv.delete(this.key(channelKey));
    else await this.keyv.set(this.key(channelKey), next);
    await this.list(channelKey, present);
    this.updates += 1;
    this.reading.delete(channelKey);
    this.remember(channelKey, next as ChannelSettings);
    return { ...(next as ChannelSettings) };
  }

  /**
   * The channels of a workspace (`slack:<team>`, keys.ts `workspaceOf`) whose settings hold
   * something, oldest change first (at most {@link LISTED_CHANNELS}): Slack's Home tab shows
   * admins their channels' settings. @throws what the store throws.
   */
  async channelsWithSettings(workspace: string): Promise<string[]> {
    return (await this.keyv.get<string[]>(storeKeys.settingsChannels(workspace))) ?? [];
  }

  /** Forgets what this instance remembers of the channels whose keys start with `prefix` (an uninstalled workspace's, `slack:<team>:`). */
  forgetCached(prefix: string): void {
    for (const channelKey of [...this.cache.keys()]) if (channelKey.startsWith(prefix)) this.cache.delete(channelKey);
    this.updates += 1;
  }

  /** Adds a channel to its workspace's list of channels with settings, or removes it. */
  private async list(channelKey: string, present: boolean): Promise<void> {
    const workspace = workspaceOf(channelKey);
    if (!workspace) return;
    const listed = await this.channelsWithSettings(workspace);
    if (listed.includes(channelKey) === present) return;
    const next = present ? [...listed, channelKey].slice(-LISTED_CHANNELS) : listed.filter((c) => c !== channelKey);
    await this.keyv.set(storeKeys.settingsChannels(workspace), next);
  }

  private async read(channelKey: string): Promise<ChannelSettings> {
    return (await this.keyv.get<ChannelSettings>(this.key(channelKey))) ?? {};
  }

  private remember(channelKey: string, settings: ChannelSettings): void {
    if (this.cache.size >= CACHED_CHANNELS && !this.cache.has(channelKey)) this.cache.clear();
    this.cache.set(channelKey, { settings, until: Date.now() + this.cacheMs });
  }

  private key(channelKey: string): string {
    return storeKeys.settings(channelKey);
  }
}
