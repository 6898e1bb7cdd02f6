/**
 * End-to-end on Slack, message actions (issue 19, item 5): the message shortcuts "Summarize" and
 * "Ask about this message" (its question asked in a modal: views.open, then view_submission)
 * answer with the chosen message's text and image as context, in the message's thread, the
 * exchange joining that thread's history. The whole bot (real @slack/bolt) against the fake Slack
 * and the fake service, over HTTP and over Socket Mode.
 *
 * Every test uses its own channel. U0BOB writes the chosen message (a channel message, not to the
 * bot); U0ALICE uses the action.
 */
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { messageActions } from '../../commands/index.ts';
import type { CommandOutcome } from '../../src/core/command.ts';
import { SUMMARIZE_INSTRUCTION } from '../../src/core/features/message-actions.ts';
import { english } from '../../src/core/i18n/words.ts';
import { QUESTION_INPUT_ID } from '../../src/platforms/slack/message-actions.ts';
import type { ContentPart, FakeService } from '../fakes/service.ts';
import { type FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const [ASK, SUMMARIZE] = messageActions as [(typeof messageActions)[0], (typeof messageActions)[0]];
const CHANNELS = { summarize: 'C0ACTSUM', ask: 'C0ACTASK', reply: 'C0ACTREPLY', socket: 'C0ACTSOCKET' } as const;
const TEXT = 'The Blue Heron leaves at 7:15 from pier 4.';

/** What one describe block's bot and fakes are. */
interface Setup {
  service: FakeService;
  slack: FakeSlack;
  testBot: TestBot;
  botUrl: string;
}

/** Starts fakes and a bot (HTTP or Socket Mode) for a describe block. */
function setUp(socketMode: boolean): Setup {
  const s = {} as Setup;
  useE2E(
    {
      slack: { channels: slackChannels(CHANNELS) },
      bot: { env: { DEFAULT_VISION_MODEL: 'fake-vision' }, socketMode },
      resetServiceAfterEach: true,
    },
    (e2e) => {
      s.service = e2e.service;
      s.slack = e2e.slack;
      s.testBot = e2e.bot;
      s.botUrl = socketMode ? '' : e2e.botUrl;
    },
  );
  return s;
}

const conversationOf = (s: Setup, channel: string, threadTs: string) =>
  `slack:${s.slack.teamId}:${channel}:${threadTs}`;

/** Resolves with the next finished invocation of `command` in a conversation. */
function outcomeOf(s: Setup, command: string, conversationId: string): Promise<CommandOutcome> {
  return s.testBot
    .outcomes((o) => o.command === command && o.conversationId === conversationId)
    .then(([outcome]) => outcome!);
}

/** Bob's channel message with a photo (in a thread when `threadTs` is given); returns its ts. */
async function bobsPhoto(s: Setup, channel: string, threadTs?: string): Promise<string> {
  const data = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3070e0' } })
    .png()
    .toBuffer();
  const file = s.slack.addUserFile({ name: 'boat.png', mimetype: 'image/png', data, user: 'U0BOB' });
  const event = s.slack.channelMessageEvent({
    channel,
    user: 'U0BOB',
    text: TEXT,
    files: [file],
    ...(threadTs ? { threadTs } : {}),
  });
  return event.ts as string;
}

/** The question the service got last: its text and its image parts. */
function lastQuestion(s: Setup): { text: string; images: number; model: string } {
  const request = s.service.chatRequests().at(-1)!;
  const content = request.messages.at(-1)!.content as string | ContentPart[];
  const parts = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
  return {
    text: parts.map((p) => (p.type === 'text' ? p.text : '')).join('\n'),
    images: parts.filter((p) => p.type === 'image_url').length,
    model: request.model,
  };
}

/** The bot's messages in a thread. */
const botRepliesIn = (s: Setup, channel: string, threadTs: string) =>
  s.slack.messages(channel).filter((m) => m.user === s.slack.botUserId && m.threadTs === threadTs);

describe('Slack message actions (HTTP)', () => {
  const s = setUp(false);

  it('"Summarize" of a 40,000-character message: the question stays within HISTORY_TOKEN_BUDGET, and the cut is said', async () => {
    const channel = CHANNELS.summarize;
    const long = 'The pier schedule changes every week. '.repeat(1_053).slice(0, 40_000);
    const event = s.slack.channelMessageEvent({ channel, user: 'U0BOB', text: long });
    const ts = event.ts as string;
    const done = outcomeOf(s, SUMMARIZE!.id, conversationOf(s, channel, ts));
    await s.slack.sendMessageShortcut(s.botUrl, { user: 'U0ALICE', channel, messageTs: ts, callbackId: SUMMARIZE!.id });
    expect(await done).toMatchObject({ ok: true });
    const question = lastQuestion(s);
    expect(question.text).toContain(SUMMARIZE_INSTRUCTION);
    // 4 characters a token, as the bot estimates them: the default budget is 6,000 tokens.
    expect(question.text.length).toBeLessThanOrEqual(6_000 * 4);
    expect(question.text).toContain('[…cut]');
    const answer = botRepliesIn(s, channel, ts)
      .map((m) => unescapeSlack(m.text))
      .join('\n');
    expect(answer).toMatch(/The message was read up to [\d,]+ characters, to fit the conversation's budget\./);
  });

  it('"Summarize" answers with the message\'s text and image as context, in its thread, and the thread\'s history has the exchange', async () => {
    const channel = CHANNELS.summarize;
    const ts = await bobsPhoto(s, channel);
    const done = outcomeOf(s, SUMMARIZE!.id, conversationOf(s, channel, ts));
    const ack = await s.slack.sendMessageShortcut(s.botUrl, {
      user: 'U0ALICE',
      channel,
      messageTs: ts,
      callbackId: SUMMARIZE!.id,
    });
    expect(ack).toMatchObject({ status: 200, ackedInTime: true, failure: undefined });
    expect(await done).toMatchObject({ ok: true, platform: 'slack' });

    const question = lastQuestion(s);
    expect(question.model).toBe('fake-vision');
    expect(question.text).toContain(SUMMARIZE_INSTRUCTION);
    expect(question.text).toContain(TEXT);
    expect(question.images).toBe(1);
    // In the message's thread, streamed there.
    const [answer] = botRepliesIn(s, channel, ts);
    expect(unescapeSlack(answer!.text)).toContain('Echo:');
    const history = await s.testBot.bot.core.history.get(conversationOf(s, channel, ts));
    expect(history.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(history[0]!.content).toContain(TEXT);
    expect(history[0]!.userId).toBe('U0ALICE');
  });

  it('"Ask about this message" opens a modal with the shortcut\'s trigger; its submission is answered with the message as context in its thread', async () => {
    const channel = CHANNELS.ask;
    const ts = await bobsPhoto(s, channel);
    const before = s.slack.views.length;
    const ack = await s.slack.sendMessageShortcut(s.botUrl, {
      user: 'U0ALICE',
      channel,
      messageTs: ts,
      callbackId: ASK!.id,
    });
    expect(ack).toMatchObject({ status: 200, ackedInTime: true });
    await expect.poll(() => s.slack.views.length).toBe(before + 1);
    const view = s.slack.views.at(-1)!;
    expect(view).toMatchObject({ user: 'U0ALICE', state: 'open' });
    expect(view.view).toMatchObject({ callback_id: ASK!.id, title: { text: english.t(ASK!.question!.title) } });
    expect(s.service.chatRequests()).toEqual([]);

    const done = outcomeOf(s, ASK!.id, conversationOf(s, channel, ts));
    const submitted = await s.slack.submitView(s.botUrl, {
      viewId: view.id,
      values: { [QUESTION_INPUT_ID]: { [QUESTION_INPUT_ID]: 'When does the boat leave?' } },
    });
    expect(submitted).toMatchObject({ ackedInTime: true, failure: undefined });
    expect(view.state).toBe('submitted');
    expect(await done).toMatchObject({ ok: true });

    const question = lastQuestion(s);
    expect(question.text.startsWith('When does the boat leave?')).toBe(true);
    expect(question.text).toContain(TEXT);
    expect(question.images).toBe(1);
    expect(unescapeSlack(botRepliesIn(s, channel, ts)[0]!.text)).toContain('Echo: When does the boat leave?');
    const history = await s.testBot.bot.core.history.get(conversationOf(s, channel, ts));
    expect(history).toHaveLength(2);
    expect(history[0]!.content).toContain('When does the boat leave?');
  });

  it('on a reply in a thread, the answer goes into that thread, and a question of blanks is refused in the modal', async () => {
    const channel = CHANNELS.reply;
    const parent = s.slack.channelMessageEvent({ channel, user: 'U0ALICE', text: 'Trip plans' }).ts as string;
    const ts = await bobsPhoto(s, channel, parent);
    const before = s.slack.views.length;
    await s.slack.sendMessageShortcut(s.botUrl, { user: 'U0ALICE', channel, messageTs: ts, callbackId: ASK!.id });
    await expect.poll(() => s.slack.views.length).toBe(before + 1);
    const view = s.slack.views.at(-1)!;
    const blank = await s.slack.submitView(s.botUrl, {
      viewId: view.id,
      values: { [QUESTION_INPUT_ID]: { [QUESTION_INPUT_ID]: '   ' } },
    });
    expect(blank.ack).toMatchObject({ response_action: 'errors', errors: { [QUESTION_INPUT_ID]: expect.any(String) } });
    expect(view.state).toBe('open');

    const done = outcomeOf(s, ASK!.id, conversationOf(s, channel, parent));
    await s.slack.submitView(s.botUrl, {
      viewId: view.id,
      values: { [QUESTION_INPUT_ID]: { [QUESTION_INPUT_ID]: 'Which pier?' } },
    });
    expect(await done).toMatchObject({ ok: true });
    expect(lastQuestion(s).text).toContain(TEXT);
    expect(unescapeSlack(botRepliesIn(s, channel, parent).at(-1)!.text)).toContain('Echo: Which pier?');
    expect(botRepliesIn(s, channel, ts)).toEqual([]);
  });
});

describe('Slack message actions (Socket Mode)', () => {
  const s = setUp(true);

  it('"Ask about this message": the shortcut and the modal\'s submission arrive as interactive envelopes; the answer is in the thread', async () => {
    const channel = CHANNELS.socket;
    const ts = await bobsPhoto(s, channel);
    const ack = await s.slack.sendSocketMessageShortcut({
      user: 'U0ALICE',
      channel,
      messageTs: ts,
      callbackId: ASK!.id,
    });
    expect(ack).toMatchObject({ ackedInTime: true, failure: undefined });
    await expect.poll(() => s.slack.views.length).toBe(1);
    const done = outcomeOf(s, ASK!.id, conversationOf(s, channel, ts));
    const submitted = await s.slack.submitSocketView({
      viewId: s.slack.views[0]!.id,
      values: { [QUESTION_INPUT_ID]: { [QUESTION_INPUT_ID]: 'Who owns the boat?' } },
    });
    expect(submitted).toMatchObject({ ackedInTime: true, failure: undefined });
    expect(await done).toMatchObject({ ok: true });
    expect(lastQuestion(s).text).toContain(TEXT);
    expect(unescapeSlack(botRepliesIn(s, channel, ts)[0]!.text)).toContain('Echo: Who owns the boat?');
  });
});
