/**
 * Who is invoking, on Discord, and what they may do: an admin of the bot has Administrator or
 * Manage Server in the guild, or is listed in `ADMIN_USER_IDS`, or holds a role listed in
 * `ADMIN_ROLE_IDS`; Manage Messages lets a member clear a channel's history (/forget). In a
 * DM there is no member: nobody is an admin there (except listed users).
 */
import {
  type APIInteractionGuildMember,
  type GuildMember,
  PermissionFlagsBits,
  type PermissionsBitField,
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

/** The role ids of a member, whichever shape discord.js gave it. */
function roleIdsOf(member: GuildMember | APIInteractionGuildMember | null | undefined): string[] {
  if (!member) return [];
  return Array.isArray(member.roles) ? member.roles : [...(member as GuildMember).roles.cache.keys()];
}

/**
 * The invoking user as the core sees it.
 * @param permissions the member's permissions in the channel (`interaction.memberPermissions`,
 *   `message.member.permissions`); null in DMs.
 */
export function invocationUser(
  user: User,
  member: GuildMember | APIInteractionGuildMember | null | undefined,
  permissions: Readonly<PermissionsBitField> | null | undefined,
  admins: AdminList,
): InvocationUser {
  const isAdmin =
    holdsAny(permissions, ADMIN_BITS) ||
    admins.userIds.has(user.id) ||
    // discord.js builds a cached member's role list from the guild's roles on each read: only when roles are listed.
    (admins.roleIds.size > 0 && roleIdsOf(member).some((id) => admins.roleIds.has(id)));
  // Administrator, which manages messages too, made `isAdmin` already.
  const canManageMessages = isAdmin || holdsAny(permissions, PermissionFlagsBits.ManageMessages);
  return new KnownUser(user.id, user.username, isAdmin, canManageMessages);
}

/** An InvocationUser whose rights the interaction itself said (no closures: an answer keeps its user while it streams). */
class KnownUser implements InvocationUser {
  constructor(
    readonly id: string,
    readonly name: string,
    private readonly admin: boolean,
    private readonly managesMessages: boolean,
  ) {}

  isAdmin(): Promise<boolean> {
    return Promise.resolve(this.admin);
  }

  canManageMessages(): Promise<boolean> {
    return Promise.resolve(this.managesMessages);
  }
}
