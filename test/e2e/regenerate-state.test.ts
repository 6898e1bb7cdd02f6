/**
 * What a text answer keeps for Regenerate (issue 38, items 6 and 7), on SQLite and on a real
 * redis-server: the whole bot against FakeDiscord, FakeSlack and FakeService.
 *
 * - A question's images are kept by reference (a Discord message's attachment, a Slack file),
 *   not as bytes: the state of a mention with three images is a few kilobytes, measured in the
 *   store itself; a press downloads and prepares them again and sends the same request (an
 *   edit of the mention too, with its new text).
 * - A user's states are bounded (REGENERATE_STATES_PER_USER, 2 here): a third answer drops the
 *   first's state, whose press is told so and sends nothing.
 * - A press after an admin changed the channel's model and system prompt, and the operator
 *   lowered MAX_TOKENS_LIMIT (a restart on the same store), sends today's.
 */
import { createClient } from '@keyv/redis';
import sharp from 'sharp';
import sqlite3 from 'sqlite3';
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeChannel, FakeDiscord, FakeMessage, Json } from '../fakes/discord.ts';
import { type ChatRequestBody, DEFAULT_MODELS, type FakeService } from '../fakes/service.ts';
import type { FakeSlack, FakeSlackFile, FakeSlackMessage } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestRedis } from '../helpers/redis.ts';
import { startTestBot, type TestBot } from './harness.ts';

const CHANNELS = { images: 'C0STIMG', bound: 'C0STBOUND' } as const;

/** Discord members without admin rights, one a test (each user's states are bounded apart). */
const IMAGES_USER = { id: '1290000000000000601', username: 'ivy' };
const BOUND_USER = { id: '1290000000000000602', username: 'bo' };
const TODAY_USER = { id: '1290000000000000603', username: 'tod' };
/** Slack users without admin rights. */
const SLACK_IMAGES_USER = 'U0BOB';
const SLACK_BOUND_USER = 'U0DAN';

/** Most bytes the state of an answer may take in the store, whatever its question's images weigh. */
const STATE_BOUND_BYTES = 8 * 1024;

/** A 512×512 PNG of noise: its prepared JPEG weighs tens of kilobytes. */
const noisePng = (seed: number) =>
  sharp({
    create: {
      width: 512,
      height: 512,
      channels: 3,
      background: '#000',
      noise: { type: 'gaussian', mean: 128, sigma: 40 + seed },
    },
  })
    .png()
    .toBuffer();

/** The `image_url` parts of a chat request. */
const imageUrls = (body: ChatRequestBody) =>
  body.messages.flatMap((m) =>
    typeof m.content === 'string'
      ? []
      : m.content.flatMap((p) => (p.type === 'image_url' ? [(p as { image_url: { url: string } }).image_url.url] : [])),
  );

