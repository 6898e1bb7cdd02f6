/**
 * `bench:streams`'s scenarios with 3 bot processes (`npm start` each) on one real redis-server
 * (test/helpers/redis.ts), sharing one bot token's budgets through it (issue 20, item 5):
 * Discord in the fake's shared mode with the interactions spread over the processes' sessions,
 * Discord's global limit with 3 × 200 channels, and Slack in HTTP mode behind an ingress that
 * hands the requests to the 3 in turn. BENCH_DEBUG=1 prints each Slack answer's revisions
 * (method, ms from the first command, text length).
 */
import { FakeService } from '../test/fakes/service.ts';
import { FakeSlack } from '../test/fakes/slack.ts';
import { freePort, startRedis } from '../test/helpers/redis.ts';
import { ANSWER, CHUNK_DELAY_MS, discordScenario, PIECES } from './discord-scenario.ts';
import { type Figures, failuresOf, figuresOf, percentile, streamFigures } from './figures.ts';
import { type Runner, startBot } from './runners.ts';

/** How many bot processes the scenarios start. */
export const PROCESSES = 3;

/**
 * `count` bots on one new redis-server (STORE_URL), each started with `env` and `more(i)`,
 * one after the other (each healthy before the next), seen as one Runner: outcomes summed,
 * the highest peak RSS and loop delay, each process's memory in its line. Stopping stops the
 * bots, then Redis.
 */
export async function startShared(
  count: number,
  env: Record<string, string>,
  more: (i: number) => Record<string, string> = () => ({}),
): Promise<Runner> {
  const redis = await startRedis();
  const bots: Runner[] = [];
  try {
    for (let i = 0; i < count; i++) bots.push(await startBot({ ...env, ...more(i), STORE_URL: redis.url }));
  } catch (error) {
    await Promise.all(bots.map((b) => b.stop()));
    await redis.stop();
    throw error;
  }
  return {
    kind: 'bot',
    finished: async (command, total) => {
      for (;;) {
        const each = await Promise.all(bots.map((b) => b.finished(command, 0)));
        const sum: Record<string, number> = {};
        for (const outcomes of each) for (const [k, n] of Object.entries(outcomes)) sum[k] = (sum[k] ?? 0) + n;
        if (Object.values(sum).reduce((s, n) => s + n, 0) >= total) return sum;
        await new Promise((r) => setTimeout(r, 1000));
      }
    },
    peakRssMb: () => Math.max(...bots.map((b) => b.peakRssMb())),
    cpuMs: () => bots.reduce((sum, b) => sum + b.cpuMs(), 0),
    eventLoopP99Ms: async () => Math.max(...(await Promise.all(bots.map((b) => b.eventLoopP99Ms())))),
    memoryLine: () => bots.map((b, i) => `process ${i + 1}: ${b.memoryLine()}`).join('; '),
    problems: () => bots.flatMap((b) => b.problems()),
    gcTrace: () => bots.flatMap((b) => b.gcTrace()),
    stop: async () => {
      await Promise.all(bots.map((b) => b.stop()));
      await redis.stop();
    },
  };
}

/** Discord: `streams` in `channels`, answered by 3 processes on one Redis, the events spread over their sessions. */
export const discordShared = (
  name: string,
  options: { streams: number; channels: number; kind?: 'chat' | 'mention'; rateLimitMode?: 'shared' | 'documented' },
) => discordScenario(name, { ...options, spreadEvents: true, start: (env) => startShared(PROCESSES, env) });

/**
 * Slack: `streams` concurrent /chat in one channel of one workspace, each from its own member,
 * sent to 3 processes in HTTP mode on one Redis in turn (an ingress spreading the requests).
 */
export async function slackShared(name: string, streams: number): Promise<Figures> {
  const channel = { id: 'C0SHARED', name: 'shared' };
  const users = Array.from({ length: streams }, (_, i) => ({
    id: `U0ASK${String(i).padStart(3, '0')}`,
    name: `u${i}`,
  }));
  const service = await FakeService.start();
  const slack = await FakeSlack.start({ channels: [channel], users });
  const ports = await Promise.all(Array.from({ length: PROCESSES }, () => freePort()));
  const env = {
    SERVICE_BASE_URL: service.baseUrl,
    SERVICE_API_KEY: service.apiKey,
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: slack.signingSecret,
    SLACK_API_URL: slack.apiUrl,
  };
  const bots = await startShared(PROCESSES, env, (i) => ({ SLACK_PORT: String(ports[i]) }));
  try {
    for (let i = 0; i < streams; i++)
      service.enqueue('chat', { stream: { pieces: PIECES, chunkDelayMs: CHUNK_DELAY_MS, wholeEvents: true } });
    const done = bots.finished('chat', streams);
    const startedAt = Date.now();
    const acks = await Promise.all(
      users.map((u, i) =>
        slack.sendSlashCommand(`http://127.0.0.1:${ports[i % PROCESSES]}`, {
          command: '/chat',
          text: `question ${i}`,
          channel_id: channel.id,
          user_id: u.id,
        }),
      ),
    );
    const outcomes = await done;
    // The answers: the bot's messages in the questions' threads.
    const answers = slack.messages(channel.id).filter((m) => m.user === slack.botUserId && m.threadTs !== undefined);
    // Visible updates only: a revision that leaves the text as it was (chat.stopStream, the Stop button's removal) shows nothing new.
    const changes = (revisions: Array<{ at: number; text: string }>) =>
      revisions
        .filter((r, i) => i === 0 || r.text !== revisions[i - 1]!.text)
        .map((r) => ({ at: r.at, content: r.text }));
    const per = answers.map((m) => streamFigures(startedAt, changes(m.revisions)));
    process.stdout.write(`  memory at most: ${bots.memoryLine()}\n`);
    if (process.env.BENCH_DEBUG)
      for (const m of answers)
        process.stdout.write(
          `  ${m.via} ${m.revisions.map((r) => `${r.method}@${r.at - startedAt}:${r.text.length}`).join(' ')}\n`,
        );
    return figuresOf(name, per, {
      status429: slack.calls.filter((c) => c.status === 429 || c.error === 'ratelimited').length,
      exact: `${answers.filter((m) => m.text === ANSWER).length}/${streams}`,
      failures: failuresOf(outcomes),
      ackP95Ms: Math.round(
        percentile(
          acks.map((a) => a.ackMs),
          95,
        ),
      ),
      peakRssMb: bots.peakRssMb(),
      eventLoopP99Ms: await bots.eventLoopP99Ms(),
    });
  } finally {
    await bots.stop();
    await slack.close();
    await service.close();
  }
}
