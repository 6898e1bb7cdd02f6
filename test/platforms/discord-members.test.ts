/**
 * Who is a bot admin on Discord, from what an interaction says (platforms/discord/members.ts):
 * Administrator or Manage Server, a listed user or a listed role; Manage Messages lets a member
 * clear a channel's history.
 */
import { PermissionFlagsBits, PermissionsBitField, type User } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { invocationUser } from '../../src/platforms/discord/members.ts';

const user = { id: '1290000000000000001', username: 'member' } as User;
const noLists = { userIds: new Set<string>(), roleIds: new Set<string>() };
const rights = async (permissions: bigint | null, admins = noLists, roles: string[] = []) => {
  const field = permissions === null ? null : new PermissionsBitField(permissions).freeze();
  const member = { roles, permissions: String(permissions ?? 0n) } as never;
  const invoker = invocationUser(user, permissions === null ? null : member, field, admins);
  return { admin: await invoker.isAdmin(), manages: await invoker.canManageMessages() };
};

describe('invocationUser (Discord)', () => {
  it('Administrator and Manage Server make an admin, who may also manage messages', async () => {
    expect(await rights(PermissionFlagsBits.Administrator)).toEqual({ admin: true, manages: true });
    expect(await rights(PermissionFlagsBits.ManageGuild | PermissionFlagsBits.SendMessages)).toEqual({
      admin: true,
      manages: true,
    });
  });

  it('Manage Messages alone manages messages without making an admin; plain members neither', async () => {
    expect(await rights(PermissionFlagsBits.ManageMessages | PermissionFlagsBits.SendMessages)).toEqual({
      admin: false,
      manages: true,
    });
    expect(await rights(PermissionFlagsBits.SendMessages | PermissionFlagsBits.ViewChannel)).toEqual({
      admin: false,
      manages: false,
    });
    expect(await rights(0n)).toEqual({ admin: false, manages: false });
  });

  it('a listed user or role is an admin whatever the permissions; in a DM (no member, no permissions) only a listed user', async () => {
    const lists = { userIds: new Set([user.id]), roleIds: new Set<string>() };
    expect(await rights(PermissionFlagsBits.SendMessages, lists)).toEqual({ admin: true, manages: true });
    const roles = { userIds: new Set<string>(), roleIds: new Set(['77']) };
    expect(await rights(PermissionFlagsBits.SendMessages, roles, ['5', '77'])).toEqual({ admin: true, manages: true });
    expect(await rights(PermissionFlagsBits.SendMessages, roles, ['5'])).toEqual({ admin: false, manages: false });
    expect(await rights(null)).toEqual({ admin: false, manages: false });
    expect(await rights(null, lists)).toEqual({ admin: true, manages: true });
  });
});
