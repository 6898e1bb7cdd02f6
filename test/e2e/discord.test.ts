/**
 * End-to-end on Discord: the whole bot, started from environment variables by startTestBot,
 * with real discord.js and undici, against FakeDiscord (REST + gateway) and FakeService.
 * Interactions arrive over the fake gateway; everything the bot shows is read back from the
 * fake's message records. One fake pair and one bot serve the file; each test uses its own
 * channel so that histories do not mix.
 */

import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { commands, messageActions } from '../../commands/index.ts';
import type { CommandOutcome } from '../../src/core/command.ts';
import { toDiscordCommand } from '../../src/platforms/discord/commands.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import {
  type CallbackRecord,
  type DispatchInteractionOptions,
  type FakeDiscord,
  type FakeInteraction,
  MessageFlag,
} from '../fakes/discord.ts';
import type { FakeService, RecordedRequest } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;
/** Process warnings of the kind a listener leak produces, from the whole file. */
const listenerWarnings: Error[] = [];
const onWarning = (warning: Error) => {
  if (warning.name === 'MaxListenersExceededWarning') listenerWarnings.push(warning);
};

useE2E(
  {
    discord: {},
    beforeBot: () => {
      process.on('warning', onWarning);
      return () => process.off('warning', onWarning);
    },
    bot: {},
  },
  (e2e) => {
    ({ service, discord, bot: testBot } = e2e);
  },
);

/** Resolves with the next `count` command outcomes in a channel's conversation. */
function outcomesIn(channelId: string, count = 1): Promise<CommandOutcome[]> {
  const conversationId = `discord:${discord.guildId}:${channelId}`;
  return testBot.outcomes((o) => o.conversationId === conversationId, count);
}

/** Dispatches a slash command over the gateway and waits until the bot has finished with it. */
async function run(
  options: DispatchInteractionOptions & { channelId: string },
): Promise<{ interaction: FakeInteraction; outcome: CommandOutcome }> {
  const done = outcomesIn(options.channelId);
  const interaction = discord.dispatchInteraction(options);
  const [outcome] = await done;
  return { interaction, outcome: outcome! };
}

/** The words `first`..`last` as stream pieces ("w1 ", "w2 ", …, the last without a space). */
function wordPieces(count: number, word = 'token'): string[] {
  return Array.from({ length: count }, (_, i) => `${word}${i + 1}${i + 1 < count ? ' ' : ''}`);
}

