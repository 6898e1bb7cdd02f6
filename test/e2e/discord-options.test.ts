/**
 * End-to-end on Discord, every option in users' hands (issue 8): the whole bot, started from
 * environment variables by startTestBot, with real discord.js and undici, against FakeDiscord
 * and FakeService, commands registered by deployCommands (so interactions carry Discord's
 * option types). /chat and /imagine options reach the service under the spec's names, file
 * options come from the CDN as data URLs, autocomplete answers in time (also with the service
 * down), /models pages with buttons, /settings per channel across a restart, /forget's rights,
 * and the history budget. Each test uses its own channel so that histories do not mix.
 */

import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { wordsOf } from '../../src/core/i18n/words.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import {
  type DispatchInteractionOptions,
  FakeDiscord,
  type FakeInteraction,
  type FakeMessage,
  type Json,
} from '../fakes/discord.ts';
import {
  type ChatRequestBody,
  type ContentPart,
  DEFAULT_MODELS,
  type FakeModel,
  FakeService,
  type ImageRequestBody,
} from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import { startTestBot, type TestBot } from './harness.ts';

/** 58 more text models: with fake-chat and fake-vision, 60 (and the two image models). */
const EXTRA_MODELS: FakeModel[] = Array.from({ length: 58 }, (_, i) => ({
  id: `text-model-${String(i + 1).padStart(2, '0')}`,
}));
const MODELS: FakeModel[] = [
  ...DEFAULT_MODELS.filter((m) => m.type !== 'image'),
  ...EXTRA_MODELS,
  ...DEFAULT_MODELS.filter((m) => m.type === 'image'),
];
const TEXT_MODELS = MODELS.filter((m) => m.type !== 'image').map((m) => m.id);
/** Manage Messages, with a member's usual rights (View Channel, Send Messages, Use Application Commands). */
const MANAGE_MESSAGES = String((1n << 13n) | (1n << 10n) | (1n << 11n) | (1n << 31n));
const BUDGET_TOKENS = 400;

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;
let env: Record<string, string>;

useE2E(
  {
    service: { models: MODELS },
    discord: {},
    bot: {
      env: { HISTORY_TOKEN_BUDGET: String(BUDGET_TOKENS), ALLOW_DISABLE_SAFETY_CHECKER: 'true' },
      // The /settings test restarts the bot into testBot.
      current: () => testBot,
    },
  },
  async (e2e) => {
    ({ service, discord, bot: testBot, botEnv: env } = e2e);
    await deployCommands({ token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl });
    // Discord shows /models and /settings (Manage Server) to bob only because a server admin let
    // him see them under Integrations: the bot's own check when they run is what refuses him here.
    for (const name of ['models', 'settings'])
      discord.setCommandPermissions(name, [{ id: NON_ADMIN.id, type: 2, permission: true }]);
  },
);

const NON_ADMIN = { id: '1290000000000000777', username: 'bob' };

/** Resolves with the next `count` outcomes (commands and button presses) in a channel's conversation. */
function outcomesIn(channelId: string, count = 1): Promise<CommandOutcome[]> {
  const conversationId = `discord:${discord.guildId}:${channelId}`;
  return testBot.outcomes((o) => o.conversationId === conversationId, count);
}

/** Dispatches a slash command over the gateway and waits until the bot has finished with it. */
async function run(
  options: DispatchInteractionOptions & { channelId: string },
): Promise<{ interaction: FakeInteraction; outcome: CommandOutcome }> {
  const done = outcomesIn(options.channelId);
  const interaction = discord.dispatchInteraction(options);
  const [outcome] = await done;
  return { interaction, outcome: outcome! };
}

/** The one ephemeral message the bot sent for an interaction (reply or follow-up). */
function ephemeralOf(interaction: FakeInteraction): FakeMessage {
  const shown = interaction.messages.filter((m) => m.ephemeral && !m.deleted);
  expect(shown).toHaveLength(1);
  return shown[0]!;
}

