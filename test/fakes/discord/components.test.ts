/**
 * FakeDiscord: interactions beyond a plain command, driven with a real discord.js client:
 * attachment options (type 11, `data.resolved.attachments`, on the signed CDN), autocomplete
 * (type 4, answered with type 8 within the window and Discord's choice limits), and button
 * presses (type 3: deferred update, update, new reply, `@original` = the message with the
 * button), with components and embeds checked like Discord does.
 */

import {
  ActionRowBuilder,
  type AutocompleteInteraction,
  ButtonBuilder,
  type ButtonInteraction,
  ButtonStyle,
  type ChatInputCommandInteraction,
  type Client,
  DiscordAPIError,
  Events,
  GatewayIntentBits as I,
  type Interaction,
  MessageFlags,
  PermissionFlagsBits,
} from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_USER, type FakeDiscord, type FakeInteraction, type Json, MessageFlag } from '../discord.ts';
import { api, cleanup, json, startClient, startFake, webhookPath } from './test-helpers.ts';

afterEach(cleanup);

const COMMANDS = [
  {
    name: 'draw',
    description: 'Draw',
    type: 1,
    options: [
      { name: 'prompt', description: 'What', type: 3, required: true },
      { name: 'model', description: 'Which', type: 3, autocomplete: true },
      { name: 'steps', description: 'How many', type: 4, autocomplete: true },
      { name: 'image', description: 'From', type: 11 },
      { name: 'style', description: 'How', type: 3 },
    ],
  },
];

/** A fake with the commands registered and a discord.js bot in it. */
async function setup(
  options: Parameters<typeof startFake>[0] = {},
): Promise<{ fake: FakeDiscord; client: Client<true> }> {
  const fake = await startFake(options);
  const res = await api(fake, `/applications/${fake.applicationId}/commands`, {
    method: 'PUT',
    body: COMMANDS,
    auth: true,
  });
  expect(res.status).toBe(200);
  const client = await startClient(fake, [I.Guilds]);
  return { fake, client };
}

/** The next interaction discord.js emits that `accept` takes. */
function next<T extends Interaction>(client: Client, accept: (i: Interaction) => i is T): Promise<T> {
  return new Promise((resolve) => {
    const listener = (i: Interaction) => {
      if (!accept(i)) return;
      client.off(Events.InteractionCreate, listener);
      resolve(i);
    };
    client.on(Events.InteractionCreate, listener);
  });
}

const isCommand = (i: Interaction): i is ChatInputCommandInteraction => i.isChatInputCommand();
const isAutocomplete = (i: Interaction): i is AutocompleteInteraction => i.isAutocomplete();
const isButton = (i: Interaction): i is ButtonInteraction => i.isButton();

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
);

/** A reply of the bot to a /draw carrying `rows` of buttons; returns the stored message. */
async function postWithButtons(
  fake: FakeDiscord,
  client: Client,
  rows: ActionRowBuilder<ButtonBuilder>[],
  ephemeral = false,
) {
  const seen = next(client, isCommand);
  const ix = fake.dispatchInteraction({ command: 'draw', options: { prompt: 'fox' } });
  const command = await seen;
  await command.reply({
    content: 'Pick one',
    components: rows,
    ...(ephemeral ? { flags: MessageFlags.Ephemeral } : {}),
  });
  return { ix, message: ix.original! };
}

const row = (...buttons: ButtonBuilder[]) => new ActionRowBuilder<ButtonBuilder>().addComponents(...buttons);
const button = (id: string, label = id, disabled = false) =>
  new ButtonBuilder().setCustomId(id).setLabel(label).setStyle(ButtonStyle.Secondary).setDisabled(disabled);

