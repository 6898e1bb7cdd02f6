/**
 * End-to-end on Discord, threads for conversations (issue 19, item 6, and item 2's Discord
 * half): `/chat thread:true` shows its question, opens a thread on it and answers there; in a
 * thread the bot opened, a person's message continues the conversation without a mention
 * (with the Message Content intent), or needs one (without); `/settings auto_thread` makes a
 * mention open a thread; without Create Public Threads the answer comes in place with a line
 * saying why; a mention in a thread the bot keeps no history for reads the thread. Real
 * discord.js against FakeDiscord and FakeService.
 *
 * Two bots, each with its own fakes: with the Message Content intent, and without it.
 */

import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { english } from '../../src/core/i18n/words.ts';
import { FOLLOW_UPS_NEED_MENTION, NO_THREAD } from '../../src/platforms/discord/threads.ts';
import { BOT_PERMISSIONS, Intent, P } from '../fakes/discord/constants.ts';
import type { FakeChannel, FakeDiscord, FakeInteraction, FakeMessage } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

/** What one describe block's bot and fakes are. */
interface Setup {
  service: FakeService;
  discord: FakeDiscord;
  testBot: TestBot;
}

/** Starts fakes and a bot for a describe block; the block reads them from the returned object once started. */
function setUp(contentIntent: boolean): Setup {
  const setup = {} as Setup;
  useE2E(
    {
      discord: contentIntent ? { privilegedIntents: Intent.MessageContent } : {},
      bot: { env: contentIntent ? { DISCORD_MESSAGE_CONTENT: 'true' } : {} },
      resetServiceAfterEach: true,
    },
    async (e2e) => {
      setup.service = e2e.service;
      setup.discord = e2e.discord;
      setup.testBot = e2e.bot;
      await e2e.discord.waitForReady();
    },
  );
  return setup;
}

const ALICE = { id: '420000000000000001', username: 'alice' };
const BOB = { id: '420000000000000002', username: 'bob' };
/** Another app's bot user. */
const ROBOT = { id: '420000000000000003', username: 'robot', bot: true };

/** A conversation key of the fake's guild. */
const keyOf = (s: Setup, channelId: string) => `discord:${s.discord.guildId}:${channelId}`;

/** Resolves with the next `count` outcomes of a command (`mention` for messages) in a conversation. */
function done(s: Setup, command: string, channelId: string, count = 1): Promise<CommandOutcome[]> {
  const conversationId = keyOf(s, channelId);
  return s.testBot.outcomes((o) => o.command === command && o.conversationId === conversationId, count, 60_000);
}

/** Resolves with the next outcome of a command anywhere. */
function next(s: Setup, command: string): Promise<CommandOutcome[]> {
  return s.testBot.outcomes((o) => o.command === command, 1, 60_000);
}

/** Runs `/chat` with options and waits until it is done. */
async function chat(
  s: Setup,
  channel: FakeChannel,
  options: Record<string, string | boolean>,
): Promise<{ interaction: FakeInteraction; outcome: CommandOutcome }> {
  const finished = next(s, 'chat');
  const interaction = s.discord.dispatchInteraction({ command: 'chat', channelId: channel.id, options });
  const [outcome] = await finished;
  return { interaction, outcome: outcome! };
}

/** Posts a user's message and waits for the bot's answer to it (a mention's outcome in `conversation`). */
async function answered(
  s: Setup,
  conversation: string,
  options: Parameters<FakeDiscord['postUserMessage']>[0],
): Promise<FakeMessage> {
  const finished = done(s, 'mention', conversation);
  const message = s.discord.postUserMessage(options);
  const [outcome] = await finished;
  expect(outcome!.ok).toBe(true);
  return message;
}

/** The bot's messages in a channel. */
const botMessages = (s: Setup, channelId: string) =>
  s.discord.messagesIn(channelId).filter((m) => m.author.id === s.discord.botUser.id && !m.deleted && !m.ephemeral);

