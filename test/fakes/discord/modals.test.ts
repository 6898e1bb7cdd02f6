/** FakeDiscord: message commands (registration, dispatch) and modals (callback 9, its checks, the submit). */
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeDiscord, FakeInteraction, Json } from '../discord.ts';
import { api, cleanup, connectBot, GUILD_MESSAGES, GUILDS, json, startFake } from './test-helpers.ts';

afterEach(cleanup);

const put = (fake: FakeDiscord, commands: unknown) =>
  api(fake, `/applications/${fake.applicationId}/commands`, { method: 'PUT', body: commands, auth: true });

/** POSTs an interaction callback. */
const respond = (fake: FakeDiscord, ix: FakeInteraction, body: unknown) =>
  api(fake, `/interactions/${ix.id}/${ix.token}/callback`, { method: 'POST', body });

/** A valid modal: one Label holding a paragraph Text Input. */
const modal = (overrides: Json = {}, input: Json = {}): Json => ({
  custom_id: 'ask:1',
  title: 'Ask about a message',
  components: [
    {
      type: 18,
      label: 'Your question',
      component: { type: 4, custom_id: 'question', style: 2, max_length: 20, required: true, ...input },
    },
  ],
  ...overrides,
});

/** A channel message by another user, not mentioning the bot. */
function bobsMessage(fake: FakeDiscord) {
  return fake.postUserMessage({
    channelId: fake.channelList[0]!.id,
    content: 'the boat leaves at 7',
    author: { id: '440000000000000002', username: 'bob' },
  });
}

describe('FakeDiscord message commands', () => {
  it('registers message commands with spaces and capitals, no description and no options, at most 15 of them', async () => {
    const fake = await startFake();
    const res = await put(fake, [
      { type: 1, name: 'chat', description: 'Chat' },
      { type: 3, name: 'Ask about this message' },
    ]);
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject([
      { name: 'chat', type: 1 },
      { name: 'Ask about this message', type: 3, description: '' },
    ]);
    const refused = await put(fake, [
      { type: 3, name: 'Summarize', description: 'Sums up' },
      { type: 3, name: 'With options', options: [{ type: 3, name: 'x', description: 'x' }] },
      { type: 3, name: 'Far too long a name for a context menu' },
      { type: 1, name: 'Chat', description: 'Uppercase is for context menus only' },
    ]);
    expect(refused.status).toBe(400);
    expect(((await json(refused)) as { errors: Json }).errors).toMatchObject({
      0: { description: { _errors: [{ code: 'APPLICATION_COMMAND_CONTEXT_MENU_DESCRIPTION_INVALID' }] } },
      1: { options: { _errors: [{ code: 'APPLICATION_COMMAND_OPTION_TYPE_INVALID' }] } },
      2: { name: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] } },
      3: { name: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] } },
    });
    const sixteen = Array.from({ length: 16 }, (_, i) => ({ type: 3, name: `Action ${i}` }));
    const tooMany = await put(fake, sixteen);
    expect(tooMany.status).toBe(400);
    expect(JSON.stringify(await json(tooMany))).toContain('APPLICATION_COMMANDS_TOO_MANY');
    expect((await put(fake, sixteen.slice(0, 15))).status).toBe(200);
  });

  it('dispatches a message command with the target in resolved.messages, its content included without the Message Content intent', async () => {
    const fake = await startFake();
    await put(fake, [{ type: 3, name: 'Summarize' }]);
    const gateway = await connectBot(fake, GUILDS | GUILD_MESSAGES);
    const target = bobsMessage(fake);
    const ix = fake.dispatchMessageCommand({ command: 'Summarize', messageId: target.id });
    const frame = await gateway.frame((f) => f.t === 'INTERACTION_CREATE');
    const data = (frame.d as Json).data as Json;
    expect(data).toMatchObject({
      id: fake.commands[0]!.id,
      name: 'Summarize',
      type: 3,
      target_id: target.id,
      resolved: { messages: { [target.id]: { id: target.id, content: 'the boat leaves at 7' } } },
    });
    expect(ix.targetMessage).toBe(target);
    expect(() => fake.dispatchMessageCommand({ command: 'Summarize', messageId: '1' })).toThrow(/no message/);
    // A deferral's message is a context-menu command's (type 23).
    expect((await respond(fake, ix, { type: 5, data: { flags: 64 } })).status).toBe(204);
    expect(ix.original).toMatchObject({ type: 23, ephemeral: true });
  });
});

