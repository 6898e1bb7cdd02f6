/** FakeDiscord: The REST basics: authentication, unknown routes and versions, channel message routes, scripted faults. */
import { afterEach, describe, expect, it } from 'vitest';
import { BOT_PERMISSIONS, P } from './constants.ts';
import { api, cleanup, connectBot, json, startFake } from './test-helpers.ts';

afterEach(cleanup);

describe('FakeDiscord REST basics', () => {
  it('answers /gateway/bot with the gateway URL and session_start_limit only with the bot token, else 401 code 0', async () => {
    const fake = await startFake();
    const anonymous = await api(fake, '/gateway/bot');
    expect(anonymous.status).toBe(401);
    expect(await json(anonymous)).toEqual({ message: '401: Unauthorized', code: 0 });
    const wrong = await api(fake, '/gateway/bot', { headers: { authorization: 'Bot nope' } });
    expect(wrong.status).toBe(401);

    const ok = await api(fake, '/gateway/bot', { auth: true });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toEqual({
      url: fake.gatewayUrl,
      shards: 1,
      session_start_limit: { total: 1000, remaining: 1000, reset_after: 86_400_000, max_concurrency: 1 },
    });
    const me = await json(await api(fake, '/users/@me', { auth: true }));
    expect(me).toMatchObject({ id: fake.applicationId, bot: true });
  });

  it('answers unknown routes with 404, a wrong method with 405 and another API version with 400 code 50041', async () => {
    const fake = await startFake();
    expect((await api(fake, '/nothing/here', { auth: true })).status).toBe(404);
    expect((await api(fake, '/gateway/bot', { method: 'POST', auth: true })).status).toBe(405);
    const v9 = await fetch(`${fake.apiUrl}/v9/gateway/bot`, { headers: { authorization: `Bot ${fake.token}` } });
    expect(v9.status).toBe(400);
    expect((await json(v9)).code).toBe(50041);
  });

  it('serves channel message routes with the bot token only, and hides ephemeral messages from them (10008)', async () => {
    const fake = await startFake();
    const channelId = fake.channelList[0]!.id;
    expect(
      (await api(fake, `/channels/${channelId}/messages`, { method: 'POST', body: { content: 'hi' } })).status,
    ).toBe(401);
    const created = await api(fake, `/channels/${channelId}/messages`, {
      method: 'POST',
      auth: true,
      body: { content: 'hi', allowed_mentions: { parse: [] } },
    });
    expect(created.status).toBe(200);
    const message = await json(created);
    expect(message).toMatchObject({
      channel_id: channelId,
      content: 'hi',
      type: 0,
      author: { id: fake.applicationId, bot: true },
    });
    expect(
      (
        await api(fake, `/channels/${channelId}/messages/${String(message.id)}`, {
          method: 'PATCH',
          auth: true,
          body: { content: 'edited' },
        })
      ).status,
    ).toBe(200);
    expect(
      (await api(fake, `/channels/1/messages`, { method: 'POST', auth: true, body: { content: 'x' } })).status,
    ).toBe(404);

    await connectBot(fake);
    const ix = fake.dispatchInteraction({ command: 'chat' });
    await api(fake, `/interactions/${ix.id}/${ix.token}/callback`, {
      method: 'POST',
      body: { type: 4, data: { content: 'secret', flags: 64 } },
    });
    const hidden = await api(fake, `/channels/${channelId}/messages/${ix.original!.id}`, {
      method: 'PATCH',
      auth: true,
      body: { content: 'x' },
    });
    expect(hidden.status).toBe(404);
    expect((await json(hidden)).code).toBe(10008);
  });

  it("lets the bot token edit an interaction's public reply and follow-up (the bot user wrote them), and refuses every channel route in a channel the bot cannot see (50001) while the interaction's webhook still serves", async () => {
    const fake = await startFake();
    const channelId = fake.channelList[0]!.id;
    await connectBot(fake);
    const ix = fake.dispatchInteraction({ command: 'chat' });
    await api(fake, `/interactions/${ix.id}/${ix.token}/callback`, {
      method: 'POST',
      body: { type: 4, data: { content: 'public' } },
    });
    const followUp = await json(
      await api(fake, `/webhooks/${fake.applicationId}/${ix.token}?wait=true`, {
        method: 'POST',
        body: { content: 'more' },
      }),
    );
    for (const [id, text] of [
      [ix.original!.id, 'reply, edited'],
      [String(followUp.id), 'follow-up, edited'],
    ] as const) {
      const edited = await api(fake, `/channels/${channelId}/messages/${id}`, {
        method: 'PATCH',
        auth: true,
        body: { content: text, components: [], allowed_mentions: { parse: [] } },
      });
      expect(edited.status).toBe(200);
      expect(fake.allMessages().find((m) => m.id === id)!.content).toBe(text);
    }

    fake.setBotPermissions(BOT_PERMISSIONS & ~P.ViewChannel);
    const hidden = await api(fake, `/channels/${channelId}/messages/${ix.original!.id}`, {
      method: 'PATCH',
      auth: true,
      body: { content: 'x' },
    });
    expect(hidden.status).toBe(403);
    expect((await json(hidden)).code).toBe(50001);
    expect((await api(fake, `/channels/${channelId}/messages`, { auth: true })).status).toBe(403);
    const viaWebhook = await api(fake, `/webhooks/${fake.applicationId}/${ix.token}/messages/@original`, {
      method: 'PATCH',
      body: { content: 'through the interaction' },
    });
    expect(viaWebhook.status).toBe(200);
    expect(ix.original!.content).toBe('through the interaction');
  });

  it('fails the scripted number of matching requests with failNext, then serves them again', async () => {
    const fake = await startFake();
    fake.failNext({ method: 'GET', path: /\/gateway\/bot$/, status: 503, times: 2 });
    expect((await api(fake, '/gateway/bot', { auth: true })).status).toBe(503);
    expect((await api(fake, '/gateway/bot', { auth: true })).status).toBe(503);
    expect((await api(fake, '/gateway/bot', { auth: true })).status).toBe(200);
  });
});
