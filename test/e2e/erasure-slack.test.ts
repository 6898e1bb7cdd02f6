/**
 * End-to-end on Slack (issue 41, item 5): `/forget me` erases exactly the asker's turns and the
 * bot's answers to them, in every conversation of the workspace (a thread two users talked in, a
 * thread of the asker's alone), and leaves the other user's exchange; told to the asker alone
 * (an ephemeral response_url post), with the counts. The whole bot (startTestBot), real Bolt,
 * against the fakes; the store read directly.
 */
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { storeKeys } from '../../src/core/keys.ts';
import type { StoredMessage } from '../../src/core/state/history.ts';
import type { FakeService } from '../fakes/service.ts';
import { type FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = { shared: 'C0ERASESHARED', own: 'C0ERASEOWN' } as const;
const ALICE = 'U0ALICE';
const BOB = 'U0BOB';

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E({ slack: { channels: slackChannels(CHANNELS) }, bot: {}, timeoutMs: 30_000 }, (e2e) => {
  ({ service, slack, bot: testBot, botUrl } = e2e);
});

const conversationOf = (channel: string, threadTs?: string) =>
  `slack:${slack.teamId}:${channel}${threadTs ? `:${threadTs}` : ''}`;

/** A mention by `user` (in the thread `threadTs`, else a new one), answered with `answer`; returns the thread's ts. */
async function mention(channel: string, user: string, text: string, answer: string, threadTs?: string) {
  service.enqueue('chat', { stream: { text: answer } });
  const event = slack.mentionEvent({ channel, user, text, ...(threadTs ? { threadTs } : {}) });
  const thread = threadTs ?? (event.ts as string);
  const done = testBot.outcomes((o) => o.conversationId === conversationOf(channel, thread), 1, 30_000);
  expect(await slack.sendEvent(botUrl, event)).toMatchObject({ status: 200, ackedInTime: true });
  expect((await done)[0]!.ok).toBe(true);
  return thread;
}

/** A conversation's turns as the store holds them: `role user: text`. */
async function stored(conversationId: string): Promise<string[] | undefined> {
  const value = (await testBot.bot.core.store.keyv.get(storeKeys.history(conversationId))) as
    | { messages: StoredMessage[] }
    | undefined;
  return value?.messages.map((m) => `${m.role} ${m.userId ?? '-'}: ${m.content}`);
}

/** Runs `/forget <text>` by `user` in `channel`; returns its outcome and its one ephemeral answer. */
async function forget(channel: string, user: string, text: string): Promise<{ outcome: CommandOutcome; said: string }> {
  const done = testBot.outcomes(
    (o) => o.command === 'forget' && o.conversationId === conversationOf(channel),
    1,
    30_000,
  );
  const posts = slack.responsePosts().length;
  expect(
    await slack.sendSlashCommand(botUrl, { command: '/forget', text, channel_id: channel, user_id: user }),
  ).toMatchObject({ ackedInTime: true });
  const outcome = (await done)[0]!;
  const answers = slack.responsePosts().slice(posts);
  expect(answers).toHaveLength(1);
  expect(answers[0]).toMatchObject({ status: 200, responseType: 'ephemeral' });
  return { outcome, said: unescapeSlack(answers[0]!.text) };
}

describe('Slack /forget me', () => {
  it("erases the asker's turns and the answers to them in every conversation of the workspace, leaves the other user's, and says how many, to the asker alone", async () => {
    const shared = await mention(CHANNELS.shared, ALICE, 'Alice asks about herons.', 'Herons wade.');
    await mention(CHANNELS.shared, BOB, 'Bob asks about owls.', 'Owls hoot.', shared);
    await mention(CHANNELS.shared, ALICE, 'Alice again.', 'Again, herons.', shared);
    const own = await mention(CHANNELS.own, ALICE, 'Alice alone.', 'Alone, noted.');
    const sharedId = conversationOf(CHANNELS.shared, shared);
    expect(await stored(sharedId)).toHaveLength(6);
    // Alice votes 👍 on Bob's answer: her vote is hers to erase.
    const bobsAnswer = slack
      .messages(CHANNELS.shared)
      .find((m) => m.user === slack.botUserId && /Owls hoot/.test(m.text))!;
    const feedback = ((bobsAnswer.blocks ?? []) as Array<{ elements?: Array<{ action_id?: string }> }>)
      .flatMap((b) => (b.elements ?? []).map((e) => String(e.action_id ?? '')))
      .find((id) => id.startsWith('feedback:'))!;
    const voted = testBot.outcomes((o) => o.command === 'feedback:button', 1, 30_000);
    const press = { user: ALICE, channel: CHANNELS.shared, messageTs: bobsAnswer.ts, actionId: feedback, value: 'up' };
    expect(await slack.sendBlockAction(botUrl, press)).toMatchObject({ ackedInTime: true });
    expect((await voted)[0]!.ok).toBe(true);
    const vote = storeKeys.feedbackVote(feedback.split(':')[1]!, ALICE);
    expect(await testBot.bot.core.store.keyv.get(vote)).toMatchObject({ vote: 'up', userId: ALICE });

    const { outcome, said } = await forget(CHANNELS.shared, ALICE, 'me');
    expect(outcome.ok).toBe(true);
    expect(said).toBe(
      '🧹 Forgot 3 messages of yours and 3 answers to them in 2 conversations of this workspace, and 1 vote or button state. Your usage, quota and spend counters stay until they reset.',
    );
    expect(await stored(sharedId)).toEqual([`user ${BOB}: Bob asks about owls.`, 'assistant -: Owls hoot.']);
    expect(await stored(conversationOf(CHANNELS.own, own))).toBeUndefined();
    expect(await testBot.bot.core.store.keyv.get(vote)).toBeUndefined();
    // Nothing was posted in the channel for everyone.
    expect(slack.messages(CHANNELS.shared).filter((m) => m.user === slack.botUserId && /Forgot/.test(m.text))).toEqual(
      [],
    );

    const again = await forget(CHANNELS.own, ALICE, 'me');
    expect(again.said).toBe('🧹 Nothing of yours was stored in this workspace: nothing to forget.');
  });
});
