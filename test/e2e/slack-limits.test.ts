/**
 * Slack's tiers under load (issue 9): 20 concurrent /chat in 20 channels of one workspace,
 * with the fake enforcing chat.startStream (tier 2, 20 a minute), chat.appendStream (tier 4,
 * 100 a minute), chat.stopStream (20 a minute) and ~1 post a second per channel. The bot's
 * write scheduler keeps every answer within the budgets: no call is refused with `ratelimited`,
 * every final text is exact, and no stream waits longer between two updates than 1.5 times its
 * fair share of the append budget.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeService } from '../fakes/service.ts';
import { FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { slackEnv, startTestBot, type TestBot } from './harness.ts';

const STREAMS = 20;
const CHANNELS = Array.from({ length: STREAMS }, (_, i) => ({ id: `C0LOAD${String(i).padStart(2, '0')}`, name: `load-${i}` }));
/** chat.appendStream per workspace and minute (tier 4), as the fake enforces it. */
const APPENDS_PER_MINUTE = 100;

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

beforeAll(async () => {
  service = await FakeService.start({ apiKey: `sk-fake-${randomBytes(16).toString('hex')}` });
  slack = await FakeSlack.start({ channels: CHANNELS });
  testBot = await startTestBot(slackEnv(service, slack));
  botUrl = `http://127.0.0.1:${testBot.bot.slack!.port}`;
});

afterAll(async () => {
  await testBot?.stop();
  await slack?.close();
  await service?.close();
});

describe('Slack at its tiers', () => {
  it(`${STREAMS} concurrent /chat in one workspace: no ratelimited answer, every final text exact, no update gap over 1.5× the fair share`, async () => {
    // ~600 characters over ~6 s each, every answer its own text.
    const texts = CHANNELS.map((_, s) => Array.from({ length: 60 }, (_, i) => `s${s}w${i} `).join(''));
    for (const text of texts) service.enqueue('chat', { stream: { text, chunkDelayMs: 100 } });
    const done = testBot.outcomes((o) => o.command === 'chat', STREAMS, 120_000);
    const acks = await Promise.all(CHANNELS.map((c, i) => slack.sendSlashCommand(botUrl, { command: '/chat', text: `question ${i}`, channel_id: c.id })));
    expect(acks.every((a) => a.ackedInTime)).toBe(true);
    const outcomes = await done;
    expect(outcomes.every((o) => o.ok)).toBe(true);

    expect(slack.calls.filter((c) => c.status === 429 || c.error === 'ratelimited')).toEqual([]);
    // The fair share of the append budget: each stream may update every (streams / appends a minute) minutes.
    const fairShareMs = (STREAMS / APPENDS_PER_MINUTE) * 60_000;
    const answers = CHANNELS.map((channel) => slack.messages(channel.id).find((m) => m.user === slack.botUserId && m.threadTs !== undefined)!);
    // The service's answers were handed out in the order the requests came: every one of them arrived whole, once.
    expect(answers.map((a) => unescapeSlack(a.text)).sort()).toEqual([...texts].sort());
    for (const [i, answer] of answers.entries()) {
      expect(answer.stream!.state).toBe('stopped');
      const times = answer.stream!.writes.map((w) => w.at);
      let gap = 0;
      for (let k = 1; k < times.length; k++) gap = Math.max(gap, times[k]! - times[k - 1]!);
      expect(gap, `the longest gap between updates of stream ${i}`).toBeLessThanOrEqual(1.5 * fairShareMs);
    }
  }, 150_000);
});
