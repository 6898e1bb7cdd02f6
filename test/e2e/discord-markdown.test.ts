/**
 * End-to-end on Discord, Markdown (issue 39): Discord renders most of what models write but not
 * tables. Through the fakes (FakeService streams the answer, FakeDiscord keeps every message and
 * revision): a table arrives as an aligned monospaced block (a wide one as a list) while
 * everything else is exactly as the model wrote it, on /chat and on a mention; a table near a
 * page break is kept whole on the next page; the history keeps the model's Markdown.
 */

import { describe, expect, it } from 'vitest';
import type { FakeDiscord, FakeInteraction } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: {}, bot: {} }, (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
});

/** Runs /chat in a channel of its own with the answer streamed in `pieces`; resolves when the bot is done. */
async function chatWith(
  name: string,
  pieces: string[],
  chunkDelayMs = 0,
): Promise<{ interaction: FakeInteraction; conversationId: string }> {
  const channel = discord.addChannel(name);
  discord.setMessageBudget(channel.id, { limit: 1000, windowMs: 1000 });
  const conversationId = `discord:${discord.guildId}:${channel.id}`;
  service.enqueue('chat', { stream: { pieces, chunkDelayMs } });
  const done = testBot.outcomes((o) => o.conversationId === conversationId);
  const interaction = discord.dispatchInteraction({
    command: 'chat',
    options: { prompt: name },
    channelId: channel.id,
  });
  const [outcome] = await done;
  expect(outcome!.ok).toBe(true);
  return { interaction, conversationId };
}

const history = (conversationId: string) => testBot.bot.core.history.get(conversationId);

/** The public messages of an interaction's answer, their contents in order. */
const contents = (interaction: FakeInteraction) =>
  interaction.messages.filter((m) => !m.ephemeral).map((m) => m.content);

const BEFORE = [
  '# Planets',
  '',
  'Some **bold**, some *italics*, some ~~strike~~ and a [link](https://example.com/planets).',
  '',
  '- Mercury',
  '- Venus',
  '  1. nested',
  '',
  '> A quote about space.',
  '',
  '```ts',
  "const planets = ['Mercury', 'Venus']; // a | b",
  '```',
  '',
  '',
].join('\n');
const TABLE = [
  '| Planet | Moons | Notes |',
  '|:-------|------:|:-----:|',
  '| Earth | 1 | *home* |',
  '| Mars | 2 | red |',
  '| Jupiter | 95 | `big` |',
].join('\n');
const AFTER = "\n\nThat's all, `inline | code` too.";
const BLOCK = [
  '```',
  'Planet  | Moons | Notes',
  '--------+-------+------',
  'Earth   |     1 | home',
  'Mars    |     2 |  red',
  'Jupiter |    95 |  big',
  '```',
].join('\n');

/** `text` in pieces of whole lines (each with its line break), then the last line cut in two. */
function linePieces(text: string): string[] {
  const lines = text.split(/(?<=\n)/);
  const last = lines.pop()!;
  return [...lines, last.slice(0, 5), last.slice(5)];
}

describe('Discord: Markdown as Discord renders it', () => {
  it('/chat: the table arrives as an aligned monospaced block, everything else byte for byte; the history keeps the Markdown', async () => {
    const answer = BEFORE + TABLE + AFTER;
    // 100 ms a piece: about two seconds, so the table is written while it streams too.
    const { interaction, conversationId } = await chatWith('md-everything', linePieces(answer), 100);
    expect(contents(interaction)).toEqual([BEFORE + BLOCK + AFTER]);
    // Never the raw delimiter row: from the row that makes it a table on, each write showed the block.
    const writes = interaction.original!.revisions.filter((r) => r.via !== 'defer').map((r) => r.content);
    expect(writes.length).toBeGreaterThan(1);
    expect(writes.filter((w) => w.includes('|:-------|'))).toEqual([]);
    const stored = await history(conversationId);
    expect(stored.map((m) => m.content)).toEqual(['md-everything', answer]);
  });

  it('/chat: a table wider than a Discord line becomes a list, one item a row, its cells as written', async () => {
    const table = [
      '| City | Country | Population | Known for |',
      '|---|---|--:|---|',
      '| Paris | France | 2,102,650 | the Eiffel Tower and its museums |',
      '| Tokyo | Japan | 14,094,034 | [Shibuya](https://en.wikipedia.org/wiki/Shibuya) |',
    ].join('\n');
    const { interaction, conversationId } = await chatWith('md-wide', [`Two cities:\n\n${table}\n`]);
    expect(contents(interaction)).toEqual([
      [
        'Two cities:',
        '',
        '- **City**: Paris',
        '  **Country**: France',
        '  **Population**: 2,102,650',
        '  **Known for**: the Eiffel Tower and its museums',
        '- **City**: Tokyo',
        '  **Country**: Japan',
        '  **Population**: 14,094,034',
        '  **Known for**: [Shibuya](https://en.wikipedia.org/wiki/Shibuya)',
        '',
      ].join('\n'),
    ]);
    expect((await history(conversationId))[1]!.content).toBe(`Two cities:\n\n${table}\n`);
  });

  it('/chat: a long answer with a table near a page break keeps the table block whole on one page', async () => {
    const prose = Array.from({ length: 16 }, (_, i) => `Paragraph ${i + 1} says something about the data below.`);
    const intro = `${prose.join(' ')}\n\n${prose.join(' ')}`;
    const rows = Array.from({ length: 30 }, (_, i) => `| item ${i + 1} | ${(i + 1) * 3} |`);
    const table = `| Item | Count |\n|---|--:|\n${rows.join('\n')}`;
    const answer = `${intro}\n\n${table}\n\nThe end.`;
    expect(intro.length).toBeGreaterThan(1200);
    expect(intro.length + table.length).toBeGreaterThan(2000);
    const { interaction, conversationId } = await chatWith('md-page-break', linePieces(answer), 20);
    const pages = contents(interaction);
    expect(pages).toHaveLength(2);
    expect(pages[0]).toBe(`${intro}\n`);
    const block = pages[1]!.split('\n\nThe end.')[0]!.split('\n');
    expect(block[0]).toBe('```');
    expect(block[1]).toBe('Item    | Count');
    expect(block.slice(3, -1)).toEqual(
      rows.map((_, i) => `${`item ${i + 1}`.padEnd(7)} | ${String((i + 1) * 3).padStart(5)}`),
    );
    expect(block.at(-1)).toBe('```');
    expect(pages[1]!.endsWith('\n\nThe end.')).toBe(true);
    expect((await history(conversationId))[1]!.content).toBe(answer);
  });

  it('a mention: its answer is rendered the same way', async () => {
    const channel = discord.addChannel('md-mention');
    const conversationId = `discord:${discord.guildId}:${channel.id}`;
    service.enqueue('chat', { stream: { pieces: [`${TABLE}\n`] } });
    const done = testBot.outcomes((o) => o.command === 'mention' && o.conversationId === conversationId);
    discord.postUserMessage({ channelId: channel.id, content: `<@${discord.botUser.id}> planets as a table` });
    expect((await done)[0]!.ok).toBe(true);
    const answers = discord.messagesIn(channel.id).filter((m) => m.author.id === discord.botUser.id);
    expect(answers.map((m) => m.content)).toEqual([`${BLOCK}\n`]);
    expect((await history(conversationId))[1]!.content).toBe(`${TABLE}\n`);
  });
});
