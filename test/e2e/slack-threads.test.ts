/**
 * End-to-end on Slack, threads the bot is called into (issue 19, item 2): a mention in a
 * thread the bot has no history for reads the thread's earlier messages
 * (`conversations.replies`, scope `channels:history` in a public channel) as the conversation,
 * so "summarize this thread" works. Without the scope, Slack refuses (`missing_scope`): the
 * question is still answered, with a line saying which scope to add. Images attached to the
 * thread's earlier messages reach the service as `image_url` parts of their author's turn (as a
 * Discord reply chain's do), downloaded with the bot token; without `files:read` the question
 * is answered with the thread's text and the missing scope is said once. Real Bolt and
 * @slack/web-api against FakeSlack and FakeService.
 */

import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { english } from '../../src/core/i18n/words.ts';
import { FILES_READ_MISSING } from '../../src/platforms/slack/files.ts';
import type { ContentPart, FakeService } from '../fakes/service.ts';
import { DEFAULT_BOT_SCOPES, type FakeSlack, type SlackEvent, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = {
  read: 'C0THREADREAD',
  noScope: 'C0THREADNOSCOPE',
  images: 'C0THREADIMAGES',
  noFiles: 'C0THREADNOFILES',
} as const;

/** A 32 × 24 px PNG and a 20 × 20 px JPEG, as users upload them. */
let png: Buffer;
let jpeg: Buffer;
beforeAll(async () => {
  png = await sharp({ create: { width: 32, height: 24, channels: 3, background: '#336699' } })
    .png()
    .toBuffer();
  jpeg = await sharp({ create: { width: 20, height: 20, channels: 3, background: '#aa3300' } })
    .jpeg()
    .toBuffer();
});

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    slack: { channels: slackChannels(CHANNELS) },
    bot: { env: { DEFAULT_VISION_MODEL: 'fake-vision' } },
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

  it("images of the thread's earlier messages reach the service as image_url parts of their author's turn", async () => {
    const channel = CHANNELS.images;
    const parent = slack.channelMessageEvent({ channel, user: 'U0ALICE', text: 'the dashboards are ready' });
    const parentTs = parent.ts as string;
    const chart = slack.addUserFile({ name: 'chart.png', mimetype: 'image/png', data: png, user: 'U0BOB' });
    slack.channelMessageEvent({
      channel,
      user: 'U0BOB',
      text: 'here is the chart',
      threadTs: parentTs,
      files: [chart],
    });
    // An image without text: its turn is the author's name and the image.
    const photo = slack.addUserFile({ name: 'photo.jpg', mimetype: 'image/jpeg', data: jpeg, user: 'U0ALICE' });
    slack.channelMessageEvent({ channel, user: 'U0ALICE', text: '', threadTs: parentTs, files: [photo] });
    const before = service.chatRequests().length;
    const downloadsBefore = slack.downloads.length;
    const event = slack.mentionEvent({
      channel,
      user: 'U0ALICE',
      text: 'what do the images show?',
      threadTs: parentTs,
    });
    const outcome = await deliver(event, channel, parentTs);
    expect(outcome.ok).toBe(true);

    const [request, ...more] = service.chatRequests().slice(before);
    expect(more).toEqual([]);
    expect(request!.model).toBe('fake-vision');
    const messages = request!.messages;
    expect(messages).toHaveLength(4);
    expect(messages[0]).toEqual({ role: 'user', content: 'alice: the dashboards are ready' });
    const partsOf = (content: string | ContentPart[] | undefined) => (Array.isArray(content) ? content : []);
    const chartTurn = partsOf(messages[1]!.content);
    expect(messages[1]!.role).toBe('user');
    expect(chartTurn).toHaveLength(2);
    expect(chartTurn[0]).toEqual({ type: 'text', text: 'bob: here is the chart' });
    expect(chartTurn[1]).toMatchObject({
      type: 'image_url',
      image_url: { url: expect.stringMatching(/^data:image\//) },
    });
    const photoTurn = partsOf(messages[2]!.content);
    expect(photoTurn).toHaveLength(2);
    expect(photoTurn[0]).toEqual({ type: 'text', text: 'alice:' });
    expect(photoTurn[1]).toMatchObject({
      type: 'image_url',
      image_url: { url: expect.stringMatching(/^data:image\//) },
    });
    expect(messages[3]).toEqual({ role: 'user', content: 'what do the images show?' });
    // Both files came from Slack's file host with the bot token.
    const downloads = slack.downloads.slice(downloadsBefore);
    expect(downloads.map((d) => d.fileId).sort()).toEqual([chart.id, photo.id].sort());
    expect(downloads.every((d) => d.authorized)).toBe(true);
    // Nothing was left out: the answer is alone.
    const answer = slack.messages(channel).find((m) => m.botId !== undefined && m.threadTs === parentTs);
    expect(unescapeSlack(answer!.text)).toBe('Echo: what do the images show?');
  });

  it("without files:read the thread's text is still read, and the missing scope is said once for all its images", async () => {
    const channel = CHANNELS.noFiles;
    const parent = slack.channelMessageEvent({ channel, user: 'U0ALICE', text: 'two screenshots follow' });
    const parentTs = parent.ts as string;
    for (const name of ['one.png', 'two.png']) {
      const file = slack.addUserFile({ name, mimetype: 'image/png', data: png, user: 'U0BOB' });
      slack.channelMessageEvent({
        channel,
        user: 'U0BOB',
        text: `screenshot ${name}`,
        threadTs: parentTs,
        files: [file],
      });
    }
    slack.setScopes(DEFAULT_BOT_SCOPES.filter((s) => s !== 'files:read'));
    let request: ReturnType<FakeService['chatRequests']>[number] | undefined;
    try {
      const before = service.chatRequests().length;
      const event = slack.mentionEvent({ channel, user: 'U0ALICE', text: 'compare them', threadTs: parentTs });
      const outcome = await deliver(event, channel, parentTs);
      expect(outcome.ok).toBe(true);
      [request] = service.chatRequests().slice(before);
    } finally {
      slack.setScopes([...DEFAULT_BOT_SCOPES]);
    }
    expect(request!.messages).toEqual([
      { role: 'user', content: 'alice: two screenshots follow' },
      { role: 'user', content: 'bob: screenshot one.png' },
      { role: 'user', content: 'bob: screenshot two.png' },
      { role: 'user', content: 'compare them' },
    ]);
    const answer = slack.messages(channel).find((m) => m.botId !== undefined && m.threadTs === parentTs);
    const shown = unescapeSlack(answer!.text);
    expect(shown.startsWith('Echo: compare them')).toBe(true);
    expect(shown.split(english.say(FILES_READ_MISSING))).toHaveLength(2);
  });
});
