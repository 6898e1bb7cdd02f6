/**
 * End-to-end on Slack (issue 9): native streaming of answers in threads, what happens when
 * Slack closes a stream or refuses streaming, and the buttons — Stop on a streaming answer,
 * Reroll on an image — pressed as Slack sends them (signed `block_actions` payloads); a /chat's
 * question shown at once with "is thinking…" in its thread, and removed when the command fails. The
 * whole bot (startTestBot) with @slack/bolt and @slack/web-api unmodified, against FakeSlack
 * and FakeService. The test that turns streaming off for the workspace runs last: the bot
 * remembers that refusal for an hour.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeService } from '../fakes/service.ts';
import { escapeSlack, type FakeSlack, type FakeSlackMessage, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';
import { answersIn, expectQuestion, expectStreamedMessage } from './slack-checks.ts';

const CHANNELS = {
  expiry: 'C0EXPIRY',
  stop: 'C0STOP',
  reroll: 'C0REROLL',
  fallback: 'C0FALLBACK',
  question: 'C0QUESTION',
  status: 'C0STATUS',
  waiting: 'C0WAITING',
  refused: 'C0REFUSED',
} as const;

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    service: { apiKey: `sk-fake-${randomBytes(16).toString('hex')}` },
    slack: { channels: slackChannels(CHANNELS) },
    beforeBot: (e2e) => {
      e2e.slack.addUser({ id: 'U0CAROL', name: 'carol' });
    },
    bot: {},
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** The bot's messages in `channel` (the fake also keeps the users' messages). */
const botMessages = (channel: string) => slack.messages(channel).filter((m) => m.user === slack.botUserId);

/** Resolves with the next finished invocation named `command` in a conversation of `channel`. */
function next(command: string, channel: string): Promise<CommandOutcome> {
  return testBot.outcomes((o) => o.command === command && o.conversationId.includes(`:${channel}`)).then(([o]) => o!);
}

/** Mentions the bot in `channel` as `user`; resolves with the mention's ts and its finished outcome. */
async function mention(
  channel: string,
  user: string,
  text: string,
): Promise<{ ts: string; done: Promise<CommandOutcome> }> {
  const event = slack.mentionEvent({ channel, user, text });
  const done = next('mention', channel);
  const ack = await slack.sendEvent(botUrl, event);
  expect(ack).toMatchObject({ status: 200, ackedInTime: true });
  return { ts: event.ts as string, done };
}

/** Polls until `check` holds (a state of the fake reached by the bot's own pace). */
async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The action ids of a message's (or ephemeral's) buttons. */
const actionIds = (blocks: unknown[] | undefined) =>
  (blocks ?? []).flatMap((b) =>
    (b as { type: string; elements?: Array<{ action_id?: string }> }).type === 'actions'
      ? (b as { elements: Array<{ action_id: string }> }).elements.map((e) => e.action_id)
      : [],
  );

