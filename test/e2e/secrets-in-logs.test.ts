/**
 * Secrets and bodies stay out of the logs (issue 16, item 7), the bot started from environment
 * variables at LOG_LEVEL=debug: no request or response body of Slack or of the service (the
 * question, the streamed answer) appears in any line, and STORE_URL's credentials are scrubbed
 * like the other secrets while the store refuses them.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { FakeService } from '../fakes/service.ts';
import type { FakeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestRedis } from '../helpers/redis.ts';
import { slackEnv, startTestBot, type TestBot } from './harness.ts';

let service: FakeService;
let slack: FakeSlack;

useE2E({ slack: { channels: [{ id: 'C0LOGS', name: 'logs' }] } }, (e2e) => {
  ({ service, slack } = e2e);
});

describe('logs at LOG_LEVEL=debug', () => {
  let testBot: TestBot;
  afterAll(() => testBot?.stop());

  it('carry no body of Slack or of the service: neither the question nor the streamed answer is in any line', async () => {
    testBot = await startTestBot({ ...slackEnv(service, slack), LOG_LEVEL: 'debug' });
    service.setChatReply('The zanzibar-answer streams here, word by word.');
    const done = testBot.outcomes((o) => o.conversationId.endsWith(':C0LOGS'));
    const ack = await slack.sendSlashCommand(`http://127.0.0.1:${testBot.bot.slack!.port}`, {
      command: '/chat',
      text: 'what is the quokka-question?',
      channel_id: 'C0LOGS',
    });
    expect(ack.status).toBe(200);
    const [outcome] = await done;
    expect(outcome).toMatchObject({ ok: true });
    // The answer did reach Slack, and debug lines were written (the libraries' included).
    expect(slack.messages('C0LOGS').some((m) => m.revisions.some((r) => r.text.includes('zanzibar-answer')))).toBe(
      true,
    );
    expect(testBot.logs.filter((l) => l.level === 20).length).toBeGreaterThan(5);
    expect(testBot.logs.some((l) => l.lib === 'bolt' && l.level === 20)).toBe(true);
    const text = testBot.rawLog();
    expect(text).not.toContain('zanzibar');
    expect(text).not.toContain('quokka');
    expect(text).not.toContain(slack.botToken);
    expect(text).not.toContain(service.apiKey);
    service.setChatReply(undefined);
  });
});

describe('STORE_URL credentials', () => {
  let redis: TestRedis;
  let testBot: TestBot;
  useE2E({ service: false, redis: { password: 'the-right-redis-password' } }, (e2e) => {
    redis = e2e.redis;
    // The test starts the bot.
    return () => testBot?.stop();
  });

  it('are scrubbed from every line while the store refuses them (a wrong password), and the bot answers without history', async () => {
    const wrong = 'wr0ng-redis-p4ssword';
    testBot = await startTestBot({
      ...slackEnv(service, slack),
      LOG_LEVEL: 'debug',
      STORE_URL: `redis://genbot-user:${wrong}@127.0.0.1:${redis.port}`,
    });
    const done = testBot.outcomes((o) => o.conversationId.endsWith(':C0LOGS'));
    await slack.sendSlashCommand(`http://127.0.0.1:${testBot.bot.slack!.port}`, {
      command: '/chat',
      text: 'hello',
      channel_id: 'C0LOGS',
    });
    const [outcome] = await done;
    expect(outcome).toMatchObject({ ok: true });
    expect(await testBot.bot.health()).toEqual([expect.stringMatching(/^store \(redis\) not answering/)]);
    const text = testBot.rawLog();
    expect(testBot.logs.some((l) => /store/.test(String(l.msg)) && l.level >= 40)).toBe(true);
    expect(text).not.toContain(wrong);
    expect(text).not.toContain('genbot-user');
    expect(JSON.stringify(await testBot.bot.health())).not.toContain(wrong);
  });
});