/** The chat requests the service received while `work` ran. */
async function chatRequestsDuring(work: () => Promise<unknown>): Promise<ChatRequestBody[]> {
  const before = service.chatRequests().length;
  await work();
  return service.chatRequests().slice(before);
}

/** The bytes of a `data:` URL and its media type. */
function fromDataUrl(url: string): { mimeType: string; data: Buffer } {
  const m = /^data:([^;]+);base64,(.+)$/.exec(url);
  expect(m).not.toBeNull();
  return { mimeType: m![1]!, data: Buffer.from(m![2]!, 'base64') };
}

/** The embed fields' names of a message. */
const fieldNames = (message: FakeMessage) => ((message.embeds[0]?.fields ?? []) as Json[]).map((f) => String(f.name));
/** The custom ids of a message's buttons, with their disabled state. */
const buttonsOf = (message: FakeMessage) =>
  message.buttons.map((b) => ({ id: b.custom_id, disabled: b.disabled === true }));

describe('Discord /chat options', () => {
  it("sends model, temperature, max_tokens, top_p, frequency_penalty, presence_penalty, json and web_search under the spec's names, and an image option as an image_url data URL", async () => {
    const channel = discord.addChannel('chat-options');
    const photo = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 200, g: 30, b: 30 } } })
      .png()
      .toBuffer();
    service.setChatReply('{"colour": "red"}');
    let interaction!: FakeInteraction;
    let outcome!: CommandOutcome;
    try {
      const requests = await chatRequestsDuring(async () => {
        ({ interaction, outcome } = await run({
          channelId: channel.id,
          command: 'chat',
          options: {
            prompt: 'What colour is this? Answer as {"colour": …}',
            model: 'fake-vision',
            temperature: 0.3,
            max_tokens: 50,
            top_p: 0.9,
            frequency_penalty: 0.5,
            presence_penalty: -0.5,
            json: true,
            web_search: 'auto',
            image: { filename: 'red.png', contentType: 'image/png', data: photo, width: 40, height: 30 },
          },
        }));
      });
      expect(outcome.ok).toBe(true);
      expect(requests).toHaveLength(1);
      const body = requests[0]!;
      expect(body).toMatchObject({
        model: 'fake-vision',
        stream: true,
        temperature: 0.3,
        max_tokens: 50,
        top_p: 0.9,
        frequency_penalty: 0.5,
        presence_penalty: -0.5,
        response_format: 'json',
        web_search: 'auto',
      });
      expect(body.messages).toHaveLength(1);
      const parts = body.messages[0]!.content as ContentPart[];
      expect(parts[0]).toEqual({ type: 'text', text: 'What colour is this? Answer as {"colour": …}' });
      expect(parts[1]!.type).toBe('image_url');
      const image = fromDataUrl((parts[1] as Extract<ContentPart, { type: 'image_url' }>).image_url.url);
      expect(['image/jpeg', 'image/png']).toContain(image.mimeType);
      expect(await sharp(image.data).metadata()).toMatchObject({ width: 40, height: 30 });
      // The bot fetched the option's file from the CDN with its signed URL.
      const fileId = ((interaction.payload.data as Json).options as Json[]).find((o) => o.name === 'image')!.value;
      expect(discord.downloads.some((d) => d.attachmentId === fileId && d.completed)).toBe(true);
      // JSON mode: the answer is shown pretty-printed in a fence.
      expect(interaction.original!.content).toBe('```json\n{\n  "colour": "red"\n}\n```');
      // Stop gone, and the finished answer's Regenerate button in its place, then 👍 / 👎.
      expect(buttonsOf(interaction.original!).map((b) => String(b.id))).toEqual([
        expect.stringMatching(/^regenerate:[0-9a-f]{18}:\d+$/),
        expect.stringMatching(/^feedback:[0-9a-f]{18}:up$/),
        expect.stringMatching(/^feedback:[0-9a-f]{18}:down$/),
      ]);
    } finally {
      service.setChatReply(undefined);
    }
  });

  it("sends none of the optional fields when no option is given, and the channel's chat model", async () => {
    const channel = discord.addChannel('chat-plain');
    const [body] = await chatRequestsDuring(() =>
      run({ channelId: channel.id, command: 'chat', options: { prompt: 'Hello' } }),
    );
    expect(Object.keys(body!).sort()).toEqual(['messages', 'model', 'stream']);
    expect(body!.model).toBe('fake-chat');
  });
});

