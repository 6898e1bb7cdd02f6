/**
 * Two bot processes (`node dist/src/main.js`, as the container runs it) behind one
 * Slack app in HTTP mode, sharing a real redis-server: what one writes the other reads; 20
 * concurrent /chat in one conversation over both leave 40 turns, each question followed by
 * its answer; a user's quota is one quota across both; Redis stopping mid-run gives answers
 * without history and one notice, and once it is back new turns are stored.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { english } from '../../src/core/i18n/words.ts';
import { STORE_DOWN_NOTE as DOWN } from '../../src/core/state/health.ts';

import { ConversationStore } from '../../src/core/state/history.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import type { ChatRequestBody, FakeService } from '../fakes/service.ts';
import type { FakeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestRedis } from '../helpers/redis.ts';

const STORE_DOWN_NOTE = english.say(DOWN);

const root = resolve(import.meta.dirname, '../..');
const CHANNELS = { shared: 'C0SHARED', busy: 'C0BUSY', quota: 'C0QUOTA', outage: 'C0OUTAGE' };

let service: FakeService;
let slack: FakeSlack;
let redis: TestRedis;
let store: StateStore;
const bots: Array<{ child: ChildProcess; url: string; healthUrl: string; output: () => string }> = [];

/** The last user message of a chat request. */
const lastQuestion = (body: ChatRequestBody) => String(body.messages.at(-1)!.content);

/** Starts one bot process (Slack and /healthz on free ports) and resolves once it logged that it started. */
async function startProcess(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; healthUrl: string; output: () => string }> {
  const child = spawn('node', ['dist/src/main.js'], {
    cwd: root,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (d) => (output += String(d)));
  const [port, healthPort] = await new Promise<[number, number]>((started, failed) => {
    child.stdout!.on('data', (d) => {
      output += String(d);
      const slackPort = /"port":(\d+),"msg":"slack ready/.exec(output)?.[1];
      const opsPort = /"port":(\d+),"msg":"health and metrics listening"/.exec(output)?.[1];
      if (slackPort && opsPort && output.includes('"msg":"bot started"')) started([Number(slackPort), Number(opsPort)]);
    });
    child.once('exit', (code) => failed(new Error(`bot exited ${code}: ${output}`)));
  });
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    healthUrl: `http://127.0.0.1:${healthPort}/healthz`,
    output: () => output,
  };
}

/** Stops the bot processes (SIGTERM, each awaited) and closes this file's own connection to the store. */
async function stopAll(): Promise<void> {
  await Promise.all(
    bots.map(
      ({ child }) =>
        new Promise<void>((done) => {
          if (child.exitCode !== null) return done();
          child.once('exit', () => done());
          child.kill('SIGTERM');
        }),
    ),
  );
  await store?.close();
}

const users = ['U0ADA', 'U0QUOTA', 'U0OUT', ...Array.from({ length: 20 }, (_, i) => `U0USER${i}`)].map((id) => ({
  id,
  name: id.slice(2).toLowerCase(),
}));

useE2E(
  {
    slack: {
      channels: Object.values(CHANNELS).map((id) => ({ id, name: id.toLowerCase() })),
      users,
      // Generous limits: this file is about the store, not about pacing.
      rateLimits: { postMessage: { perSecond: 100, burst: 100 }, chatUpdate: { limit: 1000, windowMs: 60_000 } },
    },
    redis: true,
    timeoutMs: 60_000,
  },
  // The two bot processes are this file's own (see startProcess), as is its connection to the store.
  async (e2e) => {
    ({ service, slack, redis } = e2e);
    service.setChatReply((body) => `Answer to: ${lastQuestion(body)}`);
    const env = {
      SERVICE_BASE_URL: `${service.baseUrl}/v1`,
      SERVICE_API_KEY: service.apiKey,
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: slack.signingSecret,
      SLACK_API_URL: slack.apiUrl,
      SLACK_PORT: '0',
      HTTP_PORT: '0',
      STORE_URL: redis.url,
      DEFAULT_CHAT_MODEL: 'fake-chat',
      QUOTA_CHAT_PER_MINUTE: '3',
      LOG_LEVEL: 'info',
    };
    bots.push(...(await Promise.all([startProcess(env), startProcess(env)])));
    store = await openStore(redis.url);
    return stopAll;
  },
);

/** Sends /chat through bot `index` and checks Slack's 3 s ack. */
async function chat(index: number, channel: string, user: string, text: string): Promise<void> {
  const ack = await slack.sendSlashCommand(bots[index]!.url, {
    command: '/chat',
    text,
    channel_id: channel,
    user_id: user,
  });
  expect(ack.ackedInTime).toBe(true);
}

/** Resolves with the bot's message in `channel` whose text starts with `text` (waiting up to `timeoutMs`). */
async function answerIn(channel: string, text: string, timeoutMs = 15_000): Promise<string> {
  let found: string | undefined;
  await expect
    .poll(() => (found = slack.messages(channel).find((m) => m.botId && m.text.startsWith(text))?.text), {
      timeout: timeoutMs,
      interval: 50,
    })
    .toBeDefined();
  return found!;
}

