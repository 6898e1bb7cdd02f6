/**
 * Per-channel settings admins choose with /settings, in keyv under `settings:<channel key>`
 * (`discord:<guild|dm>:<channel>`, a thread taking its parent's; `slack:<team>:<channel>`).
 * Values survive restarts and are shared by every instance using the store.
 */
import type Keyv from 'keyv';
import { storeKeys, workspaceOf } from '../keys.ts';
import type { StateStore } from './store.ts';

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
}

/** A change of settings: a value per field, `undefined` clearing it. */
export type SettingsUpdate = { [K in keyof ChannelSettings]?: ChannelSettings[K] | undefined };

/** The names of the settings, as /settings spells them. */
export const SETTING_NAMES = ['chat_model', 'image_model', 'vision_model', 'system_prompt', 'auto_thread'] as const;
export type SettingName = (typeof SETTING_NAMES)[number];

/** The field of {@link ChannelSettings} behind each setting name. */
export const SETTING_FIELDS: Record<SettingName, keyof ChannelSettings> = {
  chat_model: 'chatModel',
  image_model: 'imageModel',
  vision_model: 'visionModel',
  system_prompt: 'systemPrompt',
  auto_thread: 'autoThread',
};

/**
 * How long a channel's settings, once read, are used without reading the store again, in ms.
 * This instance's own /settings changes apply at once; another instance's within this time.
 */
export const SETTINGS_CACHE_MS = 10_000;

/** At most this many channels' settings are kept in memory (the table starts afresh when full). */
const CACHED_CHANNELS = 10_000;

/**
 * At most this many channels of a workspace are listed as having settings (the oldest change
 * drops out, and the list is marked {@link INCOMPLETE}: its channels' settings are then read
 * one by one, as without the list).
 */
export const LISTED_CHANNELS = 1_000;

/** The first entry of a workspace's list once a channel with settings dropped out of it. */
const INCOMPLETE = '*';

/**
 * Reads and writes channel settings. Every /chat, mention and /imagine reads its channel's
 * before its history; they are kept in memory for {@link SETTINGS_CACHE_MS} (one read serves
 * concurrent callers), so a busy channel costs one store read per that time, not one a message.
 *
 * The index: each workspace's list of channels with settings ({@link channelsWithSettings}) is
 * kept complete (written under the store's lock with each change; a store written before the
 * lists were kept is scanned once at start, `storeKeys.settingsIndexed`). A channel not in its
 * workspace's complete list has no settings: a burst of commands in channels without any (1,000
 * /chat in 1,000 channels) costs one read of the list per workspace, not one per channel
 * (bench:streams). The list is kept in memory for the same {@link SETTINGS_CACHE_MS}.
 */
export class SettingsStore {
  private readonly cache = new Map<string, { settings: ChannelSettings; until: number }>();
  private readonly reading = new Map<string, Promise<ChannelSettings>>();
  /** Counts updates: a read that began before one is not remembered (it may hold the old value). */
  private updates = 0;
  /** Whether the workspaces' lists are complete (the index is built): set once, at start. */
  private indexed = false;
  /** The index being checked or built, once started. */
  readonly indexing: Promise<void>;
  /** Each workspace's listed channels (undefined: the list is incomplete), until when they are used. */
  private readonly lists = new Map<string, { channels: Set<string> | undefined; until: number }>();
  private readonly listReads = new Map<string, Promise<Set<string> | undefined>>();

  /**
   * @param cacheMs how long read settings (and lists) are used (tests shorten it).
   * @param state the store's scan and lock, for the index; without them every channel's settings are read.
   */
  constructor(
    private readonly keyv: Keyv,
    private readonly cacheMs = SETTINGS_CACHE_MS,
    private readonly state?: Pick<StateStore, 'listKeys' | 'withLock'>,
  ) {
    // A store that cannot be scanned or read now keeps reading each channel's settings.
    this.indexing = state ? this.buildIndex(state).catch(() => undefined) : Promise.resolve();
  }

  /** The channel's settings (empty when none were set). @throws what the store throws. */
  async get(channelKey: string): Promise<ChannelSettings> {
    const cached = this.cache.get(channelKey);
    if (cached && cached.until > Date.now()) return { ...cached.settings };
    if (this.indexed && (await this.unlisted(channelKey))) return {};
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
    return (await this.listOf(workspace)).filter((c) => c !== INCOMPLETE);
  }

  /** A workspace's list as stored (its first entry {@link INCOMPLETE} when channels dropped out). */
  private async listOf(workspace: string): Promise<string[]> {
    return (await this.keyv.get<string[]>(storeKeys.settingsChannels(workspace))) ?? [];
  }

