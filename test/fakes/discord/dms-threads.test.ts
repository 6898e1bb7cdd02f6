/**
 * FakeDiscord: DM channels (openDm, `POST /users/@me/channels`) and public threads
 * (addThread, THREAD_CREATE), driven with a real discord.js client where the bot's view
 * matters: its DM channel, its thread, its messages there.
 */

import { ChannelType, type DMChannel, GatewayIntentBits as I, type ThreadChannel } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_USER, type Json } from '../discord.ts';
import {
  api,
  cleanup,
  connectBot,
  GUILD_MESSAGES,
  GUILDS,
  json,
  nextMessage,
  startClient,
  startFake,
} from './test-helpers.ts';

afterEach(cleanup);

describe('FakeDiscord DMs', () => {
  it('answers discord.js createDM with the DM channel the fake holds (type 1, recipients), creating it on first use', async () => {
    const fake = await startFake();
    const client = await startClient(fake, [I.Guilds, I.DirectMessages]);
    const opened = fake.openDm({ id: '1290000000000000777', username: 'grace' });
    const same = await client.users.createDM('1290000000000000777', { force: true });
    expect(same.id).toBe(opened.id);
    expect(same.type).toBe(ChannelType.DM);
    expect(same.recipientId).toBe('1290000000000000777');

    const fresh = await client.users.createDM(DEFAULT_USER.id, { force: true });
    expect(fake.channel(fresh.id)).toMatchObject({ type: 1, guildId: undefined, recipient: { id: DEFAULT_USER.id } });
    expect(fake.openDm().id).toBe(fresh.id);
    const read = await json(await api(fake, `/channels/${fresh.id}`, { auth: true }));
    expect(read).toMatchObject({ id: fresh.id, type: 1, recipients: [{ id: DEFAULT_USER.id, username: 'ada' }] });
    expect(read).not.toHaveProperty('guild_id');
  });

  it('refuses a DM with an unknown user (404, 10013), with the bot itself (50007) and without recipient_id (50035)', async () => {
    const fake = await startFake();
    const open = (body: unknown) => api(fake, '/users/@me/channels', { method: 'POST', auth: true, body });
    expect(await json(await open({ recipient_id: '1290000000000000999' }))).toEqual({
      message: 'Unknown User',
      code: 10013,
    });
    expect((await json(await open({ recipient_id: fake.botUser.id }))).code).toBe(50007);
    expect(await json(await open({}))).toMatchObject({
      code: 50035,
      errors: { recipient_id: { _errors: [{ code: 'BASE_TYPE_REQUIRED' }] } },
    });
    expect(
      (await api(fake, '/users/@me/channels', { method: 'POST', body: { recipient_id: DEFAULT_USER.id } })).status,
    ).toBe(401);
  });

  it("lets the bot send, edit and read its messages in a DM with the bot token, within the channel's budget", async () => {
    const fake = await startFake();
    const client = await startClient(fake, [I.Guilds, I.DirectMessages]);
    const dm = fake.openDm();
    fake.setMessageBudget(dm.id, { limit: 2, windowMs: 60_000 });
    const channel = (await client.channels.fetch(dm.id)) as DMChannel;
    const sent = await channel.send({ content: 'hello', allowedMentions: { parse: [] } });
    await sent.edit({ content: 'hello there', allowedMentions: { parse: [] } });
    expect((await channel.messages.fetch({ message: sent.id, force: true })).content).toBe('hello there');
    expect(fake.messagesIn(dm.id).map((m) => [m.kind, m.content])).toEqual([['channel', 'hello there']]);
    const third = await api(fake, `/channels/${dm.id}/messages`, {
      method: 'POST',
      auth: true,
      body: { content: 'third' },
    });
    expect(third.status).toBe(429);
    expect(fake.rateLimits.map((r) => r.channelId)).toEqual([dm.id]);
  });

  it("delivers a user's DM to discord.js (Partials.Channel) as a DM message it can reply to", async () => {
    const fake = await startFake();
    const client = await startClient(fake, [I.Guilds, I.DirectMessages]);
    const dm = fake.openDm();
    const seen = nextMessage(client);
    const posted = fake.postUserMessage({ channelId: dm.id, content: 'hi bot' });
    const message = await seen;
    expect([message.inGuild(), message.guildId, message.channel.type, message.author.id]).toEqual([
      false,
      null,
      ChannelType.DM,
      DEFAULT_USER.id,
    ]);
    const reply = await message.reply({ content: 'hi human', allowedMentions: { repliedUser: false } });
    expect(fake.message(reply.id)).toMatchObject({ channelId: dm.id, reference: { messageId: posted.id }, type: 19 });
  });
});

