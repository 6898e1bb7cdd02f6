/**
 * The Discord fake's world, shared by its modules: identities, the guild, channels, users,
 * messages, interactions, registered commands, and the records a test reads. It holds data
 * and the few operations every module needs; the protocol lives in the other files.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { CommandPermission } from './command-permissions.ts';
import {
  BOT_PERMISSIONS,
  DEFAULT_APPLICATION_ID,
  DEFAULT_GUILD_ID,
  DEFAULT_TOKEN,
  DEFAULT_USER,
  Intent,
} from './constants.ts';
import { GlobalLimit } from './global-limit.ts';
import type { PermissionOverwrite } from './member-permissions.ts';
import { type FakeAttachment, type FakeChannel, type FakeInteraction, FakeMessage, type FakeUser } from './model.ts';
import { RatePressure } from './pressure.ts';
import type {
  FakeCommand,
  FakeDiscordEvents,
  FakeDiscordOptions,
  FakeDownload,
  FakeRequestRecord,
  FakeTyping,
  FakeWrite,
  Fault,
  RateLimitRecord,
} from './types.ts';
import { snowflake } from './util.ts';

/** The guild the fake serves. */
export interface GuildState {
  id: string;
  name: string;
  ownerId: string;
  adminRoleId: string;
  /** The Members role every user holds (constants.ts MEMBERS_ROLE_PERMISSIONS). */
  memberRoleId: string;
  botRoleId: string;
  joinedAt: number;
  /** The guild's language (GUILD_CREATE's `preferred_locale`, interactions' `guild_locale`); default `en-US`. */
  preferredLocale: string;
}

/** {@link FakeDiscordOptions} with every default applied (the ones that may change at run time). */
export type ResolvedOptions = Required<Omit<FakeDiscordOptions, 'token' | 'applicationId' | 'botUsername' | 'guild'>>;

export class FakeState {
  readonly token: string;
  readonly applicationId: string;
  /** `http://127.0.0.1:PORT`. */
  readonly origin: string;
  readonly apiUrl: string;
  readonly gatewayUrl: string;
  readonly guildId: string;
  readonly guild: GuildState;
  readonly botUser: FakeUser;
  readonly options: ResolvedOptions;
  readonly events = new EventEmitter<FakeDiscordEvents>();
  readonly requests: FakeRequestRecord[] = [];
  readonly writes: FakeWrite[] = [];
  readonly rateLimits: RateLimitRecord[] = [];
  readonly typing: FakeTyping[] = [];
  readonly downloads: FakeDownload[] = [];
  /** Key of the CDN's URL signatures (`hm`). */
  readonly cdnSecret = randomBytes(32);
  readonly interactions = new Map<string, FakeInteraction>();
  readonly byToken = new Map<string, FakeInteraction>();
  readonly channels = new Map<string, FakeChannel>();
  readonly users = new Map<string, FakeUser>();
  readonly messages = new Map<string, FakeMessage>();
  /**
   * Files given as attachment options of interactions (`data.resolved.attachments`), by id,
   * with their channel and the interaction (served while its token lives).
   */
  readonly optionAttachments = new Map<
    string,
    { channelId: string; attachment: FakeAttachment; interaction: FakeInteraction }
  >();
  readonly guildCommandLists = new Map<string, FakeCommand[]>();
  readonly commandIds = new Map<string, string>();
  readonly faults: Array<Fault & { left: number }> = [];
  /** The bot token's global rate limit (global-limit.ts). */
  readonly globalLimit = new GlobalLimit(this);
  /** Scripted long waits on channels' writes and the global limit (pressure.ts). */
  readonly pressure = new RatePressure((limited) => {
    this.rateLimits.push(limited);
    this.events.emit('rateLimited', limited);
  });
  /** Channels' permission overwrites, by channel id (member-permissions.ts). */
  readonly overwrites = new Map<string, PermissionOverwrite[]>();
  /** Overrides of commands' permissions a server admin set under Integrations, by command name. */
  readonly commandPermissions = new Map<string, CommandPermission[]>();
  /** Guilds the bot is not a member of, where a user's own install reaches it (user-install.ts). */
  readonly absentGuilds = new Set<string>();
  /** Global commands as registered (last bulk overwrite). */
  commands: FakeCommand[] = [];
  /** The bot's permissions in every channel (its managed role's; `app_permissions`): see `setBotPermissions`. */
  botPermissions: bigint = BOT_PERMISSIONS;
  private seqCounter = 0;

