/**
 * End-to-end, the store failing under the bot (issue 22, items 2 and 3), with Slack's and
 * Discord's protocols as the fakes speak them:
 *
 * - SQLite locked by another connection (`BEGIN EXCLUSIVE`: every write of the bot is refused
 *   with SQLITE_BUSY, its reads still work) and SQLite out of room (a file size limit on the bot's
 *   own process, `prlimit --fsize`: every write that grows the file fails, SQLITE_IOERR): the
 *   answer whose exchange could not be stored says so, once per conversation; the exchanges
 *   answered meanwhile are stored once the store takes writes again, in their place, and the
 *   next question is sent with them.
 * - Redis frozen (SIGSTOP) for 10 s, its connections open and silent: every Slack request (a
 *   slash command, a mention, a button press, a message shortcut) is acknowledged within Slack's
 *   3 s (FakeSlack records a later ack as `operation_timeout`), every Discord interaction within
 *   its 3 s; the /chat answered meanwhile says that it goes without history, and is stored once
 *   Redis answers again.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { describe, expect, it } from 'vitest';
import { english } from '../../src/core/i18n/words.ts';
import { STORE_DOWN_NOTE as DOWN, STORE_UNSAVED_NOTE as UNSAVED } from '../../src/core/state/health.ts';

import { ConversationStore } from '../../src/core/state/history.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import type { FakeDiscord } from '../fakes/discord.ts';
import type { ChatRequestBody, FakeService } from '../fakes/service.ts';
import { type FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import { freePort, type TestRedis } from '../helpers/redis.ts';

const STORE_DOWN_NOTE = english.say(DOWN);
const STORE_UNSAVED_NOTE = english.say(UNSAVED);

/** The last user message of a chat request. */
const lastQuestion = (body: ChatRequestBody) => String(body.messages.at(-1)!.content);

/** The chat request that asked `question` (the newest one). */
const requestOf = (service: FakeService, question: string) =>
  service.chatRequests().findLast((b) => lastQuestion(b) === question);

/** What the user reads under an answer: its notes, each `_⚠️ note_` on a line of its own. */
const noted = (text: string, ...notes: string[]) => [text, ...notes.map((n) => `_⚠️ ${n}_`)].join('\n\n');

/** The history's turns of a conversation as `role: content` (what the next question is sent with). */
const turnsOf = (questions: string[]) => questions.flatMap((q) => [`user: ${q}`, `assistant: Answer to: ${q}`]);

/**
 * The bot's answers in a Slack channel as the fake holds them, and how to ask there: each /chat
 * acknowledged in time (checked), its answer found by its first words.
 */
function slackChannel(get: () => { slack: FakeSlack; botUrl: string }, channel: string, user: string) {
  const answerTo = (question: string) =>
    get()
      .slack.messages(channel)
      .find((m) => m.botId && unescapeSlack(m.text).startsWith(`Answer to: ${question}`));
  return {
    answerTo,
    /** Sends `/chat question` and resolves with the answer's text once it is final (its notes are in the final write). */
    async chat(question: string, finalText: string): Promise<void> {
      const { slack, botUrl } = get();
      const ack = await slack.sendSlashCommand(botUrl, {
        command: '/chat',
        text: question,
        channel_id: channel,
        user_id: user,
      });
      expect(ack).toMatchObject({ ackedInTime: true, failure: undefined });
      await expect
        .poll(() => (answerTo(question) ? unescapeSlack(answerTo(question)!.text) : undefined), { timeout: 30_000 })
        .toBe(finalText);
    },
  };
}

/** A second connection to the bot's SQLite file holding its write lock (`BEGIN EXCLUSIVE`) until released. */
async function lockExclusively(path: string): Promise<{ release(): Promise<void> }> {
  const db = new sqlite3.Database(path);
  const run = (sql: string) =>
    new Promise<void>((resolve, reject) => db.exec(sql, (error) => (error ? reject(error) : resolve())));
  await run('BEGIN EXCLUSIVE');
  return {
    release: async () => {
      await run('ROLLBACK');
      await new Promise<void>((resolve) => db.close(() => resolve()));
    },
  };
}