describe('FakeDiscord threads', () => {
  it('announces a thread as THREAD_CREATE (type 11, parent_id, thread_metadata, newly_created) to sessions with GUILDS, and lists it in GUILD_CREATE', async () => {
    const fake = await startFake();
    const gateway = await connectBot(fake, GUILDS);
    const parent = fake.channelList[0]!;
    const thread = fake.addThread(parent.id, 'ideas');
    const d = (await gateway.frame((f) => f.t === 'THREAD_CREATE')).d as Json;
    expect(d).toMatchObject({
      id: thread.id,
      type: 11,
      guild_id: fake.guildId,
      parent_id: parent.id,
      name: 'ideas',
      newly_created: true,
      thread_metadata: {
        archived: false,
        locked: false,
        auto_archive_duration: expect.any(Number),
        archive_timestamp: expect.any(String),
      },
    });
    const later = await connectBot(fake, GUILDS);
    const guild = (await later.frame((f) => f.t === 'GUILD_CREATE')).d as Json;
    expect((guild.threads as Json[]).map((t) => t.id)).toEqual([thread.id]);
    expect((guild.channels as Json[]).map((c) => c.id)).toEqual([parent.id]);
    expect(() => fake.addThread(thread.id, 'nested')).toThrow(/not a text channel/);
  });

  it('announces neither channels nor threads to a session without GUILDS, which still gets the messages in them', async () => {
    const fake = await startFake();
    const gateway = await connectBot(fake, GUILD_MESSAGES);
    const channel = fake.addChannel('later');
    const thread = fake.addThread(channel.id, 'ideas');
    const message = fake.postUserMessage({ channelId: thread.id, content: `<@${fake.botUser.id}> hi` });
    await gateway.frame((f) => f.t === 'MESSAGE_CREATE' && (f.d as Json).id === message.id);
    expect(gateway.frames.map((f) => f.t).filter((t) => t !== null)).toEqual(['READY', 'MESSAGE_CREATE']);
  });

  it('gives discord.js a ThreadChannel whose messages arrive and which the bot can reply in', async () => {
    const fake = await startFake();
    const client = await startClient(fake, [I.Guilds, I.GuildMessages]);
    const parent = fake.channelList[0]!;
    const created = new Promise<ThreadChannel>((resolve) => client.once('threadCreate', (t) => resolve(t)));
    const thread = fake.addThread(parent.id, 'ideas');
    const cached = await created;
    expect([cached.id, cached.type, cached.parentId]).toEqual([thread.id, ChannelType.PublicThread, parent.id]);
    const seen = nextMessage(client);
    fake.postUserMessage({ channelId: thread.id, content: `<@${fake.botUser.id}> in the thread` });
    const message = await seen;
    expect(message.channel.isThread()).toBe(true);
    const reply = await message.reply({ content: 'answered', allowedMentions: { parse: [], repliedUser: false } });
    expect(fake.messagesIn(thread.id).map((m) => [m.kind, m.content])).toEqual([
      ['user', `<@${fake.botUser.id}> in the thread`],
      ['channel', 'answered'],
    ]);
    expect(reply.channelId).toBe(thread.id);
    expect(await json(await api(fake, `/channels/${thread.id}`, { auth: true }))).toMatchObject({
      type: 11,
      parent_id: parent.id,
      guild_id: fake.guildId,
      message_count: 2,
    });
  });
});
