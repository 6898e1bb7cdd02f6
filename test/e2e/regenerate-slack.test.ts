/**
 * End-to-end on Slack, Regenerate and edited mentions (issue 19 item 4): the whole bot with
 * @slack/bolt and @slack/web-api unmodified, against FakeSlack and FakeService. A natively
 * streamed answer ends (chat.stopStream) with a Regenerate button block; a posted one (a /chat
 * in a DM) carries it in its last chat.update. A press by the asker or an admin sends
 * the same request again and rewrites the same message with chat.update; anyone else is told
 * no through the press's response_url. Editing a mention (`message_changed`) within
 * EDIT_REANSWER_MINUTES re-answers it in place, once per edit, whatever Slack redelivers.
 */
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { splitMessage } from '../../src/core/delivery/split.ts';
import { SLACK_MESSAGE_LIMITS } from '../../src/platforms/slack/message-limits.ts';
import type { ChatRequestBody, FakeService } from '../fakes/service.ts';
import { type FakeSlack, type FakeSlackMessage, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = {
  native: 'C0REGEN',
  admin: 'C0REGADM',
  edit: 'C0EDIT',
  late: 'C0LATE',
  long: 'C0LONG',
  editLong: 'C0EDLONG',
  forget: 'C0FORGET',
} as const;

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;
/** Added to the fake Slack's clock (message and edit timestamps). */
let clockOffsetMs = 0;

useE2E(
  {
    slack: {
      channels: slackChannels(CHANNELS),
      now: () => Date.now() + clockOffsetMs,
    },
    beforeBot: (e2e) => {
      e2e.slack.addUser({ id: 'U0CAROL', name: 'carol' });
    },
    bot: { env: { EDIT_REANSWER_MINUTES: '10' } },
    resetServiceAfterEach: true,
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** The asker (no admin), someone else (no admin), and a workspace admin. */
const ASKER = 'U0BOB';
const OTHER = 'U0CAROL';
const ADMIN = 'U0ALICE';

const botMessages = (channel: string) => slack.messages(channel).filter((m) => m.user === slack.botUserId);

/** The action ids of a message's buttons. */
const actionIds = (message: FakeSlackMessage) =>
  ((message.blocks ?? []) as Array<{ type: string; elements?: Array<{ action_id?: string }> }>).flatMap((b) =>
    b.type === 'actions' ? (b.elements ?? []).map((e) => String(e.action_id)) : [],
  );

function regenerateOf(message: FakeSlackMessage): string {
  const id = actionIds(message).find((a) => a.startsWith('regenerate:'));
  expect(id, `actions: ${actionIds(message).join(', ')}`).toBeDefined();
  return id!;
}

/** Resolves with the next outcome of `command` in a conversation of `channel`. */
function next(command: string, channel: string): Promise<CommandOutcome> {
  return testBot.outcomes((o) => o.command === command && o.conversationId.includes(`:${channel}`)).then(([o]) => o!);
}

/** Mentions the bot as `user` (in a thread when given) and waits for the answer. */
async function mention(channel: string, text: string, user = ASKER, threadTs?: string): Promise<string> {
  const event = slack.mentionEvent({ channel, user, text, ...(threadTs ? { threadTs } : {}) });
  const done = next('mention', channel);
  expect(await slack.sendEvent(botUrl, event)).toMatchObject({ status: 200, ackedInTime: true });
  expect((await done).ok).toBe(true);
  return event.ts as string;
}

/** Presses a button as `user` and waits for the press's outcome. */
async function press(channel: string, message: FakeSlackMessage, actionId: string, user: string) {
  const done = next('regenerate:button', channel);
  await slack.sendBlockAction(botUrl, { user, channel, messageTs: message.ts, actionId });
  return done;
}

const toldToPresser = (text: string) =>
  slack.responsePosts().some((p) => String((p.body as { text?: string }).text).includes(text));

const lastUserText = (body: ChatRequestBody) => body.messages.at(-1)!.content as string;

describe('Regenerate on Slack', () => {
  it('a natively streamed answer ends with Regenerate; another member is refused; the asker gets the same request again, rewritten into the same message, and the thread history holds the new answer once', async () => {
    const channel = CHANNELS.native;
    service.enqueue('chat', { stream: { text: 'First answer.' } });
    const ts = await mention(channel, 'Name a fruit');
    const [answer] = botMessages(channel);
    expect(answer).toMatchObject({ via: 'chat.startStream', threadTs: ts });
    // chat.stopStream carried the button block.
    expect(answer!.stream!.stopBlocks).toBeDefined();
    const regenerate = regenerateOf(answer!);
    expect(regenerate).toMatch(new RegExp(`^regenerate:[0-9a-f]{18}:${ASKER}$`));
    const first = service.chatRequests().at(-1)!;

    const refused = await press(channel, answer!, regenerate, OTHER);
    expect(refused).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(toldToPresser('Only the person who asked, or an admin, can regenerate this answer.')).toBe(true);
    expect(service.chatRequests()).toHaveLength(1);

    service.enqueue('chat', { stream: { text: 'Second answer.' } });
    expect((await press(channel, answer!, regenerate, ASKER)).ok).toBe(true);
    expect(service.chatRequests()).toHaveLength(2);
    expect(service.chatRequests()[1]).toEqual(first);
    expect(botMessages(channel)).toHaveLength(1);
    expect(unescapeSlack(answer!.text)).toBe('Second answer.');
    expect(answer!.revisions.at(-1)!.method).toBe('chat.update');
    expect(actionIds(answer!)).toEqual([regenerate]);

    service.enqueue('chat', { stream: { text: 'Third answer.' } });
    await mention(channel, 'And another?', ASKER, ts);
    const history = service
      .chatRequests()
      .at(-1)!
      .messages.map((m) => m.content);
    expect(history).toEqual(['Name a fruit', 'Second answer.', 'And another?']);
  });

  it("a posted answer (a /chat in a DM) carries Regenerate as a button block, and an admin may press another's", async () => {
    const dm = slack.openIm(ASKER).id;
    service.enqueue('chat', { stream: { text: 'Posted answer.' } });
    const done = next('chat', dm);
    await slack.sendSlashCommand(botUrl, { command: '/chat', text: 'Hello', channel_id: dm, user_id: ASKER });
    expect((await done).ok).toBe(true);
    const answer = botMessages(dm).at(-1)!;
    expect(answer.via).toBe('chat.postMessage');
    const regenerate = regenerateOf(answer);
    service.enqueue('chat', { stream: { text: 'Reposted answer.' } });
    expect((await press(dm, answer, regenerate, ASKER)).ok).toBe(true);
    expect(unescapeSlack(answer.text)).toBe('Reposted answer.');
    expect(actionIds(answer)).toEqual([regenerate]);

    const channel = CHANNELS.admin;
    service.enqueue('chat', { stream: { text: 'Old.' } });
    await mention(channel, 'Say something');
    const streamed = botMessages(channel)[0]!;
    service.enqueue('chat', { stream: { text: 'New.' } });
    expect((await press(channel, streamed, regenerateOf(streamed), ADMIN)).ok).toBe(true);
    expect(unescapeSlack(streamed.text)).toBe('New.');
  });
});

describe('edited mentions on Slack', () => {
  it('an edit within the window sends one new request with the edited text and rewrites the answer in place, once even when Slack delivers it again', async () => {
    const channel = CHANNELS.edit;
    service.enqueue('chat', { stream: { text: 'It is 5.' } });
    const ts = await mention(channel, 'What is 2+2?');
    const [answer] = botMessages(channel);
    const first = service.chatRequests().at(-1)!;
    const before = service.chatRequests().length;
    service.enqueue('chat', { stream: { pieces: ['It ', 'is ', '4.'], chunkDelayMs: 200 } });
    const done = next('edit', channel);
    const event = slack.messageChangedEvent({ channel, ts, text: `<@${slack.botUserId}> What is 2+2, really?` });
    const sent = await slack.sendEvent(botUrl, event);
    expect(sent.ackedInTime).toBe(true);
    // Slack's retry of the same event, and the same edit as a new delivery: neither answers again.
    const since = testBot.logs.length;
    await slack.sendEvent(botUrl, event, { eventId: sent.eventId, retryNum: 1 });
    await slack.sendEvent(botUrl, event);
    expect((await done).ok).toBe(true);
    const requests = service.chatRequests().slice(before);
    expect(requests).toHaveLength(1);
    expect(lastUserText(requests[0]!)).toBe('What is 2+2, really?');
    expect(requests[0]!.messages.slice(0, -1)).toEqual(first.messages.slice(0, -1));
    expect(testBot.logs.slice(since).filter((l) => l.msg?.startsWith('edit left alone'))).toHaveLength(2);
    expect(botMessages(channel)).toHaveLength(1);
    expect(unescapeSlack(answer!.text)).toBe('It is 4.');

    service.enqueue('chat', { stream: { text: 'Next.' } });
    await mention(channel, 'Thanks', ASKER, ts);
    expect(
      service
        .chatRequests()
        .at(-1)!
        .messages.map((m) => m.content),
    ).toEqual(['What is 2+2, really?', 'It is 4.', 'Thanks']);
  });

  it('an edit after the window sends nothing', async () => {
    const channel = CHANNELS.late;
    service.enqueue('chat', { stream: { text: 'Early answer.' } });
    const ts = await mention(channel, 'Early question');
    const before = service.chatRequests().length;
    clockOffsetMs = 11 * 60_000;
    try {
      const since = testBot.logs.length;
      const event = slack.messageChangedEvent({ channel, ts, text: `<@${slack.botUserId}> Late question` });
      await slack.sendEvent(botUrl, event);
      const deadline = Date.now() + 10_000;
      while (!testBot.logs.slice(since).some((l) => l.msg?.startsWith('edit left alone')) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(testBot.logs.slice(since).some((l) => l.msg?.startsWith('edit left alone'))).toBe(true);
    } finally {
      clockOffsetMs = 0;
    }
    expect(service.chatRequests()).toHaveLength(before);
    expect(unescapeSlack(botMessages(channel)[0]!.text)).toBe('Early answer.');
  });
});

describe('Regenerate and edits of answers longer than one message on Slack', () => {
  /** REPLACED_PAGE (Markdown italics) as the mrkdwn `text` of a message (issue 39). */
  const REPLACED = '_(replaced by the text above)_';
  /** An answer of `count` paragraphs of about 3,000 characters: one Slack message each. */
  const paragraphs = (tag: string, count: number) =>
    Array.from({ length: count }, (_, i) => `${tag} paragraph ${i + 1}: ${'word '.repeat(600).trim()}`).join('\n\n');
  const pagesOf = (text: string) =>
    splitMessage(text, SLACK_MESSAGE_LIMITS.maxChars, SLACK_MESSAGE_LIMITS.measure, SLACK_MESSAGE_LIMITS.pageBreaks);
  /** What a message shows, as a reader sees it. */
  const shown = (message: FakeSlackMessage) => unescapeSlack(message.text);

  it('a 3-message answer in a thread regenerated into 2: pages 1 and 2 over messages 1 and 2 (chat.update), message 3 replaced without a button, Regenerate on message 2, nothing posted', async () => {
    const channel = CHANNELS.long;
    const old = paragraphs('Old', 3);
    service.enqueue('chat', { stream: { text: old } });
    await mention(channel, 'Three paragraphs');
    const messages = botMessages(channel);
    expect(messages.map(shown)).toEqual(pagesOf(old));
    expect(messages).toHaveLength(3);
    const regenerate = regenerateOf(messages[2]!);

    const fresh = paragraphs('New', 2);
    expect(pagesOf(fresh)).toHaveLength(2);
    service.enqueue('chat', { stream: { text: fresh } });
    expect((await press(channel, messages[2]!, regenerate, ASKER)).ok).toBe(true);
    expect(botMessages(channel)).toHaveLength(3);
    expect(messages.map(shown)).toEqual([...pagesOf(fresh), REPLACED]);
    expect(messages.map(actionIds)).toEqual([[], [regenerate], []]);
    for (const message of messages) expect(message.revisions.at(-1)!.method).toBe('chat.update');
  });

  it("a DM's 1-message answer (in its thread) regenerated into 2: the message updated with page 1, page 2 posted after it with Regenerate; a press there writes over both", async () => {
    const dm = slack.openIm(ASKER).id;
    service.enqueue('chat', { stream: { text: 'Short.' } });
    const done = next('mention', dm);
    await slack.sendEvent(botUrl, slack.imMessageEvent({ channel: dm, user: ASKER, text: 'Briefly' }));
    expect((await done).ok).toBe(true);
    const before = botMessages(dm).length;
    const answer = botMessages(dm).at(-1)!;
    const regenerate = regenerateOf(answer);
    const longer = paragraphs('Longer', 2);
    service.enqueue('chat', { stream: { text: longer } });
    expect((await press(dm, answer, regenerate, ASKER)).ok).toBe(true);
    const messages = botMessages(dm).slice(before - 1);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toBe(answer);
    expect(messages.map(shown)).toEqual(pagesOf(longer));
    expect(messages.map(actionIds)).toEqual([[], [regenerate]]);

    service.enqueue('chat', { stream: { text: 'Short again.' } });
    expect((await press(dm, messages[1]!, regenerate, ASKER)).ok).toBe(true);
    expect(messages.map(shown)).toEqual(['Short again.', REPLACED]);
    expect(messages.map(actionIds)).toEqual([[regenerate], []]);
    expect(botMessages(dm)).toHaveLength(before + 1);
  });

  it("an edited mention's 3-message answer re-answered in 2: pages over the first two, the third replaced without a button, nothing posted", async () => {
    const channel = CHANNELS.editLong;
    const ts = await (async () => {
      service.enqueue('chat', { stream: { text: paragraphs('Before', 3) } });
      return mention(channel, 'Three paragraphs please');
    })();
    const messages = botMessages(channel);
    expect(messages).toHaveLength(3);
    const regenerate = regenerateOf(messages[2]!);
    const after = paragraphs('After', 2);
    service.enqueue('chat', { stream: { text: after } });
    const done = next('edit', channel);
    await slack.sendEvent(
      botUrl,
      slack.messageChangedEvent({ channel, ts, text: `<@${slack.botUserId}> Two paragraphs please` }),
    );
    expect((await done).ok).toBe(true);
    expect(botMessages(channel)).toHaveLength(3);
    expect(messages.map(shown)).toEqual([...pagesOf(after), REPLACED]);
    expect(messages.map(actionIds)).toEqual([[], [regenerate], []]);
  });
});

describe('Regenerate and edited mentions after forgetting a thread on Slack', () => {
  it('a press on an answer given before "@bot forget" in its thread is told so and sends nothing, an edit of that mention sends nothing, and a press on an answer given after it sends none of the forgotten turns', async () => {
    const channel = CHANNELS.forget;
    service.enqueue('chat', { stream: { text: 'Your secret is safe.' } });
    const ts = await mention(channel, 'My secret is 1234');
    const [before] = botMessages(channel);
    const regenerateBefore = regenerateOf(before!);

    const forgot = next('forget', channel);
    await slack.sendEvent(botUrl, slack.mentionEvent({ channel, user: ADMIN, text: 'forget', threadTs: ts }));
    expect(await forgot).toMatchObject({ ok: true, command: 'forget' });

    service.enqueue('chat', { stream: { text: 'Paris.' } });
    await mention(channel, 'What is the capital of France?', ASKER, ts);
    const fresh = service.chatRequests().at(-1)!;
    expect(JSON.stringify(fresh)).not.toContain('1234');
    const after = botMessages(channel).at(-1)!;
    expect(unescapeSlack(after.text)).toBe('Paris.');
    const sentBefore = service.chatRequests().length;

    expect(await press(channel, before!, regenerateBefore, ASKER)).toMatchObject({
      ok: false,
      errorCode: 'invalid_input',
    });
    expect(
      toldToPresser(
        'This answer can no longer be regenerated: its conversation was forgotten after it was given. Ask again.',
      ),
    ).toBe(true);
    const since = testBot.logs.length;
    await slack.sendEvent(
      botUrl,
      slack.messageChangedEvent({ channel, ts, text: `<@${slack.botUserId}> My secret is 0000` }),
    );
    const deadline = Date.now() + 10_000;
    while (!testBot.logs.slice(since).some((l) => l.msg?.startsWith('edit left alone')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(testBot.logs.slice(since).some((l) => l.msg?.startsWith('edit left alone'))).toBe(true);
    expect(service.chatRequests()).toHaveLength(sentBefore);
    expect(unescapeSlack(before!.text)).toBe('Your secret is safe.');

    service.enqueue('chat', { stream: { text: 'Paris, again.' } });
    expect((await press(channel, after, regenerateOf(after), ASKER)).ok).toBe(true);
    expect(service.chatRequests()).toHaveLength(sentBefore + 1);
    expect(service.chatRequests().at(-1)).toEqual(fresh);
    expect(JSON.stringify(service.chatRequests().at(-1))).not.toMatch(/1234|secret/);
  });
});
