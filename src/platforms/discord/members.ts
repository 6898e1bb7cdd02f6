/**
 * Who is invoking, on Discord, and what they may do: an admin of the bot has Administrator or
 * Manage Server in the guild, or is listed in `ADMIN_USER_IDS`, or holds a role listed in
 * `ADMIN_ROLE_IDS`; Manage Messages lets a member clear a channel's history (/forget). In a
 * DM there is no member: nobody is an admin there (except listed users).
 *
 * What the bot does on a member's behalf follows the member's own rights where it happens, as
 * Discord computed them for the channel (an interaction's `member.permissions`: "total
 * permissions of the member in the channel, including overwrites"; for a message's author,
 * discord.js's `permissionsFor` from the cached roles and overwrites): the bot posts for them
 * only where they may post themselves (Send Messages; in a thread, Send Messages in Threads),
 * opens a thread for them only where they may open one (Create Public Threads and Send Messages
 * in Threads), and reads a reply chain or a thread's earlier messages for them only where they
 * may read the history (Read Message History). An app command's own reply (its interaction
 * response) is Discord's to allow (Use Application Commands); a button press is not gated by
 * Discord beyond seeing the message, so a press that posts is checked here.
 */
import {
  type APIInteractionGuildMember,
  type GuildMember,
  type Interaction,
  type Message,
  PermissionFlagsBits,
  PermissionsBitField,
  type User,
} from 'discord.js';
import type { AdminList } from '../../core/core.ts';
import type { InvocationUser } from '../../core/platform.ts';

/** Administrator or Manage Server: the permissions that make a member a bot admin. */
const ADMIN_BITS = PermissionFlagsBits.Administrator | PermissionFlagsBits.ManageGuild;

/**
 * Whether `permissions` hold any of `bits` (Administrator does not count for others here: callers
 * name it). One test of the bitfield: a command's intake pays this per interaction, where
 * discord.js's `has` resolves each flag and checks Administrator again, a few BigInts per call.
 */
function holdsAny(permissions: Readonly<PermissionsBitField> | null | undefined, bits: bigint): boolean {
  return permissions != null && (permissions.bitfield & bits) !== 0n;
}

/** What opening a public thread and posting in it need: of the bot, and of the member it is opened for (threads.ts). */
export const OPEN_THREAD_BITS = PermissionFlagsBits.CreatePublicThreads | PermissionFlagsBits.SendMessagesInThreads;

/**
 * Whether a member may post where `permissions` hold: Send Messages, or in a thread Send
 * Messages in Threads (Discord's "Permissions": a thread takes the latter instead).
 * @param permissions the member's permissions in the channel (the thread's parent's for a
 *   thread); null in a DM, where one may post.
 */
export function mayPost(permissions: Readonly<PermissionsBitField> | null | undefined, inThread: boolean): boolean {
  return holdsAll(permissions, inThread ? PermissionFlagsBits.SendMessagesInThreads : PermissionFlagsBits.SendMessages);
}

/** Whether a member may open a public thread where `permissions` hold (every bit of {@link OPEN_THREAD_BITS}); null: unknown, left to Discord. */
export function mayOpenThread(permissions: Readonly<PermissionsBitField> | null | undefined): boolean {
  return holdsAll(permissions, OPEN_THREAD_BITS);
}

/** Whether a member may read the messages sent before they looked (Read Message History); null in a DM, where one may. */
export function mayReadHistory(permissions: Readonly<PermissionsBitField> | null | undefined): boolean {
  return holdsAll(permissions, PermissionFlagsBits.ReadMessageHistory);
}

/** Whether `permissions` hold every bit of `bits`, or Administrator (which holds them all); null (a DM, or unknown) holds them. */
function holdsAll(permissions: Readonly<PermissionsBitField> | null | undefined, bits: bigint): boolean {
  if (permissions == null) return true;
  return (permissions.bitfield & bits) === bits || holdsAny(permissions, PermissionFlagsBits.Administrator);
}

