/**
 * End-to-end on Slack, the agent view and the Home tab (issue 21, items 1 and 3): the whole bot
 * with @slack/bolt (its `Assistant` class included) and @slack/web-api unmodified, against
 * FakeSlack (agent.ts: which events each AI-app view gets; setSuggestedPrompts / setTitle;
 * home.ts: views.publish) and FakeService.
 *
 * - Opening the Messages tab (`app_home_opened`, tab `messages`) sets ASSISTANT_PROMPTS as the
 *   suggested prompts without `thread_ts` and greets the user once; a question there is answered
 *   in its thread: title, "is thinking…", the exact answer natively streamed.
 * - The same for an app still on the assistant view (`assistant_thread_started`), the prompts on
 *   the thread.
 * - `app_context_changed` names the channel the user views: "summarize this channel" sends its
 *   messages to the service, within HISTORY_TOKEN_BUDGET; Slack's refusal (no scope, not in the
 *   channel) is said by name, and the service is not asked.
 * - `imagine …` there posts an image into the thread.
 * - The Home tab (`app_home_opened`, tab `home`) is published: the user's /usage, the commands,
 *   and for admins the channels' settings.
 */
import { describe, expect, it, vi } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { english } from '../../src/core/i18n/words.ts';
import { estimateTextTokens } from '../../src/core/tokens.ts';
import { GREETING } from '../../src/platforms/slack/agent.ts';
import type { FakeService } from '../fakes/service.ts';
import {
  DEFAULT_BOT_SCOPES,
  type FakeSlack,
  type FakeSlackMessage,
  type SlackEvent,
  unescapeSlack,
} from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = {
  viewed: 'C0VIEWED',
  long: 'C0LONGVIEW',
  scope: 'C0NOSCOPE',
  away: 'C0AWAY',
  settings: 'C0SETTINGS',
} as const;

/** One user per test: the greeting is once per user, and each user has one DM. */
const USERS = {
  messages: 'U0MESSAGES',
  assistant: 'U0ASSIST',
  summary: 'U0SUMMARY',
  budget: 'U0BUDGET',
  refused: 'U0REFUSED',
  imagine: 'U0IMAGINE',
  edit: 'U0EDITOR',
  home: 'U0HOME',
} as const;

const PROMPTS = [
  { title: 'Ask', message: 'What can you do?' },
  { title: 'Picture', message: 'imagine a paper boat on a lake' },
  { title: 'Summary', message: 'Summarize the channel I am viewing' },
];

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    slack: {
      channels: [
        ...Object.values(CHANNELS)
          .filter((id) => id !== CHANNELS.away)
          .map((id) => ({ id, name: id.slice(2).toLowerCase() })),
        { id: CHANNELS.away, name: 'away', botIsMember: false },
      ],
    },
    beforeBot: (e2e) => {
      for (const [name, id] of Object.entries(USERS)) e2e.slack.addUser({ id, name });
    },
    bot: { env: { ASSISTANT_PROMPTS: JSON.stringify(PROMPTS) } },
    resetServiceAfterEach: true,
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** The conversation of a DM thread, as message-answer.ts names it. */
const threadOf = (channel: string, ts: string) => `slack:${slack.teamId}:${channel}:${ts}`;

/** Sends `event` over HTTP and checks it was acked with HTTP 200 in time. */
async function send(event: SlackEvent): Promise<void> {
  expect(await slack.sendEvent(botUrl, event)).toMatchObject({ status: 200, ackedInTime: true });
}

/** Sends a user's message in their DM (in a thread when given) and waits for the invocation `command` there. */
async function ask(user: string, text: string, command = 'mention', threadTs?: string) {
  const dm = slack.openIm(user).id;
  const event = slack.imMessageEvent({ channel: dm, user, text, ...(threadTs ? { threadTs } : {}) });
  const ts = event.ts as string;
  const conversation = threadOf(dm, threadTs ?? ts);
  const done = testBot.outcomes((o) => o.command === command && o.conversationId === conversation);
  await send(event);
  const [outcome] = await done;
  return { dm, ts, outcome: outcome as CommandOutcome };
}