describe('Slack native streaming', () => {
  it('a stream Slack closes mid-answer (expired) goes on by chat.update: the whole text stays visible, nothing lost', async () => {
    const channel = CHANNELS.expiry;
    // Slack closes streams after about 5 minutes; here after 2.5 s, of an answer that lasts 5 s.
    slack.setStreaming({ streamExpiryMs: 2_500 });
    try {
      const pieces = Array.from({ length: 50 }, (_, i) => `piece${i + 1} of a long answer & more. `);
      const streamed = pieces.join('');
      service.enqueue('chat', { stream: { pieces, chunkDelayMs: 100 } });
      const { ts, done } = await mention(channel, 'U0ALICE', 'Tell me at length.');
      expect((await done).ok).toBe(true);
      const [answer, ...others] = botMessages(channel);
      expect(others).toEqual([]);
      expect(answer).toMatchObject({ via: 'chat.startStream', threadTs: ts });
      expect(answer!.stream!.state).toBe('expired');
      expect(answer!.stream!.writes.filter((w) => w.method === 'chat.appendStream').length).toBeGreaterThanOrEqual(1);
      // After the expiry the message was updated to the whole answer.
      expect(answer!.revisions.at(-1)!.method).toBe('chat.update');
      expect(unescapeSlack(answer!.text)).toBe(streamed);
      expect(answer!.text).toBe(escapeSlack(streamed));
    } finally {
      slack.setStreaming({ streamExpiryMs: undefined });
    }
  });

  it("a stream Slack closes mid-answer: the chat.update that goes on renders the answer's Markdown as a posted answer's (markdown blocks; no raw ** or table rows in the text)", async () => {
    const channel = CHANNELS.expiry;
    slack.setStreaming({ streamExpiryMs: 2_500 });
    try {
      const table = '| Stop | Arrives |\n|---|---|\n| Pier 4 | 7:15 |\n| Seal Rock | 8:40 |\n';
      const pieces = [
        '## The plan\n\n',
        ...Array.from({ length: 40 }, (_, i) => `Step ${i + 1} is **important**. `),
        `\n\n${table}`,
      ];
      service.enqueue('chat', { stream: { pieces, chunkDelayMs: 100 } });
      const { done } = await mention(channel, 'U0ALICE', 'Plan it at length.');
      expect((await done).ok).toBe(true);
      const answer = botMessages(channel).at(-1)!;
      expect(answer.stream!.state).toBe('expired');
      expect(answer.revisions.at(-1)!.method).toBe('chat.update');
      const blocks = answer.blocks as Array<{ type: string; text?: string }>;
      expect(blocks.map((b) => b.type)).toContain('markdown');
      expect(blocks.find((b) => b.type === 'markdown')!.text).toContain('**important**');
      // The text beside the blocks is mrkdwn: bold as *…*, no Markdown left raw.
      expect(answer.text).toContain('*important*');
      expect(answer.text).not.toContain('**');
      expect(answer.text).not.toContain('|---|');
      expect(answer.text).not.toContain('## ');
    } finally {
      slack.setStreaming({ streamExpiryMs: undefined });
    }
  });

  it('a stream the user stops in Slack\'s client (stopped_by_user) stops the answer as Stop does: the service connection closes, the partial text stays with "Stopped.", the history keeps it marked', async () => {
    const channel = CHANNELS.stop;
    const pieces = Array.from({ length: 60 }, (_, i) => `word${i + 1} `);
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 100 } });
    const { ts, done } = await mention(channel, 'U0ALICE', 'Count slowly.');
    await until(() => (botMessages(channel)[0]?.stream?.writes.length ?? 0) >= 2);
    const [answer] = botMessages(channel);

    const closed = new Promise<{ at: number; finished: boolean }>((resolve) =>
      service.events.once('streamClosed', resolve),
    );
    const stoppedAt = Date.now();
    slack.stopStreamByUser(channel, answer!.ts);
    expect(await done).toMatchObject({ ok: false, errorCode: 'aborted' });
    const connection = await closed;
    expect(connection.finished).toBe(false);
    // Slack says so at the bot's next append (about one a second): the answer had ~4 s to go.
    expect(connection.at - stoppedAt).toBeLessThan(2_000);

    expect(answer!.stream!.state).toBe('stopped_by_user');
    expect(unescapeSlack(answer!.text)).toMatch(/^word1 [\s\S]*\n\n⚠️ Stopped\.$/);
    expect(answer!.text).not.toContain('word60');
    const history = await testBot.bot.core.history.get(`slack:${slack.teamId}:${channel}:${ts}`);
    expect(history.at(-1)).toMatchObject({
      role: 'assistant',
      content: expect.stringMatching(/^word1 [\s\S]*\[stopped\]$/),
    });
    expect(slack.ephemerals.filter((e) => e.channel === channel)).toEqual([]);
  });
});