describe('Discord Stop button', () => {
  it("shows Stop while /chat streams; another member's press is refused to them alone; the asker's press ends the answer with its partial text and removes the button", async () => {
    const channel = discord.addChannel('stop');
    discord.setMessageBudget(channel.id, { limit: 100, windowMs: 5_000 });
    const pieces = Array.from({ length: 60 }, (_, i) => `word${i + 1} `);
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 100 } });
    const conversationId = `discord:${discord.guildId}:${channel.id}`;
    const chatDone = testBot.outcomes((o) => o.conversationId === conversationId && o.command === 'chat');
    const interaction = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'chat',
      options: { prompt: 'Count slowly' },
    });
    await discord.waitFor(
      'write',
      (w) => w.interactionId === interaction.id && buttonsOf(discord.message(w.messageId)!).length > 0,
    );
    const message = interaction.original!;
    const [stop] = buttonsOf(message);
    expect(String(stop!.id)).toMatch(new RegExp(`^stop:[0-9a-f]+:${interaction.user.id}$`));

    const refusedDone = testBot.outcomes((o) => o.conversationId === conversationId && o.command === 'stop:button');
    const refused = discord.pressButton({ messageId: message.id, customId: String(stop!.id), user: NON_ADMIN });
    await refusedDone;
    expect(ephemeralOf(refused).content).toBe('Only the person who asked, or an admin, can stop this answer.');

    const pressDone = testBot.outcomes((o) => o.conversationId === conversationId && o.command === 'stop:button');
    const closed = new Promise<{ at: number; finished: boolean }>((resolve) =>
      service.events.once('streamClosed', resolve),
    );
    const pressedAt = Date.now();
    const press = discord.pressButton({ messageId: message.id, customId: String(stop!.id) });
    await pressDone;
    // The request to the service is cut at once (the answer had ~5 s to go), not left to run out.
    const connection = await closed;
    expect(connection.finished).toBe(false);
    expect(connection.at - pressedAt).toBeLessThan(500);
    const [outcome] = await chatDone;
    expect(press.response?.type).toBe(6);
    // A stopped answer is reported as such (not a failure shown twice), its text kept.
    expect(outcome).toMatchObject({ command: 'chat', ok: false, errorCode: 'aborted' });
    expect(message.components).toEqual([]);
    expect(message.content).toMatch(/^word1 [\s\S]*\n\n⚠️ Stopped\.$/);
    expect(message.content).not.toContain('word60');
    expect(service.openStreams).toBe(0);
    const history = await testBot.bot.core.history.get(conversationId);
    expect(history.at(-1)).toMatchObject({
      role: 'assistant',
      content: expect.stringMatching(/^word1 [\s\S]*\[stopped\]$/),
    });
  });
});