describe('Discord /chat', () => {
  it('defers before any service request, edits the reply at least twice while the answer streams, and ends with exactly the streamed text', async () => {
    const channel = discord.addChannel('chat-streaming');
    const pieces = wordPieces(32);
    const text = pieces.join('');
    // ~32 events 110 ms apart: the stream lasts about 3.5 s, and the bot edits at most once a second.
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 110 } });
    const order: string[] = [];
    const serviceRequests: RecordedRequest[] = [];
    const onCallback = (_: FakeInteraction, cb: CallbackRecord) => order.push(`discord:callback:${cb.type}`);
    const onRequest = (r: RecordedRequest) => {
      serviceRequests.push(r);
      order.push(`service:${r.route}`);
    };
    discord.events.on('callback', onCallback);
    service.events.on('request', onRequest);
    try {
      const { interaction, outcome } = await run({
        command: 'chat',
        options: { prompt: 'Count for me' },
        channelId: channel.id,
      });
      expect(outcome.ok).toBe(true);

      expect(interaction.response?.type).toBe(5);
      expect(order[0]).toBe('discord:callback:5');
      expect(order).toContain('service:chat');
      for (const r of serviceRequests) expect(r.receivedAt).toBeGreaterThanOrEqual(interaction.response!.at);

      const original = interaction.original!;
      expect(original.content).toBe(text);
      expect(original.loading).toBe(false);
      const edits = original.revisions.filter((r) => r.via === 'edit');
      const intermediate = edits.filter((r) => r.content !== text);
      expect(intermediate.length).toBeGreaterThanOrEqual(2);
      let previous = '';
      for (const revision of intermediate) {
        expect(text.startsWith(revision.content)).toBe(true);
        expect(revision.content.length).toBeGreaterThan(previous.length);
        previous = revision.content;
      }
      expect(interaction.followUps).toHaveLength(0);
    } finally {
      discord.events.off('callback', onCallback);
      service.events.off('request', onRequest);
    }
  });

  it('splits a ~3,000-character answer with a code block into the reply and one follow-up, closing the fence and reopening it as ```ts', async () => {
    const channel = discord.addChannel('chat-long');
    const code = Array.from(
      { length: 55 },
      (_, i) => `export const step${i} = compute(${i}, 'value number ${i}');`,
    ).join('\n');
    const text = `Here is the module you asked for:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nEach step calls compute once.`;
    expect(text.length).toBeGreaterThan(2900);
    expect(text.length).toBeLessThan(3300);
    service.enqueue('chat', { stream: { text, chunkDelayMs: 0 } });

    const { interaction, outcome } = await run({
      command: 'chat',
      options: { prompt: 'Write the module' },
      channelId: channel.id,
    });
    expect(outcome.ok).toBe(true);

    expect(interaction.followUps).toHaveLength(1);
    const first = interaction.original!.content;
    const second = interaction.followUps[0]!.content;
    expect(first.length).toBeLessThanOrEqual(2000);
    expect(second.length).toBeLessThanOrEqual(2000);
    expect(first.endsWith('\n```')).toBe(true);
    expect(second.startsWith('```ts\n')).toBe(true);
    // Joined (without the added fence lines, with the line break at the cut) they are the whole text.
    expect(`${first.slice(0, -'\n```'.length)}\n${second.slice('```ts\n'.length)}`).toBe(text);
    expect(interaction.followUps[0]!.ephemeral).toBe(false);
    // No write of this interaction was refused (each stayed within 2000 characters).
    const refused = discord.requests.filter((r) => r.path.includes(interaction.token) && r.status >= 400);
    expect(refused).toEqual([]);
  });

  it('sends the first exchange of a channel with the second /chat there, and nothing of it with a /chat in another channel', async () => {
    const first = discord.addChannel('history-a');
    const other = discord.addChannel('history-b');
    const before = service.chatRequests().length;
    // One-piece answers: each reply is written once, with no paced edit to wait for.
    for (const answer of ['Nice to meet you, Ada.', 'Your name is Ada.', 'I do not know your name.'])
      service.enqueue('chat', { stream: { pieces: [answer] } });

    await run({ command: 'chat', options: { prompt: 'My name is Ada.' }, channelId: first.id });
    const { interaction } = await run({
      command: 'chat',
      options: { prompt: 'What is my name?' },
      channelId: first.id,
    });
    expect(interaction.original!.content).toBe('Your name is Ada.');
    const elsewhere = await run({ command: 'chat', options: { prompt: 'What is my name?' }, channelId: other.id });
    expect(elsewhere.interaction.original!.content).toBe('I do not know your name.');

    const bodies = service.chatRequests().slice(before);
    expect(bodies).toHaveLength(3);
    expect(bodies[1]!.messages).toEqual([
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Nice to meet you, Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    expect(bodies[2]!.messages).toEqual([{ role: 'user', content: 'What is my name?' }]);
  });

  it('sends allowed_mentions { parse: [], replied_user: false } with every create and edit, so model output with @everyone and <@id> pings nobody', async () => {
    const channel = discord.addChannel('mentions');
    const mentions = 'Hey @everyone and @here, <@123456789012345678> and <@&223456789012345678> asked for this.';
    // Long enough for a follow-up: creates and edits of both messages carry the model's mentions.
    const text = `${mentions}\n\n${'All of you should read this. '.repeat(90)}\n\nThanks ${mentions}`;
    service.enqueue('chat', { stream: { text, chunkDelayMs: 0 } });

    const { interaction } = await run({ command: 'chat', options: { prompt: 'Ping everyone' }, channelId: channel.id });

    expect(interaction.original!.content).toContain('@everyone');
    expect(interaction.followUps).toHaveLength(1);
    expect(interaction.followUps[0]!.content).toContain('<@123456789012345678>');
    const own = discord.writes.filter((w) => w.interactionId === interaction.id);
    expect(own.filter((w) => w.kind === 'create').length).toBeGreaterThanOrEqual(1);
    expect(own.filter((w) => w.kind === 'edit').length).toBeGreaterThanOrEqual(1);
    // Every write the bot has made so far in this file (this test and the ones before it).
    expect(discord.writes.length).toBeGreaterThan(own.length);
    for (const write of discord.writes) {
      expect(write.allowedMentions, `${write.kind} of message ${write.messageId}`).toEqual({
        parse: [],
        replied_user: false,
      });
      expect(write.pinged).toEqual({ everyone: false, users: [], roles: [] });
    }
  });

  it('tells the user ephemerally that the service refused the API key (401), and the next /chat in the channel works', async () => {
    const channel = discord.addChannel('service-401');
    service.enqueue('chat', { status: 401 });

    const { interaction, outcome } = await run({
      command: 'chat',
      options: { prompt: 'Hello?' },
      channelId: channel.id,
    });
    expect(outcome).toMatchObject({ ok: false, errorCode: 'authentication' });
    expect(interaction.response?.type).toBe(5);
    // The public "is thinking…" reply is removed; the explanation goes to the user alone.
    expect(interaction.original!.deleted).toBe(true);
    const notices = interaction.followUps.filter((m) => (m.flags & MessageFlag.Ephemeral) !== 0);
    expect(notices).toHaveLength(1);
    // The sentence carries a reference id that is also in the log line of the failure.
    const ref = /^The generation service refused the bot's API key\. .+\. \(ref ([2-9A-Z]{6})\)$/.exec(
      notices[0]!.content,
    )?.[1];
    expect(ref).toBeDefined();
    expect(interaction.followUps.filter((m) => !m.ephemeral)).toEqual([]);
    // Logged once: one warning or error line for this interaction, the failed service call.
    const problems = testBot.logs.filter((l) => l.interaction === interaction.id && l.level >= 40);
    expect(problems.map((l) => l.msg)).toEqual(['service call failed']);
    expect(problems[0]!.ref).toBe(ref);

    service.enqueue('chat', { stream: { pieces: ['Hello again.'] } });
    const next = await run({ command: 'chat', options: { prompt: 'Second try' }, channelId: channel.id });
    expect(next.outcome.ok).toBe(true);
    expect(next.interaction.original!.content).toBe('Hello again.');
  });

  it('tells the user ephemerally that the service is having trouble when it keeps answering 503, and the bot keeps answering', async () => {
    const channel = discord.addChannel('service-503');
    // The client retries twice: three 503s make the request fail.
    for (let i = 0; i < 3; i++) service.enqueue('chat', { status: 503 });

    const { interaction, outcome } = await run({
      command: 'chat',
      options: { prompt: 'Are you there?' },
      channelId: channel.id,
    });
    expect(outcome).toMatchObject({ ok: false, errorCode: 'server_error' });
    const notice = interaction.followUps.find((m) => m.ephemeral);
    expect(notice?.content).toMatch(/having trouble \(HTTP 503\)\. Try again/);

    service.enqueue('chat', { stream: { pieces: ['Yes, now.'] } });
    const next = await run({ command: 'chat', options: { prompt: 'Now?' }, channelId: channel.id });
    expect(next.interaction.original!.content).toBe('Yes, now.');
  });

  it('never writes SERVICE_API_KEY or DISCORD_TOKEN in a log line or a Discord message', async () => {
    const channel = discord.addChannel('secrets');
    // A refusal whose text echoes the key, as careless servers do, must still not leak it.
    service.enqueue('chat', {
      status: 401,
      body: {
        error: {
          message: `Incorrect API key provided: ${service.apiKey}.`,
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      },
    });
    const { interaction } = await run({
      command: 'chat',
      options: { prompt: `My token is ${discord.token}` },
      channelId: channel.id,
    });
    expect(interaction.followUps.some((m) => m.ephemeral)).toBe(true);

    const log = testBot.rawLog();
    expect(log.length).toBeGreaterThan(0);
    expect(testBot.logs.some((line) => line.msg === 'service call failed')).toBe(true);
    expect(log).not.toContain(service.apiKey);
    expect(log).not.toContain(discord.token);
    for (const message of discord.allMessages()) {
      for (const revision of message.revisions) {
        expect(revision.content).not.toContain(service.apiKey);
        expect(revision.content).not.toContain(discord.token);
      }
    }
  });

  it('rides out 429s of a 2-writes-per-2-s channel budget shared by two streaming replies, and both land their final text', async () => {
    const channel = discord.addChannel('rate-limited');
    discord.setMessageBudget(channel.id, { limit: 2, windowMs: 2_000 });
    const piecesA = wordPieces(14, 'alpha');
    const piecesB = wordPieces(14, 'beta');
    service.enqueue('chat', { stream: { pieces: piecesA, chunkDelayMs: 100 } });
    service.enqueue('chat', { stream: { pieces: piecesB, chunkDelayMs: 100 } });

    const done = outcomesIn(channel.id, 2);
    const a = discord.dispatchInteraction({
      command: 'chat',
      options: { prompt: 'Stream alpha' },
      channelId: channel.id,
    });
    const b = discord.dispatchInteraction({
      command: 'chat',
      options: { prompt: 'Stream beta' },
      channelId: channel.id,
      user: { username: 'grace' },
    });
    const outcomes = await done;

    expect(outcomes.every((o) => o.ok)).toBe(true);
    // Which interaction got which scripted stream depends on which request reached the service first.
    const finals = [a.original!.content, b.original!.content].sort();
    expect(finals).toEqual([piecesA.join(''), piecesB.join('')].sort());
    expect(discord.rateLimits.filter((r) => r.channelId === channel.id).length).toBeGreaterThanOrEqual(1);
    // Only 429s were refused: discord.js waited and retried each of them.
    const refused = discord.requests.filter(
      (r) => (r.path.includes(a.token) || r.path.includes(b.token)) && r.status >= 400,
    );
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.every((r) => r.status === 429)).toBe(true);
  });

  it('puts the answer in the deferred reply when Discord failed the first edit with 503s, instead of posting it as a follow-up', async () => {
    const channel = discord.addChannel('discord-outage');
    const pieces = ['The first half, ', 'and the second half.'];
    // The first piece is written (and fails) while the stream goes on; the next piece brings a new write.
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 400 } });
    // discord.js tries 4 times (3 retries on 5xx): the bot's first write of the reply fails once.
    discord.failNext({ method: 'PATCH', path: /\/messages\/@original$/, status: 503, times: 4 });

    const { interaction, outcome } = await run({
      command: 'chat',
      options: { prompt: 'Answer in two parts' },
      channelId: channel.id,
    });
    expect(discord.requests.filter((r) => r.path.includes(interaction.token) && r.status === 503)).toHaveLength(4);
    expect(outcome.ok).toBe(true);
    expect(interaction.original!.content).toBe(pieces.join(''));
    expect(interaction.original!.loading).toBe(false);
    expect(interaction.followUps).toEqual([]);
  });

  it('runs a dozen commands one after another without piling abort listeners on a long-lived signal (no MaxListenersExceededWarning in this file)', async () => {
    const channel = discord.addChannel('many-commands');
    discord.setMessageBudget(channel.id, { limit: 100, windowMs: 5_000 });
    for (let i = 0; i < 12; i++) {
      service.enqueue('chat', { stream: { pieces: [`Answer ${i}.`] } });
      const { interaction } = await run({
        command: 'chat',
        options: { prompt: `Question ${i}` },
        channelId: channel.id,
      });
      expect(interaction.original!.content).toBe(`Answer ${i}.`);
    }
    expect(listenerWarnings.map((w) => w.message)).toEqual([]);
  });
});

