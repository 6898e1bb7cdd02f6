/**
 * End-to-end on Discord, a member's own rights where the bot acts for them (issue 38, item 9):
 * the bot posts for a member only where they may post themselves (Send Messages; in a thread,
 * Send Messages in Threads), opens a thread for them only where they could, and reads a reply
 * chain or a thread's earlier messages for them only with their Read Message History. The
 * rights are the interaction's `member.permissions` as Discord sends them (a test gives them, or
 * the fake computes them from the channel's overwrites, as an admin sets them), and for a
 * message's author what discord.js computes from the cached roles and overwrites. A refusal is a
 * sentence only the member sees. Real discord.js against FakeDiscord and FakeService, the bot
 * with the Message Content intent (so that a chain it may read is read in full).
 */

import { beforeAll, describe, expect, it } from 'vitest';
import { messageActions } from '../../commands/index.ts';
import type { CommandOutcome } from '../../src/core/command.ts';
import { english } from '../../src/core/i18n/words.ts';
import { MAY_NOT_POST_HERE } from '../../src/core/rights.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import { NO_HISTORY_RIGHT } from '../../src/platforms/discord/mentions.ts';
import { NO_THREAD } from '../../src/platforms/discord/threads.ts';
import { Intent, P } from '../fakes/discord/constants.ts';
import type { FakeChannel, FakeDiscord, FakeInteraction, FakeMessage, Json } from '../fakes/discord.ts';
import { MessageFlag } from '../fakes/discord.ts';
import type { ChatRequestBody, FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const ALICE = { id: '450000000000000001', username: 'alice' };
const BOB = { id: '450000000000000002', username: 'bob' };
const [ASK, SUMMARIZE] = messageActions as [(typeof messageActions)[0], (typeof messageActions)[0]];
/** What the member of the report held: they see the channel and may use the app's commands, nothing more. */
const VIEW_AND_COMMANDS = String(P.ViewChannel | P.UseApplicationCommands);

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E(
  {
    discord: { privilegedIntents: Intent.MessageContent },
    bot: { env: { DISCORD_MESSAGE_CONTENT: 'true', DEFAULT_VISION_MODEL: 'fake-vision' } },
    resetServiceAfterEach: true,
  },
  async (e2e) => {
    ({ service, discord, bot: testBot } = e2e);
    await discord.waitForReady();
  },
);

beforeAll(async () => {
  await deployCommands({
    token: discord.token,
    applicationId: discord.applicationId,
    apiUrl: discord.apiUrl,
    guildId: discord.guildId,
  });
});

const conversationOf = (channel: FakeChannel) => `discord:${channel.guildId}:${channel.id}`;

/** Resolves with the next outcome of `command` in a channel's (or thread's) conversation. */
async function next(command: string, channel: FakeChannel): Promise<CommandOutcome> {
  const [outcome] = await testBot.outcomes(
    (o) => o.command === command && o.conversationId === conversationOf(channel),
  );
  return outcome!;
}

/** The one ephemeral message the bot showed for an interaction. */
function ephemeralOf(interaction: FakeInteraction): FakeMessage {
  const shown = interaction.messages.filter((m) => m.ephemeral && !m.deleted);
  expect(shown).toHaveLength(1);
  return shown[0]!;
}

/** The bot's public messages in a channel or thread. */
const botPostsIn = (channelId: string) =>
  discord.messagesIn(channelId).filter((m) => m.author.id === discord.botUser.id && !m.ephemeral && !m.deleted);

/** Takes a permission from a member in a channel (and its threads), as a server admin does; resolves once the bot has it. */
async function deny(channel: FakeChannel, user: { id: string }, bits: bigint): Promise<void> {
  const client = testBot.bot.discord!.client;
  const updated = new Promise((resolve) => client.once('channelUpdate', resolve));
  discord.setPermissionOverwrites(channel.id, [{ id: user.id, type: 'member', deny: bits }]);
  await updated;
}

/** The custom ids of a message's buttons. */
const buttonIds = (message: FakeMessage) => message.buttons.map((b) => String(b.custom_id));

/** The text of a chat request's messages, one per line. */
const textOf = (body: ChatRequestBody) => JSON.stringify(body.messages);

describe('Discord: the bot posts for a member only where they may post', () => {
  it('"Ask about this message" by a member with only View Channel and Use Application Commands is refused in a sentence only they see: no form, no reply, nothing asked', async () => {
    const channel = discord.addChannel('rights-ask');
    const target = discord.postUserMessage({ channelId: channel.id, content: 'The ferry leaves at 9.', author: BOB });
    const interaction = discord.dispatchMessageCommand({
      command: ASK!.name,
      messageId: target.id,
      user: ALICE,
      permissions: VIEW_AND_COMMANDS,
    });
    await discord.waitFor('callback', (ix, record) => ix.id === interaction.id && record.status < 300);
    expect(interaction.response).toMatchObject({ type: 4, flags: MessageFlag.Ephemeral });
    expect(interaction.modal).toBeUndefined();
    expect(ephemeralOf(interaction).content).toBe(english.say(MAY_NOT_POST_HERE));
    expect(botPostsIn(channel.id)).toEqual([]);
    expect(service.chatRequests()).toEqual([]);
  });

  it('"Summarize" is refused the same way, and in a thread Send Messages alone is not enough (Send Messages in Threads)', async () => {
    const channel = discord.addChannel('rights-summarize');
    const target = discord.postUserMessage({ channelId: channel.id, content: 'Minutes of the meeting.', author: BOB });
    const done = next(SUMMARIZE!.id, channel);
    const refused = discord.dispatchMessageCommand({
      command: SUMMARIZE!.name,
      messageId: target.id,
      user: ALICE,
      permissions: VIEW_AND_COMMANDS,
    });
    expect(await done).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(ephemeralOf(refused).content).toBe(english.say(MAY_NOT_POST_HERE));

    const thread = discord.addThread(channel.id, 'notes');
    const inThread = discord.postUserMessage({ channelId: thread.id, content: 'Second point.', author: BOB });
    await deny(channel, ALICE, P.SendMessagesInThreads);
    const threadDone = next(SUMMARIZE!.id, thread);
    const inThreadRefused = discord.dispatchMessageCommand({
      command: SUMMARIZE!.name,
      messageId: inThread.id,
      user: ALICE,
    });
    // Discord's own computation: she still may send messages in the channel, not in its threads.
    const sent = BigInt((inThreadRefused.payload.member as Json).permissions as string);
    expect([sent & P.SendMessages, sent & P.SendMessagesInThreads]).toEqual([P.SendMessages, 0n]);
    expect(await threadDone).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(ephemeralOf(inThreadRefused).content).toBe(english.say(MAY_NOT_POST_HERE));
    expect([...botPostsIn(channel.id), ...botPostsIn(thread.id)]).toEqual([]);
    expect(service.chatRequests()).toEqual([]);
  });

  it('/chat thread:true by a member who may not start threads is answered in place, saying why, and no thread is opened for them', async () => {
    const channel = discord.addChannel('rights-thread');
    await deny(channel, ALICE, P.CreatePublicThreads);
    const done = next('chat', channel);
    const interaction = discord.dispatchInteraction({
      command: 'chat',
      channelId: channel.id,
      user: ALICE,
      options: { prompt: 'plan a picnic', thread: true },
    });
    expect((await done).ok).toBe(true);
    const answer = interaction.original!;
    expect(answer.content).toContain('Echo: plan a picnic');
    expect(answer.content).toContain(english.say(NO_THREAD.yours));
    expect(discord.channel(answer.id)).toBeUndefined();
  });

  it('with auto_thread on, a mention by a member who may not start threads is answered in place, saying why', async () => {
    const channel = discord.addChannel('rights-auto-thread');
    const set = next('settings', channel);
    discord.dispatchInteraction({
      command: 'settings',
      channelId: channel.id,
      admin: true,
      options: { auto_thread: true },
    });
    expect((await set).ok).toBe(true);
    await deny(channel, BOB, P.CreatePublicThreads);
    const done = next('mention', channel);
    const mention = discord.postUserMessage({
      channelId: channel.id,
      content: `<@${discord.botUser.id}> hello there`,
      author: BOB,
    });
    expect((await done).ok).toBe(true);
    expect(discord.channel(mention.id)).toBeUndefined();
    const answer = botPostsIn(channel.id).find((m) => m.reference?.messageId === mention.id)!;
    expect(answer.content).toContain('Echo: hello there');
    expect(answer.content).toContain(english.say(NO_THREAD.yours));
  });

  it("Reroll pressed by the image's requester after an admin took their Send Messages here is refused in a sentence only they see, and no image is made", async () => {
    const channel = discord.addChannel('rights-reroll');
    const done = next('imagine', channel);
    const imagined = discord.dispatchInteraction({
      command: 'imagine',
      channelId: channel.id,
      user: ALICE,
      options: { prompt: 'a red fox' },
    });
    expect((await done).ok).toBe(true);
    const result = imagined.original!;
    const reroll = buttonIds(result).find((id) => id.startsWith('imagine:reroll:'))!;
    const images = service.requests.filter((r) => r.route === 'images').length;
    await deny(channel, ALICE, P.SendMessages);
    const pressDone = next('imagine:button', channel);
    const press = discord.pressButton({ messageId: result.id, customId: reroll, user: ALICE });
    expect(await pressDone).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(ephemeralOf(press).content).toBe(english.say(MAY_NOT_POST_HERE));
    expect(service.requests.filter((r) => r.route === 'images')).toHaveLength(images);
    expect(botPostsIn(channel.id)).toEqual([result]);
  });

  it('Regenerate pressed by the asker after an admin took their Send Messages here is refused, and the answer stays as it was', async () => {
    const channel = discord.addChannel('rights-regenerate');
    service.enqueue('chat', { stream: { text: 'The first answer.' } });
    const done = next('chat', channel);
    const asked = discord.dispatchInteraction({
      command: 'chat',
      channelId: channel.id,
      user: ALICE,
      options: { prompt: 'Name a colour' },
    });
    expect((await done).ok).toBe(true);
    const answer = asked.original!;
    const regenerate = buttonIds(answer).find((id) => id.startsWith('regenerate:'))!;
    await deny(channel, ALICE, P.SendMessages);
    const pressDone = next('regenerate:button', channel);
    const press = discord.pressButton({ messageId: answer.id, customId: regenerate, user: ALICE });
    expect(await pressDone).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(ephemeralOf(press).content).toBe(english.say(MAY_NOT_POST_HERE));
    expect(service.chatRequests()).toHaveLength(1);
    expect(answer.content).toBe('The first answer.');
  });
});

describe('Discord: the bot reads earlier messages for a member only with their Read Message History', () => {
  it('does not read the reply chain for a member without it, and says so under the answer', async () => {
    const channel = discord.addChannel('rights-chain');
    const secret = discord.postUserMessage({
      channelId: channel.id,
      content: 'The vault code is 4711.',
      author: ALICE,
    });
    await deny(channel, BOB, P.ReadMessageHistory);
    const done = next('mention', channel);
    const question = discord.postUserMessage({
      channelId: channel.id,
      content: `<@${discord.botUser.id}> what is the code?`,
      author: BOB,
      replyTo: secret.id,
      pingRepliedAuthor: false,
    });
    expect((await done).ok).toBe(true);
    const [request, ...more] = service.chatRequests();
    expect(more).toEqual([]);
    expect(textOf(request!)).not.toContain('4711');
    expect(request!.messages).toEqual([{ role: 'user', content: 'what is the code?' }]);
    const answer = botPostsIn(channel.id).find((m) => m.reference?.messageId === question.id)!;
    expect(answer.content).toContain(english.say(NO_HISTORY_RIGHT));
  });

  it("does not read a thread's earlier messages for a member without it, and says so under the answer", async () => {
    const channel = discord.addChannel('rights-thread-read');
    const thread = discord.addThread(channel.id, 'plans');
    discord.postUserMessage({ channelId: thread.id, content: 'The surprise party is on Friday.', author: ALICE });
    await deny(channel, BOB, P.ReadMessageHistory);
    const done = next('mention', thread);
    const question = discord.postUserMessage({
      channelId: thread.id,
      content: `<@${discord.botUser.id}> summarize this thread`,
      author: BOB,
    });
    expect((await done).ok).toBe(true);
    const [request] = service.chatRequests();
    expect(textOf(request!)).not.toContain('surprise party');
    const answer = botPostsIn(thread.id).find((m) => m.reference?.messageId === question.id)!;
    expect(answer.content).toContain(english.say(NO_HISTORY_RIGHT));
  });
});
