/**
 * Who is a bot admin on Discord, from what an interaction says (platforms/discord/members.ts):
 * Administrator or Manage Server, a listed user or a listed role; Manage Messages lets a member
 * clear a channel's history; what the bot does for a member follows their own rights there (post,
 * open a thread, read the history).
 */
import { PermissionFlagsBits, PermissionsBitField, type User } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { invocationUser, mayOpenThread, mayPost, mayReadHistory } from '../../src/platforms/discord/members.ts';

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

describe("a member's own rights where the bot acts for them (Discord)", () => {
  const P = PermissionFlagsBits;
  const field = (bits: bigint) => new PermissionsBitField(bits).freeze();

  it('posting takes Send Messages, in a thread Send Messages in Threads; Administrator holds both; a DM (null) allows it', async () => {
    const viewOnly = field(P.ViewChannel | P.UseApplicationCommands);
    expect([mayPost(viewOnly, false), mayPost(viewOnly, true)]).toEqual([false, false]);
    expect([mayPost(field(P.SendMessages), false), mayPost(field(P.SendMessages), true)]).toEqual([true, false]);
    const inThreads = field(P.SendMessagesInThreads);
    expect([mayPost(inThreads, false), mayPost(inThreads, true)]).toEqual([false, true]);
    expect([mayPost(field(P.Administrator), true), mayPost(null, false)]).toEqual([true, true]);
    // The InvocationUser says the same to the core.
    const canPost = (bits: bigint | null, inThread: boolean) =>
      invocationUser(user, null, bits === null ? null : field(bits), noLists, inThread).canPost!();
    expect(await canPost(P.SendMessages, false)).toBe(true);
    expect(await canPost(P.SendMessages, true)).toBe(false);
    expect(await canPost(P.ViewChannel, false)).toBe(false);
    expect(await canPost(null, false)).toBe(true);
  });

  it('opening a thread takes Create Public Threads and Send Messages in Threads; reading the history, Read Message History', () => {
    expect(mayOpenThread(field(P.CreatePublicThreads | P.SendMessagesInThreads))).toBe(true);
    expect(mayOpenThread(field(P.CreatePublicThreads | P.SendMessages))).toBe(false);
    expect(mayOpenThread(field(P.SendMessagesInThreads))).toBe(false);
    expect(mayOpenThread(null)).toBe(true);
    expect(mayReadHistory(field(P.ViewChannel | P.ReadMessageHistory))).toBe(true);
    expect(mayReadHistory(field(P.ViewChannel | P.SendMessages))).toBe(false);
    expect(mayReadHistory(field(P.Administrator))).toBe(true);
  });
});