describe('Slack /chat in a channel', () => {
  it('shows the question to the channel, attributed and quoted, streams the answer into its thread for the asker, and a mention in that thread carries the exchange', async () => {
    const channel = CHANNELS.question;
    const streamed = 'Paris, on the Seine; its <b>heart</b> & soul. '.repeat(6);
    service.enqueue('chat', { stream: { text: streamed, chunkDelayMs: 20 } });
    const done = next('chat', channel);
    const ack = await slack.sendSlashCommand(botUrl, {
      command: '/chat',
      text: 'Capital of France? <!here> --temperature 0.2',
      channel_id: channel,
      user_id: 'U0BOB',
    });
    expect(ack.ackedInTime).toBe(true);
    expect((await done).ok).toBe(true);
    // Only the prompt is shown (not the options), escaped: `<!here>` reads as typed and pings nobody.
    const question = expectQuestion(slack, channel, 'bob', 'Capital of France? <!here>');
    expect(question.mentions).toEqual([]);
    const answer = expectStreamedMessage(slack, channel, streamed);
    expect([answer.stream!.recipientTeamId, answer.stream!.recipientUserId]).toEqual([slack.teamId, 'U0BOB']);

    const event = slack.mentionEvent({ channel, user: 'U0BOB', text: 'And its river?', threadTs: question.ts });
    const mentioned = next('mention', channel);
    await slack.sendEvent(botUrl, event);
    expect((await mentioned).ok).toBe(true);
    const request = service.chatRequests().at(-1)!;
    expect(request.messages).toEqual([
      { role: 'user', content: 'Capital of France? <!here>' },
      { role: 'assistant', content: streamed },
      { role: 'user', content: 'And its river?' },
    ]);
  });

  it('a /chat whose answer is slow shows its question at once and "is thinking…" in its thread, before the first token', async () => {
    const channel = CHANNELS.waiting;
    const streamed = 'Worth the wait: here it comes, word by word. '.repeat(6);
    // The service answers after 2.5 s.
    service.enqueue('chat', { stream: { text: streamed, chunkDelayMs: 20 }, delayHeadersMs: 2_500 });
    const done = next('chat', channel);
    const answered = new Promise<number>((resolve) =>
      service.events.once('response', (r) => r.stream && resolve(Date.now())),
    );
    const ack = await slack.sendSlashCommand(botUrl, {
      command: '/chat',
      text: 'Take your time --temperature 0.5',
      channel_id: channel,
      user_id: 'U0BOB',
    });
    expect(ack.ackedInTime).toBe(true);
    // Well before the service's first byte: the question is up and its thread shows the status.
    await until(() => slack.assistantStatuses.some((s) => s.channel === channel), 1_500);
    const question = expectQuestion(slack, channel, 'bob', 'Take your time');
    const [status] = slack.assistantStatuses.filter((s) => s.channel === channel);
    expect(status).toMatchObject({ threadTs: question.ts, status: 'is thinking…' });
    expect(slack.assistantStatus(channel, question.ts)).toMatchObject({ status: 'is thinking…' });
    expect(answersIn(slack, channel)).toEqual([]);
    const statusSeenAt = Date.now();

    expect((await done).ok).toBe(true);
    expect(await answered).toBeGreaterThan(statusSeenAt);
    const answer = expectStreamedMessage(slack, channel, streamed);
    expect(status!.at).toBeLessThanOrEqual(answer.stream!.startedAt);
    // Once the answer is in the thread, the status is gone.
    expect(slack.assistantStatus(channel, question.ts)).toBeUndefined();
  });

  it('a /chat the service refuses after its question went up removes the question: the channel keeps nothing, the asker alone is told', async () => {
    const channel = CHANNELS.refused;
    service.enqueue('chat', {
      status: 400,
      body: { error: { message: 'Not this one', type: 'invalid_request_error', param: null, code: null } },
      delayHeadersMs: 1_000,
    });
    const done = next('chat', channel);
    await slack.sendSlashCommand(botUrl, { command: '/chat', text: 'Will you refuse?', channel_id: channel });
    await until(() => slack.messages(channel).length > 0, 1_000);
    const question = expectQuestion(slack, channel, 'alice', 'Will you refuse?');
    expect(await done).toMatchObject({ ok: false, errorCode: 'bad_request' });
    expect(slack.message(channel, question.ts)!.deleted).toBe(true);
    expect(slack.messages(channel)).toEqual([]);
    const told = slack.responsePosts().filter((p) => p.channel === channel);
    expect(told.map((p) => [p.responseType, p.status])).toEqual([['ephemeral', 200]]);
    expect(unescapeSlack(told[0]!.text)).toMatch(/^The generation service rejected the request: /);
  });

  it('while the answer is awaited, the mention\'s thread shows "is thinking…" (assistant.threads.setStatus)', async () => {
    const channel = CHANNELS.status;
    service.enqueue('chat', { stream: { text: 'Thought it through.', chunkDelayMs: 10 } });
    const { ts, done } = await mention(channel, 'U0ALICE', 'Think first.');
    expect((await done).ok).toBe(true);
    const statuses = slack.assistantStatuses.filter((s) => s.channel === channel);
    expect(statuses[0]).toMatchObject({ threadTs: ts, status: 'is thinking…' });
    // The status was set before the answer's first write.
    const [answer] = botMessages(channel);
    expect(statuses[0]!.at).toBeLessThanOrEqual(answer!.stream!.startedAt);
  });
});

