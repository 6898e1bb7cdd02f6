/**
 * Several bot processes (`npm start`, as an operator runs them) on one real redis-server share
 * one set of platform budgets (issue 20, item 1):
 *
 * - Slack, HTTP mode, 3 processes with the /chat requests spread over them in turn (as an
 *   ingress would): 30 concurrent /chat in one channel of one workspace under FakeSlack's tiers
 *   and ~1 post a second per channel draw no `ratelimited`, every final text is exact, and no
 *   stream waits between two updates longer than 1.5 times its fair share of the budget it uses.
 * - Discord in the fake's shared mode (one hidden budget of 5 writes per 5 s per channel for
 *   every write), 3 processes with the interactions spread over their sessions: 30 concurrent
 *   /chat in one channel draw at most one 429 in the channel, every final text exact.
 * - Discord's global limit (50 requests a second per bot token, the fake counting every
 *   bot-token request but interactions' and webhooks'): 3 processes each answering mentions in
 *   200 channels never go past 50 requests in any second and draw no global 429.
 * - Redis stopped mid-run (killed): writes go on, each process on its share of the budgets
 *   (no 429), each says so in one log line, none crashes; once Redis is started again each says
 *   once that budgets are shared again.
 */
import { createClient } from '@keyv/redis';
import { describe, expect, it } from 'vitest';
import { bucketKey, storeKeys } from '../../src/core/keys.ts';
import { countsGlobally } from '../fakes/discord/global-limit.ts';
import type { FakeDiscord, FakeInteraction, FakeMessage } from '../fakes/discord.ts';
import type { FakeService, RecordedRequest } from '../fakes/service.ts';
import { type FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { type BotProcess, spawnBot } from '../helpers/bot-process.ts';
import { useE2E } from '../helpers/e2e.ts';
import { freePort, type TestRedis } from '../helpers/redis.ts';
import { discordEnv, slackEnv } from './harness.ts';

const PROCESSES = 3;
const FALLBACK_LINE = 'rate budgets: the store is not answering';
const RESUMED_LINE = 'rate budgets: the store answers again';

/** The answer of the stream tagged `tag`: `pieces` words of ~10 characters. */
const piecesOf = (tag: string, pieces: number) =>
  Array.from({ length: pieces }, (_, i) => `${tag}-w${String(i + 1).padStart(3, '0')}${i + 1 < pieces ? ' ' : ''}`);

/**
 * Scripts one streamed answer per tag and learns, from the service's chat requests, which
 * question got which (its queue is first in, first out): `textFor(tag)` is the text the
 * request carrying `ask-<tag>` was answered with.
 */
function scriptAnswers(service: FakeService, tags: string[], pieces: number, chunkDelayMs: number) {
  const texts = tags.map((tag) => piecesOf(tag, pieces).join(''));
  for (const tag of tags) service.enqueue('chat', { stream: { pieces: piecesOf(tag, pieces), chunkDelayMs } });
  const askedBy: string[] = [];
  const onRequest = (r: RecordedRequest) => {
    if (r.route !== 'chat') return;
    const messages = (r.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
    const last = [...messages].reverse().find((m) => m.role === 'user');
    askedBy.push(/ask-([a-z]\d+)/.exec(JSON.stringify(last?.content))?.[1] ?? '?');
  };
  service.events.on('request', onRequest);
  return {
    textFor: (tag: string) => {
      const index = askedBy.indexOf(tag);
      return index < 0 ? undefined : texts[index];
    },
    stop: () => service.events.off('request', onRequest),
  };
}

/** Whether a message shows `expected` exactly (a known answer). */
const isExact = (content: string | undefined, expected: string | undefined) =>
  expected !== undefined && content === expected;

/** How many log lines of `bot` start with `text` (spawnBot keys them by message). */
const linesOf = (bot: BotProcess, text: string) =>
  [...bot.problems].filter(([line]) => line.startsWith(text)).reduce((n, [, count]) => n + count, 0);

/** Starts the processes one after the other (each healthy before the next). */
async function startProcesses(env: () => Promise<Record<string, string>>): Promise<BotProcess[]> {
  const bots: BotProcess[] = [];
  for (let i = 0; i < PROCESSES; i++) bots.push(await spawnBot(await env()));
  return bots;
}

describe('Slack, 3 processes in HTTP mode behind one ingress', () => {
  let service: FakeService;
  let slack: FakeSlack;
  let bots: BotProcess[] = [];
  const ports: number[] = [];
  const CHANNEL = 'C0SHARED';
  const users = Array.from({ length: 30 }, (_, i) => ({ id: `U0ASK${String(i).padStart(2, '0')}`, name: `asker${i}` }));

  useE2E(
    { slack: { channels: [{ id: CHANNEL, name: 'shared' }], users }, redis: true, timeoutMs: 120_000 },
    async (e2e) => {
      ({ service, slack } = e2e);
      const redis = e2e.redis!;
      bots = await startProcesses(async () => {
        const port = await freePort();
        ports.push(port);
        return { ...slackEnv(service, slack), SLACK_PORT: String(port), STORE_URL: redis.url };
      });
      return async () => {
        await Promise.all(bots.map((bot) => bot.stop()));
      };
    },
  );

  it('30 concurrent /chat in one channel: no ratelimited, every final text exact, no update gap over 1.5× the fair share', async () => {
    const tags = users.map((_, i) => `s${String(i).padStart(2, '0')}`);
    const answers = scriptAnswers(service, tags, 60, 100);
    try {
      const acks = await Promise.all(
        tags.map((tag, i) =>
          slack.sendSlashCommand(`http://127.0.0.1:${ports[i % PROCESSES]}`, {
            command: '/chat',
            text: `Tell me about ask-${tag}`,
            channel_id: CHANNEL,
            user_id: users[i]!.id,
          }),
        ),
      );
      expect(acks.every((a) => a.ackedInTime)).toBe(true);
      // Every answer ends whole (a posted one by its last chat.update, a streamed one stopped), each once.
      const finished = () => {
        const expected = new Set(tags.map((tag) => answers.textFor(tag)));
        return slack
          .messages(CHANNEL)
          .filter(
            (m) =>
              m.user === slack.botUserId &&
              m.threadTs !== undefined &&
              expected.has(unescapeSlack(m.text)) &&
              (m.via !== 'chat.startStream' || m.stream?.state === 'stopped'),
          );
      };
      await expect.poll(() => finished().length, { timeout: 150_000, interval: 500 }).toBe(tags.length);
      expect(new Set(finished().map((m) => m.text)).size).toBe(tags.length);

      expect(slack.calls.filter((c) => c.status === 429 || c.error === 'ratelimited')).toEqual([]);
      const all = finished();
      const native = all.filter((a) => a.via === 'chat.startStream');
      const posted = all.filter((a) => a.via === 'chat.postMessage');
      expect(native.length + posted.length).toBe(tags.length);
      // Each stream's fair share of its workspace budget: a write every (streams sharing it / writes a minute) minutes.
      const gapOf = (times: number[]) => times.slice(1).reduce((gap, t, k) => Math.max(gap, t - times[k]!), 0);
      for (const answer of native)
        expect(gapOf(answer.stream!.writes.map((w) => w.at))).toBeLessThanOrEqual(1.5 * (native.length / 100) * 60_000);
      for (const answer of posted)
        expect(gapOf(answer.revisions.map((r) => r.at))).toBeLessThanOrEqual(
          1.5 * (posted.length / 50) * 60_000 + 1_000,
        );
      for (const bot of bots) {
        expect(bot.child.exitCode).toBeNull();
        expect(linesOf(bot, FALLBACK_LINE)).toBe(0);
      }
    } finally {
      answers.stop();
    }
  }, 200_000);
});

describe('Discord, 3 processes sharing one bot token', () => {
  let service: FakeService;
  let discord: FakeDiscord;
  let redis: TestRedis;
  let bots: BotProcess[] = [];

  useE2E({ discord: { spreadEvents: true }, redis: true, timeoutMs: 120_000 }, async (e2e) => {
    ({ service, discord } = e2e);
    redis = e2e.redis!;
    bots = await startProcesses(async () => ({ ...discordEnv(service, discord), STORE_URL: redis.url }));
    return async () => {
      await Promise.all(bots.map((bot) => bot.stop()));
    };
  });

  /** Dispatches a /chat per tag in `channelId`, spread over the processes' sessions by the fake. */
  const chats = (channelId: string, tags: string[], base: bigint): FakeInteraction[] =>
    tags.map((tag, i) =>
      discord.dispatchInteraction({
        command: 'chat',
        options: { prompt: `Tell me about ask-${tag}` },
        channelId,
        user: { id: String(base + BigInt(i)) },
      }),
    );

  it('shared mode: 30 concurrent /chat in one channel over the 3 processes draw at most one 429, every final text exact', async () => {
    discord.setRateLimitMode('shared');
    const channel = discord.addChannel('shared-budget');
    const tags = Array.from({ length: 30 }, (_, i) => `c${String(i).padStart(2, '0')}`);
    const answers = scriptAnswers(service, tags, 20, 100);
    try {
      const interactions = chats(channel.id, tags, 410000000000000000n);
      await expect
        .poll(() => tags.filter((tag, i) => isExact(interactions[i]!.original?.content, answers.textFor(tag))).length, {
          timeout: 150_000,
          interval: 500,
        })
        .toBe(tags.length);
      expect(discord.rateLimits.filter((r) => r.channelId === channel.id).length).toBeLessThanOrEqual(1);
      expect(discord.rateLimits.filter((r) => r.bucket === 'global')).toEqual([]);
      for (const bot of bots) expect(bot.child.exitCode).toBeNull();
    } finally {
      answers.stop();
    }
  }, 200_000);

  it('3 processes × 200 channels of mentions keep the bot token under 50 requests in any second, no global 429', async () => {
    discord.setRateLimitMode('documented');
    const channels = Array.from({ length: PROCESSES * 200 }, (_, i) => discord.addChannel(`global-${i}`));
    const tags = channels.map((_, i) => `g${String(i).padStart(3, '0')}`);
    const answers = scriptAnswers(service, tags, 3, 50);
    const since = Date.now();
    try {
      const questions = channels.map((channel, i) =>
        discord.postUserMessage({
          channelId: channel.id,
          content: `<@${discord.botUser.id}> Tell me about ask-${tags[i]}`,
          author: { id: String(420000000000000000n + BigInt(i)), username: `asker${i}` },
        }),
      );
      const replyTo = (question: FakeMessage) =>
        discord
          .messagesIn(question.channelId)
          .find((m) => m.author.id === discord.botUser.id && m.reference?.messageId === question.id);
      await expect
        .poll(() => questions.filter((q, i) => isExact(replyTo(q)?.content, answers.textFor(tags[i]!))).length, {
          timeout: 240_000,
          interval: 1_000,
        })
        .toBe(questions.length);
      expect(bots.map((bot) => linesOf(bot, FALLBACK_LINE))).toEqual([0, 0, 0]);
      expect(discord.rateLimits.filter((r) => r.bucket === 'global')).toEqual([]);
      // Every bot-token request the fake received (refused ones included), by time: at most 50 in any second.
      const times = discord.requests
        .filter((r) => r.at >= since && countsGlobally(r))
        .map((r) => r.at)
        .sort((a, b) => a - b);
      let peak = 0;
      for (let i = 0, j = 0; i < times.length; i++) {
        while (times[i]! - times[j]! >= 1_000) j++;
        peak = Math.max(peak, i - j + 1);
      }
      expect(times.length).toBeGreaterThan(questions.length);
      expect(peak).toBeLessThanOrEqual(50);
      // Shared all along: no process fell back to its local share.
      for (const bot of bots) expect(linesOf(bot, FALLBACK_LINE)).toBe(0);
    } finally {
      answers.stop();
    }
  }, 300_000);

  it('Redis stopped mid-run: answers go on within each process share, one log line each, no crash; shared again after', async () => {
    // Without the store the answers come without history, the first with a line saying so under it.
    const isAnswered = (reply: FakeMessage | undefined, text: string | undefined) =>
      text !== undefined && reply !== undefined && (reply.content === text || reply.content.startsWith(`${text}\n`));
    discord.setRateLimitMode('documented');
    const channel = discord.addChannel('redis-outage');
    const tags = Array.from({ length: 12 }, (_, i) => `r${String(i).padStart(2, '0')}`);
    const answers = scriptAnswers(service, tags, 20, 100);
    try {
      await redis.kill();
      const questions = tags.map((tag, i) =>
        discord.postUserMessage({
          channelId: channel.id,
          content: `<@${discord.botUser.id}> Tell me about ask-${tag}`,
          author: { id: String(430000000000000000n + BigInt(i)), username: `asker${i}` },
        }),
      );
      const replyTo = (question: FakeMessage) =>
        discord
          .messagesIn(channel.id)
          .find((m) => m.author.id === discord.botUser.id && m.reference?.messageId === question.id);
      await expect
        .poll(() => questions.filter((q, i) => isAnswered(replyTo(q), answers.textFor(tags[i]!))).length, {
          timeout: 120_000,
          interval: 500,
        })
        .toBe(questions.length);
      // Each process kept a third of the channel's 5 writes per 5 s: together within it, no 429.
      expect(discord.rateLimits.filter((r) => r.channelId === channel.id)).toEqual([]);
      for (const bot of bots) {
        expect(bot.child.exitCode).toBeNull();
        expect(linesOf(bot, FALLBACK_LINE)).toBe(1);
      }
      await redis.restart();
      for (const bot of bots)
        await expect.poll(() => linesOf(bot, RESUMED_LINE), { timeout: 20_000, interval: 200 }).toBe(1);
      for (const bot of bots) expect(linesOf(bot, FALLBACK_LINE)).toBe(1);

      // Shared again: the next answers' writes are counted in Redis (the channel's slots there), still no 429.
      const after = discord.addChannel('redis-back');
      const more = Array.from({ length: 6 }, (_, i) => `b${String(i).padStart(2, '0')}`);
      const moreAnswers = scriptAnswers(service, more, 5, 50);
      try {
        const asked = more.map((tag, i) =>
          discord.postUserMessage({
            channelId: after.id,
            content: `<@${discord.botUser.id}> Tell me about ask-${tag}`,
            author: { id: String(440000000000000000n + BigInt(i)), username: `later${i}` },
          }),
        );
        const replyAfter = (question: FakeMessage) =>
          discord
            .messagesIn(after.id)
            .find((m) => m.author.id === discord.botUser.id && m.reference?.messageId === question.id);
        await expect
          .poll(() => asked.filter((q, i) => isAnswered(replyAfter(q), moreAnswers.textFor(more[i]!))).length, {
            timeout: 60_000,
            interval: 500,
          })
          .toBe(asked.length);
      } finally {
        moreAnswers.stop();
      }
      const client = createClient({ url: redis.url });
      await client.connect();
      const slotsKey = `genbot:${storeKeys.budgetSlots(bucketKey({ platform: 'discord', kind: 'channel', scope: after.id }))}`;
      expect(await client.zCard(slotsKey)).toBeGreaterThan(0);
      await client.close();
      expect(discord.rateLimits.filter((r) => r.channelId === after.id)).toEqual([]);
      for (const bot of bots) expect(bot.child.exitCode).toBeNull();
    } finally {
      answers.stop();
    }
  }, 200_000);
});