/** Reads a conversation's stored turns as `role: content` through a connection of the test's own. */
async function storedTurns(store: StateStore, conversationId: string): Promise<string[]> {
  return (await new ConversationStore(store).get(conversationId)).map((t) => `${t.role}: ${t.content}`);
}

/** The messages of a chat request as `role: content`. */
const sentTurns = (body: ChatRequestBody | undefined) =>
  (body?.messages ?? []).map(
    (m) => `${m.role}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`,
  );

describe('SQLite locked by another connection (SQLITE_BUSY)', () => {
  let service: FakeService;
  let slack: FakeSlack;
  let botUrl: string;
  let storePath: string;
  const CHANNEL = 'C0LOCKED';
  useE2E(
    {
      slack: { channels: [{ id: CHANNEL, name: 'locked' }] },
      bot: { env: { DEFAULT_CHAT_MODEL: 'fake-chat' } },
    },
    (e2e) => {
      ({ service, slack, botUrl } = e2e);
      storePath = e2e.bot.storePath;
      service.setChatReply((body) => `Answer to: ${lastQuestion(body)}`);
    },
  );
  const channel = slackChannel(() => ({ slack, botUrl }), CHANNEL, 'U0ALICE');

  it('the answer whose exchange could not be stored says so once; the exchanges are stored when the lock goes, and the next question carries them', async () => {
    const conversation = `slack:${slack.teamId}:${CHANNEL}`;
    await channel.chat('My name is Ada.', 'Answer to: My name is Ada.');

    const lock = await lockExclusively(storePath);
    try {
      await channel.chat('What is my name?', noted('Answer to: What is my name?', STORE_UNSAVED_NOTE));
      // Its reads still work (write-ahead log): the question went with the history.
      expect(sentTurns(requestOf(service, 'What is my name?'))).toEqual([
        ...turnsOf(['My name is Ada.']),
        'user: What is my name?',
      ]);
      // Told once per conversation; the exchange not stored yet is part of the conversation all the same.
      await channel.chat('Still there?', 'Answer to: Still there?');
      expect(sentTurns(requestOf(service, 'Still there?'))).toEqual([
        ...turnsOf(['My name is Ada.', 'What is my name?']),
        'user: Still there?',
      ]);
    } finally {
      await lock.release();
    }

    const store = await openStore(`sqlite://${storePath}`);
    try {
      await expect
        .poll(() => storedTurns(store, conversation), { timeout: 20_000, interval: 200 })
        .toEqual(turnsOf(['My name is Ada.', 'What is my name?', 'Still there?']));
      await channel.chat('And now?', 'Answer to: And now?');
      expect(sentTurns(requestOf(service, 'And now?'))).toEqual([
        ...turnsOf(['My name is Ada.', 'What is my name?', 'Still there?']),
        'user: And now?',
      ]);
      await expect
        .poll(() => storedTurns(store, conversation), { timeout: 10_000 })
        .toEqual(turnsOf(['My name is Ada.', 'What is my name?', 'Still there?', 'And now?']));
    } finally {
      await store.close();
    }
  }, 90_000);
});

