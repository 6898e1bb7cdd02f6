/**
 * FakeDiscord: messages users post (postUserMessage), as MESSAGE_CREATE carries them and as a
 * real discord.js client sees them, under the intents a session identified with, and the
 * Message Content rule for the gateway and for REST reads.
 */

import {
  ChannelType,
  Client,
  Events,
  GatewayIntentBits as I,
  type Message,
  MessageType,
  type TextChannel,
} from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_USER, type Json } from '../discord.ts';
import {
  api,
  cleanup,
  connectBot,
  DIRECT_MESSAGES,
  deferred,
  GUILD_MESSAGES,
  GUILDS,
  json,
  MESSAGE_CONTENT,
  nextMessage,
  startClient,
  startFake,
  track,
} from './test-helpers.ts';

afterEach(cleanup);

const GRACE = { id: '1290000000000000777', username: 'grace' };
const ROLE = '1290000000000000555';
const png = Buffer.from('89504e470d0a1a0a', 'hex');

describe('FakeDiscord user messages on the wire', () => {
  it('dispatches a guild message with guild_id, channel_type, the author, a member without user, and mentions parsed from the content (each with a member)', async () => {
    const fake = await startFake({ privilegedIntents: MESSAGE_CONTENT });
    const gateway = await connectBot(fake, GUILDS | GUILD_MESSAGES | MESSAGE_CONTENT);
    const channelId = fake.channelList[0]!.id;
    const content = `hey <@${fake.botUser.id}> and <@!${GRACE.id}>, <@&${ROLE}> @here`;
    fake.postUserMessage({ channelId, author: GRACE, content: 'first' });
    const message = fake.postUserMessage({ channelId, content });
    const d = (await gateway.frame((f) => f.t === 'MESSAGE_CREATE' && (f.d as Json).id === message.id)).d as Json;
    expect(d).toMatchObject({
      id: message.id,
      channel_id: channelId,
      guild_id: fake.guildId,
      channel_type: 0,
      type: 0,
      author: { id: DEFAULT_USER.id, username: 'ada' },
      member: { roles: [expect.any(String)], joined_at: expect.any(String) },
      content,
      mention_everyone: true,
      mention_roles: [ROLE],
      attachments: [],
      embeds: [],
    });
    expect(d.member).not.toHaveProperty('user');
    const mentions = d.mentions as Json[];
    expect(mentions.map((u) => [u.id, u.username])).toEqual([
      [fake.botUser.id, fake.botUser.username],
      [GRACE.id, 'grace'],
    ]);
    for (const u of mentions) expect(u.member).toMatchObject({ joined_at: expect.any(String) });
    expect(message).toMatchObject({ kind: 'user', type: 0, author: { id: DEFAULT_USER.id }, content });
    expect(message.pinged).toEqual({ everyone: true, users: [fake.botUser.id, GRACE.id], roles: [ROLE] });
  });

  it('dispatches a DM without guild_id or member but with channel_type 1, and @everyone there mentions nobody', async () => {
    const fake = await startFake();
    const gateway = await connectBot(fake, GUILDS | DIRECT_MESSAGES);
    const dm = fake.openDm();
    const emitted = fake.waitFor('userMessage');
    const message = fake.postUserMessage({ channelId: dm.id, content: 'hello @everyone' });
    expect((await emitted)[0]).toBe(message);
    const d = (await gateway.frame((f) => f.t === 'MESSAGE_CREATE')).d as Json;
    expect(d).toMatchObject({
      id: message.id,
      channel_id: dm.id,
      channel_type: 1,
      author: { id: DEFAULT_USER.id },
      content: 'hello @everyone',
      mention_everyone: false,
    });
    expect(d).not.toHaveProperty('guild_id');
    expect(d).not.toHaveProperty('member');
  });

  it('gives a webhook message webhook_id and the webhook as a bot author, without member', async () => {
    const fake = await startFake();
    const gateway = await connectBot(fake, GUILDS | GUILD_MESSAGES);
    const webhookId = '1290000000000000888';
    fake.postUserMessage({
      channelId: fake.channelList[0]!.id,
      webhookId,
      author: { username: 'Alerts' },
      content: `<@${fake.botUser.id}> disk full`,
    });
    const d = (await gateway.frame((f) => f.t === 'MESSAGE_CREATE')).d as Json;
    expect(d).toMatchObject({
      webhook_id: webhookId,
      author: { id: webhookId, username: 'Alerts', bot: true },
      guild_id: fake.guildId,
    });
    expect(d).not.toHaveProperty('member');
  });

  it("echoes the bot's own non-ephemeral messages as MESSAGE_CREATE (channel posts and interaction responses), never ephemeral ones", async () => {
    const fake = await startFake();
    const gateway = await connectBot(fake, GUILDS | GUILD_MESSAGES);
    const channelId = fake.channelList[0]!.id;
    const posted = await json(
      await api(fake, `/channels/${channelId}/messages`, { method: 'POST', auth: true, body: { content: 'mine' } }),
    );
    expect((await gateway.frame((f) => f.t === 'MESSAGE_CREATE')).d).toMatchObject({
      id: posted.id,
      author: { id: fake.botUser.id, bot: true },
      content: 'mine',
      member: { roles: [expect.any(String)] },
    });
    const secret = await deferred(fake, 64);
    const shown = await deferred(fake);
    const frame = await gateway.frame((f) => f.t === 'MESSAGE_CREATE' && (f.d as Json).id === shown.original!.id);
    expect(frame.d).toMatchObject({ type: 20, flags: 128, interaction_metadata: { id: shown.id } });
    expect(frame.d).not.toHaveProperty('member');
    expect(gateway.frames.some((f) => f.t === 'MESSAGE_CREATE' && (f.d as Json).id === secret.original!.id)).toBe(
      false,
    );
  });

  it("refuses what Discord's client would never send: a reply to a message elsewhere, the bot or a stranger as a DM's author, 11 files", async () => {
    const fake = await startFake();
    const [general] = fake.channelList;
    const other = fake.addChannel('other');
    const elsewhere = fake.postUserMessage({ channelId: other.id, content: 'x' });
    expect(() => fake.postUserMessage({ channelId: general!.id, replyTo: elsewhere.id })).toThrow(/no message/);
    expect(() => fake.postUserMessage({ channelId: general!.id, author: { id: fake.botUser.id } })).toThrow(/REST API/);
    const dm = fake.openDm();
    expect(() => fake.postUserMessage({ channelId: dm.id, author: GRACE })).toThrow(/recipient/);
    const files = Array.from({ length: 11 }, (_, i) => ({ filename: `${i}.png`, data: png }));
    expect(() => fake.postUserMessage({ channelId: general!.id, attachments: files })).toThrow(/at most 10/);
  });
});