describe('Slack /imagine buttons', () => {
  /** The line of the Reroll / Upscale / Vary buttons under an image in `channel`. */
  const buttonsLine = (channel: string): FakeSlackMessage =>
    botMessages(channel).find((m) => actionIds(m.blocks as unknown[] | undefined).length > 0)!;

  it('Reroll by the asker generates the same prompt with a new seed; another member is told only the asker or an admin may', async () => {
    const channel = CHANNELS.reroll;
    const done = next('imagine', channel);
    const ack = await slack.sendSlashCommand(botUrl, {
      command: '/imagine',
      text: 'a lighthouse --seed 42',
      channel_id: channel,
      user_id: 'U0BOB',
    });
    expect(ack.ackedInTime).toBe(true);
    expect((await done).ok).toBe(true);
    const line = buttonsLine(channel);
    const reroll = actionIds(line.blocks as unknown[]).find((id) => id.startsWith('imagine:reroll:'))!;
    const imagesBefore = service.requests.filter((r) => r.route === 'images').length;

    const refusedDone = next('imagine:button', channel);
    const refused = await slack.sendBlockAction(botUrl, {
      user: 'U0CAROL',
      channel,
      messageTs: line.ts,
      actionId: reroll,
    });
    expect(refused).toMatchObject({ status: 200, ackedInTime: true });
    expect(await refusedDone).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(
      slack
        .responsePosts()
        .some(
          (p) =>
            p.status === 200 &&
            String((p.body as { text?: string }).text).includes(
              'Only the person who asked for this image, or an admin',
            ),
        ),
    ).toBe(true);
    expect(service.requests.filter((r) => r.route === 'images').length).toBe(imagesBefore);

    const pressDone = next('imagine:button', channel);
    await slack.sendBlockAction(botUrl, { user: 'U0BOB', channel, messageTs: line.ts, actionId: reroll });
    expect((await pressDone).ok).toBe(true);
    const rerolled = service.lastRequest('images')!.body as Record<string, unknown>;
    expect(rerolled).toMatchObject({ prompt: 'a lighthouse' });
    expect(rerolled.seed).toEqual(expect.any(Number));
    expect(rerolled.seed).not.toBe(42);
    expect([...slack.files.values()].filter((f) => f.channel === channel)).toHaveLength(2);
  });
});

describe('Slack without native streaming', () => {
  it("where Slack refuses streaming (unknown_method), the same answer arrives by post and chat.update, the bot does not ask again, and the posted answer's Stop button works for the asker alone", async () => {
    const channel = CHANNELS.fallback;
    slack.setStreaming({ streaming: false });
    try {
      const streamed = 'Posted, then updated, since this workspace cannot stream. '.repeat(6);
      service.enqueue('chat', { stream: { text: streamed, chunkDelayMs: 25 } });
      const first = await mention(channel, 'U0ALICE', 'First question.');
      expect((await first.done).ok).toBe(true);
      const [answer] = botMessages(channel);
      expect(answer).toMatchObject({ via: 'chat.postMessage', threadTs: first.ts });
      expect(unescapeSlack(answer!.text)).toBe(streamed);
      expect(answer!.revisions.filter((r) => r.method === 'chat.update').length).toBeGreaterThanOrEqual(1);
      const starts = () => slack.calls.filter((c) => c.method === 'chat.startStream').length;
      const startsAfterFirst = starts();

      service.enqueue('chat', { stream: { text: 'Second answer.', chunkDelayMs: 10 } });
      const second = await mention(channel, 'U0ALICE', 'Second question.');
      expect((await second.done).ok).toBe(true);
      expect(starts()).toBe(startsAfterFirst);
      expect(botMessages(channel).at(-1)).toMatchObject({ via: 'chat.postMessage', threadTs: second.ts });

      // Posted answers carry a Stop button (a block): refused to another member, honoured for the asker.
      const pieces = Array.from({ length: 60 }, (_, i) => `word${i + 1} `);
      service.enqueue('chat', { stream: { pieces, chunkDelayMs: 100 } });
      const third = await mention(channel, 'U0ALICE', 'Count slowly.');
      await until(
        () =>
          actionIds(botMessages(channel).at(-1)?.blocks as unknown[] | undefined).some((id) =>
            id.startsWith('stop:'),
          ) && botMessages(channel).at(-1)!.threadTs === third.ts,
      );
      const streaming = botMessages(channel).at(-1)!;
      const stopId = actionIds(streaming.blocks as unknown[]).find((id) => id.startsWith('stop:'))!;
      const refusedDone = next('stop:button', channel);
      await slack.sendBlockAction(botUrl, { user: 'U0BOB', channel, messageTs: streaming.ts, actionId: stopId });
      await refusedDone;
      expect(
        slack
          .responsePosts()
          .some((p) =>
            String((p.body as { text?: string }).text).includes(
              'Only the person who asked, or an admin, can stop this answer.',
            ),
          ),
      ).toBe(true);
      const closed = new Promise<{ at: number; finished: boolean }>((resolve) =>
        service.events.once('streamClosed', resolve),
      );
      const pressedAt = Date.now();
      await slack.sendBlockAction(botUrl, { user: 'U0ALICE', channel, messageTs: streaming.ts, actionId: stopId });
      expect(await third.done).toMatchObject({ ok: false, errorCode: 'aborted' });
      const connection = await closed;
      expect(connection.finished).toBe(false);
      expect(connection.at - pressedAt).toBeLessThan(500);
      expect(unescapeSlack(streaming.text)).toMatch(/^word1 [\s\S]*\n\n⚠️ Stopped\.$/);
      // The final write removed the button.
      expect(actionIds(streaming.blocks as unknown[] | undefined)).toEqual([]);
    } finally {
      slack.setStreaming({ streaming: undefined });
    }
  });
});
