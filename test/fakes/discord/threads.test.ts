/**
 * FakeDiscord: threads the bot starts ("Start Thread from Message",
 * `POST /channels/:id/messages/:id/threads`), posting in them (Send Messages in Threads), the
 * bot's permissions (`setBotPermissions`), and reading a channel's messages a page at a time
 * (`limit`, `before`), with raw requests and with a real discord.js client.
 */

import { GatewayIntentBits as I, type ThreadChannel } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { Json } from '../discord.ts';
import { BOT_PERMISSIONS, P } from './constants.ts';
import { api, cleanup, connectBot, GUILDS, json, startClient, startFake } from './test-helpers.ts';

afterEach(cleanup);

/** Posts a message of the bot in a channel (bot token). @returns its id. */
async function botMessage(fake: Awaited<ReturnType<typeof startFake>>, channelId: string, content = 'question') {
  const res = await api(fake, `/channels/${channelId}/messages`, { method: 'POST', auth: true, body: { content } });
  expect(res.status).toBe(200);
  return String((await json(res)).id);
}

/** Starts a thread on a message with the bot token. */
const start = (fake: Awaited<ReturnType<typeof startFake>>, channelId: string, messageId: string, body: unknown) =>
  api(fake, `/channels/${channelId}/messages/${messageId}/threads`, { method: 'POST', auth: true, body });

describe('FakeDiscord: Start Thread from Message', () => {
  it("starts a public thread whose id is the message's, owned by the bot, announced as THREAD_CREATE and the message's MESSAGE_UPDATE (Has Thread)", async () => {
    const fake = await startFake();
    const gateway = await connectBot(fake, GUILDS | (1 << 9));
    const parent = fake.channelList[0]!;
    const messageId = await botMessage(fake, parent.id);
    const res = await start(fake, parent.id, messageId, { name: 'A question', auto_archive_duration: 1440, type: 11 });
    expect(res.status).toBe(201);
    const thread = await json(res);
    expect(thread).toMatchObject({
      id: messageId,
      type: 11,
      parent_id: parent.id,
      guild_id: fake.guildId,
      owner_id: fake.botUser.id,
      name: 'A question',
    });
    const created = (await gateway.frame((f) => f.t === 'THREAD_CREATE')).d as Json;
    expect(created).toMatchObject({ id: messageId, newly_created: true, owner_id: fake.botUser.id });
    const updated = (await gateway.frame((f) => f.t === 'MESSAGE_UPDATE')).d as Json;
    expect(updated).toMatchObject({ id: messageId, thread: { id: messageId } });
    expect((updated.flags as number) & 32).toBe(32);
    expect(fake.channel(messageId)).toMatchObject({ type: 11, parentId: parent.id, ownerId: fake.botUser.id });
  });

  it('refuses a second thread on one message (400, 160004), and a thread on a message in a thread (400, 50024)', async () => {
    const fake = await startFake();
    const parent = fake.channelList[0]!;
    const messageId = await botMessage(fake, parent.id);
    expect((await start(fake, parent.id, messageId, { name: 'first' })).status).toBe(201);
    const again = await start(fake, parent.id, messageId, { name: 'second' });
    expect(again.status).toBe(400);
    expect(await json(again)).toEqual({ code: 160004, message: 'A thread has already been created for this message' });
    const inThread = await botMessage(fake, messageId, 'in the thread');
    const nested = await start(fake, messageId, inThread, { name: 'nested' });
    expect([nested.status, (await json(nested)).code]).toEqual([400, 50024]);
  });

  it('checks the body as Discord does: name required and 1–100 characters, auto_archive_duration 60/1440/4320/10080, rate_limit_per_user 0–21600', async () => {
    const fake = await startFake();
    const parent = fake.channelList[0]!;
    const messageId = await botMessage(fake, parent.id);
    const errors = async (body: unknown) => {
      const res = await start(fake, parent.id, messageId, body);
      expect(res.status).toBe(400);
      const answer = await json(res);
      expect(answer.code).toBe(50035);
      return answer.errors as Json;
    };
    expect(await errors({})).toMatchObject({ name: { _errors: [{ code: 'BASE_TYPE_REQUIRED' }] } });
    expect(await errors({ name: '' })).toMatchObject({ name: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } });
    expect(await errors({ name: 'x'.repeat(101) })).toMatchObject({
      name: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] },
    });
    expect(await errors({ name: 'ok', auto_archive_duration: 30 })).toMatchObject({
      auto_archive_duration: { _errors: [{ code: 'BASE_TYPE_CHOICES' }] },
    });
    expect(await errors({ name: 'ok', rate_limit_per_user: 21601 })).toHaveProperty('rate_limit_per_user');
    // 100 characters (code points) is the most, and nothing was created by the refused bodies.
    expect((await start(fake, parent.id, messageId, { name: '🧵'.repeat(100) })).status).toBe(201);
  });

  it('refuses an unknown channel (10003), an unknown message (10008) and a request without the bot token (401)', async () => {
    const fake = await startFake();
    const parent = fake.channelList[0]!;
    const messageId = await botMessage(fake, parent.id);
    expect((await json(await start(fake, '1290000000000099999', messageId, { name: 'x' }))).code).toBe(10003);
    expect((await json(await start(fake, parent.id, '1290000000000099999', { name: 'x' }))).code).toBe(10008);
    const anonymous = await api(fake, `/channels/${parent.id}/messages/${messageId}/threads`, {
      method: 'POST',
      body: { name: 'x' },
    });
    expect(anonymous.status).toBe(401);
  });

  it('needs Create Public Threads to start a thread and Send Messages in Threads to post in one (403, 50013); interactions carry the permissions as app_permissions', async () => {
    const fake = await startFake();
    const parent = fake.channelList[0]!;
    const messageId = await botMessage(fake, parent.id);
    fake.setBotPermissions(BOT_PERMISSIONS & ~P.CreatePublicThreads);
    const refused = await start(fake, parent.id, messageId, { name: 'x' });
    expect([refused.status, (await json(refused)).code]).toEqual([403, 50013]);
    fake.setBotPermissions(BOT_PERMISSIONS & ~P.SendMessagesInThreads);
    expect((await start(fake, parent.id, messageId, { name: 'x' })).status).toBe(201);
    const post = await api(fake, `/channels/${messageId}/messages`, {
      method: 'POST',
      auth: true,
      body: { content: 'a' },
    });
    expect([post.status, (await json(post)).code]).toEqual([403, 50013]);
    expect(fake.botPermissions & P.SendMessagesInThreads).toBe(0n);
  });

  it('gives discord.js the thread from message.startThread and the new permissions after GUILD_ROLE_UPDATE', async () => {
    const fake = await startFake();
    const client = await startClient(fake, [I.Guilds, I.GuildMessages]);
    const parent = fake.channelList[0]!;
    const channel = await client.channels.fetch(parent.id);
    if (!channel?.isTextBased() || channel.isDMBased()) throw new Error('no text channel');
    const message = await channel.send({ content: 'question', allowedMentions: { parse: [] } });
    const thread: ThreadChannel = await message.startThread({ name: 'A question' });
    expect([thread.id, thread.parentId, thread.ownerId]).toEqual([message.id, parent.id, fake.botUser.id]);
    await thread.send({ content: 'answer', allowedMentions: { parse: [] } });
    expect(fake.messagesIn(thread.id).map((m) => m.content)).toEqual(['answer']);
    const updated = new Promise((resolve) => client.once('roleUpdate', resolve));
    fake.setBotPermissions(BOT_PERMISSIONS & ~P.CreatePublicThreads);
    await updated;
    const me = channel.guild.members.me!;
    expect(channel.permissionsFor(me).has(P.CreatePublicThreads)).toBe(false);
    expect(channel.permissionsFor(me).has(P.SendMessagesInThreads)).toBe(true);
  });
});

