/**
 * Which sentences carry a reference (issue 18, item 6; docs/operator-guide.md, "Logs"), end to end on Slack:
 * a failure an operator may need to trace (the service failing) ends with `(ref XXXXXX)`, which
 * is on that invocation's log lines; a refusal of the user's own request (an out-of-range
 * option, an admin command, a quota used up) says what to change and carries none, though its
 * log line carries the invocation's reference too.
 */
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../fakes/service.ts';
import type { FakeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;

useE2E(
  {
    slack: { channels: [{ id: 'C0REFS', name: 'references' }] },
    // bob may ask one /chat a minute; alice is an admin (exempt).
    bot: { env: { QUOTA_CHAT_PER_MINUTE: '1' } },
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** Runs a slash command as `user` in C0REFS; resolves with what the user alone was told, and the log lines of the invocation. */
async function told(user: string, command: string, text: string) {
  const before = slack.responsePosts().length;
  const logsBefore = testBot.logs.length;
  const done = testBot.outcomes((o) => o.conversationId.endsWith(':C0REFS'));
  await slack.sendSlashCommand(botUrl, { command, text, channel_id: 'C0REFS', user_id: user });
  const [outcome] = await done;
  const texts = slack
    .responsePosts()
    .slice(before)
    .map((p) => p.text);
  return { outcome: outcome!, texts, logs: testBot.logs.slice(logsBefore) };
}

const REF = /\(ref ([2-9A-Z]{6})\)$/;

describe('references', () => {
  it("a service failure carries a reference that is on the invocation's log lines", async () => {
    for (let i = 0; i < 3; i++) service.enqueue('chat', { status: 500 });
    const { outcome, texts, logs } = await told('U0ALICE', '/chat', 'are you well?');
    expect(outcome.errorCode).toBe('server_error');
    expect(texts).toEqual([expect.stringMatching(/^The generation service is having trouble .*\(ref [2-9A-Z]{6}\)$/)]);
    const ref = REF.exec(texts[0]!)![1];
    expect(logs.filter((l) => l.msg === 'service call failed')).toEqual([expect.objectContaining({ ref, level: 40 })]);
  });

  it("an out-of-range option, an admin command and a used-up quota say what to change, without a reference (their log lines carry the invocation's)", async () => {
    const option = await told('U0BOB', '/chat', 'hot take --temperature 5');
    expect(option.texts).toEqual(['`temperature` must be from 0 to 2.']);
    const admin = await told('U0BOB', '/settings', '');
    expect(admin.texts).toEqual(['/settings is for admins only.']);
    expect((await told('U0BOB', '/chat', 'first')).outcome.ok).toBe(true);
    const quota = await told('U0BOB', '/chat', 'second');
    expect(quota.outcome.errorCode).toBe('quota_exceeded');
    expect(quota.texts).toEqual([
      expect.stringMatching(/^You have reached your limit of 1 chat request a minute\. Try again in \d+ s\.$/),
    ]);
    for (const refused of [option, admin, quota]) {
      expect(refused.texts[0]).not.toMatch(/\(ref /);
      const line = refused.logs.find((l) => l.level === 30 && typeof l.code === 'string');
      expect(line).toEqual(expect.objectContaining({ ref: expect.stringMatching(/^[2-9A-Z]{6}$/) }));
    }
  });
});