describe('Discord /imagine', () => {
  it('posts a PNG attachment of 1216×832 for aspect_ratio landscape', async () => {
    const channel = discord.addChannel('imagine');
    const { interaction, outcome } = await run({
      command: 'imagine',
      options: { prompt: 'a lighthouse at dusk', aspect_ratio: 'landscape' },
      channelId: channel.id,
    });
    expect(outcome.ok).toBe(true);

    expect(interaction.response?.type).toBe(5);
    const message = interaction.original!;
    expect(message.attachments).toHaveLength(1);
    const attachment = message.attachments[0]!;
    expect(attachment.filename).toBe('imagine.png');
    expect(attachment.contentType).toBe('image/png');
    const meta = await sharp(attachment.data).metadata();
    expect(meta.format).toBe('png');
    expect([meta.width, meta.height]).toEqual([1216, 832]);
    expect(message.text).toContain('a lighthouse at dusk');
    expect(service.lastRequest('images')?.body).toMatchObject({
      prompt: 'a lighthouse at dusk',
      aspect_ratio: 'landscape',
    });
  });
});

describe('Discord /complete', () => {
  it('streams the prompt followed by its legacy text completion (§4.2) into the deferred reply, and keeps no history', async () => {
    const channel = discord.addChannel('complete');
    service.setCompletionReply(' was a dark and stormy night.');
    try {
      const { interaction, outcome } = await run({
        command: 'complete',
        options: { prompt: 'It' },
        channelId: channel.id,
      });
      expect(outcome.ok).toBe(true);
      expect(interaction.response?.type).toBe(5);
      expect(interaction.original!.content).toBe('It was a dark and stormy night.');
      expect(service.lastRequest('completions')?.body).toMatchObject({
        prompt: 'It',
        stream: true,
        model: 'fake-chat',
      });
      expect(await testBot.bot.core.history.get(`discord:${discord.guildId}:${channel.id}`)).toEqual([]);
    } finally {
      service.setCompletionReply(undefined);
    }
  });
});