describe('SQLite out of room (a file size limit on the bot process: SQLITE_IOERR)', () => {
  let service: FakeService;
  let slack: FakeSlack;
  let botPid: number;
  let botUrl: string;
  const CHANNEL = 'C0NOROOM';
  const storePath = join(mkdtempSync(join(tmpdir(), 'genbot-noroom-')), 'state.sqlite');
  let slackPort: number;
  useE2E(
    {
      slack: { channels: [{ id: CHANNEL, name: 'noroom' }] },
      beforeBot: async () => {
        slackPort = await freePort();
        return undefined;
      },
      bot: {
        process: true,
        get env() {
          return { DEFAULT_CHAT_MODEL: 'fake-chat', STORE_URL: `sqlite://${storePath}`, SLACK_PORT: String(slackPort) };
        },
      },
      timeoutMs: 90_000,
    },
    (e2e) => {
      ({ service, slack } = e2e);
      botPid = e2e.botProcess.pid;
      botUrl = `http://127.0.0.1:${slackPort}`;
      service.setChatReply((body) => `Answer to: ${lastQuestion(body)}`);
      return undefined;
    },
  );
  const channel = slackChannel(() => ({ slack, botUrl }), CHANNEL, 'U0ALICE');
  /** Sets the bot process's file size limit (soft; the hard one stays unlimited, so it can be raised again). */
  const limitFiles = (bytes: number | 'unlimited') =>
    execFileSync('prlimit', ['--pid', String(botPid), `--fsize=${bytes}:unlimited`]);

  it('the answer whose exchange could not be written says so once; the exchanges are stored once the file may grow again', async () => {
    const conversation = `slack:${slack.teamId}:${CHANNEL}`;
    await channel.chat('My name is Ada.', 'Answer to: My name is Ada.');

    // Smaller than the database and its write-ahead log already are: every write that grows them fails.
    limitFiles(1024);
    try {
      await channel.chat('What is my name?', noted('Answer to: What is my name?', STORE_UNSAVED_NOTE));
      await channel.chat('Still there?', 'Answer to: Still there?');
    } finally {
      limitFiles('unlimited');
    }

    const store = await openStore(`sqlite://${storePath}`);
    try {
      await expect
        .poll(() => storedTurns(store, conversation), { timeout: 20_000, interval: 200 })
        .toEqual(turnsOf(['My name is Ada.', 'What is my name?', 'Still there?']));
      await channel.chat('And now?', 'Answer to: And now?');
      expect(sentTurns(requestOf(service, 'And now?'))).toEqual([
        ...turnsOf(['My name is Ada.', 'What is my name?', 'Still there?']),
        'user: And now?',
      ]);
    } finally {
      await store.close();
    }
  }, 90_000);
});

