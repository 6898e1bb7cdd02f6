/**
 * End-to-end on Discord, a long answer's notice (issue 39 item 4): an answer streams into a
 * message edited in place, and Discord notifies nobody of an edit, so an answer that took longer
 * than NOTIFY_AFTER_SECONDS (2 s here) ends with a new message that mentions its asker, and
 * pings them alone (`allowed_mentions` naming only them: `@everyone`, roles and other users in
 * the model's text stay inert). A quicker answer gets none, nor does a stopped one, nor any in
 * a channel whose admins set `/settings notify:false`. The whole bot with discord.js unmodified,
 * against FakeDiscord (which records whom each write pinged) and FakeService (which paces the
 * stream).
 */
import { describe, expect, it } from 'vitest';
import { messageActions } from '../../commands/index.ts';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeChannel, FakeDiscord, FakeMessage, FakeWrite, Json } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

/** The notice's words after the asker's mention (features/answer-notice.ts), as the user reads them. */
const ANSWER_READY = 'your answer is ready ↑';

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: {}, bot: { env: { NOTIFY_AFTER_SECONDS: '2' } }, resetServiceAfterEach: true }, (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
});

/** Members without admin rights. */
const ALICE = { id: '1290000000000000601', username: 'alice' };
const BOB = { id: '1290000000000000602', username: 'bob' };
/** A role id the model's text names. */
const ROLE = '1290000000000000699';

/** A stream well past the bound (about 3.6 s: 12 pieces, 300 ms apart) whose text tries to ping everyone, Bob and a role. */
const SLOW = {
  pieces: [
    'Hello @everyone and @here, ',
    `<@${BOB.id}> `,
    `and <@&${ROLE}>: `,
    ...Array.from({ length: 9 }, (_, i) => `part${i + 1} `),
  ],
  chunkDelayMs: 300,
};
const SLOW_TEXT = SLOW.pieces.join('');

const conversationOf = (channel: FakeChannel) => `discord:${channel.guildId ?? 'dm'}:${channel.id}`;

/** Resolves with the next outcome of `command` in the channel's conversation. */
async function next(command: string, channel: FakeChannel): Promise<CommandOutcome> {
  const conversationId = conversationOf(channel);
  const [outcome] = await testBot.outcomes((o) => o.command === command && o.conversationId === conversationId);
  return outcome!;
}

/** A new channel whose message budget no answer of these tests reaches. */
function channelFor(name: string): FakeChannel {
  const channel = discord.addChannel(name);
  discord.setMessageBudget(channel.id, { limit: 1000, windowMs: 1000 });
  return channel;
}

/** The writes in a channel that pinged anyone. */
const pingingWrites = (channel: FakeChannel): FakeWrite[] =>
  discord.writes.filter(
    (w) => w.channelId === channel.id && (w.pinged.everyone || w.pinged.users.length > 0 || w.pinged.roles.length > 0),
  );

/** The bot's messages in a channel, in creation order. */
const botMessagesIn = (channel: FakeChannel): FakeMessage[] =>
  discord.messagesIn(channel.id).filter((m) => m.author.id === discord.botUser.id && !m.ephemeral);

/**
 * Checks that the channel's one pinging write is the notice: a new message (a create, which
 * Discord notifies for; never an edit) of the bot's own words, mentioning `user` and pinging
 * them alone, `allowed_mentions` naming only them.
 * @returns the notice message.
 */
function expectNotice(channel: FakeChannel, user: { id: string }, words = ANSWER_READY): FakeMessage {
  const [notice, ...others] = pingingWrites(channel);
  expect(others).toEqual([]);
  expect(notice).toMatchObject({
    kind: 'create',
    content: `<@${user.id}> ${words}`,
    pinged: { users: [user.id], roles: [], everyone: false },
    allowedMentions: { parse: [], users: [user.id], replied_user: false },
  });
  return discord.message(notice!.messageId)!;
}

/** The custom ids of a message's buttons. */
const buttonIds = (message: FakeMessage) =>
  message.components.flatMap((row) => (row.components as Json[]).map((b) => String(b.custom_id)));

