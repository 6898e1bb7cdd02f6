/**
 * Catch-up after downtime (issue 20 item 3), with the bot as an operator runs it (`npm start`,
 * test/helpers/bot-process.ts) on Discord and Slack in Socket Mode, sharing a real
 * redis-server: messages sent to the bot while it was stopped are never delivered to it (the
 * fake gateway has no session to dispatch them to; Slack has no socket to send them over), yet
 * they stay in the channels. After `npm start`, the bot reads the channels where it was
 * addressed since the newest message it saw, and answers each mention and DM sent meanwhile
 * exactly once, marked "(answered after a restart)"; what it answered before the stop, what
 * does not address it, and what is older than CATCH_UP_MAX_AGE_MINUTES are not answered. Two
 * processes starting at once answer each once (the claims in Redis); a Discord gateway session
 * that could not be resumed and a Socket Mode connection replaced are caught up the same way;
 * in Slack HTTP mode, what Slack could not deliver is caught up at start and its retry dropped.
 *
 * The tests run in order: each starts where the previous one stopped the bot.
 */

import { describe, expect, it } from 'vitest';
import { LATE_NOTICE } from '../../src/core/catch-up.ts';
import { english } from '../../src/core/i18n/words.ts';
import type { FakeChannel, FakeDiscord, FakeMessage } from '../fakes/discord.ts';
import type { ChatRequestBody, FakeService } from '../fakes/service.ts';
import type { FakeSlack, FakeSlackMessage } from '../fakes/slack.ts';
import { type BotProcess, spawnBot } from '../helpers/bot-process.ts';
import { useE2E } from '../helpers/e2e.ts';
import { freePort, type TestRedis } from '../helpers/redis.ts';
import { discordEnv, slackEnv } from './harness.ts';

const SLACK_CHANNELS = { one: 'C0CATCHONE', two: 'C0CATCHTWO' };

let service: FakeService;
let discord: FakeDiscord;
let slack: FakeSlack;
let redis: TestRedis;
const running: BotProcess[] = [];
const channels: { a: FakeChannel; b: FakeChannel; old: FakeChannel; dm: FakeChannel } = {} as never;

useE2E(
  {
    discord: {},
    slack: { channels: Object.values(SLACK_CHANNELS).map((id) => ({ id, name: id.slice(2).toLowerCase() })) },
    redis: true,
    timeoutMs: 60_000,
  },
  (e2e) => {
    ({ service, discord, slack, redis } = e2e);
    service.setChatReply((body) => `Answer to: ${lastQuestion(body)}`);
    Object.assign(channels, {
      a: discord.addChannel('catch-a'),
      b: discord.addChannel('catch-b'),
      old: discord.addChannel('catch-old'),
      dm: discord.openDm(),
    });
    return () => Promise.all(running.map((bot) => bot.stop()));
  },
);