describe('Redis frozen (SIGSTOP) for 10 s', () => {
  let service: FakeService;
  let slack: FakeSlack;
  let discord: FakeDiscord;
  let redis: TestRedis;
  let botUrl: string;
  const CHANNEL = 'C0FROZEN';
  const THAWED = 'C0THAWED';
  useE2E(
    {
      slack: {
        channels: [
          { id: CHANNEL, name: 'frozen' },
          { id: THAWED, name: 'thawed' },
        ],
      },
      discord: {},
      redis: true,
      bot: { env: { DEFAULT_CHAT_MODEL: 'fake-chat' } },
      timeoutMs: 60_000,
    },
    async (e2e) => {
      ({ service, slack, discord, redis, botUrl } = e2e);
      service.setChatReply((body) => `Answer to: ${lastQuestion(body)}`);
      await discord.waitForReady();
      return undefined;
    },
  );
  const channel = slackChannel(() => ({ slack, botUrl }), CHANNEL, 'U0ALICE');
  const thawed = slackChannel(() => ({ slack, botUrl }), THAWED, 'U0ALICE');

  it('every Slack request and Discord interaction is acknowledged in time; the answer goes without history, says so, and is stored once Redis answers', async () => {
    const conversation = `slack:${slack.teamId}:${CHANNEL}`;
    await channel.chat('Before the stall', 'Answer to: Before the stall');
    const before = channel.answerTo('Before the stall')!;
    const regenerate = ((before.blocks ?? []) as Array<{ type: string; elements?: Array<{ action_id?: string }> }>)
      .flatMap((b) => (b.type === 'actions' ? (b.elements ?? []).map((e) => String(e.action_id)) : []))
      .find((id) => id.startsWith('regenerate:'));
    expect(regenerate).toBeDefined();
    const mention = slack.mentionEvent({ channel: CHANNEL, user: 'U0ALICE', text: `<@${slack.botUserId}> hello?` });
    const discordChannel = discord.addChannel('frozen');

    redis.pause();
    const frozenAt = Date.now();
    try {
      const acks = await Promise.all([
        slack.sendSlashCommand(botUrl, {
          command: '/chat',
          text: 'During the stall',
          channel_id: CHANNEL,
          user_id: 'U0ALICE',
        }),
        slack.sendEvent(botUrl, mention),
        slack.sendBlockAction(botUrl, {
          user: 'U0ALICE',
          channel: CHANNEL,
          messageTs: before.ts,
          actionId: regenerate!,
        }),
        slack.sendMessageShortcut(botUrl, {
          user: 'U0ALICE',
          channel: CHANNEL,
          messageTs: mention.ts as string,
          callbackId: 'summarize_message',
        }),
      ]);
      for (const ack of acks) expect(ack).toMatchObject({ status: 200, ackedInTime: true });
      const interaction = discord.dispatchInteraction({
        channelId: discordChannel.id,
        command: 'chat',
        options: { prompt: 'During the stall on Discord' },
      });
      await expect.poll(() => interaction.callbacks.length, { timeout: 5_000 }).toBe(1);
      // The deferral (type 5), accepted: Discord's 3 s held.
      expect(interaction.callbacks[0]).toMatchObject({ type: 5, status: 204, code: undefined });
      // Still frozen: the acknowledgements above did not wait for Redis.
      expect(Date.now() - frozenAt).toBeLessThan(10_000);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 10_000 - (Date.now() - frozenAt))));
    } finally {
      redis.resume();
    }
    expect(slack.platformFailures).toEqual([]);

    await expect
      .poll(
        () => (channel.answerTo('During the stall') ? unescapeSlack(channel.answerTo('During the stall')!.text) : ''),
        {
          timeout: 30_000,
        },
      )
      .toBe(noted('Answer to: During the stall', STORE_DOWN_NOTE));
    const store = await openStore(redis.url);
    try {
      await expect
        .poll(async () => (await storedTurns(store, conversation)).slice(-2), { timeout: 20_000, interval: 200 })
        .toEqual(turnsOf(['During the stall']));
    } finally {
      await store.close();
    }
  }, 90_000);

  it('an exchange answered just after Redis resumes is in the next question, asked as soon as the answer shows, on Slack and on Discord', async () => {
    // One exchange each before the stall, and one during it: its write of the history missed its
    // deadline, and lands (its lock with it) once Redis answers again.
    const discordChannel = discord.addChannel('thawed');
    const discordChat = async (prompt: string) => {
      const interaction = discord.dispatchInteraction({
        channelId: discordChannel.id,
        command: 'chat',
        options: { prompt },
      });
      await expect
        .poll(() => interaction.original?.content.startsWith(`Answer to: ${prompt}`), { timeout: 30_000 })
        .toBe(true);
    };
    await thawed.chat('Before', 'Answer to: Before');
    await discordChat('Before on Discord');
    redis.pause();
    const frozenAt = Date.now();
    try {
      await Promise.all([
        thawed.chat('During', noted('Answer to: During', STORE_DOWN_NOTE)),
        discordChat('During on Discord'),
      ]);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 10_000 - (Date.now() - frozenAt))));
    } finally {
      redis.resume();
    }
    // Right after: each next question is asked as soon as the answer before it shows.
    await thawed.chat('Just after', 'Answer to: Just after');
    await thawed.chat('Next', 'Answer to: Next');
    expect(sentTurns(requestOf(service, 'Next'))).toEqual([
      ...turnsOf(['Before', 'During', 'Just after']),
      'user: Next',
    ]);
    await discordChat('Just after on Discord');
    await discordChat('Next on Discord');
    expect(sentTurns(requestOf(service, 'Next on Discord'))).toEqual([
      ...turnsOf(['Before on Discord', 'During on Discord', 'Just after on Discord']),
      'user: Next on Discord',
    ]);
  }, 90_000);
});
