/**
 * End-to-end on Discord, streaming at the platform's limits (issue 9): the whole bot, started
 * from environment variables by startTestBot, with real discord.js and undici, against
 * FakeDiscord and FakeService. Many answers stream at once into one channel, each ~600
 * characters over ~6 s (60 pieces of 10 characters, 100 ms apart, a distinct text per stream),
 * and the fake enforces Discord's limits in one of its two modes:
 *
 * - `documented`: 5 writes per 2 s per interaction token, 5 per 5 s per channel for bot-token
 *   writes. 25 concurrent /chat and 10 concurrent mentions in one channel: no response with
 *   status 429, every final text exact.
 * - `shared`: one hidden budget of 5 writes per 5 s per channel for every write. 8 concurrent
 *   /chat in one channel: at most one 429 in the channel (the test lasts well under a minute),
 *   every final text exact, and each stream's longest gap between two visible updates (from
 *   its first visible write to its last, by the fake's write records) at most 8 × 1.5 s.
 *
 * Which scripted answer a stream gets is known from the order of the service's chat requests
 * (its queue is first in, first out): each prompt carries a tag, found in the request's last
 * user message.
 */
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeChannel, FakeDiscord, FakeMessage, FakeWrite } from '../fakes/discord.ts';
import type { FakeService, RecordedRequest } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: {}, bot: {}, resetServiceAfterEach: true }, async (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
  await discord.waitForReady();
});

/** Pieces per answer, their delay (ms) and length (characters): ~600 characters over ~6 s. */
const PIECES = 60;
const CHUNK_DELAY_MS = 100;

/** The answer of the stream tagged `tag` (e.g. `c07`): "c07-w0001 c07-w0002 … c07-w0060". */
function answerPieces(tag: string): string[] {
  return Array.from(
    { length: PIECES },
    (_, i) => `${tag}-w${String(i + 1).padStart(4, '0')}${i + 1 < PIECES ? ' ' : ''}`,
  );
}

/**
 * Scripts one streamed answer per tag, in order, and learns from the service's chat requests
 * which prompt got which: the returned function gives the text the request carrying `ask-<tag>`
 * was answered with.
 */
function scriptAnswers(tags: string[]): { textFor: (tag: string) => string | undefined; stop: () => void } {
  const texts = tags.map((tag) => answerPieces(tag).join(''));
  for (const tag of tags)
    service.enqueue('chat', { stream: { pieces: answerPieces(tag), chunkDelayMs: CHUNK_DELAY_MS } });
  const askedBy: string[] = [];
  const onRequest = (r: RecordedRequest) => {
    if (r.route !== 'chat') return;
    const messages = (r.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
    const last = [...messages].reverse().find((m) => m.role === 'user');
    askedBy.push(/ask-([a-z]\d\d)/.exec(JSON.stringify(last?.content))?.[1] ?? '?');
  };
  service.events.on('request', onRequest);
  return {
    textFor: (tag) => {
      const index = askedBy.indexOf(tag);
      return index < 0 ? undefined : texts[index];
    },
    stop: () => service.events.off('request', onRequest),
  };
}

/** Resolves with the next `count` outcomes of `command` in a channel's conversation. */
function done(channel: FakeChannel, command: string, count: number): Promise<CommandOutcome[]> {
  const conversationId = `discord:${channel.guildId}:${channel.id}`;
  return testBot.outcomes((o) => o.conversationId === conversationId && o.command === command, count, 50_000);
}

/** What one stream showed: its visible writes (answer text in them), oldest first. */
interface StreamRecord {
  tag: string;
  /** The message the answer ended in. */
  message: FakeMessage | undefined;
  visible: FakeWrite[];
}

/** The writes that show answer text (a beginning of `answer`, the whole of it at the end), not a status line. */
function visibleWrites(writes: FakeWrite[], answer: string | undefined): FakeWrite[] {
  return writes.filter((w) => answer !== undefined && w.content !== '' && answer.startsWith(w.content));
}

/** The longest time between two consecutive visible writes of a stream, in ms (0 for one write). */
function longestGapMs(visible: FakeWrite[]): number {
  let gap = 0;
  for (let i = 1; i < visible.length; i++) gap = Math.max(gap, visible[i]!.at - visible[i - 1]!.at);
  return gap;
}

/** The largest number of writes of `writes` inside any window of `windowMs`. */
function peakInWindow(writes: FakeWrite[], windowMs: number): number {
  const times = writes.map((w) => w.at).sort((a, b) => a - b);
  let peak = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= windowMs) j++;
    peak = Math.max(peak, i - j + 1);
  }
  return peak;
}

