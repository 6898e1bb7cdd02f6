/**
 * FakeDiscord: members' permissions in a channel as Discord computes them (member-permissions.ts):
 * a channel's overwrites, set as an admin does (`setPermissionOverwrites`), reach discord.js as
 * CHANNEL_UPDATE (its `permissionsFor`), interactions as `member.permissions`, and a user who
 * may not post there cannot; `GET /guilds/:id/members/:user` answers a member.
 */
import { GatewayIntentBits as I, type TextChannel } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { DispatchInteractionOptions, Json } from '../discord.ts';
import { ALL_PERMISSIONS, DEFAULT_USER, MEMBER_PERMISSIONS, P } from './constants.ts';
import { api, cleanup, json, nextMessage, startClient, startFake } from './test-helpers.ts';

afterEach(cleanup);

const BOB = { id: '440000000000000002', username: 'bob' };

describe('FakeDiscord: members’ permissions', () => {
  it("sends a channel's overwrites as CHANNEL_UPDATE, from which discord.js computes a member's permissions there and in its threads", async () => {
    const fake = await startFake();
    const client = await startClient(fake, [I.Guilds, I.GuildMessages]);
    const general = fake.channelList[0]!;
    const thread = fake.addThread(general.id, 'a thread');
    // Bob's first message makes him a member discord.js knows.
    const seen = nextMessage(client, (m) => m.author.id === BOB.id);
    fake.postUserMessage({ channelId: general.id, content: 'hello', author: BOB });
    const member = (await seen).member!;
    const channel = client.channels.cache.get(general.id) as TextChannel;
    expect(channel.permissionsFor(member).has(P.ReadMessageHistory)).toBe(true);

    const updated = new Promise((resolve) => client.once('channelUpdate', resolve));
    fake.setPermissionOverwrites(general.id, [
      { id: fake.guildId, type: 'role', deny: P.AddReactions },
      { id: BOB.id, type: 'member', deny: P.ReadMessageHistory | P.SendMessagesInThreads },
    ]);
    await updated;
    const inChannel = channel.permissionsFor(member);
    expect([inChannel.has(P.ReadMessageHistory), inChannel.has(P.AddReactions), inChannel.has(P.SendMessages)]).toEqual(
      [false, false, true],
    );
    const inThread = client.channels.cache.get(thread.id)!;
    if (!inThread.isThread()) throw new Error('no thread');
    expect(inThread.permissionsFor(member)!.has(P.SendMessagesInThreads)).toBe(false);
  });

  it('sends an interaction the invoker’s permissions with the channel’s overwrites applied (in a thread, its parent’s), unless a test gives them', async () => {
    const fake = await startFake();
    const general = fake.channelList[0]!;
    const thread = fake.addThread(general.id, 'a thread');
    await startClient(fake, [I.Guilds]);
    fake.setPermissionOverwrites(general.id, [
      { id: fake.guildId, type: 'role', deny: P.ReadMessageHistory },
      { id: BOB.id, type: 'member', deny: P.SendMessages, allow: P.ReadMessageHistory },
    ]);
    const sent = (options: Omit<DispatchInteractionOptions, 'command'>) => {
      const payload = fake.dispatchInteraction({ command: 'chat', options: { prompt: 'hi' }, ...options }).payload;
      const member = BigInt((payload.member as Json).permissions as string);
      expect(BigInt((payload.channel as Json).permissions as string)).toBe(member);
      return member;
    };
    expect(sent({ channelId: general.id, user: BOB })).toBe(MEMBER_PERMISSIONS & ~P.SendMessages);
    expect(sent({ channelId: thread.id, user: BOB })).toBe(MEMBER_PERMISSIONS & ~P.SendMessages);
    expect(sent({ channelId: general.id, user: { id: '440000000000000003' } })).toBe(
      MEMBER_PERMISSIONS & ~P.ReadMessageHistory,
    );
    expect(sent({ channelId: general.id, user: BOB, admin: true })).toBe(ALL_PERMISSIONS);
    expect(sent({ channelId: general.id, user: BOB, permissions: String(P.ViewChannel) })).toBe(P.ViewChannel);
  });

  it("refuses a user's message where they may not post (Send Messages; in a thread, Send Messages in Threads): Discord's client would not send it", async () => {
    const fake = await startFake();
    const general = fake.channelList[0]!;
    const thread = fake.addThread(general.id, 'a thread');
    fake.setPermissionOverwrites(general.id, [
      { id: BOB.id, type: 'member', deny: P.SendMessagesInThreads },
      { id: '440000000000000003', type: 'member', deny: P.SendMessages },
    ]);
    expect(fake.postUserMessage({ channelId: general.id, content: 'ok', author: BOB }).content).toBe('ok');
    expect(() => fake.postUserMessage({ channelId: thread.id, content: 'no', author: BOB })).toThrow(/may not send/);
    const carol = { id: '440000000000000003', username: 'carol' };
    expect(() => fake.postUserMessage({ channelId: general.id, content: 'no', author: carol })).toThrow(/may not send/);
    expect(fake.postUserMessage({ channelId: thread.id, content: 'ok', author: carol }).content).toBe('ok');
    // The guild's owner holds every permission whatever the overwrites.
    fake.setPermissionOverwrites(general.id, [{ id: fake.guildId, type: 'role', deny: P.SendMessages }]);
    expect(
      fake.postUserMessage({ channelId: general.id, content: 'mine', author: { id: DEFAULT_USER.id } }).content,
    ).toBe('mine');
    expect(() => fake.setPermissionOverwrites(thread.id, [])).toThrow(/not a text channel/);
  });

  it('answers GET /guilds/:id/members/:user with the member and its user (discord.js guild.members.fetch); 10007 for an unknown user', async () => {
    const fake = await startFake();
    const general = fake.channelList[0]!;
    fake.postUserMessage({ channelId: general.id, content: 'hi', author: BOB });
    const res = await api(fake, `/guilds/${fake.guildId}/members/${BOB.id}`, { auth: true });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ user: { id: BOB.id, username: 'bob' }, roles: [expect.any(String)] });
    const unknown = await api(fake, `/guilds/${fake.guildId}/members/440000000000000099`, { auth: true });
    expect([unknown.status, (await json(unknown)).code]).toEqual([404, 10007]);
    expect((await api(fake, `/guilds/${fake.guildId}/members/${BOB.id}`)).status).toBe(401);
    const client = await startClient(fake, [I.Guilds]);
    const member = await client.guilds.cache.get(fake.guildId)!.members.fetch(BOB.id);
    expect(member.user.username).toBe('bob');
  });
});