describe.each(['sqlite', 'redis'] as const)('Regenerate state on %s', (store) => {
  let service: FakeService;
  let discord: FakeDiscord;
  let slack: FakeSlack;
  let testBot: TestBot;
  let env: Record<string, string>;
  let redis: TestRedis | undefined;

  useE2E(
    {
      // A second text model, for an admin to make the channel's.
      service: { models: [...DEFAULT_MODELS, { id: 'fake-chat-2' }] },
      discord: {},
      slack: { channels: slackChannels(CHANNELS) },
      ...(store === 'redis' ? { redis: true } : {}),
      beforeBot: (e2e) => {
        e2e.slack.addUser({ id: SLACK_BOUND_USER, name: 'dan' });
        return undefined;
      },
      bot: {
        env: { DEFAULT_VISION_MODEL: 'fake-vision', REGENERATE_STATES_PER_USER: '2' },
        // The configuration test restarts the bot.
        current: () => testBot,
      },
      resetServiceAfterEach: true,
      timeoutMs: 30_000,
    },
    (e2e) => {
      ({ service, discord, slack, bot: testBot, botEnv: env } = e2e);
      redis = store === 'redis' ? e2e.redis : undefined;
      return undefined;
    },
  );

  /**
   * What the store holds under each answer state's key (`answer:<id>`), read from the store
   * itself (the SQLite file, or the Redis server), by the state's id: the JSON text.
   */
  async function storedStates(): Promise<Map<string, string>> {
    const states = new Map<string, string>();
    if (redis) {
      const client = createClient({ url: redis.url });
      await client.connect();
      try {
        for (const key of await client.keys('*answer:*')) {
          // Not the state's workspace marker (owned:<workspace>:answer:<id>: state/owned.ts).
          if (key.includes(':owned:')) continue;
          const id = /(?:^|:)answer:([0-9a-f]{18})$/.exec(key)?.[1];
          if (id) states.set(id, (await client.get(key)) ?? '');
        }
      } finally {
        await client.close();
      }
      return states;
    }
    const db = new sqlite3.Database(testBot.storePath, sqlite3.OPEN_READONLY);
    try {
      const rows = await new Promise<Array<{ key: string; value: string }>>((resolve, reject) =>
        db.all("SELECT key, value FROM keyv WHERE key LIKE 'genbot:answer:%'", (error, found) =>
          error ? reject(error) : resolve(found as Array<{ key: string; value: string }>),
        ),
      );
      for (const row of rows) {
        const id = /^genbot:answer:([0-9a-f]{18})$/.exec(row.key)?.[1];
        if (id) states.set(id, row.value);
      }
    } finally {
      await new Promise<void>((resolve) => db.close(() => resolve()));
    }
    return states;
  }

  /** The bot's Slack HTTP endpoint (a restart moves it). */
  const botUrl = () => `http://127.0.0.1:${testBot.bot.slack?.port}`;

  /** The state id of a Regenerate button id (`regenerate:<id>:<requester>`). */
  const stateIdOf = (button: string) => button.split(':')[1]!;

  /** Resolves with the next outcome of `command` in a conversation of `channel`. */
  function next(command: string, channel: string): Promise<CommandOutcome> {
    return testBot.outcomes((o) => o.command === command && o.conversationId.includes(`:${channel}`)).then(([o]) => o!);
  }

  describe('on Discord', () => {
    /** The message's Regenerate button id. */
    function regenerateOf(message: FakeMessage): string {
      const ids = message.components.flatMap((row) => (row.components as Json[]).map((b) => String(b.custom_id)));
      const id = ids.find((b) => b.startsWith('regenerate:'));
      expect(id, ids.join(', ')).toBeDefined();
      return id!;
    }

    /** Presses a button and waits for the press's outcome; returns what only the presser was shown too. */
    async function press(channel: FakeChannel, message: FakeMessage, user: { id: string; username: string }) {
      const done = next('regenerate:button', channel.id);
      const interaction = discord.pressButton({ messageId: message.id, customId: regenerateOf(message), user });
      const outcome = await done;
      const told = interaction.messages.filter((m) => m.ephemeral && !m.deleted).map((m) => m.content);
      return { outcome, told };
    }

    /** Runs /chat as `user` and waits for its answer's message. */
    async function chat(channel: FakeChannel, prompt: string, user: { id: string; username: string }, options = {}) {
      const done = next('chat', channel.id);
      const interaction = discord.dispatchInteraction({
        channelId: channel.id,
        command: 'chat',
        options: { prompt, ...options },
        user,
      });
      expect((await done).ok).toBe(true);
      return interaction.original!;
    }

    it('a mention with three images keeps their references, not their bytes: its state is a few kilobytes in the store, and a press downloads them again and sends the same request, as an edit of the mention does with its new text', async () => {
      const channel = discord.addChannel(`state-images-${store}`);
      const files = await Promise.all([1, 2, 3].map(noisePng));
      service.enqueue('chat', { stream: { text: 'Three noisy squares.' } });
      const done = next('mention', channel.id);
      const message = discord.postUserMessage({
        channelId: channel.id,
        content: `<@${discord.botUser.id}> what are these?`,
        author: IMAGES_USER,
        attachments: files.map((data, i) => ({ filename: `noise-${i}.png`, data })),
      });
      expect((await done).ok).toBe(true);
      const first = service.chatRequests().at(-1)!;
      const sent = imageUrls(first);
      expect(sent).toHaveLength(3);
      // The prepared images alone weigh far more than the bound.
      expect(sent.join('').length).toBeGreaterThan(8 * STATE_BOUND_BYTES);

      const reply = discord.messagesIn(channel.id).find((m) => m.author.id === discord.botUser.id)!;
      const stored = (await storedStates()).get(stateIdOf(regenerateOf(reply)));
      expect(stored).toBeDefined();
      expect(Buffer.byteLength(stored!)).toBeLessThan(STATE_BOUND_BYTES);

      service.enqueue('chat', { stream: { text: 'Still three noisy squares.' } });
      expect((await press(channel, reply, IMAGES_USER)).outcome.ok).toBe(true);
      expect(service.chatRequests().at(-1)).toEqual(first);
      expect(reply.content).toBe('Still three noisy squares.');
      // Kept again by reference after the press.
      expect(Buffer.byteLength((await storedStates()).get(stateIdOf(regenerateOf(reply)))!)).toBeLessThan(
        STATE_BOUND_BYTES,
      );

      // An edit of the mention finds the images again too (the bot token reads the message).
      service.enqueue('chat', { stream: { text: 'Three noisy squares, edited.' } });
      const edited = next('edit', channel.id);
      discord.editUserMessage(message.id, `<@${discord.botUser.id}> what are these, really?`, {
        at: message.createdAt + 60_000,
      });
      expect((await edited).ok).toBe(true);
      const again = service.chatRequests().at(-1)!;
      expect(imageUrls(again)).toEqual(sent);
      expect(again.messages.at(-1)!.content).toContainEqual({ type: 'text', text: 'what are these, really?' });
      expect(reply.content).toBe('Three noisy squares, edited.');
    });

    it("a user's third answer drops the first's state (REGENERATE_STATES_PER_USER=2): its press is told so and sends nothing; the newer two still regenerate", async () => {
      const channel = discord.addChannel(`state-bound-${store}`);
      const answers: FakeMessage[] = [];
      for (const n of [1, 2, 3]) {
        service.enqueue('chat', { stream: { text: `Answer ${n}.` } });
        answers.push(await chat(channel, `Question ${n}`, BOUND_USER));
      }
      const states = await storedStates();
      const [oldest, middle, newest] = answers.map((m) => states.get(stateIdOf(regenerateOf(m))));
      // The oldest state's bytes are gone from the store; the newer two are whole.
      expect(oldest ?? '').not.toContain('Question 1');
      expect(middle).toContain('Question 2');
      expect(newest).toContain('Question 3');

      const before = service.chatRequests().length;
      const refused = await press(channel, answers[0]!, BOUND_USER);
      expect(refused.outcome.ok).toBe(false);
      expect(refused.told).toEqual([
        "This answer can no longer be regenerated: only the asker's 2 newest answers can be. Ask again.",
      ]);
      expect(service.chatRequests()).toHaveLength(before);
      expect(answers[0]!.content).toBe('Answer 1.');

      service.enqueue('chat', { stream: { text: 'Answer 2 again.' } });
      expect((await press(channel, answers[1]!, BOUND_USER)).outcome.ok).toBe(true);
      expect(answers[1]!.content).toBe('Answer 2 again.');
      expect(service.chatRequests()).toHaveLength(before + 1);
    });

    it("a press after an admin changed the channel's model and system prompt, and the operator lowered MAX_TOKENS_LIMIT (a restart), sends today's model, system prompt and max_tokens", async () => {
      const channel = discord.addChannel(`state-today-${store}`);
      service.enqueue('chat', { stream: { text: 'Then.' } });
      const answer = await chat(channel, 'Say hello', TODAY_USER, { max_tokens: 900 });
      const then = service.chatRequests().at(-1)!;
      expect(then).toMatchObject({
        model: 'fake-chat',
        max_tokens: 900,
        messages: [{ role: 'user', content: 'Say hello' }],
      });

      const settings = next('settings', channel.id);
      discord.dispatchInteraction({
        channelId: channel.id,
        command: 'settings',
        admin: true,
        options: { chat_model: 'fake-chat-2', system_prompt: 'Answer in French.' },
      });
      expect((await settings).ok).toBe(true);
      // The operator restarts the bot with a lower limit, on the same store.
      await testBot.stop();
      testBot = await startTestBot({ ...env, MAX_TOKENS_LIMIT: '500' }, testBot.storePath);

      service.enqueue('chat', { stream: { text: 'Bonjour.' } });
      expect((await press(channel, answer, TODAY_USER)).outcome.ok).toBe(true);
      expect(service.chatRequests().at(-1)).toEqual({
        ...then,
        model: 'fake-chat-2',
        max_tokens: 500,
        messages: [
          { role: 'system', content: 'Answer in French.' },
          { role: 'user', content: 'Say hello' },
        ],
      });
      expect(answer.content).toBe('Bonjour.');
    });
  });

  describe('on Slack', () => {
    const botMessages = (channel: string) => slack.messages(channel).filter((m) => m.user === slack.botUserId);

    function regenerateOf(message: FakeSlackMessage): string {
      const ids = ((message.blocks ?? []) as Array<{ type: string; elements?: Array<{ action_id?: string }> }>).flatMap(
        (b) => (b.type === 'actions' ? (b.elements ?? []).map((e) => String(e.action_id)) : []),
      );
      const id = ids.find((a) => a.startsWith('regenerate:'));
      expect(id, ids.join(', ')).toBeDefined();
      return id!;
    }

    /** Mentions the bot as `user` with `files` and waits for the answer; returns the mention's ts. */
    async function mention(channel: string, text: string, user: string, files: FakeSlackFile[] = []): Promise<string> {
      const event = slack.mentionEvent({ channel, user, text, files });
      const done = next('mention', channel);
      expect(await slack.sendEvent(botUrl(), event)).toMatchObject({ status: 200, ackedInTime: true });
      expect((await done).ok).toBe(true);
      return event.ts as string;
    }

    async function press(channel: string, message: FakeSlackMessage, user: string) {
      const done = next('regenerate:button', channel);
      await slack.sendBlockAction(botUrl(), { user, channel, messageTs: message.ts, actionId: regenerateOf(message) });
      return done;
    }

    it('a mention with three files keeps their references (Slack file ids), not their bytes: its state is a few kilobytes in the store, and a press finds them again (files.info) and sends the same request, as an edit of the mention does with its new text', async () => {
      const channel = CHANNELS.images;
      const files = await Promise.all(
        [4, 5, 6].map(async (n) =>
          slack.addUserFile({
            name: `noise-${n}.png`,
            mimetype: 'image/png',
            data: await noisePng(n),
            user: SLACK_IMAGES_USER,
          }),
        ),
      );
      service.enqueue('chat', { stream: { text: 'Three noisy squares.' } });
      const ts = await mention(channel, 'What are these?', SLACK_IMAGES_USER, files);
      const first = service.chatRequests().at(-1)!;
      expect(imageUrls(first)).toHaveLength(3);
      expect(imageUrls(first).join('').length).toBeGreaterThan(8 * STATE_BOUND_BYTES);
      const [answer] = botMessages(channel);
      const stored = (await storedStates()).get(stateIdOf(regenerateOf(answer!)));
      expect(stored).toBeDefined();
      expect(Buffer.byteLength(stored!)).toBeLessThan(STATE_BOUND_BYTES);

      service.enqueue('chat', { stream: { text: 'Still three.' } });
      expect((await press(channel, answer!, SLACK_IMAGES_USER)).ok).toBe(true);
      expect(service.chatRequests().at(-1)).toEqual(first);

      // An edit of the mention finds the files again too.
      service.enqueue('chat', { stream: { text: 'Three, edited.' } });
      const edited = next('edit', channel);
      await slack.sendEvent(
        botUrl(),
        slack.messageChangedEvent({ channel, ts, text: `<@${slack.botUserId}> What are these, really?` }),
      );
      expect((await edited).ok).toBe(true);
      const again = service.chatRequests().at(-1)!;
      expect(imageUrls(again)).toEqual(imageUrls(first));
      expect(again.messages.at(-1)!.content).toContainEqual({ type: 'text', text: 'What are these, really?' });
    });

    it("a user's third answer drops the first's state: its press is told so through the press's response_url and sends nothing", async () => {
      const channel = CHANNELS.bound;
      for (const n of [1, 2, 3]) {
        service.enqueue('chat', { stream: { text: `Answer ${n}.` } });
        await mention(channel, `Question ${n}`, SLACK_BOUND_USER);
      }
      const answers = botMessages(channel);
      expect(answers).toHaveLength(3);
      const before = service.chatRequests().length;
      expect((await press(channel, answers[0]!, SLACK_BOUND_USER)).ok).toBe(false);
      const told = slack.responsePosts().map((p) => String((p.body as { text?: string }).text));
      expect(told).toContain(
        "This answer can no longer be regenerated: only the asker's 2 newest answers can be. Ask again.",
      );
      expect(service.chatRequests()).toHaveLength(before);
      service.enqueue('chat', { stream: { text: 'Answer 3 again.' } });
      expect((await press(channel, answers[2]!, SLACK_BOUND_USER)).ok).toBe(true);
      expect(service.chatRequests()).toHaveLength(before + 1);
    });
  });
});
