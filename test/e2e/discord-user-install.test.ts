/**
 * End-to-end on Discord, the user install (issue 40, item 5): deploy-commands registers the
 * commands anyone may run for both installation kinds, the admin commands for servers only; in
 * a server the bot is not a member of, a user's own install answers `/chat`, `/imagine` (and its
 * Reroll) and "Summarize" through the interaction alone (the fake refuses every bot-token call
 * there, 403 50001, as Discord does), `/chat thread:true` says why no thread was opened, a long
 * answer keeps within Discord's five follow-ups, and each user's conversation there is their own,
 * apart from the guild install's in the same channel. Real discord.js against FakeDiscord and
 * FakeService.
 */

import { beforeAll, describe, expect, it } from 'vitest';
import { commands, messageActions } from '../../commands/index.ts';
import type { CommandOutcome } from '../../src/core/command.ts';
import { english } from '../../src/core/i18n/words.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import { QUESTION_INPUT_ID } from '../../src/platforms/discord/message-actions.ts';
import { NO_THREAD_HERE } from '../../src/platforms/discord/user-install.ts';
import type { FakeChannel, FakeDiscord, FakeInteraction, FakeMessage, Json } from '../fakes/discord.ts';
import type { ChatRequestBody, FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const ALICE = { id: '1400000000000000001', username: 'alice' };
const BOB = { id: '1400000000000000002', username: 'bob' };

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;
/** A channel of a server the bot is not a member of. */
let elsewhere: FakeChannel;

useE2E({ discord: {}, bot: {}, resetServiceAfterEach: true }, async (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
  await discord.waitForReady();
});

beforeAll(async () => {
  // Globally, as an operator registers them for user installs (Discord reads installation kinds for global commands only).
  await deployCommands({ token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl });
  elsewhere = discord.addGuildWithoutBot();
});

/** A user install's conversation key in a channel. */
const userKey = (user: { id: string }, channel: FakeChannel) => `discord:user:${user.id}:${channel.id}`;

/** Resolves with the next outcome of `command` in any conversation of a channel (the test then says whose it must be). */
async function outcomeIn(channel: FakeChannel, command: string): Promise<CommandOutcome> {
  const [outcome] = await testBot.outcomes(
    (o) => o.conversationId.endsWith(`:${channel.id}`) && o.command === command,
    1,
    30_000,
  );
  return outcome!;
}

/** Every request made with the bot's token about a channel or its guild (Discord refuses them where the bot is not a member). */
const botTokenCalls = (channel: FakeChannel) =>
  discord.requests.filter(
    (r) => r.path.includes(`/channels/${channel.id}`) || r.path.includes(`/guilds/${channel.guildId}`),
  );

/** The custom ids of a message's buttons. */
const buttonIds = (message: FakeMessage) => message.buttons.map((b) => String(b.custom_id));

/** The last user turn's text of a chat request. */
const asked = (body: ChatRequestBody) => JSON.stringify(body.messages);

/** Runs `/chat` through Alice's (or `user`'s) install where the bot is not a member, and waits until it is done. */
async function chatElsewhere(
  options: Record<string, string | boolean>,
  user = ALICE,
  channel = elsewhere,
): Promise<{ interaction: FakeInteraction; outcome: CommandOutcome }> {
  const done = outcomeIn(channel, 'chat');
  const interaction = discord.dispatchInteraction({ command: 'chat', channelId: channel.id, user, options });
  return { interaction, outcome: await done };
}

describe('Discord user install', () => {
  it('deploy-commands registers the commands anyone may run for guild and user installs, the admin ones for servers only', () => {
    const put = discord.requests.filter((r) => r.method === 'PUT' && r.path.endsWith('/commands')).at(-1);
    const body = put!.body as Json[];
    const byName = new Map(body.map((c) => [String(c.name), c]));
    for (const command of commands) {
      const sent = byName.get(command.name)!;
      if (command.adminOnly) expect(sent, command.name).toMatchObject({ integration_types: [0], contexts: [0, 1] });
      else expect(sent, command.name).toMatchObject({ integration_types: [0, 1], contexts: [0, 1, 2] });
    }
    for (const name of ['chat', 'imagine', 'complete', 'help', 'usage'])
      expect(byName.get(name)).toMatchObject({ integration_types: [0, 1], contexts: [0, 1, 2] });
    for (const name of ['models', 'settings']) expect(byName.get(name)).toMatchObject({ integration_types: [0] });
    for (const action of messageActions)
      expect(byName.get(action.name)).toMatchObject({ type: 3, integration_types: [0, 1], contexts: [0, 1, 2] });
  });

  it('streams a /chat through the interaction only, in the user install’s own conversation', async () => {
    const before = botTokenCalls(elsewhere).length;
    const pieces = Array.from({ length: 8 }, (_, i) => `far-${i + 1} `);
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 300 } });
    const { interaction, outcome } = await chatElsewhere({ prompt: 'hello from a server without the bot' });
    expect(outcome.ok).toBe(true);
    const answer = interaction.original!;
    expect(answer.ephemeral).toBe(false);
    expect(answer.content).toContain(pieces.join('').trim());
    // Streamed: the reply shown with text, then edited through the interaction's webhook.
    expect(answer.revisions.filter((r) => r.content !== '').length).toBeGreaterThanOrEqual(2);
    expect(buttonIds(answer).some((id) => id.startsWith('regenerate:'))).toBe(true);
    expect(botTokenCalls(elsewhere).slice(before)).toEqual([]);
    expect(interaction.payload.authorizing_integration_owners).toEqual({ '1': ALICE.id });
    expect(outcome.conversationId).toBe(userKey(ALICE, elsewhere));
  }, 40_000);

  it('regenerates an answer there through the press’s own interaction, replacing the exchange in the user’s history', async () => {
    service.enqueue('chat', { stream: { text: 'First take on tides.' } });
    const { interaction } = await chatElsewhere({ prompt: 'explain tides' });
    const answer = interaction.original!;
    const regenerate = buttonIds(answer).find((id) => id.startsWith('regenerate:'))!;
    const before = botTokenCalls(elsewhere).length;
    service.enqueue('chat', { stream: { text: 'Second take on tides.' } });
    const done = outcomeIn(elsewhere, 'regenerate:button');
    const press = discord.pressButton({ messageId: answer.id, customId: regenerate, user: ALICE });
    expect(await done).toMatchObject({ ok: true });
    expect(press.response?.type).toBe(6);
    expect(answer.content).toContain('Second take on tides.');
    expect(botTokenCalls(elsewhere).slice(before)).toEqual([]);
    const history = JSON.stringify(await testBot.bot.core.history.get(userKey(ALICE, elsewhere)));
    expect(history).toContain('Second take on tides.');
    expect(history).not.toContain('First take on tides.');
  }, 40_000);

  it('posts an /imagine image, and Reroll works through the press’s own interaction', async () => {
    const before = botTokenCalls(elsewhere).length;
    const done = outcomeIn(elsewhere, 'imagine');
    const interaction = discord.dispatchInteraction({
      command: 'imagine',
      channelId: elsewhere.id,
      user: ALICE,
      options: { prompt: 'a lighthouse far away' },
    });
    expect(await done).toMatchObject({ ok: true, conversationId: userKey(ALICE, elsewhere) });
    const result = interaction.original!;
    expect(result.attachments.map((a) => a.filename)).toEqual(['imagine.png']);
    const reroll = buttonIds(result).find((id) => id.startsWith('imagine:reroll:'));
    expect(reroll).toBeDefined();

    const rerolled = outcomeIn(elsewhere, 'imagine:button');
    const press = discord.pressButton({ messageId: result.id, customId: reroll!, user: ALICE });
    expect(await rerolled).toMatchObject({ ok: true, conversationId: userKey(ALICE, elsewhere) });
    expect(press.payload.authorizing_integration_owners).toEqual({ '1': ALICE.id });
    expect(service.lastRequest('images')!.body).toMatchObject({ prompt: 'a lighthouse far away' });
    expect(press.messages.flatMap((m) => m.attachments.map((a) => a.filename))).toContain('imagine.png');
    expect(botTokenCalls(elsewhere).slice(before)).toEqual([]);
  }, 40_000);

  it('answers "Summarize" as the interaction’s public reply, from the message the interaction carries', async () => {
    const before = botTokenCalls(elsewhere).length;
    const target = discord.postUserMessage({
      channelId: elsewhere.id,
      content: 'The ferry leaves at 7:15 from pier 4; bring the blue tickets.',
      author: BOB,
    });
    service.enqueue('chat', { stream: { text: 'Ferry at 7:15, pier 4, blue tickets.' } });
    const summarize = messageActions.find((a) => a.name === 'Summarize')!;
    const done = outcomeIn(elsewhere, summarize.id);
    const interaction = discord.dispatchMessageCommand({ command: 'Summarize', messageId: target.id, user: ALICE });
    expect(await done).toMatchObject({ ok: true, conversationId: userKey(ALICE, elsewhere) });
    expect(asked(service.chatRequests().at(-1)!)).toContain('The ferry leaves at 7:15 from pier 4');
    const answer = interaction.original!;
    expect(answer.ephemeral).toBe(false);
    expect(answer.content).toContain('Ferry at 7:15, pier 4, blue tickets.');
    expect(botTokenCalls(elsewhere).slice(before)).toEqual([]);
  }, 40_000);

  it('asks "Ask about this message"’s question in a modal, and answers its submit as that interaction’s public reply', async () => {
    const before = botTokenCalls(elsewhere).length;
    const target = discord.postUserMessage({ channelId: elsewhere.id, content: 'Gate B closes at 9:40.', author: BOB });
    const ask = messageActions.find((a) => a.question)!;
    const shown = discord.dispatchMessageCommand({ command: ask.name, messageId: target.id, user: ALICE });
    await expect.poll(() => shown.response?.type, { timeout: 10_000 }).toBe(9);
    service.enqueue('chat', { stream: { text: 'It closes at 9:40.' } });
    const done = outcomeIn(elsewhere, ask.id);
    const submit = discord.submitModal({
      interactionId: shown.id,
      values: { [QUESTION_INPUT_ID]: 'When does the gate close?' },
    });
    expect(await done).toMatchObject({ ok: true, conversationId: userKey(ALICE, elsewhere) });
    expect(submit.response).toMatchObject({ type: 5, flags: 0 });
    expect(asked(service.chatRequests().at(-1)!)).toContain('Gate B closes at 9:40.');
    expect(submit.original!.content).toContain('It closes at 9:40.');
    expect(botTokenCalls(elsewhere).slice(before)).toEqual([]);
  }, 40_000);

  it('answers /chat thread:true in place, saying in one line why no thread was opened', async () => {
    const before = botTokenCalls(elsewhere).length;
    service.enqueue('chat', { stream: { text: 'Here, not in a thread.' } });
    const { interaction, outcome } = await chatElsewhere({ prompt: 'open a thread please', thread: true });
    expect(outcome.ok).toBe(true);
    expect(interaction.original!.content).toContain('Here, not in a thread.');
    expect(interaction.original!.content).toContain(english.say(NO_THREAD_HERE));
    expect(botTokenCalls(elsewhere).slice(before)).toEqual([]);
    expect(outcome.conversationId).toBe(userKey(ALICE, elsewhere));
  }, 40_000);

  it('keeps a long answer within the five follow-ups Discord allows, the whole of it in answer.md', async () => {
    const lines = Array.from({ length: 400 }, (_, i) => `Line ${i + 1} of a very long answer about lighthouses.`);
    const text = lines.join('\n');
    service.enqueue('chat', { stream: { text } });
    const { interaction, outcome } = await chatElsewhere({ prompt: 'tell me everything' });
    expect(outcome.ok).toBe(true);
    expect(interaction.followUps.length).toBeLessThanOrEqual(5);
    expect(discord.requests.filter((r) => r.path.includes(interaction.token) && r.status >= 400)).toEqual([]);
    expect(interaction.original!.content.startsWith('Line 1 of a very long answer')).toBe(true);
    const file = interaction.messages.flatMap((m) => m.attachments).find((a) => a.filename === 'answer.md');
    expect(file?.data.toString()).toBe(text);
    expect(outcome.conversationId).toBe(userKey(ALICE, elsewhere));
  }, 60_000);

  it('keeps each user’s conversation of their own install apart, and apart from the guild’s in the same channel', async () => {
    service.enqueue('chat', { stream: { text: 'Noted, Alice.' } });
    expect((await chatElsewhere({ prompt: 'alice-secret-42' })).outcome.conversationId).toBe(userKey(ALICE, elsewhere));
    service.enqueue('chat', { stream: { text: 'Hello Bob.' } });
    expect((await chatElsewhere({ prompt: 'bob asks' }, BOB)).outcome.conversationId).toBe(userKey(BOB, elsewhere));
    expect(asked(service.chatRequests().at(-1)!)).not.toContain('alice-secret-42');
    service.enqueue('chat', { stream: { text: 'You said it.' } });
    await chatElsewhere({ prompt: 'what did I say?' });
    expect(asked(service.chatRequests().at(-1)!)).toContain('alice-secret-42');

    // The guild install's conversation in a channel, then the bot removed: Alice's own install there starts apart.
    const shared = discord.addChannel('shared');
    const guildKey = `discord:${discord.guildId}:${shared.id}`;
    const guildDone = outcomeIn(shared, 'chat');
    discord.dispatchInteraction({
      command: 'chat',
      channelId: shared.id,
      user: ALICE,
      options: { prompt: 'guild-only-7' },
    });
    expect(await guildDone).toMatchObject({ ok: true, conversationId: guildKey });
    discord.removeBotFromGuild();
    service.enqueue('chat', { stream: { text: 'Fresh start.' } });
    const { outcome } = await chatElsewhere({ prompt: 'from my own install' }, ALICE, shared);
    expect(outcome).toMatchObject({ ok: true, conversationId: userKey(ALICE, shared) });
    expect(asked(service.chatRequests().at(-1)!)).not.toContain('guild-only-7');
    // The bot left the server: the server's data is purged (issue 41, platforms/discord/guild-leave.ts); Alice's own
    // install's conversation there is hers, not the server's, and stays.
    await testBot.bot.discord!.guildLeave.purging(discord.guildId);
    expect(await testBot.bot.core.history.get(guildKey)).toEqual([]);
    expect(JSON.stringify(await testBot.bot.core.history.get(userKey(ALICE, shared)))).toContain('from my own install');
  }, 90_000);
});
