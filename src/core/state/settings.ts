/**
 * Per-channel settings admins choose with /settings, in keyv under `settings:<channel key>`
 * (`discord:<guild|dm>:<channel>`, a thread taking its parent's; `slack:<team>:<channel>`).
 * Values survive restarts and are shared by every instance using the store.
 */
import type Keyv from 'keyv';

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
}

/** The names of the settings, as /settings spells them. */
export const SETTING_NAMES = ['chat_model', 'image_model', 'vision_model', 'system_prompt'] as const;
export type SettingName = (typeof SETTING_NAMES)[number];

/** The field of {@link ChannelSettings} behind each setting name. */
export const SETTING_FIELDS: Record<SettingName, keyof ChannelSettings> = {
  chat_model: 'chatModel',
  image_model: 'imageModel',
  vision_model: 'visionModel',
  system_prompt: 'systemPrompt',
};

/** Reads and writes channel settings. */
export class SettingsStore {
  constructor(private readonly keyv: Keyv) {}

  /** The channel's settings (empty when none were set). */
  async get(channelKey: string): Promise<ChannelSettings> {
    return (await this.keyv.get<ChannelSettings>(this.key(channelKey))) ?? {};
  }

  /**
   * Applies `changes` (an `undefined` value clears that setting) and returns the result.
   * Concurrent updates of one channel are rare (admins); the last write wins.
   */
  async update(channelKey: string, changes: Partial<Record<keyof ChannelSettings, string | undefined>>): Promise<ChannelSettings> {
    const next: ChannelSettings = { ...(await this.get(channelKey)) };
    for (const [field, value] of Object.entries(changes) as Array<[keyof ChannelSettings, string | undefined]>) {
      if (value === undefined) delete next[field];
      else next[field] = value;
    }
    if (Object.keys(next).length === 0) await this.keyv.delete(this.key(channelKey));
    else await this.keyv.set(this.key(channelKey), next);
    return next;
  }

  private key(channelKey: string): string {
    return `settings:${channelKey}`;
  }
}
