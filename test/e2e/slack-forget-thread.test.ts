/**
 * End-to-end on Slack (issue 19, item 7): forgetting a thread's history, which no slash command
 * can do (Slack runs none in a thread), by mentioning the bot with `forget` in the thread or by
 * the message shortcut "Forget this thread"; the history-budget notice in a thread names both;
 * and `/help`, listing every command. The whole bot (startTestBot), real @slack/bolt, against
 * the fake Slack (test/fakes/slack.ts: events, message shortcuts, slash commands) and the fake
 * service.
 *
 * Every test uses its own channel. U0ALICE is a workspace admin (users.info `is_admin`), U0BOB
 * is not: in a channel, forgetting is for admins (as /forget on Slack); in a DM anyone may.
 */
import { describe, expect, it } from 'vitest';
import { commands } from '../../commands/index.ts';
import type { CommandOutcome } from '../../src/core/command.ts';
import { FORGET_THREAD_SHORTCUT } from '../../src/platforms/slack/shortcuts.ts';
import type { FakeService } from '../fakes/service.ts';
import { type FakeSlack, type SlackEvent, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = {
  shortcut: 'C0FORGETCUT',
  mention: 'C0FORGETMENTION',
  refused: 'C0FORGETREFUSED',
  budget: 'C0FORGETBUDGET',
  help: 'C0HELPALL',
} as const;
const ADMIN = 'U0ALICE';
const MEMBER = 'U0BOB';
const BUDGET_TOKENS = 400;
/** What a member who is no admin is told when forgetting a thread in a channel. */
const SLACK_THREAD_REFUSAL = 'Forgetting a thread in a channel is for admins. In a DM with the bot anyone may use it.';

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    slack: { channels: slackChannels(CHANNELS) },
    bot: { env: { HISTORY_TOKEN_BUDGET: String(BUDGET_TOKENS) } },
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

const conversationOf = (channel: string, threadTs?: string) =>
  `slack:${slack.teamId}:${channel}${threadTs ? `:${threadTs}` : ''}`;

/** Resolves with the next finished invocation (mention, forget, command) in `conversationId`. */
function nextOutcome(conversationId: string): Promise<CommandOutcome> {
  return testBot.outcomes((o) => o.conversationId === conversationId).then(([outcome]) => outcome!);
}

/** Sends `event`, checks the 3 s ack, and waits until the bot finished with it. */
async function deliver(event: SlackEvent, conversationId: string): Promise<CommandOutcome> {
  const done = nextOutcome(conversationId);
  const ack = await slack.sendEvent(botUrl, event);
  expect(ack).toMatchObject({ status: 200, ackedInTime: true });
  return done;
}

/** A mention by `user` in the thread `threadTs` of `channel` (a new thread when absent); returns its outcome and ts. */
async function mention(channel: string, user: string, text: string, threadTs?: string) {
  const event = slack.mentionEvent({ channel, user, text, ...(threadTs ? { threadTs } : {}) });
  const thread = threadTs ?? (event.ts as string);
  return { outcome: await deliver(event, conversationOf(channel, thread)), ts: event.ts as string, thread };
}

/** The messages of the last chat request the service received. */
const lastSent = () => service.chatRequests().at(-1)!.messages;

/** The bot's messages in `channel`'s thread `threadTs`. */
const botRepliesIn = (channel: string, threadTs: string) =>
  slack.messages(channel).filter((m) => m.user === slack.botUserId && m.threadTs === threadTs);

/** Builds a thread of two exchanges by `user` in `channel`; returns the thread's ts. */
async function threadWithHistory(channel: string, user = ADMIN): Promise<string> {
  const { thread } = await mention(channel, user, 'My name is Ada.');
  await mention(channel, user, 'I like owls.', thread);
  expect(lastSent()).toHaveLength(3);
  expect(await testBot.bot.core.history.get(conversationOf(channel, thread))).toHaveLength(4);
  return thread;
}

describe('forgetting a Slack thread', () => {
  it('the message shortcut "Forget this thread" empties the thread\'s history and says so in the thread', async () => {
    const channel = CHANNELS.shortcut;
    const thread = await threadWithHistory(channel);
    const reply = botRepliesIn(channel, thread).at(-1)!;
    const done = nextOutcome(conversationOf(channel, thread));
    const ack = await slack.sendMessageShortcut(botUrl, {
      user: ADMIN,
      channel,
      messageTs: reply.ts,
      callbackId: FORGET_THREAD_SHORTCUT.callbackId,
    });
    expect(ack).toMatchObject({ status: 200, ackedInTime: true, failure: undefined });
    expect(await done).toMatchObject({ ok: true, command: 'forget' });
    expect(await testBot.bot.core.history.get(conversationOf(channel, thread))).toEqual([]);
    expect(unescapeSlack(botRepliesIn(channel, thread).at(-1)!.text)).toMatch(
      /^🧹 History cleared \(4 messages forgotten\)/,
    );
    // The next mention in the thread sends no earlier turn.
    await mention(channel, ADMIN, 'What is my name?', thread);
    expect(lastSent()).toEqual([{ role: 'user', content: 'What is my name?' }]);
  });

  it('"@bot forget" in a thread empties its history; the next mention there starts afresh', async () => {
    const channel = CHANNELS.mention;
    const thread = await threadWithHistory(channel);
    const before = service.chatRequests().length;
    const { outcome } = await mention(channel, ADMIN, 'forget', thread);
    expect(outcome).toMatchObject({ ok: true, command: 'forget' });
    // Forgetting asks the service nothing.
    expect(service.chatRequests()).toHaveLength(before);
    expect(unescapeSlack(botRepliesIn(channel, thread).at(-1)!.text)).toMatch(
      /^🧹 History cleared \(4 messages forgotten\)/,
    );
    await mention(channel, ADMIN, 'What is my name?', thread);
    expect(lastSent()).toEqual([{ role: 'user', content: 'What is my name?' }]);
  });

  it('in a channel a member who is no admin is refused, by mention and by shortcut: the history stays', async () => {
    const channel = CHANNELS.refused;
    const thread = await threadWithHistory(channel, MEMBER);
    const { outcome } = await mention(channel, MEMBER, 'forget', thread);
    expect(outcome).toMatchObject({ ok: false, errorCode: 'forbidden', command: 'forget' });
    const ephemeral = slack.ephemerals.filter((e) => e.channel === channel).at(-1)!;
    expect(ephemeral.user).toBe(MEMBER);
    // Slack has no "manage messages": who may is said in Slack's terms.
    expect(unescapeSlack(ephemeral.text)).toBe(SLACK_THREAD_REFUSAL);

    const done = nextOutcome(conversationOf(channel, thread));
    await slack.sendMessageShortcut(botUrl, {
      user: MEMBER,
      channel,
      messageTs: thread,
      callbackId: FORGET_THREAD_SHORTCUT.callbackId,
    });
    expect(await done).toMatchObject({ ok: false, errorCode: 'forbidden' });
    const told = slack.responsePosts().filter((p) => p.command === 'message_action' && p.channel === channel);
    expect(told).toMatchObject([{ status: 200, responseType: 'ephemeral', user: MEMBER }]);
    expect(unescapeSlack(told[0]!.text)).toBe(SLACK_THREAD_REFUSAL);
    expect(await testBot.bot.core.history.get(conversationOf(channel, thread))).toHaveLength(4);
  });

  it('the history-budget notice in a thread says how to clear it there: mention with forget, or the shortcut', async () => {
    const channel = CHANNELS.budget;
    const turn = (label: string) => `${label} ${'lorem ipsum '.repeat(25)}`.slice(0, 300);
    const { thread } = await mention(channel, ADMIN, turn('Q1'));
    for (const n of [2, 3]) await mention(channel, ADMIN, turn(`Q${n}`), thread);
    await mention(channel, ADMIN, 'Summarise.', thread);
    const answer = unescapeSlack(botRepliesIn(channel, thread).at(-1)!.text);
    expect(answer).toMatch(/earlier messages? (was|were) left out to keep the conversation within the history budget/);
    expect(answer).toContain('mention me with `forget`');
    expect(answer).toContain(`“${FORGET_THREAD_SHORTCUT.name}”`);
    expect(answer).not.toContain('/forget');
  });
});

describe('/help on Slack', () => {
  it('lists every command with its options, only to the user', async () => {
    const channel = CHANNELS.help;
    const done = testBot.outcomes((o) => o.command === 'help' && o.conversationId === conversationOf(channel));
    const ack = await slack.sendSlashCommand(botUrl, {
      command: '/help',
      text: '',
      channel_id: channel,
      user_id: MEMBER,
    });
    expect(ack).toMatchObject({ status: 200, ackedInTime: true });
    expect((await done)[0]).toMatchObject({ ok: true });
    const posts = slack.responsePosts().filter((p) => p.channel === channel);
    expect(posts.length).toBeGreaterThan(0);
    for (const post of posts) expect(post).toMatchObject({ status: 200, responseType: 'ephemeral' });
    const shown = unescapeSlack(posts.map((p) => `${p.text}\n${JSON.stringify(p.body.blocks ?? [])}`).join('\n'));
    for (const command of commands) {
      expect(shown).toContain(`/${command.name}`);
      for (const option of command.options) expect(shown).toContain(option.name);
    }
    // Nothing was posted in the channel for everyone.
    expect(slack.messages(channel).filter((m) => m.user === slack.botUserId)).toEqual([]);
  });
});
