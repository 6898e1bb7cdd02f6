/**
 * End-to-end on Slack (issue 42): what surrounds an answer speaks its readers' language. Slack
 * exposes no workspace language, so an answer's public lines (the queue line, its buttons) are in
 * the asker's: the `locale` users.info gives with `include_locale`. The whole bot (startTestBot)
 * with @slack/bolt and @slack/web-api unmodified, against FakeSlack and FakeService, one request
 * to the service at a time.
 */
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeService } from '../fakes/service.ts';
import { type FakeSlack, type FakeSlackMessage, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = { busy: 'C0BUSY', waiting: 'C0WAITING', english: 'C0ENGLISH', stop: 'C0STOP' } as const;

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    slack: { channels: slackChannels(CHANNELS) },
    beforeBot: (e2e) => {
      e2e.slack.addUser({ id: 'U0JUN', name: 'jun', locale: 'ja-JP' });
    },
    bot: { env: { SERVICE_MAX_CONCURRENCY: '1' } },
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** The bot's messages in `channel`. */
const botMessages = (channel: string) => slack.messages(channel).filter((m) => m.user === slack.botUserId);

/** Every text a message showed, as users read it. */
const shown = (message: FakeSlackMessage | undefined) =>
  (message?.revisions ?? []).map((r) => unescapeSlack((r as { text?: string }).text ?? ''));

/** The texts of the buttons in a message's blocks (action blocks' buttons and feedback buttons). */
function buttonTexts(blocks: unknown[] | undefined): string[] {
  const texts: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) for (const child of node) walk(child);
    else if (node && typeof node === 'object') {
      const json = node as Record<string, unknown>;
      const text = (json.text as { text?: string } | undefined)?.text;
      if (json.type === 'button' || json.type === 'feedback_button') texts.push(String(text ?? ''));
      walk(json.elements);
      // A feedback_buttons element's 👍 and 👎 carry no type of their own.
      for (const pair of [json.positive_button, json.negative_button])
        if (pair) walk({ ...(pair as object), type: 'feedback_button' });
    }
  };
  walk(blocks);
  return texts;
}

/** Mentions the bot in `channel` as `user`; resolves with the mention's finished outcome. */
async function mention(channel: string, user: string, text: string): Promise<Promise<CommandOutcome>> {
  const event = slack.mentionEvent({ channel, user, text });
  const done = testBot
    .outcomes((o) => o.command === 'mention' && o.conversationId.includes(`:${channel}`), 1, 30_000)
    .then(([o]) => o!);
  const ack = await slack.sendEvent(botUrl, event);
  expect(ack).toMatchObject({ status: 200, ackedInTime: true });
  return done;
}

/** Resolves once the service has received `count` more chat requests than it had. */
function chatRequests(count: number): Promise<void> {
  const target = service.chatRequests().length + count;
  return new Promise((resolve) => {
    const check = () => {
      if (service.chatRequests().length < target) return;
      service.events.off('request', check);
      resolve();
    };
    service.events.on('request', check);
    check();
  });
}

describe('an asker whose Slack is in Japanese', () => {
  it('sees the queue line and the buttons of their answer in Japanese; an English asker’s stay English', async () => {
    // The first answer holds the only slot of the service for 6 s.
    service.enqueue('chat', { delayHeadersMs: 6_000, stream: { text: 'First answer.' } });
    const started = chatRequests(1);
    const first = mention(CHANNELS.busy, 'U0ALICE', 'Take your time.');
    await started;

    service.enqueue('chat', { stream: { text: 'こんにちは。' } });
    const done = await mention(CHANNELS.waiting, 'U0JUN', 'こんにちは');
    await expect
      .poll(() => botMessages(CHANNELS.waiting).flatMap(shown), { timeout: 5_500 })
      .toContain('⏳ 待機中：次があなたの番です。');
    expect((await await first).ok).toBe(true);
    expect((await done).ok).toBe(true);
    const answer = botMessages(CHANNELS.waiting).at(-1)!;
    expect(unescapeSlack(answer.text)).toBe('こんにちは。');
    expect(buttonTexts(answer.blocks)).toEqual(['🔄 再生成', '👍', '👎']);

    service.enqueue('chat', { stream: { text: 'Hello.' } });
    expect((await await mention(CHANNELS.english, 'U0ALICE', 'Hello')).ok).toBe(true);
    expect(buttonTexts(botMessages(CHANNELS.english).at(-1)!.blocks)).toEqual(['🔄 Regenerate', '👍', '👎']);
  }, 40_000);
});

describe('a member whose Slack is in Japanese, on an English asker’s answer (a workspace without native streaming)', () => {
  it('sees its Stop button in the asker’s English, and is refused Stop in Japanese, to them alone', async () => {
    const channel = CHANNELS.stop;
    // A posted answer carries a Stop button (a native stream has Slack's own stop control). Last
    // in the file: the bot remembers the workspace's refusal to stream.
    slack.setStreaming({ streaming: false });
    const pieces = Array.from({ length: 40 }, (_, i) => `word${i + 1} `);
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 80 } });
    const done = mention(channel, 'U0ALICE', 'Count slowly.');
    await expect.poll(() => buttonTexts(botMessages(channel).at(-1)?.blocks), { timeout: 5_000 }).toEqual(['Stop']);
    const streaming = botMessages(channel).at(-1)!;
    const stopId = (streaming.blocks as Array<{ type: string; elements?: Array<{ action_id?: string }> }>)
      .flatMap((b) => (b.type === 'actions' ? (b.elements ?? []) : []))
      .map((e) => String(e.action_id))
      .find((id) => id.startsWith('stop:'))!;
    const refused = testBot
      .outcomes((o) => o.command === 'stop:button' && o.conversationId.includes(`:${channel}`), 1, 30_000)
      .then(([o]) => o!);
    const before = slack.responsePosts().length;
    await slack.sendBlockAction(botUrl, { user: 'U0JUN', channel, messageTs: streaming.ts, actionId: stopId });
    await refused;
    const told = slack
      .responsePosts()
      .slice(before)
      .map((p) => String((p.body as { text?: string }).text));
    expect(told).toEqual(['この回答を停止できるのは、質問した人か管理者だけです。']);
    expect((await await done).ok).toBe(true);
  }, 40_000);
});