/** The bot's messages in a thread of `channel` (not its root). */
const botReplies = (channel: string, threadTs: string) =>
  slack.thread(channel, threadTs).filter((m) => m.user === slack.botUserId);

/** Checks that `text` arrived as one natively streamed message of the bot in the thread: startStream, appends, stopStream. */
function expectNativeAnswer(channel: string, threadTs: string, text: string): FakeSlackMessage {
  const [answer, ...others] = botReplies(channel, threadTs);
  expect(others).toEqual([]);
  expect(answer).toMatchObject({ via: 'chat.startStream', threadTs });
  expect(unescapeSlack(answer!.text)).toBe(text);
  const writes = answer!.stream!.writes.map((w) => w.method);
  expect(writes[0]).toBe('chat.startStream');
  expect(writes.at(-1)).toBe('chat.stopStream');
  expect(writes).toContain('chat.appendStream');
  expect(answer!.stream!.state).toBe('stopped');
  return answer!;
}

/** `count` messages by alice and bob in turn at the top of `channel`, as users wrote them (never sent to the bot). */
function channelMessages(channel: string, count: number, text: (i: number) => string): string[] {
  const texts = Array.from({ length: count }, (_, i) => text(i));
  texts.forEach((t, i) => slack.postUserMessage(channel, i % 2 ? 'U0BOB' : 'U0ALICE', t));
  return texts;
}

/** The channel's messages as the service gets them: `alice: text`, oldest first. */
const asTurns = (texts: string[]) =>
  texts.map((t, i) => ({ role: 'user', content: `${i % 2 ? 'bob' : 'alice'}: ${t}` }));

const INTRO = { role: 'user', content: 'The latest messages of the channel I am viewing, oldest first:' };

