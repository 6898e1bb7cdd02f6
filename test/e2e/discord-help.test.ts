/**
 * End-to-end on Discord (issue 19, item 7): `/help` lists every command of commands/index.ts
 * with each of its options (ranges and choices) and the service's models, to the invoker alone,
 * within Discord's limits (the fake refuses an embed of more than 25 fields, a field value over
 * 1,024 characters, embeds over 6,000 characters in a message, content over 2,000). The whole
 * bot (startTestBot), real discord.js, commands registered by deployCommands.
 */
import { describe, expect, it } from 'vitest';
import { commands, messageActions } from '../../commands/index.ts';
import { rangeOf } from '../../src/core/command.ts';
import { descriptionIn, nameIn } from '../../src/core/command-words.ts';
import { wordsOf } from '../../src/core/i18n/words.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import type { FakeDiscord, FakeMessage, Json } from '../fakes/discord.ts';
import { DEFAULT_MODELS, type FakeModel, type FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

/**
 * 200 text models with long ids (the fake's two and 198 more, 90 characters each: about 18,000
 * characters, more than three embeds can hold), and the fake's image models.
 */
const LONG_MODELS = Array.from(
  { length: 198 },
  (_, i) =>
    `an-organisation-with-a-long-name/a-rather-long-text-model-family-name-instruct-v${String(i + 1).padStart(4, '0')}`,
);
const MODELS: FakeModel[] = [
  ...DEFAULT_MODELS.filter((m) => m.type !== 'image'),
  ...LONG_MODELS.map((id) => ({ id })),
  ...DEFAULT_MODELS.filter((m) => m.type === 'image'),
];

/** Discord's message flag EPHEMERAL (1 << 6). */
const EPHEMERAL = 64;

let discord: FakeDiscord;
let testBot: TestBot;

// Every quota on: /help must count against none of them.
const QUOTAS = { QUOTA_CHAT_PER_MINUTE: '1', QUOTA_IMAGES_PER_DAY: '1', QUOTA_TOKENS_PER_DAY: '100000' };

useE2E({ service: { models: MODELS }, discord: {}, bot: { env: QUOTAS } }, async (e2e) => {
  ({ discord, bot: testBot } = e2e);
  await deployCommands({ token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl });
});

/** Everything a user reads in a message: its content, and each embed's title, description, fields and footer. */
function readable(message: FakeMessage): string {
  const embeds = message.embeds.map((e: Json) =>
    [
      e.title,
      e.description,
      ...((e.fields ?? []) as Json[]).flatMap((f) => [f.name, f.value]),
      (e.footer as Json | undefined)?.text,
    ]
      .filter((t) => typeof t === 'string')
      .join('\n'),
  );
  return [message.content, ...embeds].join('\n');
}

describe('/help on Discord', () => {
  it('is registered with the other commands, derived from commands/', () => {
    expect(discord.commands.filter((c) => c.type === 1).map((c) => c.name)).toEqual(commands.map((c) => c.name));
    expect(commands.map((c) => c.name)).toContain('help');
  });

  it('lists every command, each option with its range and choices, the message actions, and 200 long-named models, ephemerally and within the limits', async () => {
    const channel = discord.addChannel('help');
    const done = testBot.outcomes((o) => o.command === 'help');
    const interaction = discord.dispatchInteraction({ channelId: channel.id, command: 'help' });
    expect((await done)[0]).toMatchObject({ ok: true });
    const refused = discord.requests.filter((r) => r.path.includes(interaction.token) && r.status >= 400);
    expect(refused).toEqual([]);
    // Answered at once with an ephemeral reply: no deferral, which the channel would see.
    expect(interaction.callbacks.map((c) => [c.type, c.flags & EPHEMERAL, c.status])).toEqual([[4, EPHEMERAL, 204]]);
    const messages = interaction.messages.filter((m) => !m.deleted);
    expect(messages.length).toBeGreaterThan(0);
    for (const message of messages) {
      expect(message.ephemeral).toBe(true);
      expect(message.content.length).toBeLessThanOrEqual(2000);
      expect(message.embeds.length).toBeLessThanOrEqual(10);
      let chars = 0;
      for (const embed of message.embeds) {
        const fields = (embed.fields ?? []) as Json[];
        expect(fields.length).toBeLessThanOrEqual(25);
        for (const f of fields) expect(String(f.value).length).toBeLessThanOrEqual(1024);
        chars += readable({ ...message, content: '', embeds: [embed] } as FakeMessage).replace(/\n/g, '').length;
      }
      expect(chars).toBeLessThanOrEqual(6000);
    }
    const embeds = messages.flatMap((m) => m.embeds);
    for (const command of commands) {
      // One embed per command, titled with it, a field per option.
      const embed = embeds.find((e) => String(e.title).startsWith(`/${command.name}`));
      expect(embed, `/${command.name}`).toBeDefined();
      const text = readable({ ...messages[0]!, content: '', embeds: [embed!] } as FakeMessage);
      expect(text).toContain(command.description);
      for (const option of command.options) {
        const field = ((embed!.fields ?? []) as Json[]).find((f) => String(f.name).startsWith(option.name));
        expect(field, `/${command.name} ${option.name}`).toBeDefined();
        expect(String(field!.value)).toContain(option.description);
        const range = rangeOf(option);
        if (range) expect(String(field!.value)).toContain(range);
        for (const choice of option.choices ?? []) expect(String(field!.value)).toContain(String(choice.value));
      }
    }
    // The message actions: one embed saying where they are, a field per action with what it does.
    const actions = embeds.find((e) => e.title === 'Message actions');
    expect(String(actions?.description)).toContain('Apps');
    for (const action of messageActions) {
      const field = ((actions?.fields ?? []) as Json[]).find((f) => f.name === action.name);
      expect(String(field?.value), action.name).toBe(action.description);
    }
    // The models: every text and image model is named somewhere, in more than one embed.
    const all = messages.map(readable).join('\n');
    for (const model of MODELS) expect(all).toContain(model.id);
    expect(embeds.filter((e) => String(e.title).startsWith('Models')).length).toBeGreaterThan(1);
    expect(all).not.toMatch(/… and \d+ more/);
    // Nothing was shown in the channel.
    expect(discord.messagesIn(channel.id).filter((m) => m.author.id === discord.botUser.id && !m.ephemeral)).toEqual(
      [],
    );
  });

  it('speaks the user’s language: a user whose Discord client is German (locale `de`) reads every command, option, choice, message action and the models card in German', async () => {
    const channel = discord.addChannel('hilfe');
    const de = wordsOf('de');
    const done = testBot.outcomes((o) => o.command === 'help');
    const interaction = discord.dispatchInteraction({ channelId: channel.id, command: 'help', locale: 'de' });
    expect((await done)[0]).toMatchObject({ ok: true });
    const messages = interaction.messages.filter((m) => !m.deleted);
    expect(messages.every((m) => m.ephemeral)).toBe(true);
    const embeds = messages.flatMap((m) => m.embeds);
    for (const command of commands) {
      const title = de.t('commands.help.title', { command: command.name, description: descriptionIn(command, de) });
      const embed = embeds.find((e) => e.title === title);
      expect(embed, title).toBeDefined();
      expect(title).not.toContain(command.description);
      for (const option of command.options) {
        const field = ((embed!.fields ?? []) as Json[]).find((f) => String(f.name).startsWith(option.name));
        expect(String(field?.value), `/${command.name} ${option.name}`).toContain(descriptionIn(option, de));
        if (option.required) expect(String(field?.name)).toContain('(Pflicht)');
      }
    }
    const imagine = embeds.find((e) => String(e.title).startsWith('/imagine'))!;
    const style = ((imagine.fields ?? []) as Json[]).find((f) => String(f.name).startsWith('style'));
    expect(String(style?.value)).toContain('eins von vivid (lebhaft), natural (natürlich)');
    const seed = ((imagine.fields ?? []) as Json[]).find((f) => String(f.name).startsWith('seed'));
    expect(String(seed?.value)).toContain('von 0 bis 4294967295');
    const actions = embeds.find((e) => e.title === 'Nachrichtenaktionen');
    expect(String(actions?.description)).toContain('Rechtsklick');
    for (const action of messageActions)
      expect(((actions?.fields ?? []) as Json[]).find((f) => f.name === nameIn(action, de))?.value).toBe(
        descriptionIn(action, de),
      );
    expect(embeds.filter((e) => String(e.title).startsWith('Modelle')).length).toBeGreaterThan(1);
    expect(messages.map(readable).join('\n')).toContain('Textmodelle');
  });

  it("counts against no quota: after /help the user has used nothing and the minute's one /chat is still let through", async () => {
    const channel = discord.addChannel('help-quota');
    const user = { id: '310000000000000042', username: 'quota-user' };
    const helped = testBot.outcomes((o) => o.command === 'help');
    discord.dispatchInteraction({ channelId: channel.id, command: 'help', user });
    expect((await helped)[0]).toMatchObject({ ok: true });
    const usage = await testBot.bot.core.quotas.usageOf(`discord:${user.id}`);
    expect([usage.chat.used, usage.images.used, usage.tokens.used]).toEqual([0, 0, 0]);
    // QUOTA_CHAT_PER_MINUTE=1: the minute's one chat request is still there.
    const done = testBot.outcomes((o) => o.command === 'chat');
    discord.dispatchInteraction({ channelId: channel.id, command: 'chat', options: { prompt: 'hello' }, user });
    expect((await done)[0]).toMatchObject({ ok: true });
    expect((await testBot.bot.core.quotas.usageOf(`discord:${user.id}`)).chat.used).toBe(1);
  });
});

describe('/help on Discord when the service does not answer for the models', () => {
  let slowService: FakeService;
  let slowDiscord: FakeDiscord;
  let slowBot: TestBot;

  useE2E({ discord: {}, bot: {} }, async (e2e) => {
    ({ service: slowService, discord: slowDiscord, bot: slowBot } = e2e);
    await deployCommands({
      token: slowDiscord.token,
      applicationId: slowDiscord.applicationId,
      apiUrl: slowDiscord.apiUrl,
    });
  });

  it("still answers the user alone, first with the interaction's ephemeral reply (never a public deferral), saying the models could not be listed", async () => {
    // No model list is cached yet, and /v1/models answers only after 3 s (not a hang: the bot's
    // shutdown would wait for a request that never ends).
    slowService.enqueue('models', { delayHeadersMs: 3_000 });
    const channel = slowDiscord.addChannel('help-slow');
    const done = slowBot.outcomes((o) => o.command === 'help');
    const interaction = slowDiscord.dispatchInteraction({ channelId: channel.id, command: 'help' });
    expect((await done)[0]).toMatchObject({ ok: true });
    expect(interaction.callbacks.map((c) => [c.type, c.flags & EPHEMERAL, c.status])).toEqual([[4, EPHEMERAL, 204]]);
    const messages = interaction.messages;
    expect(messages.length).toBeGreaterThan(0);
    for (const message of messages) expect(message.ephemeral).toBe(true);
    const all = messages.map(readable).join('\n');
    expect(all).toContain('models: the service did not answer; try again later');
    expect(
      slowDiscord.messagesIn(channel.id).filter((m) => m.author.id === slowDiscord.botUser.id && !m.ephemeral),
    ).toEqual([]);
  });
});
