/** Fixed values of the Discord fake: default identities, Discord's limits, permission bits. */
import type { FakeUser } from './model.ts';

/** Default application id, also the bot user's id (19 digits, as discord.js's route parser expects). */
export const DEFAULT_APPLICATION_ID = '1290000000000000001';
/** Default id of the one guild the bot is in. */
export const DEFAULT_GUILD_ID = '1290000000000000100';
/** Shaped like a real bot token: base64(app id) . timestamp part . HMAC part. */
export const DEFAULT_TOKEN = `${Buffer.from(DEFAULT_APPLICATION_ID).toString('base64url')}.GfAkE1.fake-discord-bot-token-DO-NOT-LEAK-0123456789`;
/** The user who invokes interactions unless a test names another. */
export const DEFAULT_USER: FakeUser = {
  id: '1290000000000000900',
  username: 'ada',
  global_name: 'Ada',
  discriminator: '0',
  avatar: null,
};

export const API_VERSION = '10';
export const DISCORD_EPOCH = 1_420_070_400_000n;
/** Characters (code points) of a message's `content`. */
export const MAX_CONTENT = 2000;
export const MAX_EMBEDS = 10;
export const MAX_FILES = 10;
/** Largest request body the fake reads, in bytes (Discord refuses far less; this only bounds memory). */
export const MAX_REQUEST_BYTES = 120 * 1024 * 1024;

/** Permission bits used here. */
export const P = {
  CreateInstantInvite: 1n << 0n,
  Administrator: 1n << 3n,
  ManageGuild: 1n << 5n,
  AddReactions: 1n << 6n,
  ViewChannel: 1n << 10n,
  SendMessages: 1n << 11n,
  EmbedLinks: 1n << 14n,
  AttachFiles: 1n << 15n,
  ReadMessageHistory: 1n << 16n,
  MentionEveryone: 1n << 17n,
  UseExternalEmojis: 1n << 18n,
  Connect: 1n << 20n,
  Speak: 1n << 21n,
  ChangeNickname: 1n << 26n,
  UseApplicationCommands: 1n << 31n,
  ManageThreads: 1n << 34n,
  CreatePublicThreads: 1n << 35n,
  SendMessagesInThreads: 1n << 38n,
} as const;
export const ALL_PERMISSIONS = (1n << 51n) - 1n;
/** The @everyone role's permissions. */
export const EVERYONE_PERMISSIONS =
  P.CreateInstantInvite |
  P.AddReactions |
  P.ViewChannel |
  P.SendMessages |
  P.EmbedLinks |
  P.AttachFiles |
  P.ReadMessageHistory |
  P.UseExternalEmojis |
  P.Connect |
  P.Speak |
  P.ChangeNickname |
  P.UseApplicationCommands |
  P.SendMessagesInThreads;
/**
 * The Members role every user of the guild holds (not the bot): Create Public Threads, which
 * Discord's default @everyone grants. A role of its own, so that the bot's permissions stay what
 * its own role says ({@link FakeDiscord.setBotPermissions} can take Create Public Threads away).
 */
export const MEMBERS_ROLE_PERMISSIONS = P.CreatePublicThreads;
/** A plain member's permissions in a channel without overwrites: @everyone's and the Members role's. */
export const MEMBER_PERMISSIONS = EVERYONE_PERMISSIONS | MEMBERS_ROLE_PERMISSIONS;
/** The bot's role by default: what the operator guide's install link grants (docs/operator-guide.md) (Create Public Threads among them). */
export const BOT_PERMISSIONS = EVERYONE_PERMISSIONS | P.MentionEveryone | P.CreatePublicThreads;

/** Gateway intent bits (events/gateway.mdx, "List of Intents"). */
export const Intent = {
  Guilds: 1 << 0,
  GuildMembers: 1 << 1,
  GuildPresences: 1 << 8,
  GuildMessages: 1 << 9,
  GuildMessageTyping: 1 << 11,
  DirectMessages: 1 << 12,
  DirectMessageTyping: 1 << 14,
  MessageContent: 1 << 15,
} as const;
/** Intents an application must be approved for in the Developer Portal. */
export const PRIVILEGED_INTENTS = Intent.GuildMembers | Intent.GuildPresences | Intent.MessageContent;
