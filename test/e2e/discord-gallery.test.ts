/**
 * Image results as a Components V2 gallery on Discord (issue 39, item 3), end to end: /imagine
 * posts one message whose Container holds the caption (a Text Display), the image (a Media
 * Gallery item naming the upload, `attachment://imagine.png`) and Reroll / Upscale / Vary / 👍 /
 * 👎 (an action row), with no pings; a progress line becomes that gallery (its text reset, as
 * Discord wants when an edit sets the flag); Reroll on a gallery posts a new gallery, and
 * Upscale finds the image again in the gallery (Discord leaves a gallery's upload out of the
 * message's `attachments`); a gallery Discord refuses (400, 50035) is posted as an attachment
 * with its caption and buttons, as before; `/chat web_search:images` shows its image results
 * as a gallery of their links. The whole bot against FakeDiscord, which checks every
 * Components V2 payload as Discord does (test/fakes/discord/components-v2.ts).
 */

import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { type FakeDiscord, type FakeInteraction, type FakeMessage, type Json, MessageFlag } from '../fakes/discord.ts';
import type { FakeService, ImageRequestBody } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: {}, bot: {}, resetServiceAfterEach: true }, (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
});

const V2 = MessageFlag.IsComponentsV2;

/** Resolves with the next outcome of `command` in a channel's conversation. */
async function outcomeOf(command: string, channelId: string): Promise<CommandOutcome> {
  const conversationId = `discord:${discord.guildId}:${channelId}`;
  const [outcome] = await testBot.outcomes(
    (o) => o.command === command && o.conversationId === conversationId,
    1,
    20_000,
  );
  return outcome!;
}

/** Runs /imagine in a new channel and returns its interaction once the bot is done. */
async function imagine(name: string, prompt: string): Promise<FakeInteraction> {
  const channel = discord.addChannel(name);
  const done = outcomeOf('imagine', channel.id);
  const interaction = discord.dispatchInteraction({ channelId: channel.id, command: 'imagine', options: { prompt } });
  expect((await done).ok).toBe(true);
  return interaction;
}

/** Presses a button of `message` and returns the press's interaction once the bot is done. */
async function press(message: FakeMessage, customId: string): Promise<FakeInteraction> {
  const done = outcomeOf('imagine:button', message.channelId);
  const pressed = discord.pressButton({ messageId: message.id, customId });
  expect((await done).ok).toBe(true);
  return pressed;
}

/** The REST requests made with an interaction's token (its webhook routes). */
const tokenRequests = (interaction: FakeInteraction) =>
  discord.requests.filter((r) => r.path.includes(`/webhooks/${discord.applicationId}/${interaction.token}`));

/** The one Container of a gallery message, and its Text Display, Media Gallery and action row. */
function galleryOf(message: FakeMessage | Json) {
  const components = message.components as Json[];
  expect(components.map((c) => c.type)).toEqual([17]);
  const [text, gallery, row] = components[0]!.components as Json[];
  expect([text?.type, gallery?.type, row?.type]).toEqual([10, 12, 1]);
  return { text: String(text!.content), items: gallery!.items as Json[], buttons: row!.components as Json[] };
}

/** The button of `message` whose custom id starts with `prefix`. */
const buttonOf = (message: FakeMessage, prefix: string) =>
  String(message.buttons.find((b) => String(b.custom_id).startsWith(prefix))!.custom_id);

