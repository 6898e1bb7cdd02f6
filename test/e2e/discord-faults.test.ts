/**
 * Discord refusing or failing, end to end: an image over the interaction's upload limit is
 * re-encoded to fit; an expired interaction token (50027), before or after the first word,
 * does not leave "is thinking…" behind, and its rest is not posted with the bot's token for a member
 * who may not post there; a continuation Discord refuses (403 Missing
 * Permissions) is explained in the first message; a deferred reply that cannot be deleted becomes the error sentence; one
 * already gone (10008) gives way to an ephemeral follow-up, or, when that fails too, to a channel message naming the
 * user without a ping; a blank prompt
 * is refused before any service call; an interaction with neither member nor user is answered
 * and logged once instead of throwing inside discord.js.
 */

import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { english, wordsOf } from '../../src/core/i18n/words.ts';
import { MALFORMED_INTERACTION_TEXT } from '../../src/platforms/discord/guard.ts';
import { EXPIRED_NOTE } from '../../src/platforms/discord/interactions.ts';
import { P } from '../fakes/discord/constants.ts';
import { type FakeDiscord, type FakeInteraction, MessageFlag } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

/** The upload limit the fake's interactions announce (`attachment_size_limit`), in bytes. */
const LIMIT = 600 * 1024;

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ service: { noisyImages: true }, discord: { maxFileBytes: LIMIT, tokenTtlMs: 4_000 }, bot: {} }, (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
});

/** Dispatches a command in a channel of its own and waits until the bot is done with it. */
async function run(
  name: string,
  command: string,
  options: Record<string, string | number | boolean>,
  timeoutMs = 20_000,
): Promise<{ interaction: FakeInteraction; ok: boolean; errorCode: string | undefined }> {
  const channel = discord.addChannel(name);
  discord.setMessageBudget(channel.id, { limit: 1000, windowMs: 1000 });
  const done = testBot.outcomes((o) => o.conversationId === `discord:${discord.guildId}:${channel.id}`, 1, timeoutMs);
  const interaction = discord.dispatchInteraction({ command, options, channelId: channel.id });
  const [outcome] = await done;
  return { interaction, ok: outcome!.ok, errorCode: outcome!.errorCode };
}

/** The sentence of a request the service refused with 400, with its reference id. */
const REFUSED_SENTENCE = /^The generation service rejected the request: .+ \(ref [2-9A-Z]{6}\)$/;

/**
 * A /chat the service refuses (400, after 1.5 s) while its "is thinking…" reply is deleted
 * meanwhile (by a moderator): Discord then answers its DELETE and PATCH with 10008 Unknown Message.
 */
async function refusedWithReplyGone(name: string) {
  const channel = discord.addChannel(name);
  discord.setMessageBudget(channel.id, { limit: 1000, windowMs: 1000 });
  service.enqueue('chat', {
    status: 400,
    body: { error: { message: 'This request is not allowed', type: 'invalid_request_error', param: null, code: null } },
    delayHeadersMs: 1_500,
  });
  const done = testBot.outcomes((o) => o.conversationId === `discord:${discord.guildId}:${channel.id}`);
  const interaction = discord.dispatchInteraction({
    command: 'chat',
    options: { prompt: 'hello' },
    channelId: channel.id,
  });
  await expect.poll(() => interaction.original?.loading, { timeout: 1_000, interval: 20 }).toBe(true);
  interaction.original!.deleted = true;
  const [outcome] = await done;
  return { interaction, outcome: outcome!, channelId: channel.id };
}