describe('FakeDiscord user messages in discord.js', () => {
  it('builds a Message with its author, member, mentions and attachment when the app has Message Content', async () => {
    const fake = await startFake({ privilegedIntents: MESSAGE_CONTENT });
    const client = await startClient(fake, [I.Guilds, I.GuildMessages, I.MessageContent]);
    const channelId = fake.channelList[0]!.id;
    const seen = nextMessage(client);
    fake.postUserMessage({
      channelId,
      content: `<@${fake.botUser.id}> look @everyone`,
      attachments: [{ filename: 'cat.png', data: png, width: 40, height: 30 }],
    });
    const message = await seen;
    expect(message.inGuild()).toBe(true);
    expect(message.channelId).toBe(channelId);
    expect(message.author.id).toBe(DEFAULT_USER.id);
    expect(message.member?.id).toBe(DEFAULT_USER.id);
    expect(message.content).toBe(`<@${fake.botUser.id}> look @everyone`);
    expect(message.mentions.users.has(fake.botUser.id)).toBe(true);
    expect(message.mentions.everyone).toBe(true);
    expect(message.attachments.first()).toMatchObject({
      name: 'cat.png',
      size: png.length,
      contentType: 'image/png',
      width: 40,
      height: 30,
    });
  });

  it("shows another bot's message as a bot's, a webhook's with webhookId, and a member-join (type 7) as a system message", async () => {
    const fake = await startFake();
    const client = await startClient(fake, [I.Guilds, I.GuildMessages]);
    const channelId = fake.channelList[0]!.id;
    const bot = nextMessage(client, (m) => m.author.username === 'otherbot');
    fake.postUserMessage({ channelId, author: { username: 'otherbot', bot: true }, content: 'beep' });
    expect((await bot).author.bot).toBe(true);
    const hook = nextMessage(client, (m) => m.webhookId !== null);
    fake.postUserMessage({ channelId, webhookId: '1290000000000000888', content: 'ping' });
    expect((await hook).webhookId).toBe('1290000000000000888');
    const joined = nextMessage(client, (m) => m.type === MessageType.UserJoin);
    fake.postUserMessage({ channelId, author: GRACE, type: 7 });
    expect((await joined).system).toBe(true);
  });

  it('delivers guild messages only with GuildMessages and DMs only with DirectMessages', async () => {
    const fake = await startFake();
    const guildOnly = await startClient(fake, [I.Guilds, I.GuildMessages]);
    const dmOnly = await startClient(fake, [I.Guilds, I.DirectMessages]);
    const seenByGuildOnly: Message[] = [];
    const seenByDmOnly: Message[] = [];
    guildOnly.on(Events.MessageCreate, (m) => seenByGuildOnly.push(m));
    dmOnly.on(Events.MessageCreate, (m) => seenByDmOnly.push(m));
    const dm = fake.openDm();
    const channelId = fake.channelList[0]!.id;
    const inGuild = `<@${fake.botUser.id}> guild`;
    const lastInGuild = nextMessage(guildOnly, (m) => m.content === inGuild);
    const lastInDm = nextMessage(dmOnly, (m) => m.content === 'dm 2');
    // Each session receives in order: what it did not get before its last awaited message, it never gets.
    fake.postUserMessage({ channelId: dm.id, content: 'dm 1' });
    fake.postUserMessage({ channelId, content: inGuild });
    fake.postUserMessage({ channelId: dm.id, content: 'dm 2' });
    await Promise.all([lastInGuild, lastInDm]);
    expect(seenByGuildOnly.map((m) => m.content)).toEqual([inGuild]);
    expect(seenByDmOnly.map((m) => [m.content, m.channel.type])).toEqual([
      ['dm 1', ChannelType.DM],
      ['dm 2', ChannelType.DM],
    ]);
  });

  it('closes a session that asks for Message Content without approval with 4014, which discord.js reports as disallowed intents', async () => {
    const fake = await startFake();
    const client = track(
      new Client({ intents: [I.Guilds, I.GuildMessages, I.MessageContent], rest: { api: fake.apiUrl } }),
    );
    const closed = new Promise<number>((resolve) =>
      client.once(Events.ShardDisconnect, (event) => resolve(event.code)),
    );
    client.on(Events.Error, () => undefined);
    void client.login(fake.token).catch(() => undefined);
    expect(await closed).toBe(4014);
  });
});

