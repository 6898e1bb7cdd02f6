/** FakeDiscord: Application commands: registration, validation like Discord's, guild commands. */
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeDiscord, Json } from '../discord.ts';
import { api, cleanup, connectBot, json, startFake } from './test-helpers.ts';

afterEach(cleanup);

describe('FakeDiscord application commands', () => {
  const valid = {
    name: 'chat',
    description: 'Ask',
    type: 1,
    options: [
      { name: 'prompt', description: 'What', type: 3, required: true },
      { name: 'style', description: 'How', type: 3, choices: [{ name: 'vivid', value: 'vivid' }] },
    ],
  };

  async function put(fake: FakeDiscord, commands: unknown, auth = true) {
    return api(fake, `/applications/${fake.applicationId}/commands`, { method: 'PUT', body: commands, auth });
  }

  it('registers valid commands (bot token required) and answers them with ids; GET lists them; dispatched interactions use their ids and option types', async () => {
    const fake = await startFake();
    expect((await put(fake, [valid], false)).status).toBe(401);
    const res = await put(fake, [valid]);
    expect(res.status).toBe(200);
    const [registered] = (await res.json()) as Json[];
    expect(registered).toMatchObject({
      name: 'chat',
      type: 1,
      application_id: fake.applicationId,
      options: valid.options,
    });
    expect(registered!.id).toMatch(/^\d{17,20}$/);
    expect(await json(await api(fake, `/applications/${fake.applicationId}/commands`, { auth: true }))).toEqual([
      registered,
    ]);

    const gateway = await connectBot(fake);
    const ix = fake.dispatchInteraction({ command: 'chat', options: { prompt: 'hi' } });
    const frame = await gateway.frame((f) => f.t === 'INTERACTION_CREATE');
    expect((frame.d as Json).data).toMatchObject({
      id: registered!.id,
      options: [{ name: 'prompt', type: 3, value: 'hi' }],
    });
    expect(ix.commandName).toBe('chat');
    expect(() => fake.dispatchInteraction({ command: 'chat', options: { nope: 'x', prompt: 'y' } })).toThrow(
      /no option nope/,
    );
    expect(() => fake.dispatchInteraction({ command: 'chat', options: {} })).toThrow(/needs option prompt/);
  });

  it.each([
    [
      'an uppercase name',
      [{ ...valid, name: 'Chat' }],
      { 0: { name: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] } } },
    ],
    [
      'a name with a space',
      [{ ...valid, name: 'my chat' }],
      { 0: { name: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] } } },
    ],
    [
      'a 33-character name',
      [{ ...valid, name: 'c'.repeat(33) }],
      { 0: { name: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] } } },
    ],
    [
      'an empty description',
      [{ ...valid, description: '' }],
      { 0: { description: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } },
    ],
    [
      'a 101-character description',
      [{ ...valid, description: 'd'.repeat(101) }],
      { 0: { description: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } },
    ],
    [
      '26 options',
      [{ ...valid, options: Array.from({ length: 26 }, (_, i) => ({ name: `o${i}`, description: 'd', type: 3 })) }],
      { 0: { options: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } },
    ],
    [
      'a required option after an optional one',
      [{ ...valid, options: [...valid.options].reverse() }],
      { 0: { options: { _errors: [{ code: 'APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID' }] } } },
    ],
    [
      '26 choices',
      [
        {
          ...valid,
          options: [
            {
              name: 'pick',
              description: 'd',
              type: 3,
              choices: Array.from({ length: 26 }, (_, i) => ({ name: `c${i}`, value: `c${i}` })),
            },
          ],
        },
      ],
      { 0: { options: { 0: { choices: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } } } },
    ],
    [
      'a choice value of 101 characters',
      [
        {
          ...valid,
          options: [{ name: 'pick', description: 'd', type: 3, choices: [{ name: 'long', value: 'v'.repeat(101) }] }],
        },
      ],
      { 0: { options: { 0: { choices: { 0: { value: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } } } } } },
    ],
    [
      'a choice name of 101 characters',
      [
        {
          ...valid,
          options: [{ name: 'pick', description: 'd', type: 3, choices: [{ name: 'n'.repeat(101), value: 'v' }] }],
        },
      ],
      { 0: { options: { 0: { choices: { 0: { name: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } } } } } },
    ],
    [
      'a string choice on an integer option',
      [{ ...valid, options: [{ name: 'n', description: 'd', type: 4, choices: [{ name: 'one', value: 'one' }] }] }],
      { 0: { options: { 0: { choices: { 0: { value: { _errors: [{ code: 'NUMBER_TYPE_COERCE' }] } } } } } } },
    ],
    [
      'two commands with one name',
      [valid, valid],
      { 1: { name: { _errors: [{ code: 'APPLICATION_COMMANDS_DUPLICATE_NAME' }] } } },
    ],
    [
      'a non-numeric default_member_permissions',
      [{ ...valid, default_member_permissions: 'admins' }],
      { 0: { default_member_permissions: { _errors: [{ code: 'NUMBER_TYPE_COERCE' }] } } },
    ],
    [
      'a localization under a locale code Discord does not have (`pt_BR`, `en`)',
      [{ ...valid, name_localizations: { pt_BR: 'chat' }, description_localizations: { en: 'Ask' } }],
      {
        0: {
          name_localizations: { pt_BR: { _errors: [{ code: 'BASE_TYPE_CHOICES' }] } },
          description_localizations: { en: { _errors: [{ code: 'BASE_TYPE_CHOICES' }] } },
        },
      },
    ],
    [
      'a localized command name with a capital',
      [{ ...valid, name_localizations: { de: 'Frage' } }],
      { 0: { name_localizations: { de: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] } } } },
    ],
    [
      'a localized option name with a space, and one of 33 characters',
      [
        {
          ...valid,
          options: [{ ...valid.options[0], name_localizations: { fr: 'ma question', ja: 'あ'.repeat(33) } }],
        },
      ],
      {
        0: {
          options: {
            0: {
              name_localizations: {
                fr: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] },
                ja: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] },
              },
            },
          },
        },
      },
    ],
    [
      'a localized description of 101 characters, and an empty one',
      [
        {
          ...valid,
          description_localizations: { 'es-ES': 'd'.repeat(101) },
          options: [{ ...valid.options[0], description_localizations: { 'es-419': '' } }],
        },
      ],
      {
        0: {
          description_localizations: { 'es-ES': { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } },
          options: { 0: { description_localizations: { 'es-419': { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } } },
        },
      },
    ],
    [
      'a localized choice name of 101 characters',
      [
        {
          ...valid,
          options: [
            valid.options[0],
            {
              ...valid.options[1],
              choices: [{ name: 'vivid', value: 'vivid', name_localizations: { de: 'x'.repeat(101) } }],
            },
          ],
        },
      ],
      {
        0: {
          options: {
            1: { choices: { 0: { name_localizations: { de: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } } } },
          },
        },
      },
    ],
    [
      'localizations that are not a map',
      [{ ...valid, name_localizations: ['chat'] }],
      { 0: { name_localizations: { _errors: [{ code: 'DICT_TYPE_CONVERT' }] } } },
    ],
  ])('refuses %s with 400 code 50035 naming the field, and keeps what was registered', async (_, commands, errors) => {
    const fake = await startFake();
    await put(fake, [valid]);
    const before = fake.commands;
    const res = await put(fake, commands);
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ message: 'Invalid Form Body', code: 50035, errors });
    expect(fake.commands).toBe(before);
  });

  it('accepts localizations under Discord locale codes (names lowercase, a message command any case with spaces, null for none) and answers with them', async () => {
    const fake = await startFake();
    const localized = {
      ...valid,
      name_localizations: { de: 'frage', ja: '質問', 'es-419': 'pregunta' },
      description_localizations: { fr: 'Demandez', 'pt-BR': null },
      options: [
        { ...valid.options[0], name_localizations: { de: 'eingabe' }, description_localizations: { de: 'Was' } },
        {
          ...valid.options[1],
          choices: [{ name: 'vivid', value: 'vivid', name_localizations: { de: 'Lebhaft und bunt' } }],
        },
      ],
    };
    const message = {
      type: 3,
      name: 'Summarize',
      name_localizations: { de: 'Zusammenfassen', fr: 'Résumer ce message' },
    };
    const res = await put(fake, [localized, message]);
    expect(res.status).toBe(200);
    const [chat, summarize] = (await res.json()) as Json[];
    expect(chat).toMatchObject({
      name_localizations: localized.name_localizations,
      description_localizations: localized.description_localizations,
      options: localized.options,
    });
    expect(summarize).toMatchObject({ name_localizations: message.name_localizations });
  });

  it('registers guild commands in the fake guild only (10004 elsewhere), and refuses another application (50001)', async () => {
    const fake = await startFake();
    const inGuild = await api(fake, `/applications/${fake.applicationId}/guilds/${fake.guildId}/commands`, {
      method: 'PUT',
      body: [valid],
      auth: true,
    });
    expect(inGuild.status).toBe(200);
    expect(fake.guildCommands(fake.guildId).map((c) => c.guild_id)).toEqual([fake.guildId]);
    const elsewhere = await api(fake, `/applications/${fake.applicationId}/guilds/1290000000000000555/commands`, {
      method: 'PUT',
      body: [valid],
      auth: true,
    });
    expect((await json(elsewhere)).code).toBe(10004);
    const otherApp = await api(fake, `/applications/1290000000000000777/commands`, {
      method: 'PUT',
      body: [valid],
      auth: true,
    });
    expect(otherApp.status).toBe(403);
    expect((await json(otherApp)).code).toBe(50001);
  });

  it('shows a command with default_member_permissions only to members who hold them (Administrator holds all) or whom a server admin allowed under Integrations: for anyone else there is no interaction', async () => {
    const fake = await startFake();
    const manageServer = String(1n << 5n);
    const admin = { ...valid, name: 'settings', default_member_permissions: manageServer };
    const adminsOnly = { ...valid, name: 'models', default_member_permissions: '0' };
    expect((await put(fake, [valid, admin, adminsOnly])).status).toBe(200);
    await connectBot(fake);
    const member = { id: '1290000000000000801', username: 'bob' };
    const prompt = { prompt: 'p' };
    expect(() => fake.dispatchInteraction({ command: 'settings', user: member, options: prompt })).toThrow(
      /\/settings is not shown to bob/,
    );
    expect(() => fake.dispatchAutocomplete({ command: 'settings', user: member, focused: 'prompt' })).toThrow(
      /not shown to bob/,
    );
    expect(() => fake.dispatchInteraction({ command: 'models', user: member, options: prompt })).toThrow(/not shown/);
    // Everyone sees a command without default_member_permissions.
    expect(fake.dispatchInteraction({ command: 'chat', user: member, options: prompt }).commandName).toBe('chat');
    // Manage Server itself (with a member's usual rights) is enough for settings, not for the admins-only command.
    const withManage = String((1n << 5n) | (1n << 10n) | (1n << 11n) | (1n << 31n));
    expect(
      fake.dispatchInteraction({ command: 'settings', user: member, permissions: withManage, options: prompt })
        .commandName,
    ).toBe('settings');
    expect(() =>
      fake.dispatchInteraction({ command: 'models', user: member, permissions: withManage, options: prompt }),
    ).toThrow(/not shown/);
    expect(fake.dispatchInteraction({ command: 'models', admin: true, options: prompt }).commandName).toBe('models');
    // A server admin allows bob under Integrations; a role override denied to him loses to it.
    fake.setCommandPermissions('settings', [
      { id: member.id, type: 2, permission: true },
      { id: '1290000000000000802', type: 1, permission: false },
    ]);
    expect(fake.dispatchInteraction({ command: 'settings', user: member, options: prompt }).commandName).toBe(
      'settings',
    );
    fake.setCommandPermissions('settings', [{ id: member.id, type: 2, permission: false }]);
    expect(() =>
      fake.dispatchInteraction({ command: 'settings', user: member, permissions: withManage, options: prompt }),
    ).toThrow(/denied/);
  });
});