describe('FakeDiscord attachment options', () => {
  it('puts a file option in data.resolved.attachments with the option value as its id (type 11), which discord.js reads and the signed CDN serves', async () => {
    const { fake, client } = await setup();
    const seen = next(client, isCommand);
    const ix = fake.dispatchInteraction({
      command: 'draw',
      options: {
        prompt: 'fox',
        image: { filename: 'cat.png', contentType: 'image/png', data: PNG, width: 1, height: 1 },
      },
    });
    const command = await seen;

    const data = ix.payload.data as Json;
    const option = (data.options as Json[]).find((o) => o.name === 'image')!;
    expect(option.type).toBe(11);
    const resolved = (data.resolved as { attachments: Record<string, Json> }).attachments;
    expect(Object.keys(resolved)).toEqual([option.value]);
    expect(resolved[option.value as string]).toMatchObject({
      filename: 'cat.png',
      content_type: 'image/png',
      size: PNG.length,
      width: 1,
      height: 1,
      ephemeral: true,
    });

    const attachment = command.options.getAttachment('image', true);
    expect(attachment).toMatchObject({ id: option.value, name: 'cat.png', contentType: 'image/png', size: PNG.length });
    const download = await fetch(attachment.url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(PNG);
    // Only with its exact signature, like a message's file.
    expect((await fetch(attachment.url.replace(/hm=[0-9a-f]+/, `hm=${'0'.repeat(64)}`))).status).toBe(404);
    expect(fake.downloads.map((d) => d.attachmentId)).toEqual([attachment.id]);
  });

  it('throws for a file given to an option that takes no file, and for text given to an attachment option', async () => {
    const { fake } = await setup();
    expect(() =>
      fake.dispatchInteraction({
        command: 'draw',
        options: { prompt: 'fox', style: { filename: 'a.png', data: PNG } },
      }),
    ).toThrow(/type 3/);
    expect(() => fake.dispatchInteraction({ command: 'draw', options: { prompt: 'fox', image: 'cat.png' } })).toThrow(
      /type 11/,
    );
  });
});

describe('FakeDiscord autocomplete', () => {
  it('sends type 4 with the typed option focused, and resolves the record with the choices of the type-8 answer', async () => {
    const { fake, client } = await setup();
    const seen = next(client, isAutocomplete);
    const record = fake.dispatchAutocomplete({
      command: 'draw',
      options: { style: 'ink', model: 'fa' },
      focused: 'model',
    });
    const interaction = await seen;
    expect(interaction.commandName).toBe('draw');
    expect(interaction.options.getFocused(true)).toMatchObject({ name: 'model', value: 'fa' });
    expect(interaction.options.getString('style')).toBe('ink');
    expect((record.payload.data as Json).options).toEqual(
      expect.arrayContaining([{ name: 'model', type: 3, value: 'fa', focused: true }]),
    );

    await interaction.respond([
      { name: 'Fake Image', value: 'fake-image' },
      { name: 'Fake Chat', value: 'fake-chat' },
    ]);
    const outcome = await record.outcome;
    expect(outcome).toMatchObject({
      expired: false,
      choices: [
        { name: 'Fake Image', value: 'fake-image' },
        { name: 'Fake Chat', value: 'fake-chat' },
      ],
    });
    expect(outcome.elapsedMs).toBeLessThan(3_000);
    expect(record.callbacks.map((c) => [c.type, c.status])).toEqual([[8, 204]]);
    // A second answer is refused.
    await expect(
      api(fake, `/interactions/${record.id}/${record.token}/callback`, {
        method: 'POST',
        body: { type: 8, data: { choices: [] } },
      }).then(json),
    ).resolves.toMatchObject({ code: 40060 });
  });

  it("sends the typed text of a focused integer option as a string, and wants numbers as its choices' values", async () => {
    const { fake, client } = await setup();
    const seen = next(client, isAutocomplete);
    const record = fake.dispatchAutocomplete({ command: 'draw', options: { steps: '2' }, focused: 'steps' });
    const interaction = await seen;
    expect(interaction.options.getFocused()).toBe('2');
    await expect(interaction.respond([{ name: 'twenty', value: 'twenty' }])).rejects.toBeInstanceOf(DiscordAPIError);
    await interaction.respond([{ name: 'twenty', value: 20 }]);
    await expect(record.outcome).resolves.toMatchObject({ choices: [{ value: 20 }] });
  });

  it.each([
    ['26 choices', Array.from({ length: 26 }, (_, i) => ({ name: `m${i}`, value: `m${i}` })), ['choices']],
    ['an empty name', [{ name: '', value: 'x' }], ['choices', '0', 'name']],
    ['a 101-character name', [{ name: 'n'.repeat(101), value: 'x' }], ['choices', '0', 'name']],
    ['a 101-character value', [{ name: 'long', value: 'v'.repeat(101) }], ['choices', '0', 'value']],
  ])(
    'refuses an answer with %s (400, 50035 naming the field), and the record expires unanswered',
    async (_, choices, path) => {
      const { fake, client } = await setup({ responseWindowMs: 400 });
      const seen = next(client, isAutocomplete);
      const record = fake.dispatchAutocomplete({ command: 'draw', focused: 'model' });
      const interaction = await seen;
      const refused = await interaction.respond(choices).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(DiscordAPIError);
      expect((refused as DiscordAPIError).code).toBe(50035);
      const raw = (refused as DiscordAPIError).rawError as { errors: Json };
      let node: unknown = raw.errors.data;
      for (const key of path) node = (node as Json)[key];
      expect((node as Json)._errors).toBeDefined();
      const outcome = await record.outcome;
      expect(outcome.expired).toBe(true);
      expect(record.expired).toBe(true);
      expect(record.callbacks.map((c) => c.status)).toEqual([400]);
    },
  );

  it('refuses an answer after the response window with 10062 Unknown interaction, and says the autocomplete expired', async () => {
    const { fake, client } = await setup({ responseWindowMs: 150 });
    const seen = next(client, isAutocomplete);
    const record = fake.dispatchAutocomplete({ command: 'draw', focused: 'model', options: { model: 'x' } });
    const interaction = await seen;
    await expect(record.outcome).resolves.toMatchObject({ expired: true });
    await expect(interaction.respond([{ name: 'late', value: 'late' }])).rejects.toMatchObject({ code: 10062 });
    expect(record.callbacks.map((c) => c.code)).toEqual([10062]);
    expect(record.choices).toBeUndefined();
  });

  it('refuses other response types to an autocomplete and type 8 to a command; throws for an option without autocomplete', async () => {
    const { fake } = await setup();
    const ac = fake.dispatchAutocomplete({ command: 'draw', focused: 'model' });
    const asMessage = await api(fake, `/interactions/${ac.id}/${ac.token}/callback`, {
      method: 'POST',
      body: { type: 4, data: { content: 'no' } },
    });
    expect(await json(asMessage)).toMatchObject({
      code: 50035,
      errors: { type: { _errors: [{ code: 'INTERACTION_RESPONSE_TYPE_INVALID' }] } },
    });
    const command = fake.dispatchInteraction({ command: 'draw', options: { prompt: 'x' } });
    const asChoices = await api(fake, `/interactions/${command.id}/${command.token}/callback`, {
      method: 'POST',
      body: { type: 8, data: { choices: [] } },
    });
    expect((await json(asChoices)).code).toBe(50035);
    expect(() => fake.dispatchAutocomplete({ command: 'draw', focused: 'style' })).toThrow(/no autocomplete/);
    expect(() => fake.dispatchAutocomplete({ command: 'draw', focused: 'nope' })).toThrow(/no option nope/);
  });
});

describe('FakeDiscord buttons', () => {
  it("stores a reply's buttons and sends a press as type 3 with the message; update (7) replaces content and components", async () => {
    const { fake, client } = await setup();
    const { message } = await postWithButtons(fake, client, [row(button('page:0', '◀', true), button('page:2', '▶'))]);
    expect(message.components).toEqual([
      {
        type: 1,
        components: [
          expect.objectContaining({ type: 2, custom_id: 'page:0', disabled: true }),
          expect.objectContaining({ custom_id: 'page:2', label: '▶' }),
        ],
      },
    ]);

    const seen = next(client, isButton);
    const press = fake.pressButton({
      messageId: message.id,
      customId: 'page:2',
      user: { username: 'grace' },
      permissions: String(PermissionFlagsBits.ManageGuild),
    });
    const interaction = await seen;
    expect(press.type).toBe(3);
    expect(press.payload).toMatchObject({
      type: 3,
      data: { custom_id: 'page:2', component_type: 2 },
      message: { id: message.id, content: 'Pick one' },
    });
    expect(interaction.customId).toBe('page:2');
    expect(interaction.message.id).toBe(message.id);
    expect(interaction.user.username).toBe('grace');
    expect(interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)).toBe(true);
    expect(interaction.memberPermissions?.has(PermissionFlagsBits.Administrator)).toBe(false);

    await interaction.update({
      content: 'Page 2',
      components: [row(button('page:1', '◀'), button('page:3', '▶', true))],
    });
    expect(press.callbacks.map((c) => [c.type, c.status])).toEqual([[7, 204]]);
    expect(message.content).toBe('Page 2');
    expect(message.components[0]!.components).toEqual([
      expect.objectContaining({ custom_id: 'page:1' }),
      expect.objectContaining({ custom_id: 'page:3', disabled: true }),
    ]);
    expect(message.revisions.at(-1)).toMatchObject({ via: 'edit', content: 'Page 2' });
    expect(press.original).toBe(message);
    expect(() => fake.pressButton({ messageId: message.id, customId: 'page:2' })).toThrow(/no button page:2/);
  });

  it('after a deferred update (6), editReply edits the message with the button through @original', async () => {
    const { fake, client } = await setup();
    const { message } = await postWithButtons(fake, client, [row(button('go'))]);
    const seen = next(client, isButton);
    const press = fake.pressButton({ messageId: message.id, customId: 'go' });
    const interaction = await seen;
    await interaction.deferUpdate();
    expect(message.content).toBe('Pick one');
    await interaction.editReply({ content: 'Done', components: [] });
    expect(message).toMatchObject({ content: 'Done', components: [] });
    expect(press.callbacks.map((c) => c.type)).toEqual([6]);
    expect(fake.requests.at(-1)).toMatchObject({
      method: 'PATCH',
      path: `/api/v10/webhooks/${fake.applicationId}/${press.token}/messages/@original`,
      status: 200,
    });
    // Follow-ups work with the token, as for any interaction.
    await expect(
      interaction.followUp({ content: 'and one more', flags: MessageFlags.Ephemeral }),
    ).resolves.toBeDefined();
    expect(press.followUps.map((m) => [m.content, m.ephemeral])).toEqual([['and one more', true]]);
  });

  it('answers a press with a new reply (4 or 5): @original is then the new message, and the message with the button stays', async () => {
    const { fake, client } = await setup();
    const { message } = await postWithButtons(fake, client, [row(button('again'))]);
    const seen = next(client, isButton);
    const press = fake.pressButton({ messageId: message.id, customId: 'again' });
    const interaction = await seen;
    await interaction.deferReply();
    await interaction.editReply({ content: 'A new picture' });
    expect(press.original).not.toBe(message);
    expect(press.original).toMatchObject({ content: 'A new picture', type: 0, loading: false });
    expect(fake.messageJson(press.original!)).toMatchObject({
      interaction_metadata: { type: 3, interacted_message_id: message.id, user: { id: DEFAULT_USER.id } },
    });
    expect(message.content).toBe('Pick one');
  });

  it("throws for a press Discord's client would not send: no such button, a disabled one, an ephemeral message of someone else, a deleted message", async () => {
    const { fake, client } = await setup();
    const { message } = await postWithButtons(fake, client, [row(button('on'), button('off', 'off', true))]);
    expect(() => fake.pressButton({ messageId: message.id, customId: 'nope' })).toThrow(/no button nope/);
    expect(() => fake.pressButton({ messageId: message.id, customId: 'off' })).toThrow(/disabled/);
    const hidden = await postWithButtons(fake, client, [row(button('secret'))], true);
    expect(hidden.message.flags & MessageFlag.Ephemeral).toBe(MessageFlag.Ephemeral);
    expect(() =>
      fake.pressButton({ messageId: hidden.message.id, customId: 'secret', user: { username: 'mallory' } }),
    ).toThrow(/ephemeral/);
    expect(fake.pressButton({ messageId: hidden.message.id, customId: 'secret' }).type).toBe(3);
    message.deleted = true;
    expect(() => fake.pressButton({ messageId: message.id, customId: 'on' })).toThrow(/no message/);
  });

  it('refuses update types (6, 7) to a command, and an update of a message deleted since the press with 10008', async () => {
    const { fake, client } = await setup();
    const command = fake.dispatchInteraction({ command: 'draw', options: { prompt: 'x' } });
    const res = await api(fake, `/interactions/${command.id}/${command.token}/callback`, {
      method: 'POST',
      body: { type: 6 },
    });
    expect(await json(res)).toMatchObject({
      code: 50035,
      errors: { type: { _errors: [{ code: 'INTERACTION_RESPONSE_TYPE_INVALID' }] } },
    });
    const { message } = await postWithButtons(fake, client, [row(button('x'))]);
    const press: FakeInteraction = fake.pressButton({ messageId: message.id, customId: 'x' });
    message.deleted = true;
    const gone = await api(fake, `/interactions/${press.id}/${press.token}/callback`, {
      method: 'POST',
      body: { type: 7, data: { content: 'y' } },
    });
    expect((await json(gone)).code).toBe(10008);
  });
});