describe('FakeDiscord Message Content rule', () => {
  it('without Message Content, empties content and attachments of guild messages that do not mention the bot, keeps them for mentions, DMs and pinging replies to the bot', async () => {
    const fake = await startFake();
    const client = await startClient(fake, [I.Guilds, I.GuildMessages, I.DirectMessages]);
    const channelId = fake.channelList[0]!.id;
    const file = [{ filename: 'cat.png', data: png }];
    const received = async (options: Parameters<typeof fake.postUserMessage>[0]) => {
      const seen = nextMessage(client, (m) => m.author.id !== client.user.id);
      fake.postUserMessage(options);
      const m = await seen;
      return [m.content, m.attachments.size];
    };
    expect(await received({ channelId, content: 'just chatting', attachments: file })).toEqual(['', 0]);
    expect(await received({ channelId, content: `<@${fake.botUser.id}> see this`, attachments: file })).toEqual([
      `<@${fake.botUser.id}> see this`,
      1,
    ]);
    expect(await received({ channelId: fake.openDm().id, content: 'in private', attachments: file })).toEqual([
      'in private',
      1,
    ]);
    const question = await (client.channels.cache.get(channelId) as TextChannel).send('Which one?');
    expect(await received({ channelId, content: 'this one', replyTo: question.id })).toEqual(['this one', 0]);
    expect(await received({ channelId, content: 'quietly', replyTo: question.id, pingRepliedAuthor: false })).toEqual([
      '',
      0,
    ]);
  });

  it('applies the rule to referenced_message by its own mentions, and not at all for a session with Message Content', async () => {
    const fake = await startFake({ privilegedIntents: MESSAGE_CONTENT });
    const without = await connectBot(fake, GUILDS | GUILD_MESSAGES);
    const withContent = await connectBot(fake, GUILDS | GUILD_MESSAGES | MESSAGE_CONTENT);
    const channelId = fake.channelList[0]!.id;
    const plain = fake.postUserMessage({
      channelId,
      author: GRACE,
      content: 'the picture',
      attachments: [{ filename: 'cat.png', data: png }],
    });
    const asking = fake.postUserMessage({ channelId, content: `<@${fake.botUser.id}> what is it?`, replyTo: plain.id });
    const mentioning = fake.postUserMessage({ channelId, author: GRACE, content: `<@${fake.botUser.id}> hi` });
    const quiet = fake.postUserMessage({ channelId, content: 'answering grace', replyTo: mentioning.id });
    const frameOf = async (gateway: typeof without, id: string) =>
      (await gateway.frame((f) => f.t === 'MESSAGE_CREATE' && (f.d as Json).id === id)).d as Json;

    const a = await frameOf(without, asking.id);
    expect(a).toMatchObject({
      content: `<@${fake.botUser.id}> what is it?`,
      referenced_message: { id: plain.id, content: '', attachments: [] },
    });
    const q = await frameOf(without, quiet.id);
    expect(q).toMatchObject({
      content: '',
      referenced_message: { id: mentioning.id, content: `<@${fake.botUser.id}> hi` },
    });
    expect((await frameOf(withContent, asking.id)).referenced_message).toMatchObject({
      content: 'the picture',
      attachments: [{ filename: 'cat.png' }],
    });
    expect(await frameOf(withContent, quiet.id)).toMatchObject({ content: 'answering grace' });
    expect(a).toMatchObject({
      type: 19,
      message_reference: { type: 0, message_id: plain.id, channel_id: channelId, guild_id: fake.guildId },
    });
  });

  it("applies the rule to REST reads by the app's approval, whatever the session asked for", async () => {
    for (const approved of [false, true]) {
      const fake = await startFake({ privilegedIntents: approved ? MESSAGE_CONTENT : 0 });
      const client = await startClient(fake, [I.Guilds, I.GuildMessages]);
      const channelId = fake.channelList[0]!.id;
      const message = fake.postUserMessage({ channelId, content: 'not for bots' });
      const channel = client.channels.cache.get(channelId) as TextChannel;
      const fetched = await channel.messages.fetch({ message: message.id, force: true });
      expect(fetched.content).toBe(approved ? 'not for bots' : '');
      const listed = await channel.messages.fetch({ limit: 10, cache: false });
      expect(listed.get(message.id)?.content).toBe(approved ? 'not for bots' : '');
    }
  });
});