describe('Discord refusing or failing', () => {
  it("re-encodes a generated image over the interaction's attachment_size_limit so that it fits, and says so", async () => {
    const { interaction, ok } = await run('too-large-image', 'imagine', { prompt: 'static noise' });
    expect(ok).toBe(true);
    const file = interaction.original!.attachments[0]!;
    expect(file.size).toBeLessThanOrEqual(LIMIT);
    expect(file.filename).toBe('imagine.jpg');
    expect((await sharp(file.data).metadata()).format).toBe('jpeg');
    expect(interaction.original!.text).toMatch(
      /⚠️ The image was re-encoded as JPEG \(\d+%\) to fit this server's 0\.6 MB limit\./,
    );
    expect(discord.requests.filter((r) => r.status === 413)).toEqual([]);
  });

  it("turns an image's progress line into its gallery with the bot's own token once the interaction token expired, the note as a Text Display", async () => {
    // The image comes after 4.5 s: "Generating… 3 s" is written with the token (4 s here), the image with the bot's.
    service.enqueue('images', { delayHeadersMs: 4_500 });
    const { interaction, ok } = await run('expired-image', 'imagine', { prompt: 'a slow tide' }, 30_000);
    expect(ok).toBe(true);
    const message = interaction.original!;
    expect(message.revisions.map((r) => r.content)).toContain('🎨 Generating… 3 s');
    const edit = discord.requests.find(
      (r) => r.method === 'PATCH' && r.path.endsWith(`/channels/${message.channelId}/messages/${message.id}`),
    );
    expect(edit).toMatchObject({ status: 200, body: { flags: MessageFlag.IsComponentsV2, content: '' } });
    expect(discord.requests.some((r) => r.code === 50027)).toBe(true);
    expect(message.flags & MessageFlag.IsComponentsV2).toBe(MessageFlag.IsComponentsV2);
    expect(message.content).toBe('');
    expect(message.text.startsWith('🎨 a slow tide\n')).toBe(true);
    expect(message.text.endsWith(`\n${english.t(EXPIRED_NOTE)}`)).toBe(true);
    expect(message.components.map((c) => c.type)).toEqual([17, 10]);
    expect(message.buttons.map((b) => String(b.custom_id))).toContainEqual(expect.stringMatching(/^imagine:reroll:/));
    expect(message.revisions.at(-1)!.pinged).toEqual({ everyone: false, users: [], roles: [] });
  });

  it("finishes an answer that outlives the interaction token with the bot's own token, and says so", async () => {
    const pieces = Array.from({ length: 30 }, (_, i) => `word${i} `);
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 250 } });
    const { interaction, ok } = await run('expired-token', 'chat', { prompt: 'take your time' }, 30_000);
    expect(ok).toBe(true);
    expect(interaction.original!.loading).toBe(false);
    expect(interaction.original!.content).toBe(`${pieces.join('')}\n\n${english.t(EXPIRED_NOTE)}`);
    expect(discord.requests.some((r) => r.code === 50027)).toBe(true);
    expect(interaction.original!.revisions.at(-1)!.pinged).toEqual({ everyone: false, users: [], roles: [] });
  });

  it("writes that note in the channel's `/settings locale` language, not the guild's", async () => {
    const channel = discord.addChannel('expired-token-fr');
    discord.setMessageBudget(channel.id, { limit: 1000, windowMs: 1000 });
    const key = `discord:${discord.guildId}:${channel.id}`;
    const set = testBot.outcomes((o) => o.conversationId === key);
    discord.dispatchInteraction({ command: 'settings', options: { locale: 'fr' }, channelId: channel.id, admin: true });
    expect((await set)[0]!.ok).toBe(true);
    const pieces = Array.from({ length: 30 }, (_, i) => `mot${i} `);
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 250 } });
    const done = testBot.outcomes((o) => o.conversationId === key, 1, 30_000);
    const interaction = discord.dispatchInteraction({
      command: 'chat',
      options: { prompt: 'prends ton temps' },
      channelId: channel.id,
    });
    expect((await done)[0]!.ok).toBe(true);
    expect(wordsOf('fr').t(EXPIRED_NOTE)).not.toBe(english.t(EXPIRED_NOTE));
    expect(interaction.original!.content).toBe(`${pieces.join('')}\n\n${wordsOf('fr').t(EXPIRED_NOTE)}`);
  });

  it("fills the deferred reply with the bot's token when the interaction token expired before the answer's first word", async () => {
    // The service answers after 4.5 s: the token (4 s here) is gone by the first word.
    const pieces = ['late ', 'but ', 'whole.'];
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 50 }, delayHeadersMs: 4_500 });
    const { interaction, ok } = await run('expired-before-text', 'chat', { prompt: 'think long' }, 30_000);
    expect(ok).toBe(true);
    expect(discord.requests.some((r) => r.code === 50027)).toBe(true);
    // The deferred reply, found in the channel by its interaction, shows the answer (no "is thinking…", no second message).
    expect(interaction.original!.loading).toBe(false);
    expect(interaction.original!.content).toBe(`${pieces.join('')}\n\n${english.t(EXPIRED_NOTE)}`);
    expect(discord.messagesIn(interaction.channelId).filter((m) => m.kind === 'channel')).toEqual([]);
    expect(interaction.original!.revisions.at(-1)!.pinged).toEqual({ everyone: false, users: [], roles: [] });
  });

  it("does not post the rest of an answer with the bot's token for a member who may not send messages there, once the interaction's token expired: the first message says why", async () => {
    // Discord lets the member's command have its own reply; the bot's token posts only where they may post.
    const pieces = Array.from({ length: 45 }, (_, i) => `${String(i).padStart(2, '0')}${'y'.repeat(97)} `);
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 0 }, delayHeadersMs: 4_500 });
    const channel = discord.addChannel('expired-no-send');
    discord.setMessageBudget(channel.id, { limit: 1000, windowMs: 1000 });
    const done = testBot.outcomes((o) => o.conversationId === `discord:${discord.guildId}:${channel.id}`, 1, 30_000);
    const interaction = discord.dispatchInteraction({
      command: 'chat',
      options: { prompt: 'a long one' },
      channelId: channel.id,
      permissions: String(P.ViewChannel | P.UseApplicationCommands),
    });
    const [outcome] = await done;
    expect(outcome!.ok).toBe(false);
    expect(discord.requests.some((r) => r.code === 50027)).toBe(true);
    // The deferred reply (the interaction's own message) got the first page and why the rest is missing; nothing more was posted.
    expect(interaction.original!.content).toMatch(
      /^00y+ [\s\S]*\n\n⚠️ The rest of the answer could not be posted: You may not send messages here, so I will not post here for you\./,
    );
    expect(interaction.original!.content.length).toBeLessThanOrEqual(2000);
    expect(discord.messagesIn(channel.id).filter((m) => m.kind === 'channel')).toEqual([]);
  });

  it('when Discord refuses the continuation of a long answer (403 Missing Permissions), the first message says what is missing', async () => {
    service.enqueue('chat', { stream: { text: 'Long answer. '.repeat(300), chunkDelayMs: 0 } });
    discord.failNext({
      method: 'POST',
      path: /^\/api\/v10\/webhooks\/\d+\/[^/]+$/,
      status: 403,
      body: { message: 'Missing Permissions', code: 50013 },
      times: 20,
    });
    const { interaction, errorCode } = await run('no-followups', 'chat', { prompt: 'write a lot' });
    expect(errorCode).toBe('platform_refused');
    expect(interaction.followUps.filter((m) => !m.ephemeral)).toEqual([]);
    expect(interaction.original!.content).toMatch(
      /\n\n⚠️ The rest of the answer could not be posted: I lack a permission in this channel \(Send Messages, Embed Links or Attach Files\): a server admin can grant it in the channel's settings\.$/,
    );
    expect(interaction.original!.content.length).toBeLessThanOrEqual(2000);
  });

  it('when the deferred reply cannot be deleted on an error, it becomes the error sentence instead of "is thinking…"', async () => {
    service.enqueue('chat', { status: 401 });
    discord.failNext({ method: 'DELETE', path: /\/messages\/@original$/, status: 500, times: 5 });
    const { interaction, errorCode } = await run('undeletable', 'chat', { prompt: 'hello' });
    expect(errorCode).toBe('authentication');
    expect(interaction.original!.loading).toBe(false);
    expect(interaction.original!.deleted).toBe(false);
    expect(interaction.original!.content).toMatch(
      /^The generation service refused the bot's API key\. An admin needs to check SERVICE_API_KEY\. \(ref [2-9A-Z]{6}\)$/,
    );
  });

  it('when the deferred reply is already gone (deleted: 10008) as the service refuses, the sentence comes as an ephemeral follow-up', async () => {
    discord.clearFaults();
    const { interaction, outcome, channelId } = await refusedWithReplyGone('reply-gone');
    expect(outcome.errorCode).toBe('bad_request');
    expect(discord.requests.some((r) => r.method === 'DELETE' && r.code === 10008)).toBe(true);
    const notices = interaction.followUps.filter((m) => m.ephemeral);
    expect(notices.map((m) => m.content)).toEqual([expect.stringMatching(REFUSED_SENTENCE)]);
    expect(discord.messagesIn(channelId).filter((m) => m.kind === 'channel')).toEqual([]);
  });

  it('when the deferred reply is gone and the ephemeral follow-up fails too, the sentence is posted in the channel naming the user, pinging nobody', async () => {
    discord.clearFaults();
    // Every attempt of the follow-up fails (discord.js tries a 5xx four times).
    discord.failNext({ method: 'POST', path: /^\/api\/v10\/webhooks\/\d+\/[^/]+$/, status: 503, times: 4 });
    const { interaction, outcome, channelId } = await refusedWithReplyGone('reply-gone-no-followup');
    expect(outcome.errorCode).toBe('bad_request');
    expect(discord.requests.filter((r) => r.method === 'POST' && r.status === 503)).toHaveLength(4);
    expect(interaction.followUps).toEqual([]);
    const posted = discord.messagesIn(channelId).filter((m) => m.kind === 'channel');
    expect(posted).toHaveLength(1);
    const [message] = posted;
    expect(message!.content).toMatch(new RegExp(`^<@${interaction.user.id}> ${REFUSED_SENTENCE.source.slice(1)}`));
    expect(message!.revisions[0]!.pinged).toEqual({ everyone: false, users: [], roles: [] });
    expect(message!.revisions[0]!.allowedMentions).toMatchObject({ parse: [] });
  });

  it('refuses a whitespace-only prompt before any service call', async () => {
    const before = service.chatRequests().length;
    const { interaction, errorCode } = await run('blank-prompt', 'chat', { prompt: '   ' });
    expect(errorCode).toBe('invalid_option');
    expect(interaction.messages.find((m) => m.ephemeral)!.content).toBe('/chat needs `prompt`: What to ask or say.');
    expect(service.chatRequests().length).toBe(before);
  });
  it('answers an interaction with neither member nor user in a sentence, logs one line, throws nothing, and the next /chat works', async () => {
    const escaped: unknown[] = [];
    const onEscape = (error: unknown) => escaped.push(error);
    process.on('uncaughtException', onEscape);
    process.on('unhandledRejection', onEscape);
    try {
      const channel = discord.addChannel('no-invoker');
      const logsBefore = testBot.logs.length;
      const requests = service.requests.length;
      const interaction = discord.dispatchInteraction({
        command: 'chat',
        options: { prompt: 'who am I?' },
        channelId: channel.id,
        withoutInvoker: true,
      });
      expect(interaction.payload.member).toBeUndefined();
      expect(interaction.payload.user).toBeUndefined();
      await expect.poll(() => interaction.callbacks.length, { timeout: 3_000 }).toBe(1);
      expect(interaction.callbacks[0]).toMatchObject({ type: 4, flags: 64, status: 204 });
      expect(interaction.messages.map((m) => [m.content, m.ephemeral])).toEqual([
        [english.t(MALFORMED_INTERACTION_TEXT), true],
      ]);
      // Time for a late rejection from discord.js's gateway listener to surface.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(escaped).toEqual([]);
      const lines = testBot.logs.slice(logsBefore).filter((l) => l.level >= 40);
      expect(lines).toEqual([
        expect.objectContaining({
          level: 40,
          interaction: interaction.id,
          command: 'chat',
          answered: true,
          msg: 'discord sent an interaction with neither member nor user; not run',
        }),
      ]);
      expect(lines[0]).not.toHaveProperty('err');
      expect(service.requests.length).toBe(requests);

      const { interaction: next, ok } = await run('after-no-invoker', 'chat', { prompt: 'hello again' });
      expect(ok).toBe(true);
      expect(next.original!.loading).toBe(false);
      expect(next.original!.content.trim()).not.toBe('');
      expect(escaped).toEqual([]);
    } finally {
      process.off('uncaughtException', onEscape);
      process.off('unhandledRejection', onEscape);
    }
  });
});
