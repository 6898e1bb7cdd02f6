/**
 * End-to-end tests of mentions and DMs on Slack (issue 7): the whole bot started from
 * environment variables (startTestBot), real @slack/bolt + @slack/web-api + undici, against the
 * fake Slack (test/fakes/slack.ts: Events API `event_callback`s, signed, built by its
 * `mentionEvent` / `imMessageEvent` / … builders) and the fake generation service.
 *
 * One bot, one FakeSlack and one FakeService serve the whole file; every test uses its own
 * channel (or its own user's DM), so tests read only their own channel's messages. A mention
 * is answered in its thread, under the conversation `slack:<team>:<channel>:<thread_ts>`, and
 * so is a DM (the agent view: each top-level message opens a thread).
 */

import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { describe, expect, it, vi } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { english } from '../../src/core/i18n/words.ts';
import { FILES_READ_MISSING } from '../../src/platforms/slack/files.ts';
import type { ContentPart, FakeService } from '../fakes/service.ts';
import {
  DEFAULT_BOT_SCOPES,
  escapeSlack,
  type FakeSlack,
  type FakeSlackMessage,
  type SlackEvent,
  unescapeSlack,
} from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';
import { expectQuestion } from './slack-checks.ts';

const CHANNELS = {
  image: 'C0MENTIMAGE',
  retry: 'C0MENTRETRY',
  noScope: 'C0MENTNOSCOPE',
  thread: 'C0MENTTHREAD',
} as const;

/** Users with a DM of their own each (one DM per user on Slack). */
const DM_USERS = { answered: 'U0DMANSWER', ignored: 'U0DMIGNORE' } as const;

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    service: { apiKey: `sk-fake-${randomBytes(16).toString('hex')}` },
    slack: { channels: slackChannels(CHANNELS) },
    beforeBot: (e2e) => {
      for (const [name, id] of Object.entries(DM_USERS)) e2e.slack.addUser({ id, name });
    },
    // Requests with images go to the service's vision model.
    bot: { env: { DEFAULT_VISION_MODEL: 'fake-vision' } },
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** The conversation of a mention or DM, as src/platforms/slack/message-answer.ts names it. */
const conversationOf = (channel: string, threadTs?: string) =>
  `slack:${slack.teamId}:${channel}${threadTs ? `:${threadTs}` : ''}`;

/** Resolves with the next finished mention (or DM) in `conversationId`. */
function nextMention(conversationId: string): Promise<CommandOutcome> {
  return testBot
    .outcomes((o) => o.command === 'mention' && o.conversationId === conversationId)
    .then(([outcome]) => outcome!);
}

/** Sends `event` over HTTP, checks it was acked with HTTP 200 in time, and waits until the bot answered it. */
async function deliver(event: SlackEvent, conversationId: string): Promise<CommandOutcome> {
  const done = nextMention(conversationId);
  const ack = await slack.sendEvent(botUrl, event);
  expect(ack.status).toBe(200);
  expect(ack.ackedInTime).toBe(true);
  return done;
}

/** The bot's messages in `channel` (the fake also keeps the users' messages). */
const botMessages = (channel: string) => slack.messages(channel).filter((m) => m.user === slack.botUserId);

/**
 * Checks that `streamed` arrived as exactly one message of the bot in `channel`, escaped as
 * Slack requires, written more than once while streaming:
 * - in a thread, natively: chat.startStream (with the recipient ids outside DMs), at least one
 *   chat.appendStream of a strict prefix, then chat.stopStream; the stream ended as stopped;
 * - at the top level (posted, where Slack does not stream): chat.postMessage, then chat.update while
 *   streaming (some update a strict prefix), its last revision the whole text.
 */
function expectStreamedAnswer(channel: string, streamed: string, recipient?: string): FakeSlackMessage {
  const [message, ...others] = botMessages(channel);
  expect(others).toEqual([]);
  expect(unescapeSlack(message!.text)).toBe(streamed);
  expect(message!.text).toBe(escapeSlack(streamed));
  if (message!.threadTs !== undefined) {
    expect(message!.via).toBe('chat.startStream');
    const stream = message!.stream!;
    expect(stream.writes[0]!.method).toBe('chat.startStream');
    expect(stream.writes.at(-1)!.method).toBe('chat.stopStream');
    expect(stream.writes.filter((w) => w.method === 'chat.appendStream').length).toBeGreaterThanOrEqual(1);
    expect(stream.writes.map((w) => w.text).join('')).toBe(message!.text);
    expect(stream.state).toBe('stopped');
    if (recipient) expect([stream.recipientTeamId, stream.recipientUserId]).toEqual([slack.teamId, recipient]);
    return message!;
  }
  expect(message!.via).toBe('chat.postMessage');
  const updates = message!.revisions.filter((r) => r.method === 'chat.update');
  const partial = updates.filter(
    (r) => unescapeSlack(r.text).length < streamed.length && streamed.startsWith(unescapeSlack(r.text)),
  );
  expect(partial.length).toBeGreaterThanOrEqual(1);
  expect(updates.at(-1)!.text).toBe(message!.text);
  return message!;
}