describe('FakeDiscord component and embed limits', () => {
  const b = (id: string, extra: Json = {}) => ({ type: 2, style: 2, label: id, custom_id: id, ...extra });
  const rowOf = (n: number, prefix: string) => ({
    type: 1,
    components: Array.from({ length: n }, (_, i) => b(`${prefix}${i}`)),
  });
  const field = (i: number, value = 'v') => ({ name: `f${i}`, value });

  it.each([
    ['6 action rows', { components: Array.from({ length: 6 }, (_, i) => rowOf(1, `r${i}-`)) }, ['components']],
    ['6 buttons in a row', { components: [rowOf(6, 'b')] }, ['components', '0', 'components']],
    ['an empty row', { components: [{ type: 1, components: [] }] }, ['components', '0', 'components']],
    ['a button outside a row', { components: [b('loose')] }, ['components', '0', 'type']],
    [
      'a 101-character custom_id',
      { components: [{ type: 1, components: [b('c'.repeat(101))] }] },
      ['components', '0', 'components', '0', 'custom_id'],
    ],
    [
      'an 81-character label',
      { components: [{ type: 1, components: [b('ok', { label: 'l'.repeat(81) })] }] },
      ['components', '0', 'components', '0', 'label'],
    ],
    [
      'a button without custom_id',
      { components: [{ type: 1, components: [{ type: 2, style: 1, label: 'x' }] }] },
      ['components', '0', 'components', '0', 'custom_id'],
    ],
    [
      'two buttons with one custom_id',
      { components: [{ type: 1, components: [b('same'), b('same')] }] },
      ['components', '0', 'components', '1', 'custom_id'],
    ],
    ['11 embeds', { embeds: Array.from({ length: 11 }, (_, i) => ({ title: `e${i}` })) }, ['embeds']],
    [
      '26 fields in an embed',
      { embeds: [{ title: 't', fields: Array.from({ length: 26 }, (_, i) => field(i)) }] },
      ['embeds', '0', 'fields'],
    ],
    [
      '6,001 characters of embeds',
      { embeds: [{ title: 't', fields: Array.from({ length: 6 }, (_, i) => field(i, 'x'.repeat(1000))) }] },
      ['embeds'],
    ],
  ])('refuses a message with %s (400, 50035 naming the field), on an edit as on a callback', async (_, body, path) => {
    const { fake, client } = await setup();
    const { ix } = await postWithButtons(fake, client, [row(button('keep'))]);
    const before = ix.original!.revisions.length;
    const edit = await api(fake, webhookPath(fake, ix, '/messages/@original'), {
      method: 'PATCH',
      body: { content: 'x', ...body },
    });
    expect(edit.status).toBe(400);
    const answer = await json(edit);
    expect(answer.code).toBe(50035);
    let node: unknown = answer.errors;
    for (const key of path) node = (node as Json)[key];
    expect((node as Json)._errors).toBeDefined();
    expect(ix.original!.revisions).toHaveLength(before);

    const fresh = fake.dispatchInteraction({ command: 'draw', options: { prompt: 'y' } });
    const created = await api(fake, `/interactions/${fresh.id}/${fresh.token}/callback`, {
      method: 'POST',
      body: { type: 4, data: { content: 'x', ...body } },
    });
    expect(created.status).toBe(400);
  });

  it('accepts 5 rows of 5 buttons, a link button, 10 embeds of 25 fields within 6,000 characters, and a message of buttons alone', async () => {
    const { fake, client } = await setup();
    const { ix } = await postWithButtons(fake, client, [row(button('keep'))]);
    const rows: Array<{ type: number; components: Json[] }> = Array.from({ length: 5 }, (_, i) => rowOf(5, `r${i}-`));
    rows[4]!.components[4] = { type: 2, style: 5, label: 'docs', url: 'https://example.com/docs' };
    const embeds = Array.from({ length: 10 }, (_, i) => ({
      title: `e${i}`,
      fields: i === 0 ? Array.from({ length: 25 }, (_, j) => field(j, 'x'.repeat(20))) : [],
    }));
    const ok = await api(fake, webhookPath(fake, ix, '/messages/@original'), {
      method: 'PATCH',
      body: { content: '', components: rows, embeds },
    });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toMatchObject({ components: rows });
    const alone = fake.dispatchInteraction({ command: 'draw', options: { prompt: 'y' } });
    const res = await api(fake, `/interactions/${alone.id}/${alone.token}/callback`, {
      method: 'POST',
      body: { type: 4, data: { components: [rowOf(1, 'only')] } },
    });
    expect(res.status).toBe(204);
  });
});
