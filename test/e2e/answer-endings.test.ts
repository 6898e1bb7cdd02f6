/**
 * How a streamed answer ends, end to end on Discord (and a huge one on Slack too): every way
 * a stream can end leaves a readable message and a clean history — nothing empty or
 * whitespace-only is sent, an empty or filtered answer says why and stores nothing, a last
 * chunk with a finish_reason completes an answer without `[DONE]`, a stream cut off or gone
 * silent (keep-alives only) keeps its text with a note and stores nothing, and a 1 MiB answer
 * shows its first MAX_ANSWER_CHARS characters plus the whole as a file, without blocking the
 * event loop.
 */

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { FakeDiscord, FakeInteraction } from '../fakes/discord.ts';
import type { FakeService, StreamScript } from '../fakes/service.ts';
import { FakeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import { slackEnv, startTestBot, type TestBot } from './harness.ts';

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: {}, bot: { env: { STREAM_IDLE_TIMEOUT_MS: '1500' } } }, (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
});

/** Runs /chat in a channel of its own with a scripted stream; resolves when the bot is done. */
async function chatWith(
  name: string,
  stream: StreamScript,
): Promise<{ interaction: FakeInteraction; conversationId: string }> {
  const channel = discord.addChannel(name);
  discord.setMessageBudget(channel.id, { limit: 1000, windowMs: 1000 });
  const conversationId = `discord:${discord.guildId}:${channel.id}`;
  service.enqueue('chat', { stream });
  const done = testBot.outcomes((o) => o.conversationId === conversationId);
  const interaction = discord.dispatchInteraction({
    command: 'chat',
    options: { prompt: `test ${name}` },
    channelId: channel.id,
  });
  await done;
  return { interaction, conversationId };
}

const history = (conversationId: string) => testBot.bot.core.history.get(conversationId);

/** Requests Discord refused as an empty message (50006). */
const emptyRefusals = () => discord.requests.filter((r) => r.code === 50006);

describe('empty answers', () => {
  it.each([
    ['done-only', { pieces: [] }, '*(the model returned an empty answer)*'],
    ['whitespace', { pieces: ['  ', '\n', '\t '] }, '*(the model returned an empty answer)*'],
    [
      'filtered',
      { pieces: [], finishReason: 'content_filter' },
      "*(the model returned an empty answer: the service's content filter stopped it)*",
    ],
    [
      'tool-calls',
      { pieces: [], toolCalls: true },
      '*(the model returned an empty answer: the model asked to call a tool, which this bot does not do)*',
    ],
  ] as Array<[string, StreamScript, string]>)(
    '%s: says why, sends nothing empty or blank, stores nothing',
    async (name, stream, shown) => {
      const before = emptyRefusals().length;
      const { interaction, conversationId } = await chatWith(`empty-${name}`, stream);
      expect(interaction.original!.content).toBe(shown);
      expect(
        interaction.original!.revisions.filter((r) => r.via !== 'defer').every((r) => r.content.trim() !== ''),
      ).toBe(true);
      expect(emptyRefusals().length).toBe(before);
      expect(await history(conversationId)).toEqual([]);
    },
  );
});

describe('complete and cut answers', () => {
  it('a last chunk with finish_reason "stop" and then a closed connection (no [DONE]) completes the answer, stored whole', async () => {
    const { interaction, conversationId } = await chatWith('no-done', {
      pieces: ['A complete ', 'answer.'],
      omitDone: true,
    });
    expect(interaction.original!.content).toBe('A complete answer.');
    expect((await history(conversationId)).map((m) => m.content)).toEqual(['test no-done', 'A complete answer.']);
  });

  it('a filtered answer after some text keeps the text and says the filter stopped it', async () => {
    const { interaction, conversationId } = await chatWith('filtered-half', {
      pieces: ['The first half'],
      finishReason: 'content_filter',
    });
    expect(interaction.original!.content).toBe(
      "The first half\n\n_⚠️ The service's content filter stopped the answer here._",
    );
    expect((await history(conversationId))[1]!.content).toBe('The first half');
  });

  it('a connection closed mid-stream keeps the text with the reason and stores nothing', async () => {
    const { interaction, conversationId } = await chatWith('dropped', {
      pieces: ['Going ', 'well ', 'until ', 'here'],
      dropAfterChunks: 3,
    });
    expect(interaction.original!.content).toMatch(
      /^Going well \n\n⚠️ The answer was cut off because the generation service stopped sending\. Try again\. \(ref [2-9A-Z]{6}\)$/,
    );
    expect(await history(conversationId)).toEqual([]);
  });

  it('keep-alive comments after half an answer end it after STREAM_IDLE_TIMEOUT_MS with the text and a note, close the request, and store nothing', async () => {
    const { interaction, conversationId } = await chatWith('idle', {
      pieces: ['Half ', 'an ', 'answer'],
      stallAfterChunks: 3,
      keepAliveMs: 100,
    });
    // The bot ended the request: the fake saw the stream's connection close while it still sent comments.
    await expect.poll(() => service.openStreams, { timeout: 5_000 }).toBe(0);
    expect(interaction.original!.content).toMatch(
      /^Half an \n\n⚠️ The generation service stopped sending text for 2 s, so the answer ends here\. Try again\. \(ref [2-9A-Z]{6}\)$/,
    );
    expect(await history(conversationId)).toEqual([]);
  });
});

