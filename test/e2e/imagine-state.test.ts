/**
 * What an /imagine result keeps for its Reroll / Upscale / Vary buttons (issue 18, item 9), on a
 * real redis-server: a reference to the posted image, never its bytes (IMAGINE_STATE_MAX_BYTES
 * is 0 on Redis by default), so the state is small; Upscale and Vary download the image again
 * when pressed: on Discord the attachment of the pressed message (from the press's own
 * message), on Slack the uploaded file (files.info, then the file with the bot token). Reroll
 * needs no image and works after a restart on the same store; a Reroll of an upscaled image
 * finds its reference again by the kept reference. The whole bot, against FakeDiscord,
 * FakeSlack and FakeService.
 */

import { createClient } from '@keyv/redis';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import type { FakeDiscord, FakeMessage, Json } from '../fakes/discord.ts';
import type { FakeService, ImageRequestBody } from '../fakes/service.ts';
import type { FakeSlack, FakeSlackMessage } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestRedis } from '../helpers/redis.ts';
import { startTestBot, type TestBot } from './harness.ts';

const SLACK_CHANNEL = 'C0IMAGINE';

let service: FakeService;
let discord: FakeDiscord;
let slack: FakeSlack;
let redis: TestRedis;
let testBot: TestBot;
let env: Record<string, string>;

useE2E(
  {
    discord: {},
    slack: { channels: [{ id: SLACK_CHANNEL, name: 'imagine' }] },
    redis: true,
    // The restart test replaces the bot.
    bot: { current: () => testBot },
    timeoutMs: 30_000,
  },
  async (e2e) => {
    ({ service, discord, slack, redis, bot: testBot, botEnv: env } = e2e);
    await deployCommands({ token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl });
  },
);

/** Resolves with the next outcome in a conversation whose key ends with `:<channel>`. */
function outcomeIn(channel: string): Promise<CommandOutcome> {
  return testBot.outcomes((o) => o.conversationId.endsWith(`:${channel}`), 1, 30_000).then(([o]) => o!);
}

/**
 * The custom ids (Discord: action rows, in a Components V2 Container too) or action ids (Slack:
 * blocks' elements) of a message's buttons, but 👍 / 👎 (feedback-*.test.ts).
 */
function buttonIds(components: Json[] | unknown[] | undefined): string[] {
  return ((components ?? []) as Json[]).flatMap((c) => {
    const id = String(c.custom_id ?? c.action_id ?? '');
    const own = id !== '' && !id.startsWith('feedback:') ? [id] : [];
    return [...own, ...buttonIds((c.components ?? c.elements) as Json[] | undefined)];
  });
}

/** The id of `action`'s button among `ids` (`imagine:<action>:<state id>`). */
const buttonFor = (ids: string[], action: string) => ids.find((id) => id.startsWith(`imagine:${action}:`))!;

/** The bytes Redis holds for the state behind a button id (read from the server itself). */
async function storedBytes(button: string): Promise<number> {
  const client = createClient({ url: redis.url });
  await client.connect();
  try {
    const stateId = button.split(':')[2]!;
    // Not the state's workspace marker (owned:<workspace>:imagine:<id>: state/owned.ts).
    const keys = (await client.keys(`*imagine:${stateId}`)).filter((key) => !key.includes(':owned:'));
    expect(keys).toHaveLength(1);
    return await client.strLen(keys[0]!);
  } finally {
    await client.close();
  }
}

/** The last image request's `reference_image`, decoded. */
function lastReference(): Buffer {
  const body = service.lastRequest('images')!.body as ImageRequestBody;
  expect(body.reference_image).toMatch(/^data:image\/png;base64,/);
  return Buffer.from(body.reference_image!.split(',')[1]!, 'base64');
}

/** Whether two images have the same size and pixels. */
async function samePixels(a: Buffer, b: Buffer): Promise<boolean> {
  const [x, y] = await Promise.all([a, b].map((i) => sharp(i).raw().toBuffer({ resolveWithObject: true })));
  return x!.info.width === y!.info.width && x!.info.height === y!.info.height && x!.data.equals(y!.data);
}