describe('Discord /imagine options', () => {
  it('maps every option to the request body (reference_image as a PNG data URL) and names the seed in the caption', async () => {
    const channel = discord.addChannel('imagine-options');
    // A JPEG: the bot converts the reference to PNG, the only format §4.3 takes.
    const reference = await sharp({
      create: { width: 64, height: 48, channels: 3, background: { r: 10, g: 120, b: 200 } },
    })
      .jpeg()
      .toBuffer();
    const before = service.requests.length;
    const { interaction, outcome } = await run({
      channelId: channel.id,
      command: 'imagine',
      options: {
        prompt: 'a lighthouse at dusk',
        aspect_ratio: 'portrait',
        style: 'natural',
        model: 'Fake Image XL',
        negative_prompt: 'people, boats',
        seed: 42,
        reference_image: { filename: 'sketch.jpg', contentType: 'image/jpeg', data: reference, width: 64, height: 48 },
        denoising_strength: 0.3,
        enhance: true,
      },
    });
    expect(outcome.ok).toBe(true);
    const images = service.requests.slice(before).filter((r) => r.route === 'images');
    expect(images).toHaveLength(1);
    const body = images[0]!.body as ImageRequestBody;
    const { reference_image: referenceUrl, ...rest } = body;
    expect(rest).toEqual({
      prompt: 'a lighthouse at dusk',
      aspect_ratio: 'portrait',
      style: 'natural',
      user_selected_model: 'Fake Image XL',
      negative_prompt: 'people, boats',
      seed: 42,
      denoising_strength: 0.3,
      force_prompt_enhancement: true,
      response_format: 'b64_json',
    });
    const png = fromDataUrl(referenceUrl!);
    expect(png.mimeType).toBe('image/png');
    expect(await sharp(png.data).metadata()).toMatchObject({ format: 'png', width: 64, height: 48 });

    const message = interaction.original!;
    expect(message.attachments.map((a) => a.filename)).toEqual(['imagine.png']);
    expect(message.text).toContain('a lighthouse at dusk');
    expect(message.text).toContain('seed 42');
    expect(message.text).toContain('Fake Image XL · natural · 832×1216');
    expect(buttonsOf(message).map((b) => String(b.id).split(':').slice(0, 2).join(':'))).toEqual([
      'imagine:reroll',
      'imagine:upscale',
      'imagine:vary',
      expect.stringMatching(/^feedback:[0-9a-f]{18}$/),
      expect.stringMatching(/^feedback:[0-9a-f]{18}$/),
    ]);
  });

  it("Reroll: refuses another member's press in a sentence only they see, and for the requester posts a new image with a new seed as a new reply", async () => {
    const channel = discord.addChannel('imagine-reroll');
    const { interaction } = await run({
      channelId: channel.id,
      command: 'imagine',
      options: { prompt: 'a red fox', seed: 7 },
    });
    const result = interaction.original!;
    const reroll = String(buttonsOf(result).find((b) => String(b.id).startsWith('imagine:reroll:'))!.id);
    const before = service.requests.filter((r) => r.route === 'images').length;

    const refusedDone = outcomesIn(channel.id);
    const refused = discord.pressButton({ messageId: result.id, customId: reroll, user: NON_ADMIN });
    expect((await refusedDone)[0]).toMatchObject({ command: 'imagine:button', ok: false, errorCode: 'forbidden' });
    expect(ephemeralOf(refused).content).toBe(
      'Only the person who asked for this image, or an admin, can use its buttons.',
    );
    expect(service.requests.filter((r) => r.route === 'images')).toHaveLength(before);

    const done = outcomesIn(channel.id);
    const press = discord.pressButton({ messageId: result.id, customId: reroll });
    expect((await done)[0]).toMatchObject({ command: 'imagine:button', ok: true });
    const body = service.lastRequest('images')!.body as ImageRequestBody;
    expect(body).toMatchObject({ prompt: 'a red fox', aspect_ratio: 'square' });
    expect(body.seed).not.toBe(7);
    // A new reply (deferred, then filled): the first image stays as it was.
    expect(press.response?.type).toBe(5);
    expect(press.original).not.toBe(result);
    expect(press.original!.attachments.map((a) => a.filename)).toEqual(['imagine.png']);
    expect(press.original!.text).toContain(`seed ${body.seed}`);
    expect(result.text).toContain('seed 7');
  });

  it('refuses disable_safety_checker from a non-admin with a sentence only they see, and asks the service nothing', async () => {
    const channel = discord.addChannel('imagine-safety');
    const before = service.requests.filter((r) => r.route === 'images').length;
    const { interaction, outcome } = await run({
      channelId: channel.id,
      command: 'imagine',
      user: NON_ADMIN,
      options: { prompt: 'anything', disable_safety_checker: true },
    });
    expect(outcome).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(ephemeralOf(interaction).content).toBe('`disable_safety_checker` is for admins only.');
    expect(interaction.messages.filter((m) => !m.ephemeral && !m.deleted)).toEqual([]);
    expect(service.requests.filter((r) => r.route === 'images')).toHaveLength(before);
  });
});