describe('Discord threads, with the Message Content intent', () => {
  const s = setUp(true);

  it('/chat thread:true shows the question, opens a thread on it and answers inside; a follow-up there without a mention is answered with the exchange', async () => {
    const channel = s.discord.addChannel('thread-chat');
    s.service.enqueue('chat', { stream: { pieces: ['Paris is ', 'the capital.'] } });
    const { interaction, outcome } = await chat(s, channel, {
      prompt: 'What is the capital of France?',
      thread: true,
    });
    const question = interaction.original!;
    expect(outcome).toMatchObject({ ok: true });
    expect(question.content).toContain('asked:');
    expect(question.content).toContain('> What is the capital of France?');
    expect(question.pinged).toEqual({ everyone: false, users: [], roles: [] });
    const thread = s.discord.channel(question.id)!;
    expect(thread).toMatchObject({
      type: 11,
      parentId: channel.id,
      ownerId: s.discord.botUser.id,
      name: 'What is the capital of France?',
    });
    expect(outcome.conversationId).toBe(keyOf(s, thread.id));
    expect(botMessages(s, thread.id).map((m) => m.content)).toEqual(['Paris is the capital.']);
    // No follow-up in the parent channel: the answer is in the thread only.
    expect(interaction.followUps).toEqual([]);

    const before = s.service.chatRequests().length;
    s.service.enqueue('chat', { stream: { pieces: ['About 2.1 million.'] } });
    const followUp = await answered(s, thread.id, {
      channelId: thread.id,
      content: 'And how many people live there?',
      author: ALICE,
    });
    const [request, ...more] = s.service.chatRequests().slice(before);
    expect(more).toEqual([]);
    expect(request!.messages).toEqual([
      { role: 'user', content: 'What is the capital of France?' },
      { role: 'assistant', content: 'Paris is the capital.' },
      { role: 'user', content: 'And how many people live there?' },
    ]);
    const reply = botMessages(s, thread.id).find((m) => m.reference?.messageId === followUp.id);
    expect(reply?.content).toBe('About 2.1 million.');
  });

  it('shows the question pinging nobody; in a thread it opened, the bot ignores other bots and answers a message that mentions it once', async () => {
    const channel = s.discord.addChannel('thread-once');
    const { interaction } = await chat(s, channel, {
      prompt: 'Start here, @everyone <@420000000000000001>',
      thread: true,
    });
    // The question is shown as asked, pinging nobody.
    expect(interaction.original!.content).toContain('> Start here, @everyone <@420000000000000001>');
    expect(interaction.original!.pinged).toEqual({ everyone: false, users: [], roles: [] });
    const thread = interaction.original!.id;
    const before = s.service.chatRequests().length;
    s.discord.postUserMessage({ channelId: thread, content: 'beep, I am a bot', author: ROBOT });
    await answered(s, thread, { channelId: thread, content: `<@${s.discord.botUser.id}> hello again`, author: ALICE });
    const requests = s.service.chatRequests().slice(before);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.messages.at(-1)).toEqual({ role: 'user', content: 'hello again' });
    expect(JSON.stringify(requests[0]!.messages)).not.toContain('beep');
  });

  it('with /settings auto_thread on, a mention is answered in a new thread on it, and the thread continues without a mention; thread:false answers in place', async () => {
    const channel = s.discord.addChannel('auto-thread');
    const set = next(s, 'settings');
    s.discord.dispatchInteraction({
      command: 'settings',
      channelId: channel.id,
      admin: true,
      options: { auto_thread: true },
    });
    expect((await set)[0]).toMatchObject({ ok: true });
    s.service.enqueue('chat', { stream: { pieces: ['Hi Alice.'] } });
    const mention = s.discord.postUserMessage({
      channelId: channel.id,
      content: `<@${s.discord.botUser.id}> hello there`,
      author: ALICE,
    });
    const [outcome] = await done(s, 'mention', mention.id);
    expect(outcome).toMatchObject({ ok: true });
    expect(s.discord.channel(mention.id)).toMatchObject({ type: 11, parentId: channel.id, name: 'hello there' });
    expect(botMessages(s, mention.id).map((m) => m.content)).toEqual(['Hi Alice.']);
    expect(botMessages(s, channel.id)).toEqual([]);

    const before = s.service.chatRequests().length;
    await answered(s, mention.id, { channelId: mention.id, content: 'how are you?', author: ALICE });
    expect(s.service.chatRequests().slice(before)[0]!.messages).toEqual([
      { role: 'user', content: 'hello there' },
      { role: 'assistant', content: 'Hi Alice.' },
      { role: 'user', content: 'how are you?' },
    ]);

    const { interaction } = await chat(s, channel, { prompt: 'Here, please', thread: false });
    expect(interaction.original!.content).toBe('Echo: Here, please');
    expect(s.discord.channel(interaction.original!.id)).toBeUndefined();
  });

  it('without Create Public Threads, /chat thread:true and an auto_thread mention are answered in place with the sentence saying why', async () => {
    const channel = s.discord.addChannel('no-threads');
    s.discord.setBotPermissions(BOT_PERMISSIONS & ~P.CreatePublicThreads);
    try {
      const { interaction, outcome } = await chat(s, channel, { prompt: 'Where am I?', thread: true });
      expect(outcome).toMatchObject({ ok: true, conversationId: keyOf(s, channel.id) });
      const answer = interaction.original!;
      expect(answer.content.startsWith('Echo: Where am I?')).toBe(true);
      expect(answer.content).toContain(english.say(NO_THREAD.permission));
      expect(s.discord.channel(answer.id)).toBeUndefined();

      const set = next(s, 'settings');
      s.discord.dispatchInteraction({
        command: 'settings',
        channelId: channel.id,
        admin: true,
        options: { auto_thread: true },
      });
      await set;
      const mention = await answered(s, channel.id, {
        channelId: channel.id,
        content: `<@${s.discord.botUser.id}> and now?`,
        author: ALICE,
      });
      const reply = botMessages(s, channel.id).find((m) => m.reference?.messageId === mention.id);
      expect(reply?.content).toContain(english.say(NO_THREAD.permission));
      expect(s.discord.channel(mention.id)).toBeUndefined();
    } finally {
      s.discord.setBotPermissions(BOT_PERMISSIONS);
    }
  });

  it('after /forget in a thread, a mention there does not read back what came before the forget', async () => {
    const channel = s.discord.addChannel('forget-thread');
    const thread = s.discord.addThread(channel.id, 'forgetful');
    s.discord.postUserMessage({ channelId: thread.id, content: 'my secret is 42', author: ALICE });
    await answered(s, thread.id, {
      channelId: thread.id,
      content: `<@${s.discord.botUser.id}> remember it`,
      author: ALICE,
    });
    const forgot = next(s, 'forget');
    s.discord.dispatchInteraction({ command: 'forget', channelId: thread.id, admin: true });
    expect((await forgot)[0]).toMatchObject({ ok: true, conversationId: keyOf(s, thread.id) });
    const before = s.service.chatRequests().length;
    await answered(s, thread.id, {
      channelId: thread.id,
      content: `<@${s.discord.botUser.id}> what is it?`,
      author: ALICE,
    });
    expect(s.service.chatRequests().slice(before)[0]!.messages).toEqual([{ role: 'user', content: 'what is it?' }]);
  });

  it('a /chat thread:true the service refuses keeps its question and thread, and tells the asker alone why', async () => {
    const channel = s.discord.addChannel('thread-refused');
    s.service.enqueue('chat', { status: 401 });
    const { interaction, outcome } = await chat(s, channel, { prompt: 'Will this work?', thread: true });
    expect(outcome).toMatchObject({ ok: false, errorCode: 'authentication' });
    expect(interaction.original!.content).toContain('> Will this work?');
    const thread = interaction.original!.id;
    expect(s.discord.channel(thread)).toMatchObject({ type: 11 });
    expect(botMessages(s, thread)).toEqual([]);
    const notices = interaction.followUps.filter((m) => m.ephemeral);
    expect(notices.map((m) => m.content)).toEqual([expect.stringMatching(/^The generation service refused/)]);
  });

  it('/chat thread:true inside a thread is answered there, saying why no new thread was opened', async () => {
    const channel = s.discord.addChannel('thread-in-thread');
    const thread = s.discord.addThread(channel.id, 'already');
    const { interaction, outcome } = await chat(s, thread, { prompt: 'Deeper?', thread: true });
    expect(outcome).toMatchObject({ ok: true, conversationId: keyOf(s, thread.id) });
    expect(interaction.original!.content).toBe(`Echo: Deeper?\n\n_⚠️ ${english.say(NO_THREAD.inThread)}_`);
    expect(s.discord.channel(interaction.original!.id)).toBeUndefined();
  });

  it("a mention in a people's thread the bot has no history for carries the thread's earlier messages, named, from the message it was started from", async () => {
    const channel = s.discord.addChannel('people-thread');
    const start = s.discord.postUserMessage({ channelId: channel.id, content: 'Picnic this weekend?', author: BOB });
    const thread = s.discord.addThread(channel.id, 'plans', { fromMessage: start.id });
    s.discord.postUserMessage({ channelId: thread.id, content: 'Shall we meet on Friday?', author: ALICE });
    s.discord.postUserMessage({ channelId: thread.id, content: 'Saturday suits me better.', author: BOB });
    const before = s.service.chatRequests().length;
    await answered(s, thread.id, {
      channelId: thread.id,
      content: `<@${s.discord.botUser.id}> summarize this thread`,
      author: ALICE,
    });
    expect(s.service.chatRequests().slice(before)[0]!.messages).toEqual([
      { role: 'user', content: 'bob: Picnic this weekend?' },
      { role: 'user', content: 'alice: Shall we meet on Friday?' },
      { role: 'user', content: 'bob: Saturday suits me better.' },
      { role: 'user', content: 'summarize this thread' },
    ]);
    // Once the thread has history, the next mention uses it (the thread is not read again).
    const again = s.service.chatRequests().length;
    await answered(s, thread.id, { channelId: thread.id, content: `<@${s.discord.botUser.id}> thanks`, author: BOB });
    const messages = s.service.chatRequests().slice(again)[0]!.messages;
    expect(messages.map((m) => m.content)).toEqual(['summarize this thread', 'Echo: summarize this thread', 'thanks']);
  });
});