describe('FakeDiscord: a thread people start from a message', () => {
  it("takes the message's id, flags the message (Has Thread), and its starter is read from the parent channel", async () => {
    const fake = await startFake();
    const parent = fake.channelList[0]!;
    const start = fake.postUserMessage({ channelId: parent.id, content: 'shall we?' });
    const thread = fake.addThread(parent.id, 'plans', { fromMessage: start.id });
    expect([thread.id, thread.parentId]).toEqual([start.id, parent.id]);
    expect(fake.message(start.id)!.flags & 32).toBe(32);
    expect(() => fake.addThread(parent.id, 'again', { fromMessage: start.id })).toThrow(/without a thread/);
    const starter = await json(await api(fake, `/channels/${parent.id}/messages/${thread.id}`, { auth: true }));
    // Its content is hidden from an app without Message Content (REST as the gateway).
    expect(starter).toMatchObject({ id: start.id, content: '' });
  });
});

describe('FakeDiscord: Get Channel Messages', () => {
  it('answers newest first, at most `limit` (default 50, 1–100), older than `before`', async () => {
    const fake = await startFake();
    const parent = fake.channelList[0]!;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await botMessage(fake, parent.id, `m${i}`));
    const page = async (query: string) =>
      (await json(await api(fake, `/channels/${parent.id}/messages${query}`, { auth: true }))) as unknown as Json[];
    expect((await page('')).map((m) => m.content)).toEqual(['m4', 'm3', 'm2', 'm1', 'm0']);
    expect((await page('?limit=2')).map((m) => m.content)).toEqual(['m4', 'm3']);
    expect((await page(`?limit=2&before=${ids[3]}`)).map((m) => m.content)).toEqual(['m2', 'm1']);
    const bad = await api(fake, `/channels/${parent.id}/messages?limit=101`, { auth: true });
    expect([bad.status, (await json(bad)).code]).toEqual([400, 50035]);
  });

  it('with `after`, answers the `limit` messages just newer than it, newest first; ids are in time order (a backdated message sorts by its time)', async () => {
    const fake = await startFake();
    const parent = fake.channelList[0]!;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await botMessage(fake, parent.id, `m${i}`));
    const page = async (query: string) =>
      (await json(await api(fake, `/channels/${parent.id}/messages${query}`, { auth: true }))) as unknown as Json[];
    expect((await page(`?after=${ids[0]}&limit=2`)).map((m) => m.content)).toEqual(['m2', 'm1']);
    expect((await page(`?after=${ids[2]}`)).map((m) => m.content)).toEqual(['m4', 'm3']);
    expect(await page(`?after=${ids[4]}`)).toEqual([]);
    // A message sent "an hour ago" has an hour-old snowflake: it sorts first, and is not after m0.
    const old = fake.postUserMessage({ channelId: parent.id, content: 'old', at: Date.now() - 3_600_000 });
    expect(BigInt(old.id) < BigInt(ids[0]!)).toBe(true);
    expect((await page('')).map((m) => m.id).at(-1)).toBe(old.id);
    expect((await page(`?after=${ids[0]}`)).map((m) => m.id)).not.toContain(old.id);
    for (const query of [`?after=${ids[0]}&before=${ids[4]}`, '?after=soon']) {
      const bad = await api(fake, `/channels/${parent.id}/messages${query}`, { auth: true });
      expect([bad.status, (await json(bad)).code]).toEqual([400, 50035]);
    }
  });
});