describe('Discord autocomplete of /chat model', () => {
  it('answers at most 25 choices, filtered by what was typed, within 3 s', async () => {
    const all = discord.dispatchAutocomplete({ command: 'chat', focused: 'model', options: { model: '' } });
    const outcome = await all.outcome;
    expect(outcome.expired).toBe(false);
    if (outcome.expired) return;
    expect(outcome.elapsedMs).toBeLessThan(3_000);
    expect(outcome.choices).toHaveLength(25);
    expect(outcome.choices.map((c) => c.value)).toEqual(TEXT_MODELS.slice(0, 25));

    const typed = discord.dispatchAutocomplete({
      command: 'chat',
      focused: 'model',
      options: { prompt: 'hi', model: 'MODEL-0' },
    });
    const filtered = await typed.outcome;
    expect(filtered.expired).toBe(false);
    if (filtered.expired) return;
    expect(filtered.choices.map((c) => c.value)).toEqual(Array.from({ length: 9 }, (_, i) => `text-model-0${i + 1}`));
    expect(filtered.choices.every((c) => c.name === c.value)).toBe(true);

    const none = await discord.dispatchAutocomplete({
      command: 'chat',
      focused: 'model',
      options: { model: 'no-such-thing' },
    }).outcome;
    expect(none).toMatchObject({ expired: false, choices: [] });
  });

  it('answers an empty list (not an error) within 3 s when the service is down', async () => {
    const downService = await FakeService.start();
    const downDiscord = await FakeDiscord.start();
    const downEnv = {
      ...env,
      SERVICE_BASE_URL: downService.baseUrl,
      DISCORD_TOKEN: downDiscord.token,
      DISCORD_APPLICATION_ID: downDiscord.applicationId,
      DISCORD_API_URL: downDiscord.apiUrl,
    };
    const downBot = await startTestBot(downEnv);
    try {
      await deployCommands({
        token: downDiscord.token,
        applicationId: downDiscord.applicationId,
        apiUrl: downDiscord.apiUrl,
      });
      await downService.close();
      const record = downDiscord.dispatchAutocomplete({
        command: 'chat',
        focused: 'model',
        options: { model: 'fake' },
      });
      const outcome = await record.outcome;
      expect(outcome).toMatchObject({ expired: false, choices: [] });
      expect(outcome.elapsedMs).toBeLessThan(3_000);
      expect(record.callbacks.map((c) => [c.type, c.status])).toEqual([[8, 204]]);
    } finally {
      await downBot.stop();
      await downDiscord.close();
      await downService.close();
    }
  });
});

