/**
 * A bot that notices it went deaf (issue 43 item 3), on Discord and on Slack in Socket Mode:
 * the platform stops delivering events while its connection looks healthy (the fake Discord
 * gateway still ACKs heartbeats and answers RESUME; the fake Slack socket stays open and answers
 * pings), and a mention sits in a channel where the bot was addressed lately. The periodic sweep
 * (SWEEP_MINUTES, here a fraction of a minute) finds it with catch-up's reading, answers it once,
 * marked late, and counts it in genbot_missed_events_total; a mention that was delivered is not
 * answered again, nor is an event that arrives after the sweep answered it. After
 * EVENT_SILENCE_MINUTES without an event, the connection is re-established (the fake sees a new
 * connection) and /healthz reports the platform deaf until an event is delivered again.
 */

import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { LATE_NOTICE } from '../../src/core/catch-up.ts';
import { english } from '../../src/core/i18n/words.ts';
import type { FakeChannel, FakeDiscord, FakeMessage } from '../fakes/discord.ts';
import type { ChatRequestBody, FakeService } from '../fakes/service.ts';
import type { FakeSlack, FakeSlackMessage } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const SLACK_CHANNEL = 'C0SWEEP';

let service: FakeService;
let discord: FakeDiscord;
let slack: FakeSlack;
let testBot: TestBot;
let opsUrl: string;
let channel: FakeChannel;

// Sweeps run every few seconds and Slack's reads are paced 1.3 s apart: each test takes 10-25 s.
useE2E(
  {
    discord: {},
    slack: { channels: [{ id: SLACK_CHANNEL, name: 'sweep' }] },
    bot: {
      socketMode: true,
      // A sweep every 3 s (it leaves messages younger than 1.5 s to their live delivery); deaf
      // after 1.8 s without an event.
      env: { HTTP_PORT: '0', SWEEP_MINUTES: '0.05', EVENT_SILENCE_MINUTES: '0.03', LOG_LEVEL: 'info' },
    },
  },
  (e2e) => {
    ({ service, discord, slack, bot: testBot } = e2e);
    opsUrl = `http://127.0.0.1:${testBot.bot.ops!.port}`;
    service.setChatReply((body) => `Answer to: ${lastQuestion(body)}`);
    channel = discord.addChannel('sweep');
    return undefined;
  },
);

/** The text of a chat request's last user message. */
function lastQuestion(body: ChatRequestBody): string {
  const content = body.messages.at(-1)!.content;
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** /healthz's status and the reason of one platform's check. */
async function health(platform: 'discord' | 'slack'): Promise<{ status: number; check: string }> {
  const response = await fetch(`${opsUrl}/healthz`);
  const body = (await response.json()) as { checks: Record<string, string> };
  return { status: response.status, check: body.checks[platform]! };
}

/** genbot_missed_events_total of a platform, from /metrics. */
async function missedEvents(platform: 'discord' | 'slack'): Promise<number> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const families = parsePrometheusTextFormat(text) as Array<{
    name: string;
    metrics: Array<{ labels?: Record<string, string>; value?: string }>;
  }>;
  const series = families.find((f) => f.name === 'genbot_missed_events_total')?.metrics;
  const value = series?.find((m) => m.labels?.platform === platform)?.value;
  return value === undefined ? Number.NaN : Number(value);
}

/** How many sweeps of a platform the bot has logged. */
const sweeps = (platform: string) => testBot.logs.filter((l) => l.msg === `${platform} sweep finished`).length;

/** Waits until the bot has logged `count` more sweeps of a platform than now. */
async function sweepsPass(platform: string, count: number): Promise<void> {
  const before = sweeps(platform);
  await expect.poll(() => sweeps(platform), { timeout: 30_000, interval: 50 }).toBeGreaterThanOrEqual(before + count);
}

/** `<@bot> text`. */
const mention = (text: string) => `<@${discord.botUser.id}> ${text}`;

/** The bot's replies to a Discord message. */
const discordAnswers = (message: FakeMessage) =>
  discord
    .messagesIn(message.channelId)
    .filter((m) => m.author.id === discord.botUser.id && m.reference?.messageId === message.id);

/** Waits until a Discord message has an answer that holds `text`. */
async function answeredOnDiscord(message: FakeMessage, text: string): Promise<void> {
  await expect
    .poll(() => discordAnswers(message).some((m) => m.content.includes(text)), { timeout: 30_000, interval: 50 })
    .toBe(true);
}

/** The bot's messages in a Slack mention's thread. */
const slackAnswers = (message: { channel: string; ts: string }): FakeSlackMessage[] =>
  slack.messages(message.channel).filter((m) => m.user === slack.botUserId && m.threadTs === message.ts);

/** Waits until a Slack mention has an answer in its thread that holds `text`. */
async function answeredOnSlack(message: { channel: string; ts: string }, text: string): Promise<void> {
  await expect
    .poll(() => slackAnswers(message).some((m) => m.text.includes(text)), { timeout: 30_000, interval: 50 })
    .toBe(true);
}

