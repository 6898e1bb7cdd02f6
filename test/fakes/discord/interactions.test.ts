/** FakeDiscord: Interaction responses: one initial callback in time, webhooks with the interaction token, revisions and deletions. */
import { afterEach, describe, expect, it } from 'vitest';
import { api, cleanup, connectBot, deferred, json, startFake, webhookPath } from './test-helpers.ts';

afterEach(cleanup);

describe('FakeDiscord interaction responses', () => {
  it('accepts one initial response without an Authorization header, then refuses another with 400 code 40060', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = await deferred(fake);
    expect(ix.response?.type).toBe(5);
    expect(ix.original?.loading).toBe(true);
    const again = await api(fake, `/interactions/${ix.id}/${ix.token}/callback`, {
      method: 'POST',
      body: { type: 4, data: { content: 'late' } },
    });
    expect(again.status).toBe(400);
    expect(await json(again)).toEqual({ message: 'Interaction has already been acknowledged.', code: 40060 });
    expect(ix.callbacks.map((c) => c.status)).toEqual([204, 400]);
  });

  it('refuses a first response after the response window with 404 code 10062, and one with a wrong token the same way', async () => {
    const fake = await startFake({ responseWindowMs: 50 });
    await connectBot(fake);
    const wrong = fake.dispatchInteraction({ command: 'chat' });
    const res = await api(fake, `/interactions/${wrong.id}/not-its-token/callback`, {
      method: 'POST',
      body: { type: 5 },
    });
    expect(res.status).toBe(404);
    const ix = fake.dispatchInteraction({ command: 'chat' });
    await new Promise((r) => setTimeout(r, 120));
    const late = await api(fake, `/interactions/${ix.id}/${ix.token}/callback`, { method: 'POST', body: { type: 5 } });
    expect(late.status).toBe(404);
    expect(await json(late)).toEqual({ message: 'Unknown interaction', code: 10062 });
    expect(ix.response).toBeUndefined();
  });

  it('answers ?with_response=true with the interaction and the message resource', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = fake.dispatchInteraction({ command: 'chat' });
    const res = await api(fake, `/interactions/${ix.id}/${ix.token}/callback?with_response=true`, {
      method: 'POST',
      body: { type: 4, data: { content: 'hello', flags: 64 } },
    });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({
      interaction: {
        id: ix.id,
        type: 2,
        response_message_id: ix.original!.id,
        response_message_loading: false,
        response_message_ephemeral: true,
      },
      resource: { type: 4, message: { content: 'hello', flags: 64, type: 20 } },
    });
  });

  it('refuses webhook routes with 401 code 50027 once the interaction token has expired', async () => {
    const fake = await startFake({ tokenTtlMs: 150 });
    await connectBot(fake);
    const ix = await deferred(fake);
    expect(
      (await api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'PATCH', body: { content: 'in time' } }))
        .status,
    ).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    const stale = await api(fake, webhookPath(fake, ix, '/messages/@original'), {
      method: 'PATCH',
      body: { content: 'too late' },
    });
    expect(stale.status).toBe(401);
    expect(await json(stale)).toEqual({ message: 'Invalid Webhook Token', code: 50027 });
    expect(ix.original!.content).toBe('in time');
  });

  it('answers webhook routes of an unknown application with 10015, edits before any response with 10008, a follow-up before any response with 10015', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = fake.dispatchInteraction({ command: 'chat' });
    const otherApp = await api(fake, `/webhooks/1290000000000000999/${ix.token}/messages/@original`, {
      method: 'PATCH',
      body: { content: 'x' },
    });
    expect((await json(otherApp)).code).toBe(10015);
    const early = await api(fake, webhookPath(fake, ix, '/messages/@original'), {
      method: 'PATCH',
      body: { content: 'x' },
    });
    expect(early.status).toBe(404);
    expect((await json(early)).code).toBe(10008);
    const followUp = await api(fake, webhookPath(fake, ix, '?wait=true'), { method: 'POST', body: { content: 'x' } });
    expect((await json(followUp)).code).toBe(10015);
  });

  it('keeps every revision of the original, follow-ups with their flags, and deletions (GET then 10008)', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = await deferred(fake);
    await api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'PATCH', body: { content: 'one' } });
    const patched = await api(fake, webhookPath(fake, ix, '/messages/%40original'), {
      method: 'PATCH',
      body: { content: 'one two' },
    });
    expect(await json(patched)).toMatchObject({
      content: 'one two',
      type: 20,
      webhook_id: fake.applicationId,
      interaction_metadata: { id: ix.id, name: 'chat' },
    });
    const follow = await json(
      await api(fake, webhookPath(fake, ix, '?wait=true'), {
        method: 'POST',
        body: { content: 'only you', flags: 64 },
      }),
    );
    expect(follow).toMatchObject({ content: 'only you', flags: 64 });
    expect(
      (
        await api(fake, webhookPath(fake, ix, `/messages/${String(follow.id)}`), {
          method: 'PATCH',
          body: { content: 'only you, edited' },
        })
      ).status,
    ).toBe(200);

    expect(ix.original!.revisions.map((r) => [r.via, r.content])).toEqual([
      ['defer', ''],
      ['edit', 'one'],
      ['edit', 'one two'],
    ]);
    expect(ix.original!.loading).toBe(false);
    expect(ix.followUps.map((m) => [m.content, m.ephemeral])).toEqual([['only you, edited', true]]);

    expect((await api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'DELETE' })).status).toBe(204);
    expect(ix.original!.deleted).toBe(true);
    expect((await json(await api(fake, webhookPath(fake, ix, '/messages/@original')))).code).toBe(10008);
  });
});