describe('Discord /models', () => {
  it("shows an admin 60 text models in embeds within Discord's limits, paged with buttons: Next shows the next page in place", async () => {
    const channel = discord.addChannel('models');
    const { interaction, outcome } = await run({ channelId: channel.id, command: 'models', admin: true });
    expect(outcome.ok).toBe(true);
    const message = ephemeralOf(interaction);
    expect(message.embeds).toHaveLength(1);
    const embed = message.embeds[0]!;
    expect(embed.title).toBe('Models: 60 text, 4 image');
    expect(fieldNames(message)).toEqual(TEXT_MODELS.slice(0, 25));
    expect(String((embed.footer as Json).text)).toMatch(/^Page 1 of 3 /);
    expect(JSON.stringify(message.embeds).length).toBeLessThan(6_000);
    expect(buttonsOf(message)).toEqual([
      { id: 'models:-1:0', disabled: true },
      { id: 'models:1:0', disabled: false },
    ]);

    const done = outcomesIn(channel.id);
    const press = discord.pressButton({ messageId: message.id, customId: 'models:1:0', admin: true });
    const [pressed] = await done;
    expect(pressed).toMatchObject({ command: 'models:button', ok: true });
    // The page replaced the list in the same message (UPDATE_MESSAGE), not a new one.
    expect(press.response?.type).toBe(7);
    expect(fieldNames(message)).toEqual(TEXT_MODELS.slice(25, 50));
    expect(String((message.embeds[0]!.footer as Json).text)).toMatch(/^Page 2 of 3 /);
    expect(buttonsOf(message)).toEqual([
      { id: 'models:0:0', disabled: false },
      { id: 'models:2:0', disabled: false },
    ]);

    const last = outcomesIn(channel.id);
    discord.pressButton({ messageId: message.id, customId: 'models:2:0', admin: true });
    await last;
    expect(fieldNames(message)).toEqual([
      ...TEXT_MODELS.slice(50),
      '🖼️ Fake Image',
      '🖼️ Fake Image XL',
      '🖼️ fake-image',
      '🖼️ fake-image-xl',
    ]);
    expect(buttonsOf(message)).toEqual([
      { id: 'models:1:0', disabled: false },
      { id: 'models:3:0', disabled: true },
    ]);
    expect(() => discord.pressButton({ messageId: message.id, customId: 'models:3:0', admin: true })).toThrow(
      /disabled/,
    );
  });

  it('refuses /models to a non-admin with a sentence only they see', async () => {
    const channel = discord.addChannel('models-refused');
    const before = service.requests.filter((r) => r.route === 'models').length;
    const { interaction, outcome } = await run({ channelId: channel.id, command: 'models', user: NON_ADMIN });
    expect(outcome).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(ephemeralOf(interaction).content).toBe('/models is for admins only.');
    expect(service.requests.filter((r) => r.route === 'models')).toHaveLength(before);
  });

  it('lets a non-admin turn the pages of a list an admin made public (anyone who sees a public list may page it; a private one is re-checked)', async () => {
    const channel = discord.addChannel('models-public');
    const { interaction } = await run({
      channelId: channel.id,
      command: 'models',
      admin: true,
      options: { public: true },
    });
    const message = interaction.original!;
    expect(message.ephemeral).toBe(false);
    expect(buttonsOf(message).map((b) => b.id)).toEqual(['models:-1:1', 'models:1:1']);
    const done = outcomesIn(channel.id);
    discord.pressButton({ messageId: message.id, customId: 'models:1:1', user: NON_ADMIN });
    const [pressed] = await done;
    expect(pressed!.ok).toBe(true);
    expect(fieldNames(message)).toEqual(TEXT_MODELS.slice(25, 50));
  });
});