describe('a 1 MiB answer', () => {
  const huge = `# A very long answer\n\n${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(18_400)}`;
  // Pieces of 1,000 characters (about 1,000 chunks): the fake writes SSE a few bytes at a time.
  const pieces = Array.from({ length: Math.ceil(huge.length / 1000) }, (_, i) => huge.slice(i * 1000, (i + 1) * 1000));

  it('on Discord: the first 20,000 characters in messages of at most 2,000, the whole as answer.md, at most 20,000 characters stored, the event loop never blocked', async () => {
    expect(huge.length).toBeGreaterThan(1024 * 1024);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const { interaction, conversationId } = await chatWith('huge', { pieces, chunkDelayMs: 0 });
    delay.disable();
    expect(delay.percentile(99) / 1e6).toBeLessThan(100);
    const messages = interaction.messages.filter((m) => !m.ephemeral);
    const text = messages.filter((m) => m.attachments.length === 0).map((m) => m.content);
    expect(text.every((t) => t.length <= 2000)).toBe(true);
    expect(text.join('').length).toBeLessThan(20_000 + 2_000);
    const files = messages.flatMap((m) => m.attachments);
    expect(files.map((f) => f.filename)).toEqual(['answer.md']);
    expect(files[0]!.data.toString('utf8')).toBe(huge);
    expect(text.at(-1)).toMatch(/_⚠️ The answer is longer than 20,000 characters: the whole of it is in answer\.md\._$/);
    const stored = await history(conversationId);
    expect(stored[1]!.content.length).toBeLessThanOrEqual(20_000);
    expect(huge.startsWith(stored[1]!.content)).toBe(true);
  }, 60_000);

  it('on Slack: the same, in messages Slack accepts and one file', async () => {
    const slack = await FakeSlack.start({
      channels: [{ id: 'C0HUGE', name: 'huge' }],
      rateLimits: { postMessage: { perSecond: 50, burst: 50 }, chatUpdate: { limit: 1000, windowMs: 60_000 } },
    });
    const slackBot = await startTestBot(slackEnv(service, slack));
    try {
      service.enqueue('chat', { stream: { pieces, chunkDelayMs: 0 } });
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const done = slackBot.outcomes((o) => o.command === 'chat');
      const ack = await slack.sendSlashCommand(`http://127.0.0.1:${slackBot.bot.slack!.port}`, {
        command: '/chat',
        text: 'write a lot',
        channel_id: 'C0HUGE',
      });
      expect(ack.ackedInTime).toBe(true);
      expect((await done)[0]!.ok).toBe(true);
      delay.disable();
      expect(delay.percentile(99) / 1e6).toBeLessThan(100);
      const posted = slack.messages('C0HUGE').filter((m) => m.botId);
      const withText = posted.filter((m) => m.files.length === 0);
      expect(withText.length).toBeLessThanOrEqual(7);
      expect(posted.filter((m) => m.files.length > 0)).toHaveLength(1);
      expect([...slack.files.values()].find((f) => f.filename === 'answer.md')!.data!.toString('utf8')).toBe(huge);
    } finally {
      await slackBot.stop();
      await slack.close();
    }
  }, 60_000);
});

describe('answers of blank lines', () => {
  /** Blank lines, then a word: the word lies past pages that are whitespace alone. */
  const blankThen = (newlines: number, word: string) => `Intro\n${'\n'.repeat(newlines)}${word}`;
  const LEFT_OUT = '_⚠️ The answer is longer than 20,000 characters: the whole of it is in answer.md._';

  it('on Discord: pages of whitespace alone are not posted, the word after them is, and the answer ends; past the cap the rest is noted as in answer.md', async () => {
    const { interaction, conversationId } = await chatWith('blank-lines', {
      text: blankThen(15_000, 'word'),
      chunkDelayMs: 0,
    });
    const shown = interaction.messages.filter((m) => !m.ephemeral).map((m) => m.content.trim());
    expect(shown).toEqual(['Intro', 'word']);
    expect((await history(conversationId))[1]!.content).toBe(blankThen(15_000, 'word'));

    const { interaction: capped } = await chatWith('blank-lines-capped', {
      text: `${'\n'.repeat(40_000)}word`,
      chunkDelayMs: 0,
    });
    const messages = capped.messages.filter((m) => !m.ephemeral);
    expect(messages[0]!.content).toBe(`*(the first 20,000 characters of the answer are blank)*\n\n${LEFT_OUT}`);
    expect(messages.flatMap((m) => m.attachments).map((f) => f.data.toString('utf8').trim())).toEqual(['word']);
  }, 60_000);

  it('on Slack: the same', async () => {
    const slack = await FakeSlack.start({
      channels: [{ id: 'C0BLANK', name: 'blank' }],
      rateLimits: { postMessage: { perSecond: 50, burst: 50 }, chatUpdate: { limit: 1000, windowMs: 60_000 } },
    });
    const slackBot = await startTestBot(slackEnv(service, slack));
    try {
      const ask = async (text: string) => {
        service.enqueue('chat', { stream: { text, chunkDelayMs: 0 } });
        const before = slack.messages('C0BLANK').length;
        const done = slackBot.outcomes((o) => o.command === 'chat', 1, 30_000);
        await slack.sendSlashCommand(`http://127.0.0.1:${slackBot.bot.slack!.port}`, {
          command: '/chat',
          text: 'blank lines please',
          channel_id: 'C0BLANK',
        });
        expect((await done)[0]!.ok).toBe(true);
        // The question (a /chat's, posted by the bot) first, then the answer.
        return slack.messages('C0BLANK').slice(before + 1);
      };
      expect((await ask(blankThen(15_000, 'word'))).map((m) => m.text.trim())).toEqual(['Intro', 'word']);
      const capped = await ask(`${'\n'.repeat(40_000)}word`);
      expect(capped.map((m) => m.text)).toEqual([
        `*(the first 20,000 characters of the answer are blank)*\n\n${LEFT_OUT}`,
        '',
      ]);
      expect(capped[1]!.files).toHaveLength(1);
    } finally {
      await slackBot.stop();
      await slack.close();
    }
  }, 90_000);
});