describe('Discord command registration', () => {
  it('deployCommands registers every command globally and in a guild, and the fake accepts the JSON', async () => {
    const global = await deployCommands({
      token: discord.token,
      applicationId: discord.applicationId,
      apiUrl: discord.apiUrl,
    });
    // The slash commands, then the message actions (message commands, type 3), from the same definitions.
    const names = [...commands.map((c) => c.name), ...messageActions.map((a) => a.name)];
    expect(global.map((c) => c.name)).toEqual(names);
    expect(global.every((c) => /^\d{17,20}$/.test(c.id))).toBe(true);
    expect(global.filter((c) => c.type === 3).map((c) => c.name)).toEqual(messageActions.map((a) => a.name));
    for (const command of commands) {
      const registered = discord.commands.find((c) => c.name === command.name);
      expect(registered).toMatchObject({
        type: 1,
        description: command.description,
        options: toDiscordCommand(command).options,
      });
    }

    const inGuild = await deployCommands({
      token: discord.token,
      applicationId: discord.applicationId,
      apiUrl: discord.apiUrl,
      guildId: discord.guildId,
    });
    expect(inGuild.map((c) => c.name)).toEqual(names);
    expect(discord.guildCommands(discord.guildId).map((c) => c.name)).toEqual(names);
  });

  it('deployCommands with a wrong token is refused with 401 and registers nothing', async () => {
    const before = discord.commands;
    await expect(
      deployCommands({ token: 'not-the-token', applicationId: discord.applicationId, apiUrl: discord.apiUrl }),
    ).rejects.toMatchObject({ status: 401 });
    expect(discord.commands).toBe(before);
  });
});
