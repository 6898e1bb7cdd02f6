/**
 * Every write in a budget on Slack (issue 20 item 2): the writes outside a streamed answer (a
 * /chat's question, ephemeral sentences) spend the same buckets as streamed text, so that the
 * fake's documented limits (~1 post a second per channel for chat.postMessage and
 * chat.postEphemeral together, with a burst of 3; chat.update, startStream, appendStream and
 * stopStream at their tiers) never refuse a call.
 *
 * - One process, 20 concurrent /chat in one channel: 20 questions posted (chat.postMessage),
 *   20 answers in their threads, no call answered `ratelimited`, every final text exact.
 * - Many ephemeral refusals at once in one channel (a user over the minute's chat quota
 *   mentioning the bot again and again): every refusal arrives by chat.postEphemeral, none is
 *   answered `ratelimited`.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../fakes/service.ts';
import { type FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHATS = 20;
const CHAT_CHANNEL = 'C0ONECHAN';
const REFUSAL_CHANNEL = 'C0REFUSALS';
/** One user per /chat: the chat quota (one a minute) lets each user's first through. */
const ASKERS = Array.from({ length: CHATS }, (_, i) => `U0ASK${String(i).padStart(2, '0')}`);
const OVER_QUOTA = 'U0GREEDY';
const REFUSALS = 15;

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    service: { apiKey: `sk-fake-${randomBytes(16).toString('hex')}` },
    slack: {
      channels: [
        { id: CHAT_CHANNEL, name: 'one-channel' },
        { id: REFUSAL_CHANNEL, name: 'refusals' },
      ],
    },
    beforeBot: (e2e) => {
      for (const id of [...ASKERS, OVER_QUOTA]) e2e.slack.addUser({ id, name: id.toLowerCase() });
    },
    bot: { env: { QUOTA_CHAT_PER_MINUTE: '1' } },
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** The calls Slack refused for their rate. */
function refusedForRate() {
  return slack.calls.filter((c) => c.status === 429 || c.error === 'ratelimited');
}

describe('Slack: every write in a budget', () => {
  it(`${CHATS} concurrent /chat in one channel: the questions and the answers draw no ratelimited, every final text exact`, async () => {
    const texts = ASKERS.map((_, s) => Array.from({ length: 30 }, (_, i) => `a${s}w${i} `).join(''));
    for (const text of texts) service.enqueue('chat', { stream: { text, chunkDelayMs: 100 } });
    const done = testBot.outcomes((o) => o.command === 'chat', CHATS, 120_000);
    const acks = await Promise.all(
      ASKERS.map((user, i) =>
        slack.sendSlashCommand(botUrl, {
          command: '/chat',
          text: `question ${i}`,
          channel_id: CHAT_CHANNEL,
          user_id: user,
        }),
      ),
    );
    expect(acks.every((a) => a.ackedInTime)).toBe(true);
    const outcomes = await done;
    expect(outcomes.every((o) => o.ok)).toBe(true);

    expect(refusedForRate()).toEqual([]);
    const posts = slack.calls.filter((c) => c.method === 'chat.postMessage' && c.params.channel === CHAT_CHANNEL);
    const questionPosts = posts.filter((c) => c.params.thread_ts === undefined);
    // Every question was posted once, by a call Slack took.
    expect(questionPosts).toHaveLength(CHATS);
    expect(questionPosts.every((c) => c.ok)).toBe(true);
    const questions = slack
      .messages(CHAT_CHANNEL)
      .filter((m) => m.user === slack.botUserId && m.threadTs === undefined);
    expect(questions.map((q) => unescapeSlack(q.text).match(/question \d+/)?.[0]).sort()).toEqual(
      ASKERS.map((_, i) => `question ${i}`).sort(),
    );
    // Each answer in its question's thread, whole.
    const answers = questions.map(
      (q) => slack.messages(CHAT_CHANNEL).find((m) => m.user === slack.botUserId && m.threadTs === q.ts)!,
    );
    expect(answers.every((a) => a !== undefined)).toBe(true);
    expect(answers.map((a) => unescapeSlack(a.text)).sort()).toEqual([...texts].sort());
    // Posts of the channel (questions, and answers posted rather than streamed) were never faster than ~1 a second.
    const times = posts.map((c) => c.at).sort((a, b) => a - b);
    for (let k = 3; k < times.length; k++) expect(times[k]! - times[k - 3]!).toBeGreaterThanOrEqual(2_000);
  }, 150_000);

  it(`${REFUSALS} ephemeral refusals at once in one channel (a user over the chat quota): every one arrives, none ratelimited`, async () => {
    service.enqueue('chat', { stream: { text: 'the one answer', chunkDelayMs: 50 } });
    const first = testBot.outcomes((o) => o.command === 'mention', 1, 30_000);
    await slack.sendEvent(botUrl, slack.mentionEvent({ channel: REFUSAL_CHANNEL, user: OVER_QUOTA, text: 'first' }));
    await first;
    const before = slack.calls.length;
    const refused = testBot.outcomes((o) => o.command === 'mention', REFUSALS, 60_000);
    const events = Array.from({ length: REFUSALS }, (_, i) =>
      slack.mentionEvent({ channel: REFUSAL_CHANNEL, user: OVER_QUOTA, text: `again ${i}` }),
    );
    await Promise.all(events.map((event) => slack.sendEvent(botUrl, event)));
    await refused;

    const calls = slack.calls.slice(before);
    expect(calls.filter((c) => c.status === 429 || c.error === 'ratelimited')).toEqual([]);
    const ephemerals = slack.ephemerals.filter((e) => e.channel === REFUSAL_CHANNEL && e.user === OVER_QUOTA);
    expect(ephemerals).toHaveLength(REFUSALS);
    expect(ephemerals.every((e) => /limit|too many|wait/i.test(e.text))).toBe(true);
  }, 90_000);
});