describe('Discord streaming at the rate limits', () => {
  it('documented buckets: 25 concurrent /chat and 10 concurrent mentions in one channel get no 429 and every final text exact', {
    timeout: 60_000,
  }, async () => {
    discord.setRateLimitMode('documented');
    const channel = discord.addChannel('limits-documented');
    const chatTags = Array.from({ length: 25 }, (_, i) => `c${String(i).padStart(2, '0')}`);
    const mentionTags = Array.from({ length: 10 }, (_, i) => `m${String(i).padStart(2, '0')}`);
    const answers = scriptAnswers([...chatTags, ...mentionTags]);
    const requestsBefore = discord.requests.length;
    const writes: FakeWrite[] = [];
    const onWrite = (w: FakeWrite) => {
      if (w.channelId === channel.id) writes.push(w);
    };
    discord.events.on('write', onWrite);
    try {
      const chatsDone = done(channel, 'chat', chatTags.length);
      const mentionsDone = done(channel, 'mention', mentionTags.length);
      const interactions = chatTags.map((tag, i) =>
        discord.dispatchInteraction({
          command: 'chat',
          options: { prompt: `Tell me about ask-${tag}` },
          channelId: channel.id,
          user: { id: String(310000000000000000n + BigInt(i)) },
        }),
      );
      const questions = mentionTags.map((tag, i) =>
        discord.postUserMessage({
          channelId: channel.id,
          content: `<@${discord.botUser.id}> Tell me about ask-${tag}`,
          author: { id: String(320000000000000000n + BigInt(i)), username: `asker${i}` },
        }),
      );
      const outcomes = [...(await chatsDone), ...(await mentionsDone)];
      expect(outcomes.filter((o) => !o.ok)).toEqual([]);

      const responses = discord.requests.slice(requestsBefore);
      expect(responses.filter((r) => r.status === 429).map((r) => `${r.method} ${r.path}`)).toEqual([]);
      expect(discord.rateLimits.filter((r) => r.channelId === channel.id)).toEqual([]);

      const streams: StreamRecord[] = [];
      for (const [i, interaction] of interactions.entries()) {
        const tag = chatTags[i]!;
        streams.push({
          tag,
          message: interaction.original,
          visible: visibleWrites(
            writes.filter((w) => w.interactionId === interaction.id),
            answers.textFor(tag),
          ),
        });
      }
      for (const [i, question] of questions.entries()) {
        const tag = mentionTags[i]!;
        const message = discord
          .messagesIn(channel.id)
          .find((m) => m.author.id === discord.botUser.id && m.reference?.messageId === question.id);
        streams.push({
          tag,
          message,
          visible: visibleWrites(
            writes.filter((w) => w.messageId === message?.id),
            answers.textFor(tag),
          ),
        });
      }
      for (const stream of streams) {
        const expected = answers.textFor(stream.tag);
        expect(expected, stream.tag).toBeDefined();
        expect(stream.message?.content, stream.tag).toBe(expected);
        expect(stream.visible.at(-1)?.content, stream.tag).toBe(expected);
      }
      // The interactions wrote faster than a channel's 5 per 5 s could have carried: the per-token buckets were used.
      const interactionWrites = writes.filter((w) => w.via === 'webhook');
      expect(peakInWindow(interactionWrites, 5_000)).toBeGreaterThan(5);
      // Bot-token writes (the mention answers) kept the channel's 5 per 5 s.
      expect(
        peakInWindow(
          writes.filter((w) => w.via === 'channel'),
          5_000,
        ),
      ).toBeLessThanOrEqual(5);
    } finally {
      discord.events.off('write', onWrite);
      answers.stop();
    }
  });

  it('one shared budget per channel: 8 concurrent /chat get at most one 429, every final text exact, and an update at least every 8 × 1.5 s', {
    timeout: 60_000,
  }, async () => {
    discord.setRateLimitMode('shared');
    discord.setMessageBudget(undefined, { limit: 5, windowMs: 5_000 });
    const channel = discord.addChannel('limits-shared');
    const tags = Array.from({ length: 8 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    const answers = scriptAnswers(tags);
    const writes: FakeWrite[] = [];
    const onWrite = (w: FakeWrite) => {
      if (w.channelId === channel.id) writes.push(w);
    };
    discord.events.on('write', onWrite);
    try {
      const finished = done(channel, 'chat', tags.length);
      const interactions = tags.map((tag, i) =>
        discord.dispatchInteraction({
          command: 'chat',
          options: { prompt: `Tell me about ask-${tag}` },
          channelId: channel.id,
          user: { id: String(330000000000000000n + BigInt(i)) },
        }),
      );
      const outcomes = await finished;
      expect(outcomes.filter((o) => !o.ok)).toEqual([]);

      const limited = discord.rateLimits.filter((r) => r.channelId === channel.id);
      expect(limited.length).toBeLessThanOrEqual(1);

      const gaps: number[] = [];
      for (const [i, interaction] of interactions.entries()) {
        const tag = tags[i]!;
        const expected = answers.textFor(tag);
        expect(expected, tag).toBeDefined();
        expect(interaction.original?.content, tag).toBe(expected);
        const visible = visibleWrites(
          writes.filter((w) => w.interactionId === interaction.id),
          expected,
        );
        expect(visible.at(-1)?.content, tag).toBe(expected);
        // Text showed while the answer streamed, not only at its end: the gap below measures something.
        expect(visible.length, tag).toBeGreaterThanOrEqual(2);
        gaps.push(longestGapMs(visible));
      }
      for (const [i, gap] of gaps.entries()) expect(gap, tags[i]).toBeLessThanOrEqual(tags.length * 1_500);
      // The accepted writes of the channel (interactions' all) never went past its one budget in any 5 s.
      expect(peakInWindow(writes, 5_000)).toBeLessThanOrEqual(5);
    } finally {
      discord.events.off('write', onWrite);
      answers.stop();
    }
  });
});