/** The content of the last message of a chat request. */
const lastContent = (body: { messages: Array<{ content: unknown }> }) => body.messages.at(-1)!.content;

/** The chat requests whose last (user) message is exactly `text`. */
const requestsFor = (text: string) => service.chatRequests().filter((b) => lastContent(b) === text);

/** A real PNG (sharp), opaque, `width`×`height`. */
const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 40 } } })
    .png()
    .toBuffer();

/** How many times `needle` occurs in `haystack`. */
const occurrences = (haystack: string, needle: string) => haystack.split(needle).length - 1;

describe('Slack mentions and DMs end to end', () => {
  it("an app_mention with a PNG reaches the service as an image_url data URL, downloaded with the bot token, and is answered in the mention's thread with exactly the streamed text", async () => {
    const channel = CHANNELS.image;
    const file = slack.addUserFile({
      name: 'red-square.png',
      mimetype: 'image/png',
      data: await png(64, 48),
      user: 'U0ALICE',
    });
    const event = slack.mentionEvent({ channel, user: 'U0ALICE', text: 'What colour is this?', files: [file] });
    const ts = event.ts as string;
    expect(event.files).toHaveLength(1);

    // About 130 pieces 25 ms apart: the answer streams for ~3 s, so it is posted first and edited as it grows.
    const streamed = 'It is a red rectangle & nothing else <really>. '.repeat(10);
    service.enqueue('chat', { stream: { text: streamed, chunkDelayMs: 25 } });
    const requestsBefore = service.chatRequests().length;
    const outcome = await deliver(event, conversationOf(channel, ts));
    expect(outcome).toMatchObject({ ok: true, platform: 'slack', command: 'mention' });

    // One request to the vision model; its last user message holds the text and the image as a data URL.
    const requests = service.chatRequests().slice(requestsBefore);
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request!.model).toBe('fake-vision');
    const last = request!.messages.at(-1)!;
    expect(last.role).toBe('user');
    expect(Array.isArray(last.content)).toBe(true);
    const parts = last.content as ContentPart[];
    expect(parts).toContainEqual({ type: 'text', text: 'What colour is this?' });
    const images = parts.filter((p): p is Extract<ContentPart, { type: 'image_url' }> => p.type === 'image_url');
    expect(images).toHaveLength(1);
    const match = /^data:(image\/(?:png|jpeg));base64,([A-Za-z0-9+/]+=*)$/.exec(images[0]!.image_url.url);
    expect(match).not.toBeNull();
    const decoded = Buffer.from(match![2]!, 'base64');
    const meta = await sharp(decoded).metadata();
    expect(`image/${meta.format}`).toBe(match![1]);
    expect(meta).toMatchObject({ width: 64, height: 48 });

    // The bytes came from url_private(_download) with the bot token (the fake serves them to nothing else).
    const downloads = slack.downloads.filter((d) => d.fileId === file.id);
    expect(downloads).toHaveLength(1);
    expect(downloads[0]).toMatchObject({ authorized: true, status: 200, completed: true, bytesSent: file.length });

    // The answer: one message in the mention's thread, posted then edited, exactly the streamed text.
    const answer = expectStreamedAnswer(channel, streamed, 'U0ALICE');
    expect(answer.threadTs).toBe(ts);
    expect(slack.ephemerals.filter((e) => e.channel === channel)).toEqual([]);
    expect(slack.platformFailures).toEqual([]);
  });

  it('a retry of an answered event (X-Slack-Retry-Num, same event_id) is acked with HTTP 200 and neither reaches the service nor answers again, during or after the answer', async () => {
    const channel = CHANNELS.retry;
    const event = slack.mentionEvent({ channel, user: 'U0BOB', text: 'Say something once.' });
    const ts = event.ts as string;
    const streamed = 'Once, and only once: this answer must not be written twice. '.repeat(8);
    service.enqueue('chat', { stream: { text: streamed, chunkDelayMs: 25 } });
    const requestsBefore = service.chatRequests().length;
    const ignoredLines = (eventId: string) =>
      testBot.logs.filter(
        (l) => l.event === eventId && l.msg === 'event already answered (a retry or a second delivery); ignored',
      );

    const done = nextMention(conversationOf(channel, ts));
    const first = await slack.sendEvent(botUrl, event);
    expect(first).toMatchObject({ status: 200, ackedInTime: true });
    // Slack retries when it thinks the first delivery failed: the answer may still be streaming.
    const early = await slack.sendEvent(botUrl, event, { eventId: first.eventId, retryNum: 1 });
    expect(early).toMatchObject({ status: 200, ackedInTime: true, eventId: first.eventId });
    expect((await done).ok).toBe(true);
    // …and once more after the answer is complete.
    const late = await slack.sendEvent(botUrl, event, {
      eventId: first.eventId,
      retryNum: 2,
      retryReason: 'http_error',
    });
    expect(late).toMatchObject({ status: 200, ackedInTime: true, eventId: first.eventId });
    await vi.waitFor(() => expect(ignoredLines(first.eventId)).toHaveLength(2), { timeout: 10_000 });

    expect(service.chatRequests().length - requestsBefore).toBe(1);
    expect(requestsFor('Say something once.')).toHaveLength(1);
    const answer = expectStreamedAnswer(channel, streamed, 'U0BOB');
    expect(answer.threadTs).toBe(ts);
    expect(
      slack.eventDeliveries.filter((d) => d.eventId === first.eventId).map((d) => [d.retryNum, d.ackedInTime]),
    ).toEqual([
      [undefined, true],
      [1, true],
      [2, true],
    ]);
    expect(slack.platformFailures).toEqual([]);
  });

  it("a DM to the bot opens a thread of the agent view: the streamed text is answered in the message's thread, natively streamed", async () => {
    const dm = slack.openIm(DM_USERS.answered).id;
    const event = slack.imMessageEvent({
      channel: dm,
      user: DM_USERS.answered,
      text: 'Hello from a private chat & more',
    });
    expect(event).toMatchObject({ type: 'message', channel_type: 'im' });
    const ts = event.ts as string;
    const streamed = 'Hello back, privately. This answer is long enough to be edited while it streams in. '.repeat(6);
    service.enqueue('chat', { stream: { text: streamed, chunkDelayMs: 25 } });

    const outcome = await deliver(event, conversationOf(dm, ts));
    expect(outcome).toMatchObject({ ok: true, command: 'mention' });
    expect(requestsFor('Hello from a private chat & more')).toHaveLength(1);
    const answer = expectStreamedAnswer(dm, streamed);
    expect(answer.threadTs).toBe(ts);
    // A DM takes no recipient ids (Slack requires them outside DMs only).
    expect(answer.stream!.recipientUserId).toBeUndefined();
    expect(slack.ephemerals.filter((e) => e.channel === dm)).toEqual([]);
  });

  it('without files:read, Slack answers the files with its HTML sign-in page: the files:read sentence is shown once under the answer, and the text is still answered', async () => {
    const channel = CHANNELS.noScope;
    const files = [
      slack.addUserFile({ name: 'one.png', mimetype: 'image/png', data: await png(16, 16), user: 'U0ALICE' }),
      slack.addUserFile({ name: 'two.png', mimetype: 'image/png', data: await png(24, 24), user: 'U0ALICE' }),
    ];
    const event = slack.mentionEvent({ channel, user: 'U0ALICE', text: 'Compare these two.', files });
    const ts = event.ts as string;
    slack.setScopes(DEFAULT_BOT_SCOPES.filter((s) => s !== 'files:read'));
    try {
      const outcome = await deliver(event, conversationOf(channel, ts));
      expect(outcome.ok).toBe(true);
    } finally {
      slack.setScopes([...DEFAULT_BOT_SCOPES]);
    }

    // Both downloads were tried and refused (the login redirect), nothing went to the service as an image.
    const downloads = slack.downloads.filter((d) => files.some((f) => f.id === d.fileId));
    expect(downloads.filter((d) => d.path.startsWith('/files-pri/'))).toHaveLength(2);
    expect(downloads.every((d) => !d.authorized && d.status === 302)).toBe(true);
    const [request, ...more] = requestsFor('Compare these two.');
    expect(more).toEqual([]);
    expect(request!.messages).toEqual([{ role: 'user', content: 'Compare these two.' }]);

    // The answer, in the thread, with the sentence once (two files, one cause).
    const [answer, ...others] = botMessages(channel);
    expect(others).toEqual([]);
    expect(answer!.threadTs).toBe(ts);
    const shown = unescapeSlack(answer!.text);
    expect(shown.startsWith('Echo: Compare these two.')).toBe(true);
    expect(occurrences(shown, english.say(FILES_READ_MISSING))).toBe(1);
    const everything = [
      ...slack.messages(channel).map((m) => unescapeSlack(m.text)),
      ...slack.ephemerals.filter((e) => e.channel === channel).map((e) => unescapeSlack(e.text)),
    ].join('\n');
    expect(occurrences(everything, english.say(FILES_READ_MISSING))).toBe(1);
  });

  it('a second mention in the thread of the first carries the first exchange; a /chat in the channel afterwards does not (the channel is another conversation)', async () => {
    const channel = CHANNELS.thread;
    const first = slack.mentionEvent({ channel, user: 'U0ALICE', text: 'My name is Ada.' });
    const threadTs = first.ts as string;
    expect((await deliver(first, conversationOf(channel, threadTs))).ok).toBe(true);

    const second = slack.mentionEvent({ channel, user: 'U0ALICE', text: 'What is my name?', threadTs });
    expect(second.thread_ts).toBe(threadTs);
    expect((await deliver(second, conversationOf(channel, threadTs))).ok).toBe(true);

    const [inThread, ...moreInThread] = requestsFor('What is my name?');
    expect(moreInThread).toEqual([]);
    expect(inThread!.messages).toEqual([
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Echo: My name is Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    // Both answers are replies in the first mention's thread.
    expect(botMessages(channel).map((m) => [m.threadTs, unescapeSlack(m.text)])).toEqual([
      [threadTs, 'Echo: My name is Ada.'],
      [threadTs, 'Echo: What is my name?'],
    ]);

    const done = testBot.outcomes((o) => o.command === 'chat' && o.conversationId === conversationOf(channel));
    const ack = await slack.sendSlashCommand(botUrl, {
      command: '/chat',
      text: 'Who am I?',
      channel_id: channel,
      user_id: 'U0ALICE',
    });
    expect(ack).toMatchObject({ status: 200, ackedInTime: true });
    expect((await done)[0]!.ok).toBe(true);
    const [inChannel, ...moreInChannel] = requestsFor('Who am I?');
    expect(moreInChannel).toEqual([]);
    expect(inChannel!.messages).toEqual([{ role: 'user', content: 'Who am I?' }]);
    // The /chat's question is shown in the channel and answered in its own thread, not the mention's.
    const question = expectQuestion(slack, channel, 'alice', 'Who am I?');
    const channelAnswer = botMessages(channel).at(-1)!;
    expect(channelAnswer.threadTs).toBe(question.ts);
    expect(channelAnswer.threadTs).not.toBe(threadTs);
    expect(unescapeSlack(channelAnswer.text)).toBe('Echo: Who am I?');
  });

  it("in a DM, other apps' messages, the bot's own messages, an edit that keeps the text and deletions are acked and ignored: no request to the service, no answer", async () => {
    const user = DM_USERS.ignored;
    const dm = slack.openIm(user).id;
    const hello = slack.imMessageEvent({ channel: dm, user, text: 'Hello there.' });
    expect((await deliver(hello, conversationOf(dm, hello.ts as string))).ok).toBe(true);
    const [ownAnswer] = botMessages(dm);
    expect(unescapeSlack(ownAnswer!.text)).toBe('Echo: Hello there.');

    const requestsBefore = service.requests.length;
    const ignored: SlackEvent[] = [
      slack.botMessageEvent({ channel: dm, text: 'An automated notice from another app.' }),
      slack.ownMessageEvent({ channel: dm, ts: ownAnswer!.ts }),
      // An edit that changes the text re-answers it in place (regenerate-slack.test.ts); this one does not.
      slack.messageChangedEvent({ channel: dm, ts: hello.ts as string, text: 'Hello there.' }),
      slack.messageDeletedEvent({ channel: dm, ts: hello.ts as string }),
    ];
    expect(ignored.map((e) => [e.type, e.subtype])).toEqual([
      ['message', 'bot_message'],
      ['message', undefined],
      ['message', 'message_changed'],
      ['message', 'message_deleted'],
    ]);
    for (const event of ignored) {
      const ack = await slack.sendEvent(botUrl, event);
      expect(ack).toMatchObject({ status: 200, ackedInTime: true });
    }

    // A genuine message afterwards: once it is answered, anything the ignored events started would have shown.
    const after = slack.imMessageEvent({ channel: dm, user, text: 'Are you there?' });
    expect((await deliver(after, conversationOf(dm, after.ts as string))).ok).toBe(true);
    const since = service.requests.slice(requestsBefore).filter((r) => r.route === 'chat');
    expect(since).toHaveLength(1);
    expect(lastContent(since[0]!.body as { messages: Array<{ content: unknown }> })).toBe('Are you there?');
    expect(botMessages(dm).map((m) => unescapeSlack(m.text))).toEqual(['Echo: Hello there.', 'Echo: Are you there?']);
    expect(testBot.logs.filter((l) => l.channel === dm && l.level >= 40)).toEqual([]);
    expect(slack.platformFailures).toEqual([]);
  });
});