describe('the sweep: a bot that notices it went deaf', () => {
  it('Discord: a mention the gateway never dispatched (heartbeats still ACKed) is answered once by the sweep, marked late, and counted; the gateway is resumed on a new connection and /healthz says deaf until an event comes again', async () => {
    expect(await missedEvents('discord')).toBe(0);
    // Live: the bot is addressed in the channel (it remembers it as active) and answers.
    const live = discord.postUserMessage({ channelId: channel.id, content: mention('live one') });
    await answeredOnDiscord(live, 'Answer to: live one');
    await sweepsPass('discord', 1);
    expect((await health('discord')).status).toBe(200);

    discord.deafenGateway();
    const connections = discord.gatewayConnections;
    const resumes = discord.gatewayResumes.length;
    const missed = discord.postUserMessage({ channelId: channel.id, content: mention('never dispatched') });
    expect(discord.swallowedGatewayEvents).toBeGreaterThan(0);

    await answeredOnDiscord(missed, 'Answer to: never dispatched');
    expect(discordAnswers(missed)).toHaveLength(1);
    expect(discordAnswers(missed)[0]!.content).toContain(english.say(LATE_NOTICE));
    await expect.poll(() => missedEvents('discord'), { timeout: 10_000 }).toBe(1);

    // Nothing dispatched for EVENT_SILENCE_MINUTES while a mention was missed: the gateway
    // connection is replaced and the session resumed; /healthz says deaf (the gateway still is).
    await expect.poll(() => discord.gatewayConnections, { timeout: 30_000, interval: 50 }).toBeGreaterThan(connections);
    await expect.poll(() => discord.gatewayResumes.length, { timeout: 30_000, interval: 50 }).toBeGreaterThan(resumes);
    await expect.poll(() => health('discord'), { timeout: 10_000, interval: 50 }).toMatchObject({ status: 503 });
    expect((await health('discord')).check).toMatch(/^discord deaf: 1 message/);
    expect(testBot.logs.some((l) => l.msg?.startsWith('discord connection deaf'))).toBe(true);

    // The gateway delivers again: the next mention is answered live, and /healthz is 200.
    discord.deafenGateway(false);
    const after = discord.postUserMessage({ channelId: channel.id, content: mention('heard again') });
    await answeredOnDiscord(after, 'Answer to: heard again');
    await expect.poll(() => health('discord'), { timeout: 10_000, interval: 50 }).toEqual({ status: 200, check: 'ok' });
    await sweepsPass('discord', 2);
    // Each message once: the delivered ones live, the missed one late; nothing counted twice.
    for (const message of [live, after]) {
      expect(discordAnswers(message)).toHaveLength(1);
      expect(discordAnswers(message)[0]!.content).not.toContain(english.say(LATE_NOTICE));
    }
    expect(discordAnswers(missed)).toHaveLength(1);
    expect(await missedEvents('discord')).toBe(1);
  }, 90_000);

  it('Slack Socket Mode: a mention the socket never delivered (pings still answered) is answered once by the sweep, marked late, and counted; its event arriving afterwards is not answered again; the socket is replaced and /healthz says deaf until an event comes again', async () => {
    expect(await missedEvents('slack')).toBe(0);
    const liveEvent = slack.mentionEvent({ channel: SLACK_CHANNEL, user: 'U0ALICE', text: 'live one' });
    expect((await slack.sendSocketEvent(liveEvent)).ackedInTime).toBe(true);
    const live = { channel: SLACK_CHANNEL, ts: String(liveEvent.ts) };
    await answeredOnSlack(live, 'Answer to: live one');
    await sweepsPass('slack', 1);
    expect((await health('slack')).status).toBe(200);

    slack.deafenSockets();
    const sockets = slack.socketConnections.length;
    const missedEvent = slack.mentionEvent({ channel: SLACK_CHANNEL, user: 'U0ALICE', text: 'never delivered' });
    expect((await slack.sendSocketEvent(missedEvent)).failure?.kind).toBe('operation_timeout');
    const missed = { channel: SLACK_CHANNEL, ts: String(missedEvent.ts) };

    await answeredOnSlack(missed, 'Answer to: never delivered');
    expect(slackAnswers(missed)).toHaveLength(1);
    expect(slackAnswers(missed)[0]!.text).toContain(english.say(LATE_NOTICE));
    await expect.poll(() => missedEvents('slack'), { timeout: 10_000 }).toBe(1);

    // Silent for EVENT_SILENCE_MINUTES while a mention was missed: a new socket, and /healthz says deaf.
    await expect.poll(() => slack.socketConnections.length, { timeout: 30_000, interval: 50 }).toBeGreaterThan(sockets);
    await expect.poll(() => health('slack'), { timeout: 10_000, interval: 50 }).toMatchObject({ status: 503 });
    expect((await health('slack')).check).toMatch(/^slack deaf: 1 message/);

    // Slack delivers again, starting with the missed event, late: it is not answered a second time.
    slack.deafenSockets(false);
    expect((await slack.sendSocketEvent(missedEvent, { retryNum: 1 })).ackedInTime).toBe(true);
    await expect
      .poll(() => testBot.logs.filter((l) => l.msg?.startsWith('event already answered')).length, { timeout: 10_000 })
      .toBe(1);
    await expect.poll(() => health('slack'), { timeout: 10_000, interval: 50 }).toEqual({ status: 200, check: 'ok' });
    const afterEvent = slack.mentionEvent({ channel: SLACK_CHANNEL, user: 'U0ALICE', text: 'heard again' });
    expect((await slack.sendSocketEvent(afterEvent)).ackedInTime).toBe(true);
    const after = { channel: SLACK_CHANNEL, ts: String(afterEvent.ts) };
    await answeredOnSlack(after, 'Answer to: heard again');
    await sweepsPass('slack', 2);
    for (const message of [live, after]) {
      expect(slackAnswers(message)).toHaveLength(1);
      expect(slackAnswers(message)[0]!.text).not.toContain(english.say(LATE_NOTICE));
    }
    expect(slackAnswers(missed)).toHaveLength(1);
    expect(await missedEvents('slack')).toBe(1);
  }, 90_000);
});