  constructor(port: number, options: FakeDiscordOptions) {
    this.origin = `http://127.0.0.1:${port}`;
    this.apiUrl = `${this.origin}/api`;
    this.gatewayUrl = `ws://127.0.0.1:${port}/gateway`;
    this.token = options.token ?? DEFAULT_TOKEN;
    this.applicationId = options.applicationId ?? DEFAULT_APPLICATION_ID;
    this.options = {
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 41_250,
      responseWindowMs: options.responseWindowMs ?? 3_000,
      tokenTtlMs: options.tokenTtlMs ?? 15 * 60_000,
      messageBudget: options.messageBudget ?? { limit: 5, windowMs: 5_000 },
      webhookBudget: options.webhookBudget ?? { limit: 5, windowMs: 2_000 },
      rateLimitMode: options.rateLimitMode ?? 'shared',
      maxFileBytes: options.maxFileBytes ?? 10 * 1024 * 1024,
      privilegedIntents: options.privilegedIntents ?? 0,
      sessionStartRemaining: options.sessionStartRemaining ?? 1000,
      globalRateLimit: options.globalRateLimit ?? { limit: 50, windowMs: 1_000 },
      spreadEvents: options.spreadEvents ?? false,
    };
    this.botUser = {
      id: this.applicationId,
      username: options.botUsername ?? 'genbot',
      global_name: null,
      discriminator: '4242',
      avatar: null,
      bot: true,
    };
    this.users.set(this.botUser.id, this.botUser);
    this.users.set(DEFAULT_USER.id, DEFAULT_USER);
    this.guildId = options.guild?.id ?? DEFAULT_GUILD_ID;
    this.guild = {
      id: this.guildId,
      name: options.guild?.name ?? 'Fake Guild',
      ownerId: DEFAULT_USER.id,
      adminRoleId: snowflake(),
      memberRoleId: snowflake(),
      botRoleId: snowflake(),
      joinedAt: Date.now(),
      preferredLocale: options.guild?.preferredLocale ?? 'en-US',
    };
    for (const name of options.guild?.channels ?? ['general']) {
      this.addChannel({ type: 0, guildId: this.guildId, name });
    }
  }

  /** Stores a new channel (a fresh snowflake id unless given: a thread started from a message takes the message's), created now. */
  addChannel(channel: Omit<FakeChannel, 'id' | 'createdAt'> & { id?: string }): FakeChannel {
    const created: FakeChannel = { id: snowflake(), createdAt: Date.now(), ...channel };
    this.channels.set(created.id, created);
    return created;
  }

  /** Order among everything the fake records. */
  nextSeq(): number {
    this.seqCounter += 1;
    return this.seqCounter;
  }

  /** The guild's text channels (not threads, not DMs), oldest first. */
  channelList(): FakeChannel[] {
    return [...this.channels.values()].filter((c) => c.type === 0 && c.guildId === this.guildId);
  }

  /** The guild's threads, oldest first. */
  threadList(): FakeChannel[] {
    return [...this.channels.values()].filter((c) => c.type === 11 && c.guildId === this.guildId);
  }

  /** A new, empty message (its content comes with the first revision); the bot's unless `author` is given. */
  newMessage(
    channelId: string,
    kind: FakeMessage['kind'],
    interaction: FakeInteraction | undefined,
    author: FakeUser = this.botUser,
    at = Date.now(),
  ): FakeMessage {
    const message = new FakeMessage(
      snowflake(at),
      channelId,
      this.channels.get(channelId)?.guildId,
      kind,
      at,
      interaction,
      author,
    );
    this.messages.set(message.id, message);
    return message;
  }

  /** A known user, or a stand-in with a name derived from the id (what Discord would resolve). */
  userOf(id: string): FakeUser {
    return (
      this.users.get(id) ?? { id, username: `user${id.slice(-4)}`, global_name: null, discriminator: '0', avatar: null }
    );
  }

  /**
   * A user from a partial description: a known `id` alone is that user; anything else is a
   * new or updated user (default name `user<last 4 digits>`), remembered for mentions.
   */
  userFrom(partial: Partial<FakeUser>): FakeUser {
    const known = partial.id !== undefined ? this.users.get(partial.id) : undefined;
    if (known && Object.keys(partial).length === 1) return known;
    const id = partial.id ?? snowflake();
    const user: FakeUser = { ...this.userOf(id), ...known, ...partial, id };
    this.users.set(id, user);
    return user;
  }

  /** Whether the app is approved for Message Content (what REST reads of messages obey). */
  get approvedForContent(): boolean {
    return (this.options.privilegedIntents & Intent.MessageContent) !== 0;
  }

  /** Commands registered in a guild (last bulk overwrite). */
  guildCommands(guildId: string): FakeCommand[] {
    return this.guildCommandLists.get(guildId) ?? [];
  }

  /** The id a command name keeps across overwrites (Discord keeps ids of same-named commands). */
  commandIdFor(name: string): string {
    let id = this.commandIds.get(name);
    if (!id) {
      id = snowflake();
      this.commandIds.set(name, id);
    }
    return id;
  }
}
