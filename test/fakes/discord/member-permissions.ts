/**
 * Members' permissions in a channel, as Discord computes them (topics/permissions.mdx,
 * "Permission Overwrites"): the base permissions (the @everyone role's and the member's roles';
 * the guild's owner and Administrator hold every permission), then the channel's overwrites in
 * order: @everyone's (its id is the guild's), the member's roles' together, the member's own.
 * A thread has no overwrites of its own: its parent's apply. The overwrites are what a server
 * admin sets in a channel's settings (FakeDiscord.setPermissionOverwrites); guild channels carry them
 * as `permission_overwrites` (GUILD_CREATE, CHANNEL_UPDATE), from which discord.js computes
 * `permissionsFor`, and interactions carry the result as `member.permissions` (and the
 * channel's `permissions`): "total permissions of the member in the channel, including
 * overwrites".
 */
import { ALL_PERMISSIONS, MEMBER_PERMISSIONS, P } from './constants.ts';
import { ChannelType, type FakeChannel } from './model.ts';
import type { FakeState } from './state.ts';
import type { Json } from './types.ts';

/** One overwrite of a channel, as a test gives it: a role's (the guild's id is @everyone's) or a member's. */
export interface PermissionOverwrite {
  id: string;
  type: 'role' | 'member';
  allow?: bigint;
  deny?: bigint;
}

/** A channel's overwrites as Discord sends them (`type` 0 role, 1 member; bitfields as decimal strings). */
export function overwritesJson(state: FakeState, channelId: string): Json[] {
  return (state.overwrites.get(channelId) ?? []).map((o) => ({
    id: o.id,
    type: o.type === 'role' ? 0 : 1,
    allow: String(o.allow ?? 0n),
    deny: String(o.deny ?? 0n),
  }));
}

/**
 * Sets a guild text channel's overwrites, replacing the ones it had (the caller announces the
 * channel: CHANNEL_UPDATE).
 * @returns the channel.
 * @throws Error for a thread or a DM (they have none of their own) or an unknown channel.
 */
export function setOverwrites(state: FakeState, channelId: string, overwrites: PermissionOverwrite[]): FakeChannel {
  const channel = state.channels.get(channelId);
  if (channel?.type !== ChannelType.GuildText)
    throw new Error(`FakeDiscord: ${channelId} is not a text channel of the guild (threads take their parent's)`);
  state.overwrites.set(
    channelId,
    overwrites.map((o) => ({ ...o })),
  );
  return channel;
}

/**
 * A member's permissions in a channel or thread of the guild (see the file's comment).
 * @param base the member's permissions from their roles (@everyone's included), before overwrites
 *   (every permission for the guild's owner: the caller's to say; interactions model their
 *   default invoker as a plain member).
 * @param roles the member's role ids (for the roles' overwrites).
 */
export function permissionsIn(
  state: FakeState,
  channel: FakeChannel,
  userId: string,
  base: bigint,
  roles: readonly string[] = [],
): bigint {
  if ((base & P.Administrator) !== 0n) return ALL_PERMISSIONS;
  const where = channel.type === ChannelType.PublicThread ? channel.parentId! : channel.id;
  const overwrites = state.overwrites.get(where) ?? [];
  let permissions = base;
  const apply = (allow: bigint, deny: bigint) => {
    permissions = (permissions & ~deny) | allow;
  };
  const everyone = overwrites.find((o) => o.type === 'role' && o.id === state.guildId);
  if (everyone) apply(everyone.allow ?? 0n, everyone.deny ?? 0n);
  let allow = 0n;
  let deny = 0n;
  for (const o of overwrites)
    if (o.type === 'role' && o.id !== state.guildId && roles.includes(o.id)) {
      allow |= o.allow ?? 0n;
      deny |= o.deny ?? 0n;
    }
  apply(allow, deny);
  const own = overwrites.find((o) => o.type === 'member' && o.id === userId);
  if (own) apply(own.allow ?? 0n, own.deny ?? 0n);
  return permissions;
}

/**
 * Whether a user may post a message in a guild channel or thread (Send Messages; in a thread,
 * Send Messages in Threads; View Channel either way): Discord's client sends nothing otherwise.
 * A plain member: the @everyone role's permissions, then the overwrites; the guild's owner, all.
 */
export function userMayPost(state: FakeState, channel: FakeChannel, userId: string): boolean {
  const base = userId === state.guild.ownerId ? ALL_PERMISSIONS : MEMBER_PERMISSIONS;
  const permissions = permissionsIn(state, channel, userId, base);
  const needed = P.ViewChannel | (channel.type === ChannelType.PublicThread ? P.SendMessagesInThreads : P.SendMessages);
  return (permissions & needed) === needed;
}
