/**
 * FakeDiscord: what the bot does to a user's message: reply to it (`message_reference`, who
 * is pinged by `allowed_mentions.replied_user`), edit its reply, show a typing indicator;
 * and what it may not do (edit or delete the user's message).
 */

import { GatewayIntentBits as I, type TextChannel } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_USER, type FakeDiscord } from '../discord.ts';
import { api, cleanup, json, nextMessage, startClient, startFake } from './test-helpers.ts';

afterEach(cleanup);

/** A fake, a discord.js bot in it, and a user's message mentioning the bot as discord.js received it. */
async function userMessage(content = 'question') {
  const fake = await startFake();
  const client = await startClient(fake, [I.Guilds, I.GuildMessages, I.DirectMessages]);
  const channelId = fake.channelList[0]!.id;
  const seen = nextMessage(client);
  const posted = fake.postUserMessage({ channelId, content: `<@${fake.botUser.id}> ${content}` });
  return { fake, client, channelId, posted, message: await seen };
}

const lastRevision = (fake: FakeDiscord, id: string) => fake.message(id)!.revisions.at(-1)!;

describe('FakeDiscord replies by the bot', () => {
  it('answers message.reply() with a type-19 message carrying message_reference and referenced_message, and records the reference', async () => {
    const { fake, channelId, posted, message } = await userMessage();
    const reply = await message.reply({ content: 'answer', allowedMentions: { parse: [], repliedUser: false } });
    expect(reply.type).toBe(19);
    expect(reply.reference).toMatchObject({ messageId: posted.id, channelId, guildId: fake.guildId });
    const stored = fake.message(reply.id)!;
    expect(stored).toMatchObject({ kind: 'channel', type: 19, reference: { messageId: posted.id, channelId } });
    expect(stored.revisions[0]!.reference).toEqual({ messageId: posted.id });
    const raw = await json(await api(fake, `/channels/${channelId}/messages/${reply.id}`, { auth: true }));
    expect(raw).toMatchObject({
      type: 19,
      message_reference: { type: 0, message_id: posted.id, channel_id: channelId, guild_id: fake.guildId },
      referenced_message: { id: posted.id, author: { id: DEFAULT_USER.id } },
    });
  });

  it.each([
    ["no allowed_mentions at all (Discord's default pings)", undefined, [DEFAULT_USER.id]],
    ['allowed_mentions without replied_user', { parse: [] }, []],
    ['replied_user: false', { parse: [], repliedUser: false }, []],
    ['replied_user: true', { parse: [], repliedUser: true }, [DEFAULT_USER.id]],
  ])('pings the replied author by allowed_mentions: %s', async (_, allowedMentions, pinged) => {
    const { fake, message } = await userMessage();
    const reply = await message.reply({ content: 'answer', ...(allowedMentions ? { allowedMentions } : {}) });
    expect(lastRevision(fake, reply.id).pinged.users).toEqual(pinged);
    expect(fake.writes.at(-1)!.pinged.users).toEqual(pinged);
    expect(reply.mentions.users.map((u) => u.id)).toEqual(pinged);
  });

  it('counts the replied author again on an edit without allowed_mentions (Discord re-parses it), not on one with replied_user off', async () => {
    const { fake, message } = await userMessage();
    const reply = await message.reply({ content: 'first', allowedMentions: { parse: [], repliedUser: false } });
    await api(fake, `/channels/${reply.channelId}/messages/${reply.id}`, {
      method: 'PATCH',
      auth: true,
      body: { content: 'second', allowed_mentions: { parse: [], replied_user: false } },
    });
    expect(lastRevision(fake, reply.id).pinged.users).toEqual([]);
    await api(fake, `/channels/${reply.channelId}/messages/${reply.id}`, {
      method: 'PATCH',
      auth: true,
      body: { content: 'third' },
    });
    expect(lastRevision(fake, reply.id)).toMatchObject({
      content: 'third',
      pinged: { users: [DEFAULT_USER.id] },
      reference: { messageId: message.id },
    });
  });

  it('refuses a reference to a message that is not in the channel with 50035 MESSAGE_REFERENCE_UNKNOWN_MESSAGE, unless fail_if_not_exists is false', async () => {
    const { fake, channelId, posted } = await userMessage();
    const other = fake.addChannel('other');
    const post = (path: string, message_reference: unknown) =>
      api(fake, `/channels/${path}/messages`, {
        method: 'POST',
        auth: true,
        body: { content: 'answer', message_reference },
      });
    const refused = await post(other.id, { message_id: posted.id });
    expect(refused.status).toBe(400);
    expect(await json(refused)).toEqual({
      message: 'Invalid Form Body',
      code: 50035,
      errors: {
        message_reference: { _errors: [{ code: 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', message: 'Unknown message' }] },
      },
    });
    expect((await json(await post(channelId, { message_id: '1290000000000000999' }))).code).toBe(50035);
    expect((await json(await post(channelId, { message_id: posted.id, channel_id: other.id }))).code).toBe(50035);
    expect((await json(await post(channelId, 'nope'))).errors).toEqual({
      message_reference: { _errors: [{ code: 'MODEL_TYPE_CONVERT', message: 'Expected an object/dictionary.' }] },
    });
    expect(fake.messagesIn(other.id)).toEqual([]);

    const plain = await json(await post(other.id, { message_id: posted.id, fail_if_not_exists: false }));
    expect(plain).toMatchObject({ type: 0, content: 'answer' });
    expect(plain).not.toHaveProperty('message_reference');
    expect(fake.message(plain.id as string)!.reference).toBeUndefined();
  });

  it('refuses a replied_user that is not a boolean (50035 BASE_TYPE_BOOLEAN)', async () => {
    const { fake, channelId, posted } = await userMessage();
    const res = await api(fake, `/channels/${channelId}/messages`, {
      method: 'POST',
      auth: true,
      body: {
        content: 'x',
        message_reference: { message_id: posted.id },
        allowed_mentions: { parse: [], replied_user: 'no' },
      },
    });
    expect(await json(res)).toMatchObject({
      code: 50035,
      errors: { allowed_mentions: { replied_user: { _errors: [{ code: 'BASE_TYPE_BOOLEAN' }] } } },
    });
  });

  it("lets the bot edit only its own messages (403, 50005) and not delete a user's (403, 50013)", async () => {
    const { fake, message } = await userMessage();
    await expect(message.edit('hijacked')).rejects.toMatchObject({ status: 403, code: 50005 });
    await expect(message.delete()).rejects.toMatchObject({ status: 403, code: 50013 });
    expect(fake.message(message.id)).toMatchObject({ content: `<@${fake.botUser.id}> question`, deleted: false });
  });
});

describe('FakeDiscord typing indicator', () => {
  it('answers sendTyping() with 204 in guild channels, threads and DMs, and records it and emits typing', async () => {
    const { fake, client, channelId, message } = await userMessage();
    const emitted = fake.waitFor('typing');
    await (message.channel as TextChannel).sendTyping();
    expect((await emitted)[0].channelId).toBe(channelId);
    const thread = fake.addThread(channelId, 'ideas');
    await ((await client.channels.fetch(thread.id)) as TextChannel).sendTyping();
    const dm = await client.users.createDM(DEFAULT_USER.id);
    await dm.sendTyping();
    expect(fake.typing.map((t) => t.channelId)).toEqual([channelId, thread.id, dm.id]);
    expect(fake.typing.every((t) => typeof t.at === 'number')).toBe(true);
    const typed = fake.requests.filter((r) => r.path.endsWith('/typing')).map((r) => r.status);
    expect(typed).toEqual([204, 204, 204]);
  });

  it('refuses typing in an unknown channel (404, 10003) or without the bot token (401), recording nothing', async () => {
    const { fake, channelId } = await userMessage();
    expect(await json(await api(fake, '/channels/1290000000000000999/typing', { method: 'POST', auth: true }))).toEqual(
      { message: 'Unknown Channel', code: 10003 },
    );
    expect((await api(fake, `/channels/${channelId}/typing`, { method: 'POST' })).status).toBe(401);
    expect(fake.typing).toEqual([]);
  });
});