describe('Discord /settings', () => {
  it("sets a channel's chat model for /chat there, shows each value with its source, refuses non-admins, and keeps the setting across a restart", async () => {
    const channel = discord.addChannel('settings');
    const other = discord.addChannel('settings-other');

    const shown = await run({ channelId: channel.id, command: 'settings', admin: true });
    const fresh = ephemeralOf(shown.interaction).embeds[0]!.fields as Json[];
    expect(fresh.find((f) => f.name === 'chat_model')!.value).toBe("`fake-chat` — the service's choice");

    const refused = await run({
      channelId: channel.id,
      command: 'settings',
      user: NON_ADMIN,
      options: { chat_model: 'text-model-07' },
    });
    expect(refused.outcome).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(ephemeralOf(refused.interaction).content).toBe('/settings is for admins only.');

    const set = await run({
      channelId: channel.id,
      command: 'settings',
      admin: true,
      options: { chat_model: 'text-model-07' },
    });
    expect(set.outcome.ok).toBe(true);
    const saved = ephemeralOf(set.interaction);
    expect(saved.content).toBe('Settings saved.');
    expect((saved.embeds[0]!.fields as Json[]).find((f) => f.name === 'chat_model')!.value).toBe(
      '`text-model-07` — set for this channel',
    );

    const [here] = await chatRequestsDuring(() =>
      run({ channelId: channel.id, command: 'chat', options: { prompt: 'Which model are you?' } }),
    );
    expect(here!.model).toBe('text-model-07');
    const [elsewhere] = await chatRequestsDuring(() =>
      run({ channelId: other.id, command: 'chat', options: { prompt: 'And you?' } }),
    );
    expect(elsewhere!.model).toBe('fake-chat');
    // A mention in the channel uses the channel's model too.
    const [mentioned] = await chatRequestsDuring(async () => {
      const done = outcomesIn(channel.id);
      discord.postUserMessage({ channelId: channel.id, content: `<@${discord.botUser.id}> and by mention?` });
      await done;
    });
    expect(mentioned!.model).toBe('text-model-07');

    // A restart: the same store, a new process's worth of bot.
    const storePath = testBot.storePath;
    await testBot.stop();
    testBot = await startTestBot(env, storePath);

    const after = await run({ channelId: channel.id, command: 'settings', admin: true });
    const fields = ephemeralOf(after.interaction).embeds[0]!.fields as Json[];
    expect(fields.find((f) => f.name === 'chat_model')!.value).toBe('`text-model-07` — set for this channel');
    const [again] = await chatRequestsDuring(() =>
      run({ channelId: channel.id, command: 'chat', options: { prompt: 'Still you?' } }),
    );
    expect(again!.model).toBe('text-model-07');
  });

  it("`/settings locale:fr` in a guild whose language is German: the channel's public messages turn French (a public /models), not elsewhere; the card, in the admin's own German, shows it; `reset:locale` gives the guild's back", async () => {
    const channel = discord.addChannel('settings-locale');
    const other = discord.addChannel('settings-locale-other');
    const german = { admin: true, locale: 'de', guildLocale: 'de' } as const;
    const place = (channelId: string) => ({
      channelKey: `discord:${discord.guildId}:${channelId}`,
      locale: { user: 'de', place: 'de' },
    });
    const publicModelsTitle = async (channelId: string) => {
      const { interaction } = await run({ channelId, command: 'models', ...german, options: { public: true } });
      const shown = interaction.messages.filter((m) => !m.ephemeral && !m.deleted);
      expect(shown).toHaveLength(1);
      return String(shown[0]!.embeds[0]!.title);
    };
    expect(await publicModelsTitle(channel.id)).toMatch(/^Modelle: /);

    const set = await run({ channelId: channel.id, command: 'settings', ...german, options: { locale: 'fr' } });
    expect(set.outcome.ok).toBe(true);
    const saved = ephemeralOf(set.interaction);
    expect(saved.content).toBe('Einstellungen gespeichert.');
    expect(saved.embeds[0]!.title).toBe('Einstellungen dieses Kanals');
    expect((saved.embeds[0]!.fields as Json[]).find((f) => f.name === 'locale')!.value).toBe(
      'Français (fr) — für diesen Kanal festgelegt',
    );
    const languages = testBot.bot.core.languages;
    expect((await languages.forPlace(place(channel.id))).locale).toBe('fr');
    expect((await languages.forPlace(place(other.id))).locale).toBe('de');
    expect(await publicModelsTitle(channel.id)).toMatch(/^Modèles : /);
    expect(await publicModelsTitle(other.id)).toMatch(/^Modelle: /);

    const reset = await run({ channelId: channel.id, command: 'settings', ...german, options: { reset: 'locale' } });
    expect((ephemeralOf(reset.interaction).embeds[0]!.fields as Json[]).find((f) => f.name === 'locale')!.value).toBe(
      wordsOf('de').t('commands.settings.locale_unset'),
    );
    expect((await languages.forPlace(place(channel.id))).locale).toBe('de');
    expect(await publicModelsTitle(channel.id)).toMatch(/^Modelle: /);
  });
});

