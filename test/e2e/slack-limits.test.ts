/**
 * Slack's tiers under load (issue 9): 25 concurrent /chat in 25 channels of one workspace,
 * with the fake enforcing chat.startStream (tier 2, 20 a minute), chat.appendStream (tier 4,
 * 100 a minute), chat.stopStream (20 a minute), chat.update (tier 3, 50 a minute) and ~1 post a
 * second per channel. Twenty answers stream natively; with the startStream budget spent, the
 * other five are posted and updated at once rather than waiting a minute for it. The bot's write
 * scheduler keeps every answer within the budgets: no call is refused with `ratelimited`, every
 * final text is exact, and no stream waits longer between two updates than 1.5 times its fair
 * share of the budget it uses.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../fakes/service.ts';
import { type FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const STREAMS = 25;
const CHANNELS = Array.from({ length: STREAMS }, (_, i) => ({
  id: `C0LOAD${String(i).padStart(2, '0')}`,
  name: `load-${i}`,
}));
/** chat.appendStream per workspace and minute (tier 4), as the fake enforces it. */
const APPENDS_PER_MINUTE = 100;
/** chat.update per workspace and minute (tier 3). */
const UPDATES_PER_MINUTE = 50;
/** chat.startStream per workspace and minute (tier 2). */
const STARTS_PER_MINUTE = 20;

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  { service: { apiKey: `sk-fake-${randomBytes(16).toString('hex')}` }, slack: { channels: CHANNELS }, bot: {} },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

describe('Slack at its tiers', () => {
  it(`${STREAMS} concurrent /chat in one workspace: no ratelimited answer, every final text exact, no update gap over 1.5× the fair share`, async () => {
    // ~600 characters over ~6 s each, every answer its own text.
    const texts = CHANNELS.map((_, s) => Array.from({ length: 60 }, (_, i) => `s${s}w${i} `).join(''));
    for (const text of texts) service.enqueue('chat', { stream: { text, chunkDelayMs: 100 } });
    const done = testBot.outcomes((o) => o.command === 'chat', STREAMS, 120_000);
    const acks = await Promise.all(
      CHANNELS.map((c, i) =>
        slack.sendSlashCommand(botUrl, { command: '/chat', text: `question ${i}`, channel_id: c.id }),
      ),
    );
    expect(acks.every((a) => a.ackedInTime)).toBe(true);
    const outcomes = await done;
    expect(outcomes.every((o) => o.ok)).toBe(true);

    expect(slack.calls.filter((c) => c.status === 429 || c.error === 'ratelimited')).toEqual([]);
    const answers = CHANNELS.map(
      (channel) => slack.messages(channel.id).find((m) => m.user === slack.botUserId && m.threadTs !== undefined)!,
    );
    const native = answers.filter((a) => a.via === 'chat.startStream');
    const posted = answers.filter((a) => a.via === 'chat.postMessage');
    expect([native.length, posted.length]).toEqual([STARTS_PER_MINUTE, STREAMS - STARTS_PER_MINUTE]);
    // The service's answers were handed out in the order the requests came: every one of them arrived whole, once.
    expect(answers.map((a) => unescapeSlack(a.text)).sort()).toEqual([...texts].sort());
    // The fair share of a budget: each stream may write every (streams sharing it / writes a minute) minutes.
    const gapOf = (times: number[]) => times.slice(1).reduce((gap, t, k) => Math.max(gap, t - times[k]!), 0);
    for (const answer of native) {
      expect(answer.stream!.state).toBe('stopped');
      expect(gapOf(answer.stream!.writes.map((w) => w.at))).toBeLessThanOrEqual(
        1.5 * (native.length / APPENDS_PER_MINUTE) * 60_000,
      );
    }
    for (const answer of posted) {
      expect(answer.revisions.filter((r) => r.method === 'chat.update').length).toBeGreaterThanOrEqual(1);
      expect(gapOf(answer.revisions.map((r) => r.at))).toBeLessThanOrEqual(
        1.5 * (posted.length / UPDATES_PER_MINUTE) * 60_000 + 1_000,
      );
    }
  }, 150_000);
});
