/**
 * Discord naming a long wait (issue 22 item 1), end to end: the whole bot with real discord.js
 * against FakeDiscord, which scripts the wait (test/fakes/discord/pressure.ts):
 *
 * - a 429 whose `retry_after` is 3600 s on one channel's writes (a /chat's first edit of its
 *   reply), and an accepted write whose headers announce a reset 3600 s away (a mention's answer
 *   in another channel): each answer still ends, its last words a sentence saying Discord is
 *   refusing the bot's writes, within 90 s (the bot holds a learnt wait at most a minute), while
 *   a /chat in a third channel answers within 5 s;
 * - a global 429 naming 3600 s (the bot token's limit, which interaction webhooks are exempt
 *   from), drawn by a mention's first bot-token request (its typing indicator or its answer): a
 *   /chat in another channel answers within 5 s, and the mention's answer ends with the
 *   sentence within 90 s.
 */
import { describe, expect, it } from 'vitest';
import type { FakeChannel, FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: {}, bot: {}, resetServiceAfterEach: true }, async (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
  await discord.waitForReady();
});

/** The last words of an answer Discord kept waiting: a sentence saying it is refusing the bot's writes. */
const REFUSING = /\n\n_⚠️ Discord is refusing my writes here for now \(it asked me to wait 60 minutes\)[^\n]*_$/;

/**
 * The next outcome of `command` in `channel`, within `timeoutMs`. Awaited later than made: its
 * rejection is left to that await (a failure before it reports itself, not this one unhandled).
 */
function outcomeIn(channel: FakeChannel, command: string, timeoutMs: number) {
  const conversationId = `discord:${channel.guildId}:${channel.id}`;
  const outcome = testBot
    .outcomes((o) => o.conversationId === conversationId && o.command === command, 1, timeoutMs)
    .then(([first]) => first!);
  outcome.catch(() => undefined);
  return outcome;
}

/** Runs a /chat in `channel`; resolves with its interaction and outcome once it finished within `timeoutMs`. */
function chat(channel: FakeChannel, prompt: string, timeoutMs: number) {
  const done = outcomeIn(channel, 'chat', timeoutMs);
  const interaction = discord.dispatchInteraction({ command: 'chat', options: { prompt }, channelId: channel.id });
  return done.then((outcome) => ({ interaction, outcome }));
}

/** The bot's answer to a user's message in `channel` (its reply), if any. */
function answerTo(channel: FakeChannel, questionId: string) {
  return discord
    .messagesIn(channel.id)
    .find((m) => m.author.id === discord.botUser.id && m.reference?.messageId === questionId);
}

describe('Discord naming a long wait', () => {
  it('a 429 of 3600 s on one channel and headers announcing a reset 3600 s away on another: each answer ends with the sentence within 90 s, and a /chat in a third channel answers within 5 s', {
    timeout: 120_000,
  }, async () => {
    const refused = discord.addChannel('pressure-refused');
    const announced = discord.addChannel('pressure-announced');
    const other = discord.addChannel('pressure-other');
    const refusedText = 'An answer whose first edit Discord refused for an hour.';
    const announcedText = 'An answer whose first write was told to wait an hour for the next.';
    service.enqueue('chat', { stream: { text: refusedText, chunkDelayMs: 10 } });
    discord.pressRateLimits({ channelId: refused.id, kind: 'refuse', afterSec: 3600 });
    const held = chat(refused, 'first, the refused one', 90_000);
    await discord.waitFor('rateLimited', (r) => r.channelId === refused.id);

    // A mention's answer: posted (its first write, announcing the reset), then edited to its end.
    service.enqueue('chat', {
      stream: {
        pieces: ['An answer whose first write ', 'was told to wait an hour for the next.'],
        chunkDelayMs: 1_500,
      },
    });
    discord.pressRateLimits({ channelId: announced.id, kind: 'announce', afterSec: 3600 });
    const mentionDone = outcomeIn(announced, 'mention', 90_000);
    const firstWrite = discord.waitFor('write', (w) => w.channelId === announced.id);
    const question = discord.postUserMessage({
      channelId: announced.id,
      content: `<@${discord.botUser.id}> second, the announced one`,
    });
    await firstWrite;

    service.enqueue('chat', { stream: { text: 'Elsewhere, no wait.' } });
    const elsewhere = await chat(other, 'third, elsewhere', 5_000);
    expect(elsewhere.outcome.ok).toBe(true);
    expect(elsewhere.interaction.original?.content).toBe('Elsewhere, no wait.');

    const { interaction, outcome } = await held;
    expect(outcome.ok).toBe(true);
    expect(interaction.original?.content).toMatch(REFUSING);
    expect(interaction.original?.content.startsWith(`${refusedText}\n\n`)).toBe(true);

    expect((await mentionDone).ok).toBe(true);
    const answer = answerTo(announced, question.id);
    expect(answer?.content).toMatch(REFUSING);
    expect(answer?.content.startsWith(`${announcedText}\n\n`)).toBe(true);
  });

  it("a global 429 of 3600 s drawn by a mention's first bot-token request: a /chat in another channel answers within 5 s, and the mention's answer ends with the sentence within 90 s", {
    timeout: 120_000,
  }, async () => {
    const mentioned = discord.addChannel('pressure-global');
    const other = discord.addChannel('pressure-global-other');
    const text = 'An answer held back by a global 429 naming an hour.';
    service.enqueue('chat', { stream: { text, chunkDelayMs: 10 } });
    const mentionDone = outcomeIn(mentioned, 'mention', 90_000);
    discord.pressRateLimits({ global: true, afterSec: 3600 });
    const question = discord.postUserMessage({
      channelId: mentioned.id,
      content: `<@${discord.botUser.id}> the one that meets the global limit`,
    });
    await discord.waitFor('rateLimited', (r) => r.bucket === 'global');

    service.enqueue('chat', { stream: { text: 'Elsewhere, no global wait.' } });
    const elsewhere = await chat(other, 'elsewhere', 5_000);
    expect(elsewhere.outcome.ok).toBe(true);
    expect(elsewhere.interaction.original?.content).toBe('Elsewhere, no global wait.');

    expect((await mentionDone).ok).toBe(true);
    const answer = answerTo(mentioned, question.id);
    expect(answer?.content).toMatch(REFUSING);
    expect(answer?.content.startsWith(`${text}\n\n`)).toBe(true);
  });
});