describe('FakeDiscord modals', () => {
  it('takes a modal as the first answer to a command and refuses one Discord would refuse', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const target = bobsMessage(fake);
    const bad = [
      [modal({ title: 'x'.repeat(46) }), ['data', 'title']],
      [modal({ custom_id: '' }), ['data', 'custom_id']],
      [modal({ components: [] }), ['data', 'components']],
      [
        modal({ components: Array.from({ length: 6 }, () => (modal().components as Json[])[0]) }),
        ['data', 'components'],
      ],
      [modal({}, { label: 'own label' }), ['data', 'components', '0', 'component', 'label']],
      [modal({}, { style: 3 }), ['data', 'components', '0', 'component', 'style']],
      [modal({}, { max_length: 4001 }), ['data', 'components', '0', 'component', 'max_length']],
      [modal({}, { placeholder: 'p'.repeat(101) }), ['data', 'components', '0', 'component', 'placeholder']],
    ] as const;
    for (const [data, path] of bad) {
      const ix = fake.dispatchMessageCommand({ command: 'Ask', messageId: target.id });
      const res = await respond(fake, ix, { type: 9, data });
      expect(res.status, JSON.stringify(path)).toBe(400);
      let node = ((await json(res)) as { errors: Json }).errors;
      for (const key of path) node = node[key] as Json;
      expect(node._errors, JSON.stringify(path)).toBeDefined();
      expect(ix.modal).toBeUndefined();
    }
    const ix = fake.dispatchMessageCommand({ command: 'Ask', messageId: target.id });
    expect((await respond(fake, ix, { type: 9, data: modal() })).status).toBe(204);
    expect(ix.modal).toMatchObject({ custom_id: 'ask:1' });
    // The legacy form, an Action Row holding a Text Input with its own label, is still taken.
    const legacy = fake.dispatchMessageCommand({ command: 'Ask', messageId: target.id });
    const row = { type: 1, components: [{ type: 4, custom_id: 'q', style: 1, label: 'Question' }] };
    expect((await respond(fake, legacy, { type: 9, data: modal({ components: [row] }) })).status).toBe(204);
  });

  it("submits a modal as Discord's client does: the values typed, required and length rules enforced; the submit takes 4 or 5, never a modal", async () => {
    const fake = await startFake();
    const gateway = await connectBot(fake);
    const target = bobsMessage(fake);
    const user = { id: '440000000000000001', username: 'alice' };
    const ix = fake.dispatchMessageCommand({ command: 'Ask', messageId: target.id, user });
    expect(() => fake.submitModal({ interactionId: ix.id, values: { question: 'hi' } })).toThrow(/showed no modal/);
    await respond(fake, ix, { type: 9, data: modal() });
    expect(() => fake.submitModal({ interactionId: ix.id, values: {} })).toThrow(/required/);
    expect(() => fake.submitModal({ interactionId: ix.id, values: { question: 'x'.repeat(21) } })).toThrow(
      /at most 20/,
    );
    expect(() => fake.submitModal({ interactionId: ix.id, values: { other: 'x' } })).toThrow(/no input other/);
    const submit = fake.submitModal({ interactionId: ix.id, values: { question: 'When?' } });
    const frame = await gateway.frame((f) => f.t === 'INTERACTION_CREATE' && (f.d as Json).type === 5);
    expect(frame.d).toMatchObject({
      type: 5,
      member: { user: { id: user.id } },
      data: {
        custom_id: 'ask:1',
        components: [{ type: 18, component: { type: 4, custom_id: 'question', value: 'When?' } }],
      },
    });
    expect(submit).toMatchObject({ type: 5, modalOf: ix, customId: 'ask:1' });
    expect(() => fake.submitModal({ interactionId: ix.id, values: { question: 'again' } })).toThrow(
      /submitted already/,
    );
    for (const type of [9, 6, 7]) {
      const refused = await respond(fake, submit, { type, data: type === 9 ? modal() : { content: 'x' } });
      expect(refused.status, `type ${type}`).toBe(400);
      expect(JSON.stringify(await json(refused))).toContain('INTERACTION_RESPONSE_TYPE_INVALID');
    }
    expect((await respond(fake, submit, { type: 5, data: { flags: 64 } })).status).toBe(204);
    expect(submit.original).toMatchObject({ type: 0, ephemeral: true, loading: true });
  });
});