const history = (channel: string) => new ConversationStore(store).get(`slack:${slack.teamId}:${channel}`);

describe('two bot processes sharing Redis', () => {
  it('share history: written through one, read through the other', async () => {
    await chat(0, CHANNELS.shared, 'U0ADA', 'My name is Ada.');
    await answerIn(CHANNELS.shared, 'Answer to: My name is Ada.');
    await chat(1, CHANNELS.shared, 'U0ADA', 'What is my name?');
    await answerIn(CHANNELS.shared, 'Answer to: What is my name?');
    const seen = service.chatRequests().find((b) => lastQuestion(b) === 'What is my name?')!;
    expect(seen.messages).toEqual([
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Answer to: My name is Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
  });

  it('20 concurrent /chat in one conversation over both processes leave 40 turns, each question followed by its answer', async () => {
    const questions = Array.from({ length: 20 }, (_, i) => `Question ${i}`);
    await Promise.all(questions.map((q, i) => chat(i % 2, CHANNELS.busy, `U0USER${i}`, q)));
    // Each /chat first shows its question in the channel, and Slack takes about one post a second
    // per channel: the twentieth question is shown some 20 s after the first.
    await Promise.all(questions.map((q) => answerIn(CHANNELS.busy, `Answer to: ${q}`, 60_000)));
    await expect.poll(async () => (await history(CHANNELS.busy)).length, { timeout: 10_000 }).toBe(40);
    const turns = await history(CHANNELS.busy);
    for (let i = 0; i < 40; i += 2) {
      expect(turns[i]!.role).toBe('user');
      expect(turns[i + 1]).toMatchObject({ role: 'assistant', content: `Answer to: ${turns[i]!.content}` });
    }
    expect(
      turns
        .filter((t) => t.role === 'user')
        .map((t) => t.content)
        .sort(),
    ).toEqual([...questions].sort());
  }, 90_000);

  it("a user's quota (3 a minute) is one quota across both processes", async () => {
    for (let i = 0; i < 5; i++) await chat(i % 2, CHANNELS.quota, 'U0QUOTA', `Quota ${i}`);
    await expect
      .poll(() => slack.responsePosts().filter((p) => p.channel === CHANNELS.quota).length, { timeout: 10_000 })
      .toBe(2);
    const refusals = slack.responsePosts().filter((p) => p.channel === CHANNELS.quota);
    for (const refusal of refusals)
      expect(refusal.text).toMatch(/^You have reached your limit of 3 chat requests a minute\. Try again in \d+ s\.$/);
    expect(refusals.every((r) => r.responseType === 'ephemeral')).toBe(true);
    await expect
      .poll(() => service.chatRequests().filter((b) => lastQuestion(b).startsWith('Quota ')).length, {
        timeout: 10_000,
      })
      .toBe(3);
  });

  it('with Redis stopped, answers come without history and one notice; after it restarts, new turns are stored', async () => {
    await chat(0, CHANNELS.outage, 'U0OUT', 'Before the outage');
    await answerIn(CHANNELS.outage, 'Answer to: Before the outage');
    await redis.kill();
    await chat(0, CHANNELS.outage, 'U0OUT', 'During one');
    await answerIn(CHANNELS.outage, 'Answer to: During one');
    // The note comes with the answer's final edit.
    await expect
      .poll(() => slack.messages(CHANNELS.outage).find((m) => m.text.startsWith('Answer to: During one'))?.text, {
        timeout: 10_000,
      })
      .toBe(`Answer to: During one\n\n_⚠️ ${STORE_DOWN_NOTE}_`);
    expect(service.chatRequests().find((b) => lastQuestion(b) === 'During one')!.messages).toHaveLength(1);
    await chat(0, CHANNELS.outage, 'U0OUT', 'During two');
    expect(await answerIn(CHANNELS.outage, 'Answer to: During two')).toBe('Answer to: During two');

    await redis.restart();
    // The bots reconnect on their own (backoff up to 5 s): their health checks say when.
    for (const bot of bots)
      await expect.poll(async () => (await fetch(bot.healthUrl)).status, { timeout: 15_000, interval: 200 }).toBe(200);
    await chat(1, CHANNELS.outage, 'U0OUT', 'After the outage');
    await answerIn(CHANNELS.outage, 'Answer to: After the outage');
    // (The restarted Redis starts empty. A turn answered just before it came back may have been
    // stored too, when its write waited for the reconnection; the new exchange is stored last.)
    await expect
      .poll(async () => (await history(CHANNELS.outage)).map((t) => t.content).slice(-2), { timeout: 10_000 })
      .toEqual(['After the outage', 'Answer to: After the outage']);
    expect((await history(CHANNELS.outage)).map((t) => t.content)).not.toContain('Before the outage');
    for (const bot of bots) expect(bot.output()).not.toMatch(/unhandled|Uncaught/i);
  }, 60_000);
});
