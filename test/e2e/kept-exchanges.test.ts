/**
 * An exchange the user saw whole is kept in the history (issue 18, item 2), end to end on
 * Slack (answers posted and updated: the workspace does not stream natively): Slack refusing
 * the last chat.update of an answer whose whole text is already shown (it only takes the Stop
 * button away) is logged, not a failure; web-search image results Slack refuses to post are
 * told to the user, after the exchange was stored. Either way the next /chat carries the turn.
 */
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeService } from '../fakes/service.ts';
import { type FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';
import { answersIn } from './slack-checks.ts';

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    slack: {
      channels: [
        { id: 'C0LATE', name: 'late-update' },
        { id: 'C0IMAGES', name: 'image-results' },
      ],
      streaming: false,
    },
    bot: {},
    resetServiceAfterEach: true,
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** Sends a /chat in `channel` and waits until the bot finished it. */
async function chat(channel: string, text: string): Promise<CommandOutcome> {
  const done = testBot.outcomes((o) => o.command === 'chat' && o.conversationId.endsWith(`:${channel}`));
  const ack = await slack.sendSlashCommand(botUrl, { command: '/chat', text, channel_id: channel });
  expect(ack.ackedInTime).toBe(true);
  return (await done)[0]!;
}

/** The response_url posts (what the user alone is told) of `channel` from `since` on. */
const toldIn = (channel: string, since: number) =>
  slack
    .responsePosts()
    .slice(since)
    .filter((p) => p.channel === channel)
    .map((p) => p.text);

/**
 * Whether a chat.update's blocks (a JSON string as sent) no longer hold the Stop button: the final
 * write, which swaps it for Regenerate.
 */
const dropsStop = (params: Record<string, unknown>) =>
  typeof params.blocks === 'string' && !params.blocks.includes('"stop:');

describe('an exchange the user saw whole stays in the history', () => {
  it('Slack refusing the last chat.update (cant_update_message) after the whole answer is shown: no error, logged, stored, and the next /chat carries it', async () => {
    // 1.1 s between events: the whole text is shown by an update with the Stop button before the
    // stream ends, so the last write only swaps the Stop button for Regenerate.
    service.enqueue('chat', {
      stream: { pieces: ['The whole ', 'answer.'], chunkDelayMs: 1100, wholeEvents: true },
    });
    slack.failNext('chat.update', 'cant_update_message', { count: Infinity, when: dropsStop });
    const told = slack.responsePosts().length;
    const logsBefore = testBot.logs.length;
    let outcome: CommandOutcome;
    try {
      outcome = await chat('C0LATE', 'tell me everything');
    } finally {
      slack.stopFailing('chat.update');
    }
    const refused = slack.callsTo('chat.update').filter((c) => c.error === 'cant_update_message');
    expect(refused.length).toBeGreaterThan(0);
    const [answer] = answersIn(slack, 'C0LATE');
    expect(unescapeSlack(answer!.text)).toBe('The whole answer.');
    expect(outcome.ok).toBe(true);
    expect(toldIn('C0LATE', told)).toEqual([]);
    expect(
      testBot.logs.slice(logsBefore).filter((l) => l.level === 40 && /Stop button|controls/.test(l.msg ?? '')),
    ).toHaveLength(1);
    expect((await testBot.bot.core.history.get(outcome.conversationId)).map((m) => m.content)).toEqual([
      'tell me everything',
      'The whole answer.',
    ]);
    await chat('C0LATE', 'and then?');
    expect(
      service
        .chatRequests()
        .at(-1)!
        .messages.map((m) => m.content),
    ).toEqual(['tell me everything', 'The whole answer.', 'and then?']);
  }, 40_000);

  it('web-search image results Slack refuses to post: the user is told (with a reference), the exchange is stored, and the next /chat carries it', async () => {
    const answer = 'Foxes: ![red fox](https://img.example/red-fox.jpg) and more.';
    service.setChatReply(answer);
    const isImagePost = (params: Record<string, unknown>) =>
      typeof params.blocks === 'string' && params.blocks.includes('"type":"image"');
    slack.failNext('chat.postMessage', 'invalid_blocks', { count: Infinity, when: isImagePost });
    const told = slack.responsePosts().length;
    let outcome: CommandOutcome;
    try {
      outcome = await chat('C0IMAGES', 'show me foxes --web_search images');
    } finally {
      slack.stopFailing('chat.postMessage');
    }
    expect(slack.callsTo('chat.postMessage').filter((c) => c.error === 'invalid_blocks')).toHaveLength(1);
    // The answer's text beside its blocks is its Markdown in mrkdwn (issue 39): the image as a link.
    expect(unescapeSlack(answersIn(slack, 'C0IMAGES')[0]!.text)).toBe(
      'Foxes: <https://img.example/red-fox.jpg|red fox> and more.',
    );
    expect(toldIn('C0IMAGES', told)).toEqual([
      expect.stringMatching(
        /^The answer is kept, but its image results could not be posted: Slack refused the message as too long or malformed\. \(ref [2-9A-Z]{6}\)$/,
      ),
    ]);
    expect(outcome.ok).toBe(false);
    expect((await testBot.bot.core.history.get(outcome.conversationId)).map((m) => m.content)).toEqual([
      'show me foxes',
      answer,
    ]);
    service.setChatReply('More foxes.');
    await chat('C0IMAGES', 'more please');
    expect(
      service
        .chatRequests()
        .at(-1)!
        .messages.map((m) => m.content),
    ).toEqual(['show me foxes', answer, 'more please']);
  }, 40_000);
});