describe('Discord /imagine as a Components V2 gallery', () => {
  it('posts one gallery: the caption in a Text Display, the image by attachment://, Reroll/Upscale/Vary/👍/👎 in its row, no pings; Discord took every write', async () => {
    const interaction = await imagine('gallery-quick', 'a red kite over dunes');
    const message = interaction.original!;

    // What the bot sent: the flag, one Container, no content or embeds, the upload named, no pings.
    const sent = tokenRequests(interaction).filter((r) => r.method === 'PATCH' && r.files.length > 0);
    expect(sent).toHaveLength(1);
    const body = sent[0]!.body as Json;
    expect(body.flags).toBe(V2);
    expect(body.content ?? '').toBe('');
    expect(body.embeds ?? []).toEqual([]);
    expect(body.allowed_mentions).toEqual({ parse: [], replied_user: false });
    expect(sent[0]!.files.map((f) => f.filename)).toEqual(['imagine.png']);
    const asSent = galleryOf(body);
    expect(asSent.items).toEqual([
      { media: { url: 'attachment://imagine.png' }, description: 'a red kite over dunes' },
    ]);
    expect(tokenRequests(interaction).filter((r) => r.status >= 400)).toEqual([]);

    // What Discord shows: the caption and settings, the image resolved to the upload, five buttons.
    expect(message.flags & V2).toBe(V2);
    expect(message.content).toBe('');
    const shown = galleryOf(message);
    expect(shown.text).toMatch(/^🎨 a red kite over dunes\n_default model · vivid · \d+×\d+ · seed (\d+|random)_$/);
    const [upload] = message.attachments;
    expect(upload!.filename).toBe('imagine.png');
    expect((await sharp(upload!.data).metadata()).format).toBe('png');
    expect(shown.items[0]!.media).toMatchObject({ url: upload!.url, attachment_id: upload!.id });
    expect(discord.messageJson(message).attachments).toEqual([]);
    expect(shown.buttons.map((b) => String(b.custom_id))).toEqual([
      expect.stringMatching(/^imagine:reroll:/),
      expect.stringMatching(/^imagine:upscale:/),
      expect.stringMatching(/^imagine:vary:/),
      expect.stringMatching(/^feedback:[0-9a-f]+:up$/),
      expect.stringMatching(/^feedback:[0-9a-f]+:down$/),
    ]);
    expect(message.pinged).toEqual({ everyone: false, users: [], roles: [] });
  });

  it('turns a progress line into the gallery (its text reset); Reroll posts a new gallery, and Upscale reads the image from the gallery', async () => {
    // 3.5 s of generation: the reply shows "🎨 Generating… 3 s" first.
    service.enqueue('images', { delayHeadersMs: 3_500 });
    const interaction = await imagine('gallery-progress', 'a glass greenhouse');
    const message = interaction.original!;
    expect(message.revisions.map((r) => r.content)).toContain('🎨 Generating… 3 s');
    const last = message.revisions.at(-1)!;
    expect([last.content, last.flags & V2]).toEqual(['', V2]);
    const conversion = tokenRequests(interaction).find((r) => r.method === 'PATCH' && r.files.length > 0)!;
    expect(conversion.body).toMatchObject({ content: '', embeds: [], flags: V2 });
    expect(galleryOf(message).text).toContain('a glass greenhouse');

    const reroll = await press(message, buttonOf(message, 'imagine:reroll:'));
    const rerolled = reroll.original!;
    expect(rerolled.id).not.toBe(message.id);
    expect(service.lastRequest('images')!.body).toMatchObject({ prompt: 'a glass greenhouse' });
    const again = galleryOf(rerolled);
    expect(again.text).toContain('a glass greenhouse');
    expect(again.items[0]!.media).toMatchObject({ attachment_id: rerolled.attachments[0]!.id });
    expect(rerolled.buttons.map((b) => String(b.custom_id))).not.toEqual(
      message.buttons.map((b) => String(b.custom_id)),
    );

    const posted = message.attachments[0]!;
    const downloads = () => discord.downloads.filter((d) => d.attachmentId === posted.id && d.completed).length;
    const before = downloads();
    await press(message, buttonOf(message, 'imagine:upscale:'));
    expect(downloads()).toBe(before + 1);
    const sentBack = (service.lastRequest('images')!.body as ImageRequestBody).reference_image!;
    const [a, b] = await Promise.all(
      [Buffer.from(sentBack.split(',')[1]!, 'base64'), posted.data].map((i) => sharp(i).raw().toBuffer()),
    );
    expect(a!.equals(b!)).toBe(true);
  });

  it('posts the image as an attachment with its caption and buttons when Discord refuses the gallery (400, 50035)', async () => {
    discord.failNext({
      method: 'PATCH',
      path: /\/messages\/@original$/,
      status: 400,
      body: { message: 'Invalid Form Body', code: 50035, errors: {} },
    });
    const interaction = await imagine('gallery-refused', 'a brass compass');
    const message = interaction.original!;
    const writes = tokenRequests(interaction).filter((r) => r.method === 'PATCH');
    expect(writes.map((r) => r.status)).toEqual([400, 200]);
    const refused = testBot.logs.filter((l) => l.msg?.startsWith('Discord refused the gallery (Components V2)'));
    expect(refused.map((l) => [l.level, l.ref])).toEqual([[40, expect.any(String)]]);
    expect(message.flags & V2).toBe(0);
    expect(message.content).toContain('🎨 a brass compass');
    expect(message.attachments.map((a) => a.filename)).toEqual(['imagine.png']);
    expect(discord.messageJson(message).attachments).toHaveLength(1);
    expect(message.components.map((c) => c.type)).toEqual([1]);
    expect(message.buttons.map((b) => String(b.custom_id))).toContainEqual(expect.stringMatching(/^imagine:reroll:/));
  });
});

describe('Discord /chat web_search images as a gallery', () => {
  it('sends the mode and shows the image results as a Media Gallery of their links, alt text as descriptions, in a follow-up', async () => {
    const channel = discord.addChannel('web-images');
    const answer = 'Two foxes: ![red fox](https://img.example/red-fox.jpg) and https://img.example/arctic-fox.png';
    service.setChatReply(answer);
    try {
      const done = outcomeOf('chat', channel.id);
      const interaction = discord.dispatchInteraction({
        channelId: channel.id,
        command: 'chat',
        options: { prompt: 'show me foxes', web_search: 'images' },
      });
      expect((await done).ok).toBe(true);
      expect(service.chatRequests().at(-1)).toMatchObject({ web_search: 'images' });
      expect(interaction.original!.content).toBe(answer);
      expect(interaction.followUps).toHaveLength(1);
      const results = interaction.followUps[0]!;
      expect([results.flags & V2, results.content, results.embeds]).toEqual([V2, '', []]);
      const [box] = results.components;
      expect(box).toMatchObject({ type: 17, components: [{ type: 12 }] });
      const items = ((box!.components as Json[])[0]!.items as Json[]).map((i) => [
        (i.media as Json).url,
        i.description,
      ]);
      expect(items).toEqual([
        ['https://img.example/red-fox.jpg', 'red fox'],
        ['https://img.example/arctic-fox.png', undefined],
      ]);
    } finally {
      service.setChatReply(undefined);
    }
  });
});