describe('Discord threads, without the Message Content intent', () => {
  const s = setUp(false);

  it('says in the new thread that follow-ups need a mention; a follow-up without one is not answered, one with a mention is, with the exchange', async () => {
    const channel = s.discord.addChannel('thread-no-intent');
    const { interaction } = await chat(s, channel, { prompt: 'Tell me a joke', thread: true });
    const thread = interaction.original!.id;
    const [answer] = botMessages(s, thread);
    expect(answer!.content.startsWith('Echo: Tell me a joke')).toBe(true);
    expect(answer!.content).toContain(english.say(FOLLOW_UPS_NEED_MENTION));

    const before = s.service.chatRequests().length;
    s.discord.postUserMessage({ channelId: thread, content: 'another one', author: ALICE });
    await answered(s, thread, { channelId: thread, content: `<@${s.discord.botUser.id}> one more`, author: ALICE });
    const requests = s.service.chatRequests().slice(before);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.messages).toEqual([
      { role: 'user', content: 'Tell me a joke' },
      { role: 'assistant', content: 'Echo: Tell me a joke' },
      { role: 'user', content: 'one more' },
    ]);
    // The answer to the mention does not repeat the line: it is said once, when the thread opens.
    expect(botMessages(s, thread).at(-1)!.content).toBe('Echo: one more');
  });

  it("a mention in a people's thread skips the messages Discord hid from the bot and names their authors once", async () => {
    const channel = s.discord.addChannel('hidden-thread');
    const thread = s.discord.addThread(channel.id, 'secrets');
    s.discord.postUserMessage({ channelId: thread.id, content: 'first', author: BOB });
    s.discord.postUserMessage({ channelId: thread.id, content: 'second', author: BOB });
    const before = s.service.chatRequests().length;
    const mention = await answered(s, thread.id, {
      channelId: thread.id,
      content: `<@${s.discord.botUser.id}> what did bob say?`,
      author: ALICE,
    });
    expect(s.service.chatRequests().slice(before)[0]!.messages).toEqual([
      { role: 'user', content: 'what did bob say?' },
    ]);
    const reply = botMessages(s, thread.id).find((m) => m.reference?.messageId === mention.id)!;
    expect(reply.content).toContain('Not read: 2 messages of the conversation, by bob');
  });
});