describe('a long answer notifies its asker on Discord', () => {
  it('/chat: an answer under NOTIFY_AFTER_SECONDS ends quietly; one past it ends with a follow-up that pings the asker alone, while the answer itself (@everyone, <@bob>, a role) pinged nobody', async () => {
    const channel = channelFor('notify-chat');
    service.enqueue('chat', { stream: { text: 'Quick answer.' } });
    let done = next('chat', channel);
    const quick = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'chat',
      options: { prompt: 'Quick?' },
      user: ALICE,
    });
    expect((await done).ok).toBe(true);
    expect(quick.messages.map((m) => m.content)).toEqual(['Quick answer.']);

    service.enqueue('chat', { stream: SLOW });
    done = next('chat', channel);
    const slow = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'chat',
      options: { prompt: 'Take your time' },
      user: ALICE,
    });
    expect((await done).ok).toBe(true);
    const [answer, notice, ...more] = slow.messages;
    expect(more).toEqual([]);
    expect(answer!.content).toBe(SLOW_TEXT);
    // Every write of the answer, its final one included, pinged nobody.
    expect(answer!.revisions.every((r) => r.pinged.users.length === 0 && !r.pinged.everyone)).toBe(true);
    expect(answer!.revisions.every((r) => r.pinged.roles.length === 0)).toBe(true);
    expect(expectNotice(channel, ALICE)).toBe(notice);
    expect(notice!.kind).toBe('followup');
    // Nothing of the model's in it.
    expect(notice!.content).not.toContain('part');
  }, 20_000);

  it('an answer past the bound that a fault cut off (its last line says so) ends with a notice that it ended early', async () => {
    const channel = channelFor('notify-cut');
    service.enqueue('chat', { stream: { ...SLOW, dropAfterChunks: 11 } });
    const done = next('chat', channel);
    const cut = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'chat',
      options: { prompt: 'Go on' },
      user: ALICE,
    });
    expect(await done).toMatchObject({ ok: false });
    const [answer, notice, ...more] = cut.messages;
    expect(more).toEqual([]);
    expect(answer!.content).toMatch(/^Hello @everyone[\s\S]*part\d+ \n\n⚠️ The answer was cut off/);
    expect(expectNotice(channel, ALICE, 'your answer ended early ↑ (its last line says why)')).toBe(notice);
  }, 20_000);

  it('a mention: the notice follows the answer in the channel and pings its author alone', async () => {
    const channel = channelFor('notify-mention');
    service.enqueue('chat', { stream: SLOW });
    const done = next('mention', channel);
    discord.postUserMessage({
      channelId: channel.id,
      content: `<@${discord.botUser.id}> tell me slowly`,
      author: ALICE,
    });
    expect((await done).ok).toBe(true);
    const [answer, notice, ...more] = botMessagesIn(channel);
    expect(more).toEqual([]);
    expect(answer!.content).toBe(SLOW_TEXT);
    expect(expectNotice(channel, ALICE)).toBe(notice);
    expect(notice!.kind).toBe('channel');
  }, 20_000);

  it('a message action (Summarize): the notice follows its answer, a reply to the chosen message, and pings the user of the action alone, not its author', async () => {
    const channel = channelFor('notify-action');
    const target = discord.postUserMessage({
      channelId: channel.id,
      content: 'A long report to summarize.',
      author: BOB,
    });
    const summarize = messageActions.find((a) => a.id === 'summarize_message')!;
    service.enqueue('chat', { stream: SLOW });
    const done = next(summarize.id, channel);
    discord.dispatchMessageCommand({ command: summarize.name, messageId: target.id, user: ALICE });
    expect((await done).ok).toBe(true);
    const [answer, notice, ...more] = botMessagesIn(channel);
    expect(more).toEqual([]);
    expect(answer!.reference?.messageId).toBe(target.id);
    expect(answer!.content).toBe(SLOW_TEXT);
    expect(expectNotice(channel, ALICE)).toBe(notice);
  }, 20_000);

  it('Regenerate: the first, quick answer ends quietly; the new one, which takes long, notifies whoever pressed (they asked for it)', async () => {
    const channel = channelFor('notify-regenerate');
    service.enqueue('chat', { stream: { text: 'First take.' } });
    let done = next('chat', channel);
    const asked = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'chat',
      options: { prompt: 'A take' },
      user: BOB,
    });
    expect((await done).ok).toBe(true);
    const message = asked.original!;
    const regenerate = buttonIds(message).find((id) => id.startsWith('regenerate:'))!;
    expect(regenerate).toBeDefined();

    service.enqueue('chat', { stream: SLOW });
    done = next('regenerate:button', channel);
    const press = discord.pressButton({ messageId: message.id, customId: regenerate, user: BOB });
    expect((await done).ok).toBe(true);
    expect(message.content).toBe(SLOW_TEXT);
    const notice = expectNotice(channel, BOB);
    expect(press.followUps).toEqual([notice]);
  }, 20_000);

  it('a stopped long answer notifies nobody (whoever stopped it was looking); /settings notify:false turns the notice off for the channel, reset:notify back on', async () => {
    const channel = channelFor('notify-settings');
    const long = { pieces: Array.from({ length: 40 }, (_, i) => `word${i + 1} `), chunkDelayMs: 150 };
    service.enqueue('chat', { stream: long });
    let done = next('chat', channel);
    const started = Date.now();
    const stopped = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'chat',
      options: { prompt: 'Count' },
      user: ALICE,
    });
    // Stopped once the bound has passed, while it still streams.
    await discord.waitFor(
      'write',
      (w) => w.interactionId === stopped.id && Date.now() - started > 2_500 && w.content.includes('word'),
      10_000,
    );
    const stop = buttonIds(stopped.original!).find((id) => id.startsWith('stop:'))!;
    discord.pressButton({ messageId: stopped.original!.id, customId: stop, user: ALICE });
    expect(await done).toMatchObject({ ok: false, errorCode: 'aborted' });
    expect(stopped.messages).toHaveLength(1);

    done = next('settings', channel);
    const off = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'settings',
      options: { notify: false },
      admin: true,
    });
    expect((await done).ok).toBe(true);
    const card = off.messages.find((m) => m.ephemeral)!.embeds[0] as { fields: Array<{ name: string; value: string }> };
    expect(card.fields.find((f) => f.name === 'notify')!.value).toBe('off — set for this channel');

    service.enqueue('chat', { stream: SLOW });
    done = next('chat', channel);
    const quiet = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'chat',
      options: { prompt: 'Take your time' },
      user: ALICE,
    });
    expect((await done).ok).toBe(true);
    expect(quiet.messages).toHaveLength(1);
    expect(pingingWrites(channel)).toEqual([]);

    done = next('settings', channel);
    discord.dispatchInteraction({
      channelId: channel.id,
      command: 'settings',
      options: { reset: 'notify' },
      admin: true,
    });
    expect((await done).ok).toBe(true);
    service.enqueue('chat', { stream: SLOW });
    done = next('chat', channel);
    const told = discord.dispatchInteraction({
      channelId: channel.id,
      command: 'chat',
      options: { prompt: 'Again, slowly' },
      user: ALICE,
    });
    expect((await done).ok).toBe(true);
    expect(told.messages).toHaveLength(2);
    expectNotice(channel, ALICE);
  }, 40_000);
});
