/**
 * End-to-end on Discord, reply chains (issue 19, item 1): a mention that replies to a message
 * builds its conversation from the reply chain, oldest first, instead of the channel's
 * history. The bot's own answers are `assistant` turns; other people's messages `user` turns
 * prefixed with their display name ("alice: text"); images of a message in the chain go with
 * its turn as `image_url` parts. Real discord.js against FakeDiscord and FakeService.
 *
 * Three bots, each with its own fakes: with the Message Content intent (the chain in full, and
 * 30 concurrent mentions in documented rate-limit mode), with REPLY_CHAIN_MAX=2, and without
 * the intent (another person's message that did not mention the bot is skipped and named; a
 * chain whose head is a mention the bot never answered is read as a chain).
 */

import type { TextChannel } from 'discord.js';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { Intent } from '../fakes/discord/constants.ts';
import type { FakeChannel, FakeDiscord, FakeMessage, PostUserMessageOptions } from '../fakes/discord.ts';
import type { ContentPart, FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

/** What one describe block's bot and fakes are. */
interface Setup {
  service: FakeService;
  discord: FakeDiscord;
  testBot: TestBot;
}

/** Starts fakes and a bot for a describe block; the block reads them from the returned object once started. */
function setUp(env: Record<string, string>, contentIntent: boolean): Setup {
  const setup = {} as Setup;
  useE2E(
    {
      discord: contentIntent ? { privilegedIntents: Intent.MessageContent } : {},
      bot: { env: { DEFAULT_VISION_MODEL: 'fake-vision', ...env } },
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

/** Resolves with the next `count` mention outcomes in a channel. */
function mentionsDone(s: Setup, channel: FakeChannel, count = 1): Promise<CommandOutcome[]> {
  const conversationId = `discord:${channel.guildId}:${channel.id}`;
  return s.testBot.outcomes((o) => o.command === 'mention' && o.conversationId === conversationId, count, 90_000);
}

/** Posts a message that the bot answers, and waits for the answer. */
async function postAnswered(s: Setup, channel: FakeChannel, options: PostUserMessageOptions): Promise<FakeMessage> {
  const done = mentionsDone(s, channel);
  const message = s.discord.postUserMessage(options);
  await done;
  return message;
}

/** The bot's answer to a message. */
function answerTo(s: Setup, channelId: string, messageId: string): FakeMessage {
  const answer = s.discord
    .messagesIn(channelId)
    .find((m) => m.author.id === s.discord.botUser.id && m.reference?.messageId === messageId);
  expect(answer, `the answer to ${messageId}`).toBeDefined();
  return answer!;
}

const ALICE = { id: '410000000000000001', username: 'alice' };
const BOB = { id: '410000000000000002', username: 'bob' };

/** A solid PNG. */
const png = (background: string) =>
  sharp({ create: { width: 64, height: 48, channels: 3, background } })
    .png()
    .toBuffer();

/**
 * The chain of 4: alice mentions the bot (m1), the bot answers (m2), bob replies to the answer
 * with a photo (m3; the bot answers him too, off the chain), alice replies to bob without
 * pinging anyone (m4, not addressed to the bot).
 */
async function buildChain(s: Setup, channel: FakeChannel) {
  const mention = `<@${s.discord.botUser.id}>`;
  s.service.enqueue('chat', { stream: { pieces: ['What a fine name.'] } });
  const m1 = await postAnswered(s, channel, {
    channelId: channel.id,
    content: `${mention} my cat is called Tom`,
    author: ALICE,
  });
  const m2 = answerTo(s, channel.id, m1.id);
  expect(m2.content).toBe('What a fine name.');
  const m3 = await postAnswered(s, channel, {
    channelId: channel.id,
    content: 'this is him',
    author: BOB,
    replyTo: m2.id,
    attachments: [{ filename: 'tom.png', data: await png('#e07020') }],
  });
  const m4 = s.discord.postUserMessage({
    channelId: channel.id,
    content: 'he looks sleepy',
    author: ALICE,
    replyTo: m3.id,
    pingRepliedAuthor: false,
  });
  return { m1, m2, m3, m4 };
}

/** The `image_url` parts of a content. */
const imageParts = (content: string | ContentPart[] | undefined) =>
  Array.isArray(content) ? content.filter((p) => p.type === 'image_url') : [];

describe('Discord reply chains, with the Message Content intent', () => {
  const s = setUp({ DISCORD_MESSAGE_CONTENT: 'true' }, true);

  it('a mention replying to a chain of 4 (user, bot answer, another user with an image, user) sends those turns in order, the image as an image_url part, instead of the channel history', async () => {
    const channel = s.discord.addChannel('chain-four');
    const { m4 } = await buildChain(s, channel);
    const before = s.service.chatRequests().length;
    const question = await postAnswered(s, channel, {
      channelId: channel.id,
      content: `<@${s.discord.botUser.id}> what colour is he?`,
      author: ALICE,
      replyTo: m4.id,
      pingRepliedAuthor: false,
    });
    const [request, ...more] = s.service.chatRequests().slice(before);
    expect(more).toEqual([]);
    expect(request!.model).toBe('fake-vision');
    const messages = request!.messages;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'user', 'user']);
    expect(messages[0]).toEqual({ role: 'user', content: 'alice: my cat is called Tom' });
    expect(messages[1]).toEqual({ role: 'assistant', content: 'What a fine name.' });
    const withImage = messages[2]!.content as ContentPart[];
    expect(withImage[0]).toEqual({ type: 'text', text: 'bob: this is him' });
    expect(imageParts(withImage)).toHaveLength(1);
    expect(imageParts(withImage)[0]!.image_url.url).toMatch(/^data:image\/(png|jpeg);base64,/);
    expect(messages[3]).toEqual({ role: 'user', content: 'alice: he looks sleepy' });
    expect(messages[4]).toEqual({ role: 'user', content: 'what colour is he?' });
    // No turn twice: bob's own exchange with the bot (in the channel's history) is not sent.
    expect(JSON.stringify(messages)).not.toContain('Echo:');
    expect(answerTo(s, channel.id, question.id).content).toBe('Echo: what colour is he?');
  });

  it('30 concurrent mentions replying to a chain, its messages read through REST (cache emptied), draw no 429 in documented rate-limit mode', {
    timeout: 120_000,
  }, async () => {
    s.discord.setRateLimitMode('documented');
    const channel = s.discord.addChannel('chain-thirty');
    const { m4 } = await buildChain(s, channel);
    // As after a restart: discord.js knows none of the chain's messages, they are fetched.
    const cached = s.testBot.bot.discord!.client.channels.cache.get(channel.id) as TextChannel;
    cached.messages.cache.clear();
    const requestsBefore = s.discord.requests.length;
    const done = mentionsDone(s, channel, 30);
    for (let i = 0; i < 30; i++) {
      s.discord.postUserMessage({
        channelId: channel.id,
        content: `<@${s.discord.botUser.id}> question ${i}`,
        author: { id: String(420000000000000000n + BigInt(i)), username: `asker${i}` },
        replyTo: m4.id,
        pingRepliedAuthor: false,
      });
    }
    const outcomes = await done;
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    const responses = s.discord.requests.slice(requestsBefore);
    expect(responses.filter((r) => r.status === 429).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(s.discord.rateLimits.filter((r) => r.channelId === channel.id)).toEqual([]);
    // The chain was read through REST, one message at a time.
    expect(responses.filter((r) => r.method === 'GET' && /\/messages\/\d+$/.test(r.path)).length).toBeGreaterThan(0);
    const last = s.service.chatRequests().at(-1)!;
    expect(last.messages.slice(0, 4).map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'user']);
  });
});

describe('Discord reply chains, REPLY_CHAIN_MAX=2', () => {
  const s = setUp({ DISCORD_MESSAGE_CONTENT: 'true', REPLY_CHAIN_MAX: '2' }, true);

  it('sends only the newest two messages of the chain', async () => {
    const channel = s.discord.addChannel('chain-max');
    const { m4 } = await buildChain(s, channel);
    const before = s.service.chatRequests().length;
    await postAnswered(s, channel, {
      channelId: channel.id,
      content: `<@${s.discord.botUser.id}> and now?`,
      author: ALICE,
      replyTo: m4.id,
      pingRepliedAuthor: false,
    });
    const [request] = s.service.chatRequests().slice(before);
    const messages = request!.messages;
    expect(messages).toHaveLength(3);
    expect((messages[0]!.content as ContentPart[])[0]).toEqual({ type: 'text', text: 'bob: this is him' });
    expect(messages.slice(1)).toEqual([
      { role: 'user', content: 'alice: he looks sleepy' },
      { role: 'user', content: 'and now?' },
    ]);
  });
});

describe('Discord reply chains, without the Message Content intent', () => {
  const s = setUp({}, false);

  it("skips another person's message that did not mention the bot (Discord sends it empty) and names it once in the warning line", async () => {
    const channel = s.discord.addChannel('chain-hidden');
    const mention = `<@${s.discord.botUser.id}>`;
    s.service.enqueue('chat', { stream: { pieces: ['Hello, alice.'] } });
    const m1 = await postAnswered(s, channel, { channelId: channel.id, content: `${mention} hi`, author: ALICE });
    const m2 = answerTo(s, channel.id, m1.id);
    // bob replies to the bot's answer without pinging it: Discord hides his text from the bot (it says so to him).
    const m3 = await postAnswered(s, channel, {
      channelId: channel.id,
      content: 'a secret',
      author: BOB,
      replyTo: m2.id,
      pingRepliedAuthor: false,
    });
    const before = s.service.chatRequests().length;
    const question = await postAnswered(s, channel, {
      channelId: channel.id,
      content: `${mention} what did bob say?`,
      author: ALICE,
      replyTo: m3.id,
      pingRepliedAuthor: false,
    });
    const [request] = s.service.chatRequests().slice(before);
    expect(request!.messages).toEqual([
      { role: 'user', content: 'alice: hi' },
      { role: 'assistant', content: 'Hello, alice.' },
      { role: 'user', content: 'what did bob say?' },
    ]);
    const answer = answerTo(s, channel.id, question.id).content;
    expect(answer.startsWith('Echo: what did bob say?')).toBe(true);
    const warnings = answer.split('\n').filter((line) => line.includes('⚠️'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/bob/);
    expect(warnings[0]!.split('bob').length - 1).toBe(1);
    expect(warnings[0]).toMatch(/Message Content/);
  });

  it('reads a chain whose head is a mention the bot never answered (sent while it was down, past the catch-up age) as a chain', async () => {
    const channel = s.discord.addChannel('chain-unanswered');
    const mention = `<@${s.discord.botUser.id}>`;
    // The gateway is down while alice mentions the bot, 20 minutes ago: the bot never sees it
    // (a resumed session is not caught up, and the message is older than CATCH_UP_MAX_AGE_MINUTES).
    const resumed = s.discord.waitFor('resume');
    s.discord.dropGateway({ close: 4000, whileDown: 'refuse' });
    const head = s.discord.postUserMessage({
      channelId: channel.id,
      content: `${mention} is the ferry running on Sunday?`,
      author: ALICE,
      at: Date.now() - 20 * 60_000,
    });
    s.discord.restoreGateway();
    await resumed;
    const before = s.service.chatRequests().length;
    const question = await postAnswered(s, channel, {
      channelId: channel.id,
      content: `${mention} can you answer her?`,
      author: BOB,
      replyTo: head.id,
      pingRepliedAuthor: false,
    });
    const [request, ...more] = s.service.chatRequests().slice(before);
    expect(more).toEqual([]);
    expect(request!.messages).toEqual([
      { role: 'user', content: 'alice: is the ferry running on Sunday?' },
      { role: 'user', content: 'can you answer her?' },
    ]);
    expect(answerTo(s, channel.id, question.id).content).toBe('Echo: can you answer her?');
    // Nothing answered the head itself.
    expect(s.discord.messagesIn(channel.id).filter((m) => m.reference?.messageId === head.id)).toEqual([question]);
  });
});
