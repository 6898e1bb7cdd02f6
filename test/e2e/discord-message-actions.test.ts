/**
 * End-to-end on Discord, message actions (issue 19, item 5): the message commands "Summarize"
 * and "Ask about this message" (its question asked in a modal), registered by deploy-commands,
 * answer with the chosen message's text and images as context, as a reply to that message, the
 * exchange joining the channel's history. Real discord.js against FakeDiscord and FakeService.
 *
 * The bot runs without the Message Content intent: the chosen message is another person's that
 * does not mention the bot (Discord hides such a message's content from the bot everywhere but
 * in the message command's own interaction), so the tests also show that the action reads it.
 */

import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { messageActions } from '../../commands/index.ts';
import type { CommandOutcome } from '../../src/core/command.ts';
import { SUMMARIZE_INSTRUCTION } from '../../src/core/features/message-actions.ts';
import { english } from '../../src/core/i18n/words.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import { QUESTION_INPUT_ID } from '../../src/platforms/discord/message-actions.ts';
import type { FakeChannel, FakeDiscord, FakeInteraction, FakeMessage } from '../fakes/discord.ts';
import { MessageFlag } from '../fakes/discord.ts';
import type { ContentPart, FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const ALICE = { id: '430000000000000001', username: 'alice' };
const BOB = { id: '430000000000000002', username: 'bob' };
const [ASK, SUMMARIZE] = messageActions as [(typeof messageActions)[0], (typeof messageActions)[0]];

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E(
  { discord: {}, bot: { env: { DEFAULT_VISION_MODEL: 'fake-vision' } }, resetServiceAfterEach: true },
  async (e2e) => {
    service = e2e.service;
    discord = e2e.discord;
    testBot = e2e.bot;
    await discord.waitForReady();
  },
);

beforeAll(async () => {
  // The message commands, registered as an operator registers them.
  await deployCommands({
    token: discord.token,
    applicationId: discord.applicationId,
    apiUrl: discord.apiUrl,
    guildId: discord.guildId,
  });
});

const conversationOf = (channel: FakeChannel) => `discord:${channel.guildId}:${channel.id}`;

/** Resolves with the next finished invocation of `command` in a channel. */
function outcomeOf(command: string, channel: FakeChannel): Promise<CommandOutcome> {
  return testBot
    .outcomes((o) => o.command === command && o.conversationId === conversationOf(channel))
    .then(([outcome]) => outcome!);
}

/** Bob's message with a photo, which does not mention the bot. */
async function bobsPhoto(channel: FakeChannel): Promise<FakeMessage> {
  const data = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3070e0' } })
    .png()
    .toBuffer();
  return discord.postUserMessage({
    channelId: channel.id,
    content: 'Our boat, the Blue Heron, leaves at 7:15 from pier 4.',
    author: BOB,
    attachments: [{ filename: 'boat.png', data }],
  });
}

/** The bot's replies to a message. */
const repliesTo = (channel: FakeChannel, message: FakeMessage) =>
  discord
    .messagesIn(channel.id)
    .filter((m) => m.author.id === discord.botUser.id && m.reference?.messageId === message.id && !m.ephemeral);

/** The text of a content (its text parts joined). */
const textOf = (content: string | ContentPart[] | undefined) =>
  typeof content === 'string' ? content : (content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('\n');

/** Resolves once the interaction's first callback was accepted. */
async function answered(interaction: FakeInteraction): Promise<void> {
  if (interaction.response) return;
  await discord.waitFor('callback', (ix, record) => ix.id === interaction.id && record.status < 300);
}

describe('Discord message actions', () => {
  it('are registered by deploy-commands as message commands, from the same definitions', () => {
    const registered = discord.guildCommands(discord.guildId).filter((c) => c.type === 3);
    expect(registered.map((c) => c.name)).toEqual(['Ask about this message', 'Summarize']);
  });

  it('"Summarize" answers with the message\'s text and image as context, as a reply to it, and the history has the exchange', async () => {
    const channel = discord.addChannel('summarize');
    const target = await bobsPhoto(channel);
    const done = outcomeOf(SUMMARIZE!.id, channel);
    const interaction = discord.dispatchMessageCommand({ command: SUMMARIZE!.name, messageId: target.id, user: ALICE });
    expect(await done).toMatchObject({ ok: true });
    // Acknowledged at once, to the user alone.
    expect(interaction.response).toMatchObject({ type: 5, flags: MessageFlag.Ephemeral });

    const [request, ...more] = service.chatRequests();
    expect(more).toEqual([]);
    expect(request!.model).toBe('fake-vision');
    const question = request!.messages.at(-1)!;
    expect(question.role).toBe('user');
    const text = textOf(question.content);
    expect(text).toContain(SUMMARIZE_INSTRUCTION);
    expect(text).toContain('Message by bob:');
    expect(text).toContain('Our boat, the Blue Heron, leaves at 7:15 from pier 4.');
    const images = (question.content as ContentPart[]).filter((p) => p.type === 'image_url');
    expect(images).toHaveLength(1);
    expect(images[0]!.image_url.url).toMatch(/^data:image\/(png|jpeg);base64,/);

    // The answer is a reply to the chosen message, pinging nobody; the ephemeral reply points to it.
    const [reply] = repliesTo(channel, target);
    expect(reply, 'the reply to the chosen message').toBeDefined();
    expect(reply!.content).toContain('Echo:');
    expect(reply!.pinged).toEqual({ everyone: false, users: [], roles: [] });
    expect(interaction.original!.ephemeral).toBe(true);
    expect(interaction.original!.content).toContain(`/channels/${discord.guildId}/${channel.id}/${reply!.id}`);

    const history = await testBot.bot.core.history.get(conversationOf(channel));
    expect(history.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(history[0]!.content).toContain('Our boat, the Blue Heron');
    expect(history[0]!.content).toContain('[1 image: boat.png]');
    expect(history[1]!.content).toBe(reply!.content);
  });

  it('"Ask about this message" asks the question in a modal; its submit is answered with the message as context, as a reply to it', async () => {
    const channel = discord.addChannel('ask');
    const target = await bobsPhoto(channel);
    const interaction = discord.dispatchMessageCommand({ command: ASK!.name, messageId: target.id, user: ALICE });
    await answered(interaction);
    // The modal is the first answer (no deferral), with one required question of at most the form's length.
    expect(interaction.response).toMatchObject({ type: 9, status: 204 });
    expect(interaction.modal).toMatchObject({
      title: english.t(ASK!.question!.title),
      components: [
        {
          type: 18,
          label: english.t(ASK!.question!.label),
          component: { type: 4, custom_id: QUESTION_INPUT_ID, required: true, max_length: ASK!.question!.maxLength },
        },
      ],
    });
    expect(service.chatRequests()).toEqual([]);

    const done = outcomeOf(ASK!.id, channel);
    const submit = discord.submitModal({
      interactionId: interaction.id,
      values: { [QUESTION_INPUT_ID]: 'At what time does the boat leave?' },
    });
    expect(await done).toMatchObject({ ok: true });
    expect(submit.response).toMatchObject({ type: 5, flags: MessageFlag.Ephemeral });

    const [request] = service.chatRequests();
    const text = textOf(request!.messages.at(-1)!.content);
    expect(text.startsWith('At what time does the boat leave?')).toBe(true);
    expect(text).toContain('Our boat, the Blue Heron, leaves at 7:15 from pier 4.');
    expect((request!.messages.at(-1)!.content as ContentPart[]).filter((p) => p.type === 'image_url')).toHaveLength(1);

    const [reply] = repliesTo(channel, target);
    expect(reply!.content).toContain('Echo: At what time does the boat leave?');
    const history = await testBot.bot.core.history.get(conversationOf(channel));
    expect(history).toHaveLength(2);
    expect(history[0]!.content).toContain('At what time does the boat leave?');
    expect(history[0]!.userId).toBe(ALICE.id);
  });

  it("in a thread, the answer is a reply in the thread and joins the thread's conversation", async () => {
    const parent = discord.addChannel('threads');
    const thread = discord.addThread(parent.id, 'boat trip');
    const target = await bobsPhoto(thread);
    const done = outcomeOf(SUMMARIZE!.id, thread);
    discord.dispatchMessageCommand({ command: SUMMARIZE!.name, messageId: target.id, user: ALICE });
    expect(await done).toMatchObject({ ok: true });
    expect(repliesTo(thread, target)).toHaveLength(1);
    expect(await testBot.bot.core.history.get(conversationOf(thread))).toHaveLength(2);
    expect(await testBot.bot.core.history.get(conversationOf(parent))).toEqual([]);
  });

  it('a message with nothing to read is refused to the user alone, and nothing is asked', async () => {
    const channel = discord.addChannel('empty');
    const target = discord.postUserMessage({ channelId: channel.id, content: '', author: BOB, type: 0 });
    const done = outcomeOf(SUMMARIZE!.id, channel);
    const interaction = discord.dispatchMessageCommand({ command: SUMMARIZE!.name, messageId: target.id, user: ALICE });
    expect(await done).toMatchObject({ ok: false, errorCode: 'invalid_input' });
    expect(service.chatRequests()).toEqual([]);
    expect(repliesTo(channel, target)).toEqual([]);
    const told = interaction.messages.filter((m) => m.ephemeral).map((m) => m.content);
    expect(told.join('\n')).toContain('That message has no text or files I can read.');
  });
});
