/**
 * Slack refusing, and requests Slack (or someone else) should not get away with, end to end:
 * every slash command is acked and an unknown one answered; a signed request stamped more
 * than 5 minutes off in either direction is refused; a replayed signed request runs once;
 * Slack's refusals and the service's odd answers each have their own sentence; a blank prompt
 * is refused as on Discord; a chat.postMessage Slack never answers ends in a sentence within a
 * deadline.
 */
import { describe, expect, it } from 'vitest';
import { english } from '../../src/core/i18n/words.ts';
import { explainSlackError as explainSlack } from '../../src/platforms/slack/errors.ts';
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
    slack: {
      channels: [
        { id: 'C0GENERAL', name: 'general' },
        { id: 'C0OUTSIDE', name: 'outside', botIsMember: false },
      ],
    },
    bot: {},
  },
  (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
  },
);

/** The response_url posts of commands sent after `since` (an index into responsePosts()). */
const postsSince = (since: number) => slack.responsePosts().slice(since);

describe('Slack faults', () => {
  it('acks an unknown /frobnicate and an upper-case /CHAT within 3 s and answers each, only to the user', async () => {
    const before = slack.responsePosts().length;
    for (const command of ['/frobnicate', '/CHAT']) {
      const ack = await slack.sendSlashCommand(botUrl, { command, text: 'hello', channel_id: 'C0GENERAL' });
      expect(ack.ackedInTime).toBe(true);
      expect(ack.failure).toBeUndefined();
    }
    await expect.poll(() => postsSince(before).length, { timeout: 5_000 }).toBe(2);
    const [unknown, upper] = postsSince(before);
    expect(unknown!.text).toMatch(
      /^\/frobnicate is not a command of this bot\. Its commands: \/chat, \/imagine, \/complete, /,
    );
    expect(upper!.text).toBe('Slack commands are lowercase here: try /chat.');
    expect(unknown!.responseType).toBe('ephemeral');
  });

  it('refuses a signed request stamped 10 minutes in the future as it refuses one 6 minutes in the past, and runs nothing', async () => {
    const before = service.requests.length;
    const now = Math.floor(Date.now() / 1000);
    for (const timestampSec of [now + 600, now - 360]) {
      const result = await slack.sendSlashCommand(
        botUrl,
        { command: '/chat', text: 'sneaky', channel_id: 'C0GENERAL' },
        { timestampSec },
      );
      expect(result.status).toBe(401);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(service.requests.length).toBe(before);
  });

  it('runs a signed request sent twice as is (same signature and timestamp) only once', async () => {
    const timestampSec = Math.floor(Date.now() / 1000);
    const done = testBot.outcomes((o) => o.command === 'chat' && o.conversationId.endsWith(':C0GENERAL'));
    const first = await slack.sendSlashCommand(
      botUrl,
      { command: '/chat', text: 'once please', channel_id: 'C0GENERAL' },
      { timestampSec },
    );
    expect(first.status).toBe(200);
    const replay = await slack.sendSigned(botUrl, first.rawBody, 'application/x-www-form-urlencoded', { timestampSec });
    expect(replay.status).toBe(200);
    await done;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(service.chatRequests().filter((b) => JSON.stringify(b.messages).includes('once please'))).toHaveLength(1);
  });

  it('says "invite me" when the bot is not in the channel (not_in_channel)', async () => {
    const before = slack.responsePosts().length;
    const done = testBot.outcomes((o) => o.conversationId.endsWith(':C0OUTSIDE'));
    await slack.sendSlashCommand(botUrl, { command: '/chat', text: 'anyone here?', channel_id: 'C0OUTSIDE' });
    const [outcome] = await done;
    expect(outcome!.errorCode).toBe('platform_refused');
    expect(postsSince(before).map((p) => p.text)).toEqual([
      expect.stringMatching(
        /^I am not in this channel: invite me \(\/invite followed by my name\), then try again\. \(ref [2-9A-Z]{6}\)$/,
      ),
    ]);
  });

  it('says the service answered something that is not a stream (HTML, JSON, gzip, nothing), and that an image result was empty', async () => {
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      [{ 'content-type': 'text/html' }, '<html>Bad gateway</html>', /\(a text\/html body\)/],
      [{ 'content-type': 'application/json' }, '{"choices":[]}', /\(a application\/json body\)/],
      [
        { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' },
        '\u001f\u008b',
        /\(gzip-compressed data the bot did not ask for\)/,
      ],
      [{ 'content-type': 'text/event-stream' }, '', /\(an event stream with no event\)/],
    ];
    for (const [headers, body, what] of cases) {
      const before = slack.responsePosts().length;
      service.enqueue('chat', { status: 200, headers, body });
      const done = testBot.outcomes((o) => o.command === 'chat');
      await slack.sendSlashCommand(botUrl, { command: '/chat', text: 'hi', channel_id: 'C0GENERAL' });
      await done;
      const text = postsSince(before)[0]!.text;
      expect(text).toMatch(/^The generation service answered something that is not a stream of text /);
      expect(text).toMatch(what);
    }
    const before = slack.responsePosts().length;
    service.enqueue('images', { status: 200, body: { created: 1, data: [] } });
    const done = testBot.outcomes((o) => o.command === 'imagine');
    await slack.sendSlashCommand(botUrl, { command: '/imagine', text: 'nothing at all', channel_id: 'C0GENERAL' });
    await done;
    expect(postsSince(before)[0]!.text).toMatch(
      /^The generation service returned no image for this prompt\. Try again, perhaps with other words\. \(ref /,
    );
  });

  it('refuses a whitespace-only prompt, as on Discord, without calling the service', async () => {
    const before = slack.responsePosts().length;
    const requests = service.requests.length;
    const done = testBot.outcomes((o) => o.command === 'chat');
    await slack.sendSlashCommand(botUrl, { command: '/chat', text: '    ', channel_id: 'C0GENERAL' });
    await done;
    expect(postsSince(before)[0]!.text).toBe('/chat needs `prompt`: What to ask or say.');
    expect(service.requests.length).toBe(requests);
  });

  it('tells the user within ~15 s when chat.postMessage never answers, and the next /chat works', async () => {
    // Slack takes every chat.postMessage and never answers. The bot's client gives a call 6 s and
    // one retry (12.5 s); the answer's remaining writes then fail at once (the core's retries of a
    // final write take 2 s more) instead of waiting 12.5 s each, which took ~52 s in all.
    slack.hangNext('chat.postMessage', Infinity);
    try {
      const before = slack.responsePosts().length;
      const logsBefore = testBot.logs.length;
      const posts = slack.callsTo('chat.postMessage').length;
      const started = Date.now();
      const done = testBot.outcomes((o) => o.command === 'chat' && o.conversationId.endsWith(':C0GENERAL'), 1, 60_000);
      await slack.sendSlashCommand(botUrl, { command: '/chat', text: 'are you there?', channel_id: 'C0GENERAL' });
      await expect
        .poll(() => postsSince(before).length, { timeout: 16_000 - (Date.now() - started), interval: 100 })
        .toBe(1);
      const [told] = postsSince(before);
      expect(told!.responseType).toBe('ephemeral');
      expect(told!.text).toMatch(/^Slack did not answer in time\. Try again in a moment\. \(ref [2-9A-Z]{6}\)$/);
      const [outcome] = await done;
      expect(outcome!.errorCode).toBe('platform_refused');
      // Two unanswered attempts (the call and its retry), then no more waiting on Slack for this answer.
      expect(
        slack
          .callsTo('chat.postMessage')
          .slice(posts)
          .map((c) => c.status),
      ).toEqual([0, 0]);
      const ref = /\(ref ([2-9A-Z]{6})\)/.exec(told!.text)![1];
      const lines = testBot.logs.slice(logsBefore);
      expect(lines.filter((l) => l.msg === 'platform refused a write')).toEqual([
        expect.objectContaining({ ref, level: 40 }),
      ]);
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      slack.stopHanging('chat.postMessage');
    }

    const next = slack.responsePosts().length;
    const again = testBot.outcomes((o) => o.command === 'chat' && o.conversationId.endsWith(':C0GENERAL'));
    await slack.sendSlashCommand(botUrl, { command: '/chat', text: 'and now?', channel_id: 'C0GENERAL' });
    const [second] = await again;
    expect(second!.ok).toBe(true);
    expect(slack.callsTo('chat.postMessage').at(-1)!.ok).toBe(true);
    expect(postsSince(next)).toEqual([]);
  }, 40_000);

  it("has a sentence for each of Slack's refusals a user can act on", () => {
    const refusal = (error: string, extra: Record<string, unknown> = {}) =>
      Object.assign(new Error(error), { code: 'slack_webapi_platform_error', data: { ok: false, error, ...extra } });
    // The sentences in English (the catalog's source), as the runner renders them for an English reader.
    const explainSlackError = (error: unknown) => {
      const said = explainSlack(error);
      return said && english.say(said);
    };
    expect(explainSlackError(refusal('channel_not_found'))).toMatch(/^I cannot see this channel: invite me/);
    expect(explainSlackError(refusal('is_archived'))).toBe('This channel is archived, so I cannot post in it.');
    expect(explainSlackError(refusal('invalid_auth'))).toMatch(/SLACK_BOT_TOKEN/);
    expect(explainSlackError(refusal('missing_scope', { needed: 'files:write' }))).toMatch(/`files:write`/);
    expect(explainSlackError(Object.assign(new Error('timeout'), { code: 'slack_webapi_request_error' }))).toBe(
      'Slack did not answer in time. Try again in a moment.',
    );
    expect(explainSlackError(new Error('something else'))).toBeUndefined();
  });
});