/** The text of a chat request's last user message. */
function lastQuestion(body: ChatRequestBody): string {
  const content = body.messages.at(-1)!.content;
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** Starts the bot (`npm start`) on Discord and Slack in Socket Mode, on the shared Redis. */
async function startBot(): Promise<BotProcess> {
  const bot = await spawnBot({
    ...discordEnv(service, discord),
    ...slackEnv(service, slack, { socketMode: true }),
    STORE_URL: redis.url,
    LOG_LEVEL: 'info',
    CATCH_UP_MAX_AGE_MINUTES: '15',
  });
  running.push(bot);
  return bot;
}

/** Stops a bot (SIGTERM; it writes what it saw and closes the store) and forgets it. */
async function stopBot(bot: BotProcess): Promise<void> {
  await bot.stop();
  running.splice(running.indexOf(bot), 1);
}

/** Waits until each bot has logged more catch-ups of each platform than `before` (the log's count). */
async function catchUpsDone(bots: BotProcess[], platforms = ['discord', 'slack'], before = 0): Promise<void> {
  for (const bot of bots) {
    for (const platform of platforms) {
      await expect
        .poll(() => bot.problems.get(`${platform} catch-up finished`) ?? 0, { timeout: 30_000, interval: 50 })
        .toBeGreaterThan(before);
    }
  }
}

/** `<@bot> text`. */
const mention = (text: string) => `<@${discord.botUser.id}> ${text}`;

/** The bot's replies to a Discord message. */
const discordAnswers = (message: FakeMessage) =>
  discord
    .messagesIn(message.channelId)
    .filter((m) => m.author.id === discord.botUser.id && m.reference?.messageId === message.id);

/** The bot's messages in a Slack message's thread (where a channel mention is answered). */
const slackAnswers = (message: { channel: string; ts: string }): FakeSlackMessage[] =>
  slack.messages(message.channel).filter((m) => m.user === slack.botUserId && m.threadTs === message.ts);

/** The texts of the bot's messages in a Slack conversation that hold `text`. */
const slackTexts = (channel: string, text: string): string[] =>
  slack
    .messages(channel)
    .filter((m) => m.user === slack.botUserId && m.text.includes(text))
    .map((m) => m.text);

/** Waits until a Discord message has an answer whose text is complete (it holds `text`). */
async function answeredOnDiscord(message: FakeMessage, text: string): Promise<void> {
  await expect
    .poll(() => discordAnswers(message).some((m) => m.content.includes(text)), { timeout: 20_000, interval: 50 })
    .toBe(true);
}

/** Waits until a Slack mention has an answer in its thread that holds `text`. */
async function answeredOnSlack(message: { channel: string; ts: string }, text: string): Promise<void> {
  await expect
    .poll(() => slackAnswers(message).some((m) => m.text.includes(text)), { timeout: 20_000, interval: 50 })
    .toBe(true);
}

/** A Slack mention by alice in `channel`, stored in the channel; delivered over the socket when `deliver`. */
async function slackMention(channel: string, text: string, deliver: boolean): Promise<{ channel: string; ts: string }> {
  const event = slack.mentionEvent({ channel, user: 'U0ALICE', text });
  const result = await slack.sendSocketEvent(event);
  // With the bot stopped there is no socket: Slack does not deliver the event, now or later.
  expect(result.failure === undefined).toBe(deliver);
  return { channel, ts: String(event.ts) };
}

/** Every message answered before the stop (not to be answered again), by platform. */
const answeredLive: { discord: FakeMessage[]; slack: Array<{ channel: string; ts: string }> } = {
  discord: [],
  slack: [],
};

/** Posts, with the bot stopped, 3 mentions and a DM on Discord and 2 mentions on Slack. */
async function whileStopped(tag: string) {
  const discordMessages = [
    discord.postUserMessage({ channelId: channels.a.id, content: mention(`${tag} one`) }),
    discord.postUserMessage({ channelId: channels.a.id, content: mention(`${tag} two`) }),
    discord.postUserMessage({ channelId: channels.b.id, content: mention(`${tag} three`) }),
    discord.postUserMessage({ channelId: channels.dm.id, content: `${tag} in a DM` }),
  ];
  const slackMessages = [
    await slackMention(SLACK_CHANNELS.one, `${tag} slack one`, false),
    await slackMention(SLACK_CHANNELS.two, `${tag} slack two`, false),
  ];
  return { discordMessages, slackMessages };
}

/** Checks that each message was answered exactly once, late, with its own answer. */
async function expectAnsweredOnceLate(sent: Awaited<ReturnType<typeof whileStopped>>): Promise<void> {
  for (const message of sent.discordMessages) {
    const question = message.content.replace(mention(''), '');
    await answeredOnDiscord(message, `Answer to: ${question}`);
    const answers = discordAnswers(message);
    expect(answers, question).toHaveLength(1);
    expect(answers[0]!.content).toContain(english.say(LATE_NOTICE));
  }
  for (const message of sent.slackMessages) {
    await answeredOnSlack(message, 'Answer to:');
    const answers = slackAnswers(message);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.text).toContain(english.say(LATE_NOTICE));
  }
}