describe('Discord /imagine button state on Redis', () => {
  /** Runs /imagine in a new channel and returns the result message. */
  async function imagine(name: string, prompt: string): Promise<FakeMessage> {
    const channel = discord.addChannel(name);
    const done = outcomeIn(channel.id);
    const interaction = discord.dispatchInteraction({ channelId: channel.id, command: 'imagine', options: { prompt } });
    expect((await done).ok).toBe(true);
    return interaction.original!;
  }

  /** Presses a button of `message` and returns the press's new message once it is done. */
  async function press(message: FakeMessage, customId: string): Promise<FakeMessage> {
    const done = outcomeIn(message.channelId);
    const pressed = discord.pressButton({ messageId: message.id, customId });
    expect(await done).toMatchObject({ command: 'imagine:button', ok: true });
    return pressed.original!;
  }

  it('keeps under 2 KB in Redis for a result, and Reroll works after a restart on the same store', async () => {
    const result = await imagine('state-small', 'a quiet harbour at dawn');
    const ids = buttonIds(result.components);
    expect(result.attachments[0]!.byteLength).toBeGreaterThan(2048);
    for (const id of ids) expect(await storedBytes(id)).toBeLessThan(2048);

    await testBot.stop();
    testBot = await startTestBot(env);
    const rerolled = await press(result, buttonFor(ids, 'reroll'));
    expect(service.lastRequest('images')!.body).toMatchObject({ prompt: 'a quiet harbour at dawn' });
    expect(rerolled.attachments.map((a) => a.filename)).toEqual(['imagine.png']);
  }, 60_000);

  it('Upscale and Vary download the image again from the pressed message, and send it as the reference', async () => {
    const result = await imagine('state-refetch', 'a paper boat');
    const posted = result.attachments[0]!;
    const ids = buttonIds(result.components);
    for (const action of ['upscale', 'vary']) {
      const before = discord.downloads.filter((d) => d.attachmentId === posted.id && d.completed).length;
      await press(result, buttonFor(ids, action));
      expect(discord.downloads.filter((d) => d.attachmentId === posted.id && d.completed)).toHaveLength(before + 1);
      expect(await samePixels(lastReference(), posted.data!)).toBe(true);
    }
    expect(service.lastRequest('images')!.body).toMatchObject({ prompt: 'a paper boat', denoising_strength: 0.6 });
  });

  it("an upscaled image's state is small too, and its Reroll sends the first image again as the reference", async () => {
    const result = await imagine('state-derived', 'a glass lantern');
    const posted = result.attachments[0]!;
    const upscaled = await press(result, buttonFor(buttonIds(result.components), 'upscale'));
    const ids = buttonIds(upscaled.components);
    for (const id of ids) expect(await storedBytes(id)).toBeLessThan(2048);
    await press(upscaled, buttonFor(ids, 'reroll'));
    expect(service.lastRequest('images')!.body).toMatchObject({ prompt: 'a glass lantern', style: 'upscaled' });
    expect(await samePixels(lastReference(), posted.data!)).toBe(true);
  });
});

describe('Slack /imagine button state on Redis', () => {
  const botUrl = () => `http://127.0.0.1:${testBot.bot.slack!.port}`;
  /** The bot's line with the Reroll / Upscale / Vary buttons, the newest one. */
  const buttonsLine = (): FakeSlackMessage =>
    slack.messages(SLACK_CHANNEL).findLast((m) => buttonIds(m.blocks as unknown[]).length > 0)!;

  it('keeps the file id, not the image: Upscale and Vary read the file again with files.info and the bot token', async () => {
    const done = outcomeIn(SLACK_CHANNEL);
    const ack = await slack.sendSlashCommand(botUrl(), {
      command: '/imagine',
      text: 'a copper kettle',
      channel_id: SLACK_CHANNEL,
      user_id: 'U0BOB',
    });
    expect(ack.ackedInTime).toBe(true);
    expect((await done).ok).toBe(true);
    const [file] = [...slack.files.values()].filter((f) => f.channel === SLACK_CHANNEL);
    const line = buttonsLine();
    const ids = buttonIds(line.blocks as unknown[]);
    for (const id of ids) expect(await storedBytes(id)).toBeLessThan(2048);

    for (const action of ['upscale', 'vary']) {
      const infos = slack.callsTo('files.info').length;
      const reads = slack.downloads.filter((d) => d.fileId === file!.id && d.authorized && d.completed).length;
      const pressed = outcomeIn(SLACK_CHANNEL);
      await slack.sendBlockAction(botUrl(), {
        user: 'U0BOB',
        channel: SLACK_CHANNEL,
        messageTs: line.ts,
        actionId: buttonFor(ids, action),
      });
      expect(await pressed).toMatchObject({ command: 'imagine:button', ok: true });
      expect(
        slack
          .callsTo('files.info')
          .slice(infos)
          .map((c) => c.params.file),
      ).toEqual([file!.id]);
      expect(slack.downloads.filter((d) => d.fileId === file!.id && d.authorized && d.completed)).toHaveLength(
        reads + 1,
      );
      expect(await samePixels(lastReference(), file!.data!)).toBe(true);
    }
    expect(service.lastRequest('images')!.body).toMatchObject({ prompt: 'a copper kettle', denoising_strength: 0.6 });
  });
});
