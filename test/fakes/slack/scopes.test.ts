/**
 * Tests of OAuth scopes and event subscriptions: each Web API method needs its bot scope
 * (`missing_scope` with `needed` and `provided`, HTTP 200, nothing done), answers carry the
 * token's scopes in `X-OAuth-Scopes` (what @slack/web-api shows as `response_metadata.scopes`),
 * and Slack delivers no event the app is not subscribed to.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BOT_EVENTS, DEFAULT_BOT_SCOPES, FakeSlack } from '../slack.ts';
import { rawCall, slackError, slackFailure, webClient } from './test-helpers.ts';

let fake: FakeSlack;

beforeAll(async () => {
  fake = await FakeSlack.start({
    channels: [
      { id: 'C0PUBLIC', name: 'public' },
      { id: 'C0PRIVATE', name: 'private', isPrivate: true },
      { id: 'C0NOBOT', name: 'nobot', botIsMember: false },
      { id: 'C0SECRET', name: 'secret', isPrivate: true, botIsMember: false },
    ],
  });
});
afterEach(() => {
  fake.reset();
  fake.setScopes([...DEFAULT_BOT_SCOPES]);
  fake.setBotEvents([...DEFAULT_BOT_EVENTS]);
});
afterAll(async () => {
  await fake.close();
});

describe('scopes of Web API methods', () => {
  it('a method without its scope is missing_scope with needed and provided, HTTP 200, and does nothing', async () => {
    fake.setScopes(['commands', 'users:read']);
    const raw = await rawCall(fake, 'chat.postMessage', { channel: 'C0PUBLIC', text: 'hi' });
    expect(raw.status).toBe(200);
    expect(raw.json).toEqual({
      ok: false,
      error: 'missing_scope',
      needed: 'chat:write',
      provided: 'commands,users:read',
    });
    expect(fake.messages()).toEqual([]);
    const client = webClient(fake);
    expect(await slackError(client.chat.update({ channel: 'C0PUBLIC', ts: '1700000000.000001', text: 'x' }))).toBe(
      'missing_scope',
    );
    expect(await slackError(client.chat.postEphemeral({ channel: 'C0PUBLIC', user: 'U0ALICE', text: 'x' }))).toBe(
      'missing_scope',
    );
    expect(await slackFailure(client.files.getUploadURLExternal({ filename: 'a.png', length: 3 }))).toMatchObject({
      error: 'missing_scope',
      needed: 'files:write',
    });
    expect(await slackFailure(client.files.info({ file: 'F0000000000' }))).toMatchObject({
      error: 'missing_scope',
      needed: 'files:read',
    });
    // users.info is allowed with users:read; auth.test needs no scope.
    await expect(client.users.info({ user: 'U0ALICE' })).resolves.toMatchObject({ ok: true });
    await expect(client.auth.test()).resolves.toMatchObject({ ok: true });
    fake.setScopes(['chat:write']);
    expect(await slackFailure(client.users.info({ user: 'U0ALICE' }))).toMatchObject({
      error: 'missing_scope',
      needed: 'users:read',
      provided: 'chat:write',
    });
    expect(fake.files.size).toBe(0);
  });

  it('every answer to the bot token says its scopes (X-OAuth-Scopes → response_metadata.scopes) and the scope the method accepts', async () => {
    const client = webClient(fake);
    const auth = await client.auth.test();
    expect(auth.response_metadata?.scopes).toEqual([...DEFAULT_BOT_SCOPES]);
    const posted = await client.chat.postMessage({ channel: 'C0PUBLIC', text: 'hi' });
    expect(posted.response_metadata).toMatchObject({ scopes: [...DEFAULT_BOT_SCOPES], acceptedScopes: ['chat:write'] });
    fake.setScopes(['chat:write', 'commands']);
    expect((await client.auth.test()).response_metadata?.scopes).toEqual(['chat:write', 'commands']);
  });

  it("conversations.* need the read or history scope of the channel's type: channels: public, groups: private, im: DMs", async () => {
    const dm = fake.openIm('U0ALICE');
    const client = webClient(fake);
    fake.setScopes(['channels:read', 'channels:history']);
    await expect(client.conversations.info({ channel: 'C0PUBLIC' })).resolves.toMatchObject({ ok: true });
    await expect(client.conversations.history({ channel: 'C0PUBLIC' })).resolves.toMatchObject({ ok: true });
    expect(await slackFailure(client.conversations.info({ channel: 'C0PRIVATE' }))).toMatchObject({
      error: 'missing_scope',
      needed: 'groups:read',
    });
    expect(
      await slackFailure(client.conversations.replies({ channel: 'C0PRIVATE', ts: '1700000000.000001' })),
    ).toMatchObject({ error: 'missing_scope', needed: 'groups:history' });
    expect(await slackFailure(client.conversations.history({ channel: dm.id }))).toMatchObject({
      error: 'missing_scope',
      needed: 'im:history',
    });
    expect(await slackFailure(client.conversations.info({ channel: dm.id }))).toMatchObject({
      error: 'missing_scope',
      needed: 'im:read',
    });
    // An unknown channel is channel_not_found, whatever the scopes.
    expect(await slackError(client.conversations.history({ channel: 'C0NOPE' }))).toBe('channel_not_found');
  });

  it('chat:write.public lets chat.postMessage post in a public channel without the bot, never in a private one', async () => {
    const client = webClient(fake);
    expect(await slackError(client.chat.postMessage({ channel: 'C0NOBOT', text: 'x' }))).toBe('not_in_channel');
    fake.setScopes([...DEFAULT_BOT_SCOPES, 'chat:write.public']);
    await expect(client.chat.postMessage({ channel: 'C0NOBOT', text: 'x' })).resolves.toMatchObject({ ok: true });
    expect(await slackError(client.chat.postMessage({ channel: 'C0SECRET', text: 'x' }))).toBe('not_in_channel');
  });

  it('the default scopes cover every method the fake serves', async () => {
    const client = webClient(fake);
    const dm = fake.openIm('U0BOB');
    const posted = await client.chat.postMessage({ channel: 'C0PUBLIC', text: 'a' });
    await client.chat.update({ channel: 'C0PUBLIC', ts: posted.ts!, text: 'b' });
    await client.chat.postEphemeral({ channel: 'C0PUBLIC', user: 'U0BOB', text: 'c' });
    await client.filesUploadV2({ channel_id: dm.id, file_uploads: [{ file: Buffer.from('abc'), filename: 'a.txt' }] });
    await client.files.info({ file: [...fake.files.keys()][0]! });
    await client.users.info({ user: 'U0BOB' });
    for (const channel of ['C0PUBLIC', 'C0PRIVATE', dm.id]) {
      await client.conversations.info({ channel });
      await client.conversations.history({ channel });
    }
    await client.conversations.replies({ channel: 'C0PUBLIC', ts: posted.ts! });
    await client.chat.delete({ channel: 'C0PUBLIC', ts: posted.ts! });
    expect(fake.calls.filter((c) => c.error !== undefined)).toEqual([]);
  });
});

describe('event subscriptions', () => {
  let botUrl: string;
  let closeApp: () => void;

  beforeAll(async () => {
    // Any app that acks: these tests are about what the fake agrees to send.
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    botUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    closeApp = () => {
      server.closeAllConnections();
      server.close();
    };
  });
  afterAll(() => closeApp());

  it('an event the app is not subscribed to is never sent: the sender throws, nothing reaches the app', async () => {
    fake.setBotEvents(['app_mention', 'message.im']);
    const inChannel = fake.channelMessageEvent({ channel: 'C0PUBLIC', user: 'U0ALICE', text: 'just talking' });
    await expect(fake.sendEvent(botUrl, inChannel)).rejects.toThrow(/not subscribed to the message\.channels event/);
    await expect(fake.sendSocketEvent(inChannel)).rejects.toThrow(/not subscribed to the message\.channels event/);
    const mention = fake.mentionEvent({ channel: 'C0PUBLIC', user: 'U0ALICE', text: 'hi' });
    await expect(fake.sendEvent(botUrl, mention)).resolves.toMatchObject({ status: 200, ackedInTime: true });
    fake.setBotEvents(['message.im']);
    await expect(fake.sendEvent(botUrl, mention)).rejects.toThrow(/not subscribed to the app_mention event/);
    expect(fake.eventDeliveries.map((d) => d.subscription)).toEqual(['app_mention']);
  });

  it('a subscription whose scope the token lacks delivers nothing; neither does a channel without the bot', async () => {
    fake.setScopes(DEFAULT_BOT_SCOPES.filter((s) => s !== 'im:history'));
    const dm = fake.openIm('U0BOB');
    await expect(
      fake.sendEvent(botUrl, fake.imMessageEvent({ channel: dm.id, user: 'U0BOB', text: 'hello' })),
    ).rejects.toThrow(/message\.im subscription needs the scope im:history/);
    fake.setScopes([...DEFAULT_BOT_SCOPES]);
    const elsewhere = fake.mentionEvent({ channel: 'C0NOBOT', user: 'U0ALICE', text: 'are you there?' });
    await expect(fake.sendEvent(botUrl, elsewhere)).rejects.toThrow(/bot is not in C0NOBOT/);
    expect(fake.eventDeliveries).toEqual([]);
  });
});