/** Checks that what was answered before the stop still has one answer, not marked late. */
function expectLiveAnswersAlone(): void {
  for (const message of answeredLive.discord) {
    expect(discordAnswers(message)).toHaveLength(1);
    expect(discordAnswers(message)[0]!.content).not.toContain(english.say(LATE_NOTICE));
  }
  for (const message of answeredLive.slack) expect(slackAnswers(message)).toHaveLength(1);
}

describe('catch-up after downtime', () => {
  it('after a restart, 3 mentions and a DM on Discord and 2 mentions on Slack sent while stopped are each answered once, marked late; nothing else is', async () => {
    const first = await startBot();
    await catchUpsDone([first]);
    // Live: the bot sees (and remembers) each channel where it is addressed.
    const live = [
      discord.postUserMessage({ channelId: channels.a.id, content: mention('live a') }),
      discord.postUserMessage({ channelId: channels.b.id, content: mention('live b') }),
      discord.postUserMessage({ channelId: channels.dm.id, content: 'live dm' }),
      // Answered live although sent 30 minutes ago (a platform late to deliver it): its channel's newest seen is old.
      discord.postUserMessage({
        channelId: channels.old.id,
        content: mention('live old'),
        at: Date.now() - 30 * 60_000,
      }),
    ];
    const liveSlack = [
      await slackMention(SLACK_CHANNELS.one, 'live slack one', true),
      await slackMention(SLACK_CHANNELS.two, 'live slack two', true),
    ];
    const im = slack.openIm('U0BOB');
    await slack.sendSocketEvent(slack.imMessageEvent({ channel: im.id, user: 'U0BOB', text: 'live slack dm' }));
    for (const message of live) await answeredOnDiscord(message, 'Answer to: ');
    await expect.poll(() => slackTexts(im.id, 'Answer to: live slack dm'), { timeout: 20_000 }).toHaveLength(1);
    for (const message of liveSlack) await answeredOnSlack(message, 'Answer to: live slack');
    answeredLive.discord.push(...live);
    answeredLive.slack.push(...liveSlack);
    await stopBot(first);

    const sent = await whileStopped('down');
    const notAddressed = discord.postUserMessage({ channelId: channels.a.id, content: 'talking among ourselves' });
    // After the newest message the bot saw in that channel, but older than CATCH_UP_MAX_AGE_MINUTES (15).
    const tooOld = discord.postUserMessage({
      channelId: channels.old.id,
      content: mention('too old'),
      at: Date.now() - 20 * 60_000,
    });
    const lateDm = slack.imMessageEvent({ channel: im.id, user: 'U0BOB', text: 'down slack dm' });
    expect((await slack.sendSocketEvent(lateDm)).failure).toBeDefined();
    const requestsBefore = service.chatRequests().length;

    const second = await startBot();
    await catchUpsDone([second]);
    await expectAnsweredOnceLate(sent);
    expectLiveAnswersAlone();
    expect(discordAnswers(notAddressed)).toEqual([]);
    expect(discordAnswers(tooOld)).toEqual([]);
    // A Slack DM too (answered in its own thread, as a DM's top-level message is).
    await expect.poll(() => slackTexts(im.id, 'Answer to: down slack dm'), { timeout: 20_000 }).toHaveLength(1);
    expect(slackTexts(im.id, 'Answer to: down slack dm')[0]).toContain(english.say(LATE_NOTICE));
    expect(slackTexts(im.id, 'Answer to: live slack dm')).toHaveLength(1);
    // One request per late answer: nothing else was asked.
    expect(service.chatRequests().length - requestsBefore).toBe(7);
    await stopBot(second);
  });

  it('two instances starting at once on one Redis answer each message sent while stopped exactly once', async () => {
    const sent = await whileStopped('twice');
    const requestsBefore = service.chatRequests().length;
    const bots = await Promise.all([startBot(), startBot()]);
    await catchUpsDone(bots);
    await expectAnsweredOnceLate(sent);
    expectLiveAnswersAlone();
    expect(service.chatRequests().length - requestsBefore).toBe(6);
    await Promise.all(bots.map(stopBot));
  });

  it('a Discord gateway session that could not be resumed (a new READY) is caught up like a restart', async () => {
    const bot = await startBot();
    await catchUpsDone([bot], ['discord']);
    const readies = bot.problems.get('discord catch-up finished')!;
    const [identifies, resumes] = [discord.gatewayIdentifies.length, discord.gatewayResumes.length];
    // The gateway goes away and forgets the session: the bot's RESUME is refused, it identifies anew.
    discord.dropGateway({ whileDown: 'refuse', resumable: false });
    const lost = discord.postUserMessage({ channelId: channels.b.id, content: mention('while the gateway was away') });
    discord.restoreGateway();
    await catchUpsDone([bot], ['discord'], readies);
    await answeredOnDiscord(lost, 'Answer to: while the gateway was away');
    expect(discordAnswers(lost)).toHaveLength(1);
    expect(discordAnswers(lost)[0]!.content).toContain(english.say(LATE_NOTICE));
    // It was a new session (IDENTIFY, READY), not a resumed one.
    expect(discord.gatewayIdentifies.length).toBe(identifies + 1);
    expect(discord.gatewayResumes.length).toBe(resumes);
    expectLiveAnswersAlone();
    await stopBot(bot);
  });

  it('a Slack mention sent while the Socket Mode connection was being replaced is answered once the socket is back, late', async () => {
    const bot = await startBot();
    // Slack recycles the connection, and the first apps.connections.open fails: @slack/socket-mode
    // tries again 5 s later (its ping timeout), a gap in which the mention is sent.
    slack.failNext('apps.connections.open', 'internal_error');
    slack.sendSocketDisconnect('refresh_requested');
    await expect.poll(() => slack.openSocketConnections().length, { timeout: 10_000, interval: 20 }).toBe(0);
    const lost = await slackMention(SLACK_CHANNELS.one, 'while the socket was away', false);
    // The catch-up after the new connection (the one at start may still run: it runs after it).
    await catchUpsDone([bot], ['slack'], 1);
    await answeredOnSlack(lost, 'Answer to: while the socket was away');
    expect(slackAnswers(lost)).toHaveLength(1);
    expect(slackAnswers(lost)[0]!.text).toContain(english.say(LATE_NOTICE));
    await stopBot(bot);
  }, 60_000);

  it('in Slack HTTP mode, a mention Slack could not deliver is answered at start, late; a retry of its event then is not answered again', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const event = slack.mentionEvent({ channel: SLACK_CHANNELS.two, user: 'U0ALICE', text: 'while nobody listened' });
    const lost = { channel: SLACK_CHANNELS.two, ts: String(event.ts) };
    // Nobody listens: Slack's delivery fails (it would retry after a minute, then after five).
    const first = await slack.sendEvent(url, event);
    expect(first.ackedInTime).toBe(false);
    const bot = await spawnBot({
      ...slackEnv(service, slack),
      SLACK_PORT: String(port),
      STORE_URL: redis.url,
      LOG_LEVEL: 'info',
    });
    running.push(bot);
    await catchUpsDone([bot], ['slack']);
    await answeredOnSlack(lost, 'Answer to: while nobody listened');
    // Slack's retry of the same event arrives: acked, and dropped (its message is claimed).
    const retry = await slack.sendEvent(url, event, { eventId: first.eventId, retryNum: 1 });
    expect(retry.ackedInTime).toBe(true);
    await expect
      .poll(() => bot.problems.get('event already answered (a retry or a second delivery); ignored') ?? 0)
      .toBe(1);
    expect(slackAnswers(lost)).toHaveLength(1);
    expect(slackAnswers(lost)[0]!.text).toContain(english.say(LATE_NOTICE));
    await stopBot(bot);
  }, 60_000);
});
