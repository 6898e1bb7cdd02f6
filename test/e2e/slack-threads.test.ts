/**
 * End-to-end on Slack, threads the bot is called into (issue 19, item 2): a mention in a
 * thread the bot has no history for reads the thread's earlier messages
 * (`conversations.replies`, scope `channels:history` in a public channel) as the conversation,
 * so "summarize this thread" works. Without the scope, Slack refuses (`missing_scope`): the
 * question is still answered, with a line saying which scope to add. Real Bolt and
 * @slack/web-api against FakeSlack and FakeService.
 */
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeService } from '../fakes/service.ts';
import { DEFAULT_BOT_SCOPES, type FakeSlack, type SlackEvent, unescapeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = { read: 'C0THREADREAD', noScope: 'C0THREADNOSCOPE' } as const;

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    slack: { channels: Object.values(CHANNELS).map((id) => ({ id, name: id.slice(2).toLowerCase() })) },
    bot: {},
    resetServiceAfterEach: true,
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** Sends `event` and waits until the bot answered it in the thread `threadTs`. */
async function deliver(event: SlackEvent, channel: string, threadTs: string): Promise<CommandOutcome> {
  const conversationId = `slack:${slack.teamId}:${channel}:${threadTs}`;
  const done = testBot.outcomes((o) => o.command === 'mention' && o.conversationId === conversationId);
  const ack = await slack.sendEvent(botUrl, event);
  expect(ack.status).toBe(200);
  const [outcome] = await done;
  return outcome!;
}

/** A thread of `count` messages by alice and bob in turn (never delivered to the bot: it is not subscribed to them). */
function thread(channel: string, count: number): { parentTs: string; texts: string[] } {
  const texts = Array.from({ length: count }, (_, i) => `point ${i + 1} of the plan`);
  const users = ['U0ALICE', 'U0BOB'];
  const parent = slack.channelMessageEvent({ channel, user: users[0]!, text: texts[0]! });
  const parentTs = parent.ts as string;
  for (let i = 1; i < count; i++)
    slack.channelMessageEvent({ channel, user: users[i % 2]!, text: texts[i]!, threadTs: parentTs });
  return { parentTs, texts };
}

describe('Slack threads the bot is called into', () => {
  it('a mention in a 12-message thread the bot never posted in carries those messages, oldest first, named by author', async () => {
    const { parentTs, texts } = thread(CHANNELS.read, 12);
    const before = service.chatRequests().length;
    const event = slack.mentionEvent({
      channel: CHANNELS.read,
      user: 'U0ALICE',
      text: 'summarize this thread',
      threadTs: parentTs,
    });
    const outcome = await deliver(event, CHANNELS.read, parentTs);
    expect(outcome.ok).toBe(true);
    const [request, ...more] = service.chatRequests().slice(before);
    expect(more).toEqual([]);
    const names = ['alice', 'bob'];
    expect(request!.messages).toEqual([
      ...texts.map((text, i) => ({ role: 'user', content: `${names[i % 2]}: ${text}` })),
      { role: 'user', content: 'summarize this thread' },
    ]);
    const answer = slack.messages(CHANNELS.read).find((m) => m.botId !== undefined && m.threadTs === parentTs);
    expect(unescapeSlack(answer!.text)).toBe('Echo: summarize this thread');
  });

  it('without channels:history the question is still answered, and the answer says which scope to add', async () => {
    const { parentTs } = thread(CHANNELS.noScope, 3);
    slack.setScopes(DEFAULT_BOT_SCOPES.filter((s) => s !== 'channels:history'));
    try {
      const before = service.chatRequests().length;
      const event = slack.mentionEvent({
        channel: CHANNELS.noScope,
        user: 'U0BOB',
        text: 'summarize this thread',
        threadTs: parentTs,
      });
      const outcome = await deliver(event, CHANNELS.noScope, parentTs);
      expect(outcome.ok).toBe(true);
      const [request] = service.chatRequests().slice(before);
      expect(request!.messages).toEqual([{ role: 'user', content: 'summarize this thread' }]);
    } finally {
      slack.setScopes([...DEFAULT_BOT_SCOPES]);
    }
    const answer = slack.messages(CHANNELS.noScope).find((m) => m.botId !== undefined && m.threadTs === parentTs);
    const shown = unescapeSlack(answer!.text);
    expect(shown.startsWith('Echo: summarize this thread')).toBe(true);
    expect(shown).toMatch(/add the channels:history scope/);
  });
});