describe('the agent view on Slack', () => {
  it('opening the Messages tab sets the configured prompts without thread_ts and greets once; a question there gets a title, "is thinking…" and its exact answer natively streamed in its thread', async () => {
    const user = USERS.messages;
    const dm = slack.openIm(user).id;
    const prompted = () => slack.suggestedPrompts.filter((p) => p.channel === dm);
    for (let i = 0; i < 2; i++) {
      await send(slack.appHomeOpenedEvent({ user, tab: 'messages' }));
      await vi.waitFor(() => expect(prompted()).toHaveLength(i + 1), { timeout: 10_000 });
    }
    for (const call of prompted()) {
      expect(call).toMatchObject({ channel: dm, threadTs: undefined, shownAt: 'tab', prompts: PROMPTS });
    }
    await vi.waitFor(() => expect(slack.messages(dm).map((m) => unescapeSlack(m.text))).toEqual([english.t(GREETING)]));
    expect(slack.callsTo('assistant.threads.setSuggestedPrompts').every((c) => c.params.thread_ts === undefined)).toBe(
      true,
    );

    const streamed = 'Here is what I can do for you, step by step. '.repeat(12);
    service.enqueue('chat', { stream: { text: streamed, chunkDelayMs: 10 } });
    const { ts, outcome } = await ask(user, 'What can you do for me today?');
    expect(outcome.ok).toBe(true);
    const titles = () => slack.threadTitles.filter((t) => t.channel === dm);
    expect(titles()).toEqual([
      { channel: dm, threadTs: ts, title: 'What can you do for me today?', at: expect.any(Number) },
    ]);
    expect(slack.assistantStatuses).toContainEqual(
      expect.objectContaining({ channel: dm, threadTs: ts, status: 'is thinking…' }),
    );
    expectNativeAnswer(dm, ts, streamed);
    expect(service.chatRequests().at(-1)!.messages.at(-1)).toEqual({
      role: 'user',
      content: 'What can you do for me today?',
    });

    // A follow-up in the thread carries the exchange and sets no second title.
    service.enqueue('chat', { stream: { text: 'Happy to help.' } });
    const followUp = await ask(user, 'And more?', 'mention', ts);
    expect(followUp.outcome.ok).toBe(true);
    expect(
      service
        .chatRequests()
        .at(-1)!
        .messages.map((m) => m.content),
    ).toEqual(['What can you do for me today?', streamed, 'And more?']);
    expect(titles()).toHaveLength(1);
    expect(slack.messages(dm).filter((m) => m.threadTs === undefined && m.user === slack.botUserId)).toHaveLength(1);
  });

  it('an app still on the assistant view: assistant_thread_started sets the prompts on the thread (Bolt Assistant) and greets there; a question in it is titled, shows its status and streams natively', async () => {
    slack.setAgent({ appView: 'assistant' });
    try {
      const user = USERS.assistant;
      const started = slack.assistantThreadStartedEvent({ user, viewing: CHANNELS.viewed });
      const { channel_id: dm, thread_ts: root } = started.assistant_thread as { channel_id: string; thread_ts: string };
      await send(started);
      await vi.waitFor(
        () => expect(botReplies(dm, root).map((m) => unescapeSlack(m.text))).toEqual([english.t(GREETING)]),
        {
          timeout: 10_000,
        },
      );
      expect(slack.suggestedPrompts.filter((p) => p.channel === dm)).toEqual([
        expect.objectContaining({ channel: dm, threadTs: root, shownAt: root, prompts: PROMPTS }),
      ]);

      const streamed = 'An answer inside the assistant thread, streamed as it is written. '.repeat(8);
      service.enqueue('chat', { stream: { text: streamed, chunkDelayMs: 10 } });
      const { outcome } = await ask(user, 'Tell me something', 'mention', root);
      expect(outcome.ok).toBe(true);
      expect(slack.threadTitles.filter((t) => t.channel === dm)).toEqual([
        expect.objectContaining({ channel: dm, threadTs: root, title: 'Tell me something' }),
      ]);
      expect(slack.assistantStatuses).toContainEqual(
        expect.objectContaining({ channel: dm, threadTs: root, status: 'is thinking…' }),
      );
      const answers = botReplies(dm, root).filter((m) => m.via === 'chat.startStream');
      expect(answers).toHaveLength(1);
      expect(unescapeSlack(answers[0]!.text)).toBe(streamed);
      expect(answers[0]!.stream!.state).toBe('stopped');
      // Only the question reached the service: the thread's root (the app's) is no turn.
      expect(service.chatRequests().at(-1)!.messages).toEqual([{ role: 'user', content: 'Tell me something' }]);
    } finally {
      slack.setAgent({ appView: 'agent' });
    }
  });

  it('after app_context_changed names a channel of 30 messages, "summarize this channel" sends them to the service, oldest first, before the question', async () => {
    const user = USERS.summary;
    const texts = channelMessages(CHANNELS.viewed, 30, (i) => `update ${i + 1} on the launch plan`);
    await send(slack.appContextChangedEvent({ user, viewing: CHANNELS.viewed }));
    const summary = 'The launch plan moved forward thirty times, one update after another. '.repeat(6);
    service.enqueue('chat', { stream: { text: summary, chunkDelayMs: 10 } });
    const { dm, ts, outcome } = await ask(user, 'Summarize the channel I am viewing');
    expect(outcome.ok).toBe(true);
    const [request, ...more] = service.chatRequests();
    expect(more).toEqual([]);
    expect(request!.messages).toEqual([
      INTRO,
      ...asTurns(texts),
      { role: 'user', content: 'Summarize the channel I am viewing' },
    ]);
    expect(slack.callsTo('conversations.history').at(-1)!.params.channel).toBe(CHANNELS.viewed);
    expectNativeAnswer(dm, ts, summary);
  });

  it('a channel longer than HISTORY_TOKEN_BUDGET: only its newest messages that fit are sent, in order', async () => {
    const user = USERS.budget;
    // About 400 estimated tokens each: 30 of them are twice the default budget of 6,000.
    const texts = channelMessages(CHANNELS.long, 30, (i) => `${i + 1}: ${'word '.repeat(320)}`.trim());
    await send(slack.appContextChangedEvent({ user, viewing: CHANNELS.long }));
    const { outcome } = await ask(user, 'summarise this channel please');
    expect(outcome.ok).toBe(true);
    const messages = service.chatRequests().at(-1)!.messages;
    const sent = messages.slice(1, -1).map((m) => m.content as string);
    expect(messages[0]).toEqual(INTRO);
    expect(sent.length).toBeGreaterThan(5);
    expect(sent.length).toBeLessThan(30);
    // The newest ones, oldest first.
    expect(sent).toEqual(
      asTurns(texts)
        .slice(-sent.length)
        .map((m) => m.content),
    );
    const tokens = [INTRO.content, ...sent].reduce((n, t) => n + estimateTextTokens(t) + 4, 0);
    expect(tokens).toBeLessThanOrEqual(6000);
  });

  it('without channels:history, or in a channel the bot is not in, the answer says so by name and the service is not asked; without a viewed channel it says what to do', async () => {
    const user = USERS.refused;
    channelMessages(CHANNELS.scope, 3, (i) => `note ${i}`);
    await send(slack.appContextChangedEvent({ user, viewing: CHANNELS.scope }));
    slack.setScopes(DEFAULT_BOT_SCOPES.filter((s) => s !== 'channels:history'));
    let refused: Awaited<ReturnType<typeof ask>>;
    try {
      refused = await ask(user, 'Summarize this channel');
    } finally {
      slack.setScopes([...DEFAULT_BOT_SCOPES]);
    }
    expect(refused.outcome).toMatchObject({ ok: false, errorCode: 'platform_refused' });
    const [told] = botReplies(refused.dm, refused.ts);
    expect(unescapeSlack(told!.text)).toMatch(
      new RegExp(
        `^I cannot read the channel you are viewing \\(${CHANNELS.scope}\\): the Slack app lacks the \`channels:history\` scope\\. .*\\(ref [A-Z0-9]{6}\\)$`,
      ),
    );

    await send(slack.appContextChangedEvent({ user, viewing: CHANNELS.away }));
    const away = await ask(user, 'Summarize this channel');
    expect(unescapeSlack(botReplies(away.dm, away.ts)[0]!.text)).toContain(
      `I cannot read the channel you are viewing (${CHANNELS.away}): I am not in it.`,
    );

    await send(slack.appContextChangedEvent({ user }));
    const unknown = await ask(user, 'Summarize this channel');
    expect(unknown.outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
    expect(unescapeSlack(botReplies(unknown.dm, unknown.ts)[0]!.text)).toMatch(/^I do not know which channel/);
    expect(service.chatRequests()).toEqual([]);
  });

  it('"imagine …" in the agent conversation generates the image into its thread, with /imagine\'s options', async () => {
    const user = USERS.imagine;
    const { dm, ts, outcome } = await ask(user, 'imagine a paper boat on a lake --aspect_ratio portrait', 'imagine');
    expect(outcome.ok).toBe(true);
    const request = service.requests.filter((r) => r.route === 'images').at(-1)!;
    expect(request.body).toMatchObject({ prompt: 'a paper boat on a lake', aspect_ratio: 'portrait' });
    const shared = slack.thread(dm, ts).find((m) => m.via === 'files.completeUploadExternal');
    expect(shared).toBeDefined();
    expect(slack.files.get(shared!.files[0]!)).toMatchObject({
      filename: 'imagine.png',
      altText: 'a paper boat on a lake',
    });
    expect(slack.threadTitles.at(-1)).toMatchObject({ channel: dm, threadTs: ts });
  });
});

describe('a DM question edited', () => {
  it('is answered again in its thread, over the same message', async () => {
    const user = USERS.edit;
    service.enqueue('chat', { stream: { text: 'It is 5.' } });
    const { dm, ts } = await ask(user, 'What is 2+2?');
    const [answer] = botReplies(dm, ts);
    service.enqueue('chat', { stream: { text: 'It is 6.' } });
    const done = testBot.outcomes((o) => o.command === 'edit' && o.conversationId === threadOf(dm, ts));
    await send(slack.messageChangedEvent({ channel: dm, ts, text: 'What is 3+3?' }));
    expect((await done)[0]!.ok).toBe(true);
    expect(botReplies(dm, ts)).toEqual([answer]);
    expect(unescapeSlack(answer!.text)).toBe('It is 6.');
    expect(service.chatRequests().at(-1)!.messages.at(-1)).toEqual({ role: 'user', content: 'What is 3+3?' });
    expect(slack.messages(dm).filter((m) => m.user === slack.botUserId && m.threadTs === undefined)).toEqual([]);
  });
});

describe('the Home tab on Slack', () => {
  /** The text of every block of a published view, joined. */
  const textOf = (view: Record<string, unknown>) =>
    unescapeSlack(JSON.stringify(view.blocks).replace(/\\n/g, '\n').replace(/\\"/g, '"'));

  it("app_home_opened (tab home) publishes the user's use as /usage shows it and the commands; an admin also sees the channels' settings", async () => {
    const user = USERS.home;
    await send(slack.appHomeOpenedEvent({ user, tab: 'home' }));
    await vi.waitFor(() => expect(slack.homeView(user)).toBeDefined(), { timeout: 10_000 });
    const mine = textOf(slack.homeView(user)!.view);
    expect(mine).toContain('Your use');
    expect(mine).toContain('chat requests');
    expect(mine).toContain('No quotas are set on this bot.');
    expect(mine).toContain('`/chat` — ');
    expect(mine).toContain('`/imagine` — ');
    expect(mine).toContain('Summarize');
    expect(mine).not.toContain('Channel settings');
    // Slack sends the view back when the user opens the tab again.
    expect(slack.appHomeOpenedEvent({ user, tab: 'home' }).view).toEqual(slack.homeView(user)!.view);

    const admin = 'U0ALICE';
    const done = testBot.outcomes((o) => o.command === 'settings');
    await slack.sendSlashCommand(botUrl, {
      command: '/settings',
      text: '--system_prompt "Answer like a pirate."',
      channel_id: CHANNELS.settings,
      user_id: admin,
    });
    expect((await done)[0]!.ok).toBe(true);
    await send(slack.appHomeOpenedEvent({ user: admin, tab: 'home' }));
    await vi.waitFor(() => expect(slack.homeView(admin)).toBeDefined(), { timeout: 10_000 });
    const theirs = textOf(slack.homeView(admin)!.view);
    expect(theirs).toContain('Channel settings (admins)');
    expect(theirs).toContain(`<#${CHANNELS.settings}>\nsystem_prompt: Answer like a pirate.`);
    expect(slack.platformFailures).toEqual([]);
  });

  it("stays within Slack's limits for a view with 60 channels' settings of the longest kind: at most 100 blocks, sections cut, the rest counted", async () => {
    const { core } = testBot.bot;
    const prompt = `${'Always answer in rhyme & verse. '.repeat(130)}`.slice(0, 4000);
    for (let i = 0; i < 60; i++) {
      await core.settings.update(`slack:${slack.teamId}:C0MANY${String(i).padStart(2, '0')}`, {
        chatModel: `model-${'x'.repeat(90)}`,
        systemPrompt: prompt,
      });
    }
    const admin = 'U0ALICE';
    const before = slack.homePublishes.length;
    await send(slack.appHomeOpenedEvent({ user: admin, tab: 'home' }));
    await vi.waitFor(() => expect(slack.homePublishes.length).toBe(before + 1), { timeout: 10_000 });
    const blocks = slack.homeView(admin)!.view.blocks as Array<{ type: string; text?: { text: string } }>;
    expect(blocks.length).toBeLessThanOrEqual(100);
    expect(blocks.every((b) => (b.text?.text.length ?? 0) <= 3000)).toBe(true);
    const text = textOf(slack.homeView(admin)!.view);
    // The newest changes first; 40 shown, the others counted.
    const listed = await core.settings.channelsWithSettings(`slack:${slack.teamId}`);
    expect(listed.length).toBeGreaterThanOrEqual(60);
    expect(text).toContain('<#C0MANY59>');
    expect(text).not.toContain('<#C0MANY19>');
    expect(text).toContain(`… and ${listed.length - 40} more channels.`);
    expect(slack.callsTo('views.publish').every((c) => c.ok)).toBe(true);
  });
});
