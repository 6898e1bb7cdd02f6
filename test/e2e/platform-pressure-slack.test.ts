/**
 * Slack naming a long wait, or refusing twice (issue 22 items 1 and 4), end to end: the whole
 * bot with real Bolt and web-api against FakeSlack, which scripts the 429s
 * (test/fakes/slack/pressure.ts):
 *
 * - one channel's `chat.postMessage` answered 429 with `Retry-After: 3600` (a /chat's question):
 *   a /chat in another channel answers within 5 s, and the held answer ends, its last words a
 *   sentence saying Slack is refusing the bot's writes, within 90 s (the bot holds a learnt wait
 *   at most a minute; Slack's own client would have paused every call of the workspace for the
 *   hour);
 * - the final `chat.update` of an answer answered `ratelimited` twice in a row: the exact final
 *   text still lands.
 */
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeService } from '../fakes/service.ts';
import { type FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';
import { answersIn } from './slack-checks.ts';

const CHANNELS = { held: 'C0HELD', other: 'C0OTHER', twice: 'C0TWICE' } as const;

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    slack: { channels: slackChannels(CHANNELS) },
    // The held answer takes over a minute: no long-answer notice here (notify-slack.test.ts has them).
    bot: { env: { NOTIFY_AFTER_SECONDS: '0' } },
    resetServiceAfterEach: true,
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** The last words of an answer Slack kept waiting: a sentence saying it is refusing the bot's writes. */
const REFUSING = /\n\n_⚠️ Slack is refusing my writes here for now \(it asked me to wait 60 minutes\)[^\n]*_$/;

/**
 * Sends a signed slash command in `channel`; resolves with its outcome once the bot finished it
 * within `timeoutMs`. Awaited later than made, its rejection is left to that await.
 */
function run(command: string, text: string, channel: string, timeoutMs: number): Promise<CommandOutcome> {
  const done = testBot.outcomes((o) => o.conversationId.endsWith(`:${channel}`), 1, timeoutMs);
  done.catch(() => undefined);
  const outcome = slack.sendSlashCommand(botUrl, { command, text, channel_id: channel }).then(async (ack) => {
    expect(ack.ackedInTime).toBe(true);
    return (await done)[0]!;
  });
  outcome.catch(() => undefined);
  return outcome;
}

describe('Slack naming a long wait, or refusing twice', () => {
  it("Retry-After 3600 on one channel's posts: a /chat in another channel answers within 5 s, and the held answer ends with the sentence within 90 s", {
    timeout: 120_000,
  }, async () => {
    const heldText = 'An answer whose question Slack would not post for an hour.';
    service.enqueue('chat', { stream: { text: heldText, chunkDelayMs: 10 } });
    slack.rateLimitNext('chat.postMessage', 1, 3600, { channel: CHANNELS.held });
    const held = run('/chat', 'the held one', CHANNELS.held, 90_000);
    await expect
      .poll(() => slack.calls.some((c) => c.params.channel === CHANNELS.held && c.status === 429), { timeout: 5_000 })
      .toBe(true);

    service.enqueue('chat', { stream: { text: 'Elsewhere, no wait.' } });
    const elsewhere = await run('/chat', 'elsewhere', CHANNELS.other, 5_000);
    expect(elsewhere.ok).toBe(true);
    expect(answersIn(slack, CHANNELS.other).map((m) => unescapeSlack(m.text))).toEqual(['Elsewhere, no wait.']);

    expect((await held).ok).toBe(true);
    const [answer, ...others] = answersIn(slack, CHANNELS.held);
    expect(others).toEqual([]);
    const text = unescapeSlack(answer!.text);
    expect(text).toMatch(REFUSING);
    expect(text.startsWith(`${heldText}\n\n`)).toBe(true);
  });

  it('the final chat.update of an answer answered ratelimited twice in a row: the exact final text lands', {
    timeout: 60_000,
  }, async () => {
    const final = 'Once and a completion long enough to be posted first and then updated.';
    service.setCompletionReply(' and a completion long enough to be posted first and then updated.');
    try {
      service.enqueue('completions', { stream: { chunkDelayMs: 40 } });
      slack.rateLimitNext('chat.update', 2, 1, {
        channel: CHANNELS.twice,
        when: (params) => unescapeSlack(String(params.text)) === final,
      });
      expect((await run('/complete', 'Once', CHANNELS.twice, 30_000)).ok).toBe(true);
    } finally {
      service.setCompletionReply(undefined);
    }
    const updates = slack.calls.filter((c) => c.method === 'chat.update' && c.params.channel === CHANNELS.twice);
    expect(updates.filter((c) => c.status === 429)).toHaveLength(2);
    expect(answersIn(slack, CHANNELS.twice).map((m) => unescapeSlack(m.text))).toEqual([final]);
  });
});
