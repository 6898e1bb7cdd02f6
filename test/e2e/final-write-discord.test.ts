/**
 * An answer whose last writes fail on Discord (issue 38, items 12 and 15), end to end: every
 * edit refused (500) once the first words are shown, the reply deleted while it streams (10008),
 * a long answer's follow-up refused (403 Missing Permissions, and 500). The history keeps what the
 * user was shown, marked as cut (`[stopped]`, as Stop marks an answer), and the next question is
 * sent with exactly that; a deleted reply stops the answer without blaming the bot.
 */
import { describe, expect, it } from 'vitest';
import { CUT_MARK } from '../../src/core/features/exchange.ts';
import type { FakeDiscord, FakeInteraction } from '../fakes/discord.ts';
import type { ChatRequestBody, FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: {}, bot: {}, resetServiceAfterEach: true }, (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
});

/** The sentence of a failure the bot takes as its own. */
const BOT_FAULT = /Something went wrong on the bot's side/;

/** A slow answer: ten pieces, a fifth of a second apart. */
const SLOW = Array.from({ length: 10 }, (_, i) => `piece${i} `);

/** The messages of a chat request as `role: content`. */
const sentTurns = (body: ChatRequestBody | undefined) =>
  (body?.messages ?? []).map((m) => `${m.role}: ${String(m.content)}`);

/** A channel of its own, and /chat in it: the interaction, and the command's outcome once done. */
function channelFor(name: string) {
  const channel = discord.addChannel(name);
  discord.setMessageBudget(channel.id, { limit: 1000, windowMs: 1000 });
  const conversationId = `discord:${discord.guildId}:${channel.id}`;
  return {
    chat(prompt: string): { interaction: FakeInteraction; done: ReturnType<TestBot['outcomes']> } {
      const done = testBot.outcomes((o) => o.conversationId === conversationId, 1, 30_000);
      const interaction = discord.dispatchInteraction({ command: 'chat', options: { prompt }, channelId: channel.id });
      return { interaction, done };
    },
    /** Asks `prompt` with a plain answer and resolves with the turns its request was sent with. */
    async next(prompt: string): Promise<string[]> {
      service.enqueue('chat', { stream: { pieces: ['fine.'] } });
      const { done } = this.chat(prompt);
      expect((await done)[0]!.ok).toBe(true);
      return sentTurns(service.chatRequests().findLast((b) => b.messages.at(-1)?.content === prompt));
    },
  };
}

/** Resolves once the reply shows the answer's first words. */
async function firstWords(interaction: FakeInteraction): Promise<void> {
  await expect.poll(() => interaction.original?.content.startsWith('piece0'), { timeout: 10_000 }).toBe(true);
}

describe('an answer whose last writes fail on Discord', () => {
  it('every edit refused (500) once the first words show: the history keeps those words, marked as cut', async () => {
    const place = channelFor('edits-refused');
    service.enqueue('chat', { stream: { pieces: SLOW, chunkDelayMs: 200 } });
    const { interaction, done } = place.chat('first question');
    await firstWords(interaction);
    discord.failNext({ method: 'PATCH', path: /\/messages\/@original$/, status: 500, times: 1_000 });
    try {
      await done;
    } finally {
      discord.clearFaults();
    }
    const shown = interaction.original!.content;
    expect(shown).not.toBe(SLOW.join('').trim());
    expect(await place.next('second question')).toEqual([
      'user: first question',
      `assistant: ${shown}\n${CUT_MARK}`,
      'user: second question',
    ]);
  });

  it('the reply deleted while it streams: the answer stops, nobody is told the bot failed, the history keeps what was shown, marked as cut', async () => {
    const place = channelFor('reply-deleted');
    const pieces = Array.from({ length: 40 }, (_, i) => `piece${i} `);
    service.enqueue('chat', { stream: { pieces, chunkDelayMs: 200 } });
    const { interaction, done } = place.chat('first question');
    await firstWords(interaction);
    const shown = interaction.original!.content;
    interaction.original!.deleted = true;
    const [outcome] = await done;
    expect(outcome!.errorCode).toBe('reply_deleted');
    // Stopped: the service's stream was closed long before its 40 pieces (8 s).
    expect(outcome!.durationMs).toBeLessThan(6_000);
    const told = [...interaction.followUps, ...discord.messagesIn(interaction.channelId)].map((m) => m.content);
    expect(told.filter((t) => BOT_FAULT.test(t))).toEqual([]);
    expect(interaction.followUps).toEqual([]);
    const turns = await place.next('second question');
    expect(turns[0]).toBe('user: first question');
    // What the reply showed when it was deleted (a later edit may have shown a little more before the 10008).
    const kept = turns[1]!.replace(/^assistant: /, '');
    expect(kept.endsWith(`\n${CUT_MARK}`)).toBe(true);
    expect(kept.startsWith(shown.trim())).toBe(true);
    expect(pieces.join('').startsWith(kept.slice(0, -`\n${CUT_MARK}`.length))).toBe(true);
    expect(turns.slice(2)).toEqual(['user: second question']);
  });

  it.each([
    [403, { message: 'Missing Permissions', code: 50013 }],
    [500, undefined],
  ])(
    "a long answer's follow-up refused (%i): the history keeps the first message's text, marked as cut",
    async (status, body) => {
      const place = channelFor(`follow-up-${status}`);
      const text = 'Long answer. '.repeat(300);
      service.enqueue('chat', { stream: { text, chunkDelayMs: 0 } });
      discord.failNext({
        method: 'POST',
        path: /^\/api\/v10\/webhooks\/\d+\/[^/]+$/,
        status,
        ...(body ? { body } : {}),
        times: 40,
      });
      const { interaction, done } = place.chat('first question');
      try {
        await done;
      } finally {
        discord.clearFaults();
      }
      expect(interaction.followUps.filter((m) => !m.ephemeral)).toEqual([]);
      const [head] = interaction.original!.content.split('\n\n⚠️ The rest of the answer could not be posted');
      const turns = await place.next('second question');
      expect(turns[0]).toBe('user: first question');
      const kept = turns[1]!.replace(/^assistant: /, '');
      // The first message's page: what the user read of it (its end now gives way to the note), not the whole answer.
      expect(kept.endsWith(`\n${CUT_MARK}`)).toBe(true);
      const page = kept.slice(0, -`\n${CUT_MARK}`.length);
      expect(page.startsWith(head!)).toBe(true);
      expect(text.startsWith(page)).toBe(true);
      expect(page.length).toBeLessThanOrEqual(2000);
      expect(turns.slice(2)).toEqual(['user: second question']);
    },
  );
});
