/**
 * End-to-end on Slack, a long answer's notice (issue 39 item 4): an answer streams into one
 * message (natively, or posted and updated), and Slack notifies nobody of a stream's appends or
 * an update, so an answer that took longer than NOTIFY_AFTER_SECONDS (2 s here) ends with a
 * message in the answer's thread that mentions its asker (`<@U…>`: Slack notifies a user
 * mentioned in a thread), the bot's own words only: the model's `<!channel>` and `<@U…>` stay
 * escaped text. A quicker answer gets none, nor any in a channel whose admins set
 * `/settings --notify off`. The whole bot with Bolt unmodified, against FakeSlack (which
 * records each message's thread and the mentions Slack would render) and FakeService.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeService } from '../fakes/service.ts';
import { escapeSlack, type FakeSlack, type FakeSlackMessage, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';
import { answersIn, expectQuestion } from './slack-checks.ts';

/** The notice's words after the asker's mention (features/answer-notice.ts), as the user reads them. */
const ANSWER_READY = 'your answer is ready ↑';

const CHANNELS = {
  chat: 'C0NOTIFYCHAT',
  posted: 'C0NOTIFYPOST',
  quiet: 'C0NOTIFYQUIET',
} as const;

/** An admin (FakeSlack's default users). */
const ALICE = 'U0ALICE';
/** A member, who asks. */
const BOB = 'U0BOB';

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    service: { apiKey: `sk-fake-${randomBytes(16).toString('hex')}` },
    slack: { channels: slackChannels(CHANNELS) },
    bot: { env: { NOTIFY_AFTER_SECONDS: '2' } },
    resetServiceAfterEach: true,
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** A stream well past the bound (about 3.6 s: 12 pieces, 300 ms apart) whose text tries to ping the channel and Alice. */
const SLOW = {
  pieces: ['Hello <!channel> and <!here>, ', `<@${ALICE}>: `, ...Array.from({ length: 10 }, (_, i) => `part${i + 1} `)],
  chunkDelayMs: 300,
};
const SLOW_TEXT = SLOW.pieces.join('');

/** Resolves with the next finished invocation named `command` in a conversation of `channel`. */
function next(command: string, channel: string): Promise<CommandOutcome> {
  return testBot.outcomes((o) => o.command === command && o.conversationId.includes(`:${channel}`)).then(([o]) => o!);
}

/** Runs a slash command as `user` in `channel`; resolves with its outcome. */
async function slash(command: string, text: string, channel: string, user: string): Promise<CommandOutcome> {
  const done = next(command.slice(1), channel);
  const ack = await slack.sendSlashCommand(botUrl, { command, text, channel_id: channel, user_id: user });
  expect(ack.ackedInTime).toBe(true);
  return done;
}

/** The bot's messages in `channel` that mention anyone (as Slack renders mentions). */
const mentioning = (channel: string): FakeSlackMessage[] =>
  slack.messages(channel).filter((m) => m.user === slack.botUserId && m.mentions.length > 0);

/**
 * Checks that the bot's one message in `channel` that mentions anyone is the notice: posted
 * (chat.postMessage) in `threadTs`, the bot's own words after `user`'s mention, which is the
 * only mention Slack renders from it.
 */
function expectNotice(channel: string, threadTs: string, user: string): FakeSlackMessage {
  const [notice, ...others] = mentioning(channel);
  expect(others).toEqual([]);
  expect(notice).toMatchObject({ via: 'chat.postMessage', threadTs, mentions: [`<@${user}>`] });
  expect(unescapeSlack(notice!.text)).toBe(`<@${user}> ${ANSWER_READY}`);
  return notice!;
}

describe('a long answer notifies its asker on Slack', () => {
  it("/chat: an answer under NOTIFY_AFTER_SECONDS ends quietly; a natively streamed one past it ends with a message in its question's thread that mentions the asker alone (the model's <!channel> and <@alice> stay text)", async () => {
    const channel = CHANNELS.chat;
    service.enqueue('chat', { stream: { text: 'Quick answer.' } });
    expect(await slash('/chat', 'Quick?', channel, BOB)).toMatchObject({ ok: true });
    const [quick] = answersIn(slack, channel);
    expect(unescapeSlack(quick!.text)).toBe('Quick answer.');
    expect(mentioning(channel)).toEqual([]);

    service.enqueue('chat', { stream: SLOW });
    expect(await slash('/chat', 'Take your time', channel, BOB)).toMatchObject({ ok: true });
    const question = expectQuestion(slack, channel, 'bob', 'Take your time');
    const inThread = slack.messages(channel).filter((m) => m.threadTs === question.ts);
    const [answer, notice, ...more] = inThread;
    expect(more).toEqual([]);
    expect(answer).toMatchObject({ via: 'chat.startStream', mentions: [] });
    expect(answer!.stream!.state).toBe('stopped');
    expect(answer!.text).toBe(escapeSlack(SLOW_TEXT));
    expect(expectNotice(channel, question.ts, BOB)).toBe(notice);
  }, 20_000);

  it("a mention where Slack refuses native streaming: the answer posted and updated, then the notice in the mention's thread", async () => {
    const channel = CHANNELS.posted;
    // Public channels refuse chat.startStream (channel_type_not_supported): the bot posts instead, in this channel.
    slack.setStreaming({ streamingChannelTypes: ['group', 'im'] });
    try {
      service.enqueue('chat', { stream: SLOW });
      const event = slack.mentionEvent({ channel, user: BOB, text: 'tell me slowly' });
      const done = next('mention', channel);
      expect(await slack.sendEvent(botUrl, event)).toMatchObject({ status: 200, ackedInTime: true });
      expect(await done).toMatchObject({ ok: true });
      const [answer, notice, ...more] = answersIn(slack, channel);
      expect(more).toEqual([]);
      expect(answer).toMatchObject({ via: 'chat.postMessage', threadTs: event.ts, mentions: [] });
      expect(answer!.revisions.at(-1)!.method).toBe('chat.update');
      expect(answer!.text).toBe(escapeSlack(SLOW_TEXT));
      expect(expectNotice(channel, event.ts as string, BOB)).toBe(notice);
    } finally {
      slack.setStreaming({ streamingChannelTypes: ['channel', 'group', 'im'] });
    }
  }, 20_000);

  it('/settings --notify off turns the notice off for the channel (the card says so), --notify on back on', async () => {
    const channel = CHANNELS.quiet;
    expect(await slash('/settings', '--notify off', channel, ALICE)).toMatchObject({ ok: true });
    const card = slack.responsePosts().filter((p) => p.channel === channel);
    expect(unescapeSlack(JSON.stringify(card.at(-1)!.body))).toContain('off — set for this channel');

    service.enqueue('chat', { stream: SLOW });
    expect(await slash('/chat', 'Take your time', channel, BOB)).toMatchObject({ ok: true });
    expect(answersIn(slack, channel)).toHaveLength(1);
    expect(mentioning(channel)).toEqual([]);

    expect(await slash('/settings', '--notify on', channel, ALICE)).toMatchObject({ ok: true });
    service.enqueue('chat', { stream: SLOW });
    expect(await slash('/chat', 'Again, slowly', channel, BOB)).toMatchObject({ ok: true });
    const question = expectQuestion(slack, channel, 'bob', 'Again, slowly');
    expectNotice(channel, question.ts, BOB);
  }, 30_000);
});