  /**
   * Adds a channel to its workspace's list of channels with settings, or removes it; under the
   * store's lock on the list where there is one (two admins' changes at once both stay).
   */
  private async list(channelKey: string, present: boolean): Promise<void> {
    const workspace = workspaceOf(channelKey);
    if (!workspace) return;
    await this.changeList(workspace, (listed) =>
      present
        ? listed.includes(channelKey)
          ? listed
          : [...listed, channelKey]
        : listed.filter((c) => c !== channelKey),
    );
  }

  /** Rewrites a workspace's list by `change` (marking it incomplete past {@link LISTED_CHANNELS}) and remembers it. */
  private async changeList(workspace: string, change: (listed: string[]) => string[]): Promise<void> {
    const key = storeKeys.settingsChannels(workspace);
    const write = async () => {
      const stored = await this.listOf(workspace);
      const incomplete = stored[0] === INCOMPLETE;
      const listed = incomplete ? stored.slice(1) : stored;
      const changed = change(listed);
      if (changed === listed) return;
      const next =
        incomplete || changed.length > LISTED_CHANNELS ? [INCOMPLETE, ...changed.slice(-LISTED_CHANNELS)] : changed;
      await this.keyv.set(key, next);
      this.listReads.delete(workspace);
      this.lists.set(workspace, { channels: listedSet(next), until: Date.now() + this.cacheMs });
    };
    await (this.state ? this.state.withLock(key, write) : write());
  }

  /** Whether the index says the channel has no settings (then remembered as none, as long as its list is). */
  private async unlisted(channelKey: string): Promise<boolean> {
    const workspace = workspaceOf(channelKey);
    if (!workspace) return false;
    const channels = await this.listed(workspace);
    if (!channels || channels.has(channelKey)) return false;
    this.remember(channelKey, {}, this.lists.get(workspace)?.until);
    return true;
  }

  /** A workspace's listed channels (one read for concurrent callers, kept {@link cacheMs}); undefined when the list is incomplete or unreadable. */
  private async listed(workspace: string): Promise<Set<string> | undefined> {
    const known = this.lists.get(workspace);
    if (known && known.until > Date.now()) return known.channels;
    let read = this.listReads.get(workspace);
    if (!read) {
      const updates = this.updates;
      read = this.listOf(workspace).then(
        (stored) => {
          const channels = listedSet(stored);
          if (updates === this.updates) this.lists.set(workspace, { channels, until: Date.now() + this.cacheMs });
          return channels;
        },
        () => undefined,
      );
      void read.finally(() => this.listReads.delete(workspace));
      this.listReads.set(workspace, read);
    }
    return read;
  }

  /**
   * Checks the index, and builds it once on a store written before the lists were kept: every
   * `settings:` key scanned, each workspace's channels added to its list (under its lock, so a
   * change made meanwhile stays), then `settingsIndexed` set.
   */
  private async buildIndex(state: Pick<StateStore, 'listKeys' | 'withLock'>): Promise<void> {
    if (!(await this.keyv.get<boolean>(storeKeys.settingsIndexed()))) {
      const byWorkspace = new Map<string, string[]>();
      for (const key of await state.listKeys(storeKeys.settings(''))) {
        const channelKey = key.slice(storeKeys.settings('').length);
        const workspace = workspaceOf(channelKey);
        if (workspace) byWorkspace.set(workspace, [...(byWorkspace.get(workspace) ?? []), channelKey]);
      }
      for (const [workspace, channels] of byWorkspace)
        await this.changeList(workspace, (listed) => {
          const missing = channels.filter((c) => !listed.includes(c));
          return missing.length ? [...listed, ...missing] : listed;
        });
      await this.keyv.set(storeKeys.settingsIndexed(), true);
    }
    this.indexed = true;
  }

  private async read(channelKey: string): Promise<ChannelSettings> {
    return (await this.keyv.get<ChannelSettings>(this.key(channelKey))) ?? {};
  }

  private remember(channelKey: string, settings: ChannelSettings, until = Date.now() + this.cacheMs): void {
    if (this.cache.size >= CACHED_CHANNELS && !this.cache.has(channelKey)) this.cache.clear();
    this.cache.set(channelKey, { settings, until });
  }

  private key(channelKey: string): string {
    return storeKeys.settings(channelKey);
  }
}

/** The channels of a stored list, or undefined when it is incomplete (some channels with settings dropped out). */
function listedSet(stored: readonly string[]): Set<string> | undefined {
  return stored[0] === INCOMPLETE ? undefined : new Set(stored);
}