/**
 * The permissions of a message's author in its channel (a thread's parent's, for a thread),
 * computed by discord.js from the cached guild roles, channel overwrites and member (which
 * MESSAGE_CREATE carries); the member fetched (GET /guilds/{guild}/members/{user}) when it is
 * not cached, as for a message read through REST (catch-up). No permission at all when the
 * author is no member (Discord's 10007) or the fetch fails. Null in a DM. Never throws.
 */
export async function authorPermissions(message: Message): Promise<Readonly<PermissionsBitField> | null> {
  if (!message.inGuild()) return null;
  const member = message.member ?? (await message.guild.members.fetch(message.author.id).catch(() => null));
  return (member && message.channel.permissionsFor(member)) ?? new PermissionsBitField(0n).freeze();
}

/** The role ids of a member, whichever shape discord.js gave it. */
function roleIdsOf(member: GuildMember | APIInteractionGuildMember | null | undefined): string[] {
  if (!member) return [];
  return Array.isArray(member.roles) ? member.roles : [...(member as GuildMember).roles.cache.keys()];
}

/**
 * The invoking user as the core sees it.
 * @param permissions the member's permissions in the channel (`interaction.memberPermissions`,
 *   `message.member.permissions`); null in DMs.
 * @param inThread whether the channel is a thread (posting there takes Send Messages in Threads).
 */
export function invocationUser(
  user: User,
  member: GuildMember | APIInteractionGuildMember | null | undefined,
  permissions: Readonly<PermissionsBitField> | null | undefined,
  admins: AdminList,
  inThread = false,
): InvocationUser {
  const isAdmin =
    holdsAny(permissions, ADMIN_BITS) ||
    admins.userIds.has(user.id) ||
    // discord.js builds a cached member's role list from the guild's roles on each read: only when roles are listed.
    (admins.roleIds.size > 0 && roleIdsOf(member).some((id) => admins.roleIds.has(id)));
  // Administrator, which manages messages too, made `isAdmin` already.
  const canManageMessages = isAdmin || holdsAny(permissions, PermissionFlagsBits.ManageMessages);
  return new KnownUser(user.id, user.username, isAdmin, canManageMessages, mayPost(permissions, inThread));
}

/**
 * The user of an interaction (a slash command, a component, a message command or its modal),
 * with the rights Discord sent with it ({@link invocationUser}): its `member.permissions` are
 * the member's in the interaction's channel, overwrites applied.
 */
export function interactionUser(
  interaction: Pick<Interaction, 'user' | 'member' | 'memberPermissions' | 'channel'>,
  admins: AdminList,
): InvocationUser {
  return invocationUser(
    interaction.user,
    interaction.member,
    interaction.memberPermissions,
    admins,
    interaction.channel?.isThread(),
  );
}

/**
 * The user of an interaction where the bot is not a member (user-install.ts): the server's
 * permissions do not make them the bot's admin there (only `ADMIN_USER_IDS` does: the operator's
 * word, not a server's), the conversation is their own (they may clear it), and what is posted is
 * the interaction's own answer, Discord's to allow (Use External Apps: without it, Discord shows
 * the answer to them alone).
 */
export function userInstallUser(user: User, admins: AdminList): InvocationUser {
  return new KnownUser(user.id, user.username, admins.userIds.has(user.id), true, true);
}

/** An InvocationUser whose rights the interaction itself said (no closures: an answer keeps its user while it streams). */
class KnownUser implements InvocationUser {
  constructor(
    readonly id: string,
    readonly name: string,
    private readonly admin: boolean,
    private readonly managesMessages: boolean,
    private readonly posts: boolean,
  ) {}

  isAdmin(): Promise<boolean> {
    return Promise.resolve(this.admin);
  }

  canManageMessages(): Promise<boolean> {
    return Promise.resolve(this.managesMessages);
  }

  canPost(): Promise<boolean> {
    return Promise.resolve(this.posts);
  }
}
