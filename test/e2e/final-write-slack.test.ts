/**
 * An answer whose last writes fail on Slack (issue 38, items 12 and 15), end to end: a natively
 * streamed answer whose writes are rate-limited (HTTP 429) past their retries, and, posted then
 * updated, `chat.update` refused `cant_update_message` or `message_not_found` (the message was
 * deleted). The history keeps what the user was shown, marked as cut (`[stopped]`, as Stop marks
 * an answer), and the next question is sent with exactly that; a deleted message stops the answer
 * without blaming the bot.
 */
import { describe, expect, it } from 'vitest';
import { CUT_MARK } from '../../src/core/features/exchange.ts';
import type { ChatRequestBody, FakeService } from '../fakes/service.ts';
import { type FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

const CHANNELS = { native: 'C0NATIVE', refused: 'C0REFUSED', deleted: 'C0DELETED' };

useE2E({ slack: { channels: slackChannels(CHANNELS) }, bot: {}, resetServiceAfterEach: true }, (e2e) => {
  ({ service, slack, bot: testBot, botUrl } = e2e);
});

/** A slow answer: `count` pieces, a fifth of a second apart. */
const slow = (count: number) => Array.from({ length: count }, (_, i) => `piece${i} `);

/** The messages of a chat request as `role: content`. */
const sentTurns = (body: ChatRequestBody | undefined) =>
  (body?.messages ?? []).map((m) => `${m.role}: ${String(m.content)}`);

/** The bot's answer to a /chat in `channel` (the message after its question), once posted. */
const answerIn = (channel: string) =>
  slack.messages(channel).find((m) => m.botId && unescapeSlack(m.text).startsWith('piece0'));

/** Sends `/chat prompt` in `channel`; resolves with the command's outcome once done. */
async function chat(channel: string, prompt: string) {
  const done = testBot.outcomes((o) => o.command === 'chat' && o.conversationId.endsWith(`:${channel}`), 1, 60_000);
  const ack = await slack.sendSlashCommand(botUrl, { command: '/chat', text: prompt, channel_id: channel });
  expect(ack.ackedInTime).toBe(true);
  return done;
}

/** Asks `prompt` in `channel` with a plain answer; resolves with the turns its request was sent with. */
async function next(channel: string, prompt: string): Promise<string[]> {
  service.enqueue('chat', { stream: { pieces: ['fine.'] } });
  expect((await (await chat(channel, prompt))[0]!).ok).toBe(true);
  return sentTurns(service.chatRequests().findLast((b) => b.messages.at(-1)?.content === prompt));
}

/** The turns of an exchange whose answer the user saw as `shown`, marked as cut, then the next question. */
function expectKept(turns: string[], shown: string): void {
  expect(turns[0]).toBe('user: first question');
  const kept = turns[1]!.replace(/^assistant: /, '');
  expect(kept.endsWith(`\n${CUT_MARK}`)).toBe(true);
  expect(kept.slice(0, -`\n${CUT_MARK}`.length).trim()).toBe(shown.trim());
  expect(turns.slice(2)).toEqual(['user: second question']);
}

describe('an answer whose last writes fail on Slack', () => {
  it('natively streamed, its writes rate-limited (429) past their retries: the history keeps what was shown, marked as cut', async () => {
    service.enqueue('chat', { stream: { pieces: slow(10), chunkDelayMs: 200 } });
    const done = chat(CHANNELS.native, 'first question');
    await expect.poll(() => answerIn(CHANNELS.native) !== undefined, { timeout: 10_000 }).toBe(true);
    for (const method of ['chat.appendStream', 'chat.stopStream', 'chat.update']) slack.rateLimitNext(method, 1_000, 1);
    try {
      await done;
    } finally {
      slack.stopRateLimiting();
    }
    const shown = unescapeSlack(answerIn(CHANNELS.native)!.text);
    expect(shown.trim()).not.toBe(slow(10).join('').trim());
    expectKept(await next(CHANNELS.native, 'second question'), shown);
  }, 90_000);

  it('posted then updated, chat.update refused (cant_update_message): the history keeps what was shown, marked as cut', async () => {
    // Streaming refused in the workspace: answers are posted, then updated.
    slack.failNext('chat.startStream', 'feature_not_enabled', { count: Infinity });
    service.enqueue('chat', { stream: { pieces: slow(10), chunkDelayMs: 200 } });
    const done = chat(CHANNELS.refused, 'first question');
    await expect.poll(() => answerIn(CHANNELS.refused) !== undefined, { timeout: 10_000 }).toBe(true);
    slack.failNext('chat.update', 'cant_update_message', { count: Infinity });
    try {
      expect((await done)[0]!.errorCode).toBe('platform_refused');
    } finally {
      slack.stopFailing('chat.update');
    }
    const shown = unescapeSlack(answerIn(CHANNELS.refused)!.text);
    expectKept(await next(CHANNELS.refused, 'second question'), shown);
  }, 60_000);

  // Streaming is still refused in the workspace (the test before): the answer is posted, then updated.
  it('posted then updated, its message deleted while it streams (message_not_found): the answer stops, nobody is told the bot failed, the history keeps what was shown', async () => {
    service.enqueue('chat', { stream: { pieces: slow(40), chunkDelayMs: 200 } });
    const before = slack.responsePosts().length;
    const done = chat(CHANNELS.deleted, 'first question');
    await expect.poll(() => answerIn(CHANNELS.deleted) !== undefined, { timeout: 10_000 }).toBe(true);
    const answer = answerIn(CHANNELS.deleted)!;
    const shown = unescapeSlack(answer.text);
    answer.deleted = true;
    const [outcome] = await done;
    expect(outcome!.errorCode).toBe('reply_deleted');
    expect(outcome!.durationMs).toBeLessThan(6_000);
    expect(slack.responsePosts().slice(before)).toEqual([]);
    const turns = await next(CHANNELS.deleted, 'second question');
    expect(turns[0]).toBe('user: first question');
    const kept = turns[1]!.replace(/^assistant: /, '');
    expect(kept.endsWith(`\n${CUT_MARK}`)).toBe(true);
    // What the message showed when it was deleted (an update may have shown a little more before Slack's refusal).
    expect(kept.startsWith(shown.trim())).toBe(true);
    expect(
      slow(40)
        .join('')
        .startsWith(kept.slice(0, -`\n${CUT_MARK}`.length)),
    ).toBe(true);
    expect(turns.slice(2)).toEqual(['user: second question']);
  }, 60_000);
});