describe('Discord /forget', () => {
  it("clears the channel's history: the next /chat carries no earlier exchange; a member without Manage Messages is refused, one with it may", async () => {
    const channel = discord.addChannel('forget');
    discord.setMessageBudget(channel.id, { limit: 100, windowMs: 5_000 });
    for (const answer of ['Noted: blue.', 'Blue.']) service.enqueue('chat', { stream: { pieces: [answer] } });
    await run({ channelId: channel.id, command: 'chat', options: { prompt: 'My colour is blue.' } });
    const [remembered] = await chatRequestsDuring(() =>
      run({ channelId: channel.id, command: 'chat', options: { prompt: 'What is my colour?' } }),
    );
    expect(remembered!.messages).toHaveLength(3);

    const refused = await run({ channelId: channel.id, command: 'forget', user: NON_ADMIN });
    expect(refused.outcome).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(ephemeralOf(refused.interaction).content).toMatch(
      /^\/forget in a channel is for admins and members who may manage messages\./,
    );
    expect(await testBot.bot.core.history.get(`discord:${discord.guildId}:${channel.id}`)).toHaveLength(4);

    const cleared = await run({
      channelId: channel.id,
      command: 'forget',
      user: { id: '1290000000000000778', username: 'mod' },
      permissions: MANAGE_MESSAGES,
    });
    expect(cleared.outcome.ok).toBe(true);
    expect(cleared.interaction.original!.content).toBe(
      '🧹 History cleared (4 messages forgotten): the next message starts a new conversation.',
    );
    expect(cleared.interaction.original!.ephemeral).toBe(false);

    const [next] = await chatRequestsDuring(() =>
      run({ channelId: channel.id, command: 'chat', options: { prompt: 'What is my colour?' } }),
    );
    expect(next!.messages).toEqual([{ role: 'user', content: 'What is my colour?' }]);
  });

  it("says its public line in the place's language (a French guild, whoever asks), and `scope:me`'s in the asker's own (German)", async () => {
    const channel = discord.addChannel('oublier');
    service.enqueue('chat', { stream: { pieces: ['Noted.'] } });
    await run({ channelId: channel.id, command: 'chat', options: { prompt: 'Remember: blue.' } });
    const cleared = await run({
      channelId: channel.id,
      command: 'forget',
      admin: true,
      locale: 'de',
      guildLocale: 'fr',
    });
    expect(cleared.outcome.ok).toBe(true);
    expect(cleared.interaction.original!.ephemeral).toBe(false);
    expect(cleared.interaction.original!.content).toBe(
      '🧹 Historique effacé (2 messages oubliés) : le prochain message commence une nouvelle conversation.',
    );
    const me = await run({
      channelId: channel.id,
      command: 'forget',
      options: { scope: 'me' },
      user: { id: '1290000000000000779', username: 'ida' },
      locale: 'de',
      guildLocale: 'fr',
    });
    expect(me.outcome.ok).toBe(true);
    expect(ephemeralOf(me.interaction).content).toBe(
      wordsOf('de').t('commands.forget.me_nothing', { platform: 'discord' }),
    );
    expect(ephemeralOf(me.interaction).content).toContain('diesem Server');
  });
});

describe('Discord history budget', () => {
  it(`drops the oldest turns first to keep a /chat within HISTORY_TOKEN_BUDGET (${BUDGET_TOKENS}), and says so under the answer`, async () => {
    const channel = discord.addChannel('budget');
    discord.setMessageBudget(channel.id, { limit: 100, windowMs: 5_000 });
    // Each message ~300 characters: ~79 estimated tokens with its overhead; three exchanges ~474.
    const turn = (label: string) => `${label} ${'lorem ipsum '.repeat(25)}`.slice(0, 300);
    for (const n of [1, 2, 3]) {
      service.enqueue('chat', { stream: { pieces: [turn(`A${n}`)] } });
      await run({ channelId: channel.id, command: 'chat', options: { prompt: turn(`Q${n}`) } });
    }
    service.enqueue('chat', { stream: { pieces: ['Short answer.'] } });
    let interaction!: FakeInteraction;
    const [body] = await chatRequestsDuring(async () => {
      ({ interaction } = await run({ channelId: channel.id, command: 'chat', options: { prompt: 'Summarise.' } }));
    });
    expect(body!.messages.map((m) => String(m.content).slice(0, 2))).toEqual(['Q2', 'A2', 'Q3', 'A3', 'Su']);
    expect(body!.messages.slice(0, 4).map((m) => m.content)).toEqual([turn('Q2'), turn('A2'), turn('Q3'), turn('A3')]);
    expect(interaction.original!.content).toMatch(
      /^Short answer\.[\s\S]*2 earlier messages were left out to keep the conversation within the history budget; an admin or a member who may manage messages can start afresh with \/forget\./,
    );
  });
});
