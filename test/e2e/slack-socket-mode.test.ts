/**
 * End-to-end tests of the Slack side in Socket Mode: the whole bot started from environment
 * variables with SLACK_APP_TOKEN set (startTestBot), real @slack/bolt + @slack/socket-mode +
 * @slack/web-api + undici, against the fake Slack (test/fakes/slack.ts: Web API,
 * apps.connections.open and its WebSocket endpoint) and the fake generation service. Slash
 * commands arrive as `slash_commands` envelopes over the socket and are acked by envelope_id.
 *
 * One bot, one FakeSlack and one FakeService serve the file; every test uses its own channel.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeService } from '../fakes/service.ts';
import { type FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import { slackEnv, startTestBot, type TestBot } from './harness.ts';
import { answersIn, expectStreamedMessage } from './slack-checks.ts';

const CHANNELS = { stream: 'C0SOCKET', stop: 'C0STOPPED' } as const;

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;

/** The environment an operator would set for Socket Mode, pointed at the fakes. */
const env = (overrides: Record<string, string> = {}) => ({
  ...slackEnv(service, slack, { socketMode: true }),
  ...overrides,
});

useE2E(
  {
    service: { apiKey: `sk-fake-${randomBytes(16).toString('hex')}` },
    slack: { channels: slackChannels(CHANNELS) },
    bot: { socketMode: true },
  },
  (e2e) => {
    ({ service, slack, bot: testBot } = e2e);
  },
);

/** Resolves with the next finished command in `channel` of `bot` (emitted after everything it sent). */
function nextOutcome(bot: TestBot, channel: string): Promise<CommandOutcome> {
  return bot.outcomes((o) => o.conversationId.endsWith(`:${channel}`)).then(([outcome]) => outcome!);
}

describe('Slack end to end, Socket Mode', () => {
  it('the bot connects with the app token through SLACK_API_URL (apps.connections.open), uses the bot token for everything else, and opens no HTTP port', () => {
    const [connection, ...others] = slack.openSocketConnections();
    expect(others).toEqual([]);
    const opens = slack.callsTo('apps.connections.open');
    expect(opens.map((c) => [c.tokenType, c.auth, c.ok])).toEqual([['app', 'header', true]]);
    // The socket was opened with the ticket of that very answer.
    expect(connection!.ticket).toMatch(/^[0-9a-f]{32}$/);
    expect(slack.calls.filter((c) => c.method !== 'apps.connections.open').every((c) => c.tokenType === 'bot')).toBe(
      true,
    );
    expect(slack.callsTo('auth.test').map((c) => c.ok)).toEqual([true]);
    expect(testBot.bot.slack!.port).toBeUndefined();
    expect(testBot.rawLog()).not.toContain(slack.appToken);
  });

  it('/chat over the socket is acked by envelope_id within 3 s while the answer still streams, then posted and updated until it shows exactly the streamed text', async () => {
    const channel = CHANNELS.stream;
    const streamed =
      'Sockets & streams <3: if a > b && b < c then a > c. ' +
      'This answer arrives slowly, a few characters at a time, so the bot has to post it first and edit it as it grows. '.repeat(
        3,
      );
    // ~110 SSE events 25 ms apart: the stream lasts about 3 s.
    service.enqueue('chat', { stream: { text: streamed, chunkDelayMs: 25 } });
    const done = nextOutcome(testBot, channel);
    const ack = await slack.sendSocketSlashCommand({
      command: '/chat',
      text: 'tell me about sockets & streams',
      channel_id: channel,
    });

    expect(ack.failure).toBeUndefined();
    expect(ack.ackedInTime).toBe(true);
    expect(ack.ackMs).toBeLessThan(3000);
    // Bolt's ack() with no response: an empty payload, under the envelope's id.
    expect(slack.openSocketConnections()[0]!.received).toContainEqual({ envelope_id: ack.envelopeId, payload: {} });
    // The ack did not wait for the answer: nothing shows the complete text yet.
    expect(slack.messages(channel).some((m) => unescapeSlack(m.text) === streamed)).toBe(false);

    expect(await done).toMatchObject({ ok: true, command: 'chat' });
    // Posted, edited while streaming (some update a strict prefix), ending with exactly the text.
    expectStreamedMessage(slack, channel, streamed);
    // The prompt reached the service unescaped.
    expect(service.chatRequests().at(-1)!.messages.at(-1)).toEqual({
      role: 'user',
      content: 'tell me about sockets & streams',
    });
    expect(slack.calls.filter((c) => c.params.channel === channel).every((c) => c.ok && c.tokenType === 'bot')).toBe(
      true,
    );
    expect(slack.platformFailures).toEqual([]);
  });

  it("bot.stop() closes its socket with a normal close frame (1000) sent by the bot, and the other bot's connection goes on serving commands", async () => {
    // A second bot of its own, so that the shared one keeps running for the other tests.
    const second = await startTestBot(env());
    const connection = slack.openSocketConnections().at(-1)!;
    expect(slack.openSocketConnections()).toHaveLength(2);
    await second.stop();
    // Bolt's SocketModeReceiver.stop() does not wait for the close handshake: wait for the fake to see it.
    expect(await slack.socketClosed(connection.id)).toMatchObject({ code: 1000, initiatedBy: 'app' });
    expect(slack.openSocketConnections().map((c) => c.id)).not.toContain(connection.id);

    // The first bot's connection is untouched and still takes commands.
    const done = nextOutcome(testBot, CHANNELS.stop);
    const after = await slack.sendSocketSlashCommand({
      command: '/chat',
      text: 'anyone home?',
      channel_id: CHANNELS.stop,
    });
    expect(after.connectionId).not.toBe(connection.id);
    expect(after.ackedInTime).toBe(true);
    expect((await done).ok).toBe(true);
    expect(answersIn(slack, CHANNELS.stop).map((m) => unescapeSlack(m.text))).toEqual(['Echo: anyone home?']);
  });

  it("a wrong SLACK_APP_TOKEN stops startup with Slack's invalid_auth from apps.connections.open, and the error names no secret", async () => {
    const wrongToken = `xapp-1-A0FAKEAPP-1-${randomBytes(8).toString('hex')}`;
    const before = slack.socketConnections.length;
    const error = await startTestBot(env({ SLACK_APP_TOKEN: wrongToken })).then(
      async (started) => {
        await started.stop();
        throw new Error('the bot started with a wrong app token');
      },
      (e: unknown) => e as Error,
    );
    expect(error.message).toMatch(/invalid_auth/);
    expect(error.message).not.toContain(wrongToken);
    expect(slack.callsTo('apps.connections.open').at(-1)).toMatchObject({
      tokenType: 'unknown',
      error: 'invalid_auth',
    });
    expect(slack.socketConnections).toHaveLength(before);
  });
});
