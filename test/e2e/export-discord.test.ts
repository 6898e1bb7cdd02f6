/**
 * End-to-end on Discord (issue 41, item 3): `/export` gives the asker the conversation of the
 * channel where it runs as `conversation.md` and `conversation.json`, in an ephemeral reply, and
 * nothing of another channel's; an export over the interaction's `attachment_size_limit` leaves
 * the oldest turns out and says so at the top of both files and in the reply; a sixth export in
 * ten minutes is refused, naming the limit. The whole bot (startTestBot), real discord.js, against
 * the fakes (the fake Discord refuses a file over `maxFileBytes`: 413).
 */
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { ExportTurn } from '../../src/core/features/export-format.ts';
import { wordsOf } from '../../src/core/i18n/words.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import type { FakeDiscord, FakeInteraction } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const ALICE = { id: '1290000000000000601', username: 'alice' };
const BOB = { id: '1290000000000000602', username: 'bob' };
const CAROL = { id: '1290000000000000603', username: 'carol' };
/** A user whose Discord client is in Japanese (the interaction's `locale`). */
const HANA = { id: '1290000000000000604', username: 'hana' };
/** The interaction's `attachment_size_limit` (the fake refuses a larger file). */
const LIMIT = 6 * 1024;

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: { maxFileBytes: LIMIT }, bot: {}, timeoutMs: 30_000 }, async (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
  await deployCommands({ token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl });
});

/** Runs a slash command by `user` in a channel and waits for its outcome. */
async function run(
  channelId: string,
  user: typeof ALICE,
  command: string,
  options: Record<string, string> = {},
  locale?: string,
): Promise<{ interaction: FakeInteraction; outcome: CommandOutcome }> {
  const done = testBot.outcomes((o) => o.conversationId.endsWith(`:${channelId}`) && o.command === command, 1, 30_000);
  const interaction = discord.dispatchInteraction({ channelId, command, options, user, ...(locale ? { locale } : {}) });
  return { interaction, outcome: (await done)[0]! };
}

async function chat(channelId: string, user: typeof ALICE, prompt: string, answer: string): Promise<void> {
  service.enqueue('chat', { stream: { text: answer } });
  expect((await run(channelId, user, 'chat', { prompt })).outcome.ok).toBe(true);
}

/** The one message /export showed, and its two files as text. */
function exported(interaction: FakeInteraction) {
  const shown = interaction.messages.filter((m) => !m.deleted);
  expect(shown).toHaveLength(1);
  const message = shown[0]!;
  const file = (name: string) => {
    const found = message.attachments.find((a) => a.filename === name);
    expect(found, name).toBeDefined();
    expect(found!.size).toBeLessThanOrEqual(LIMIT);
    return found!.data!.toString('utf8');
  };
  return { message, markdown: file('conversation.md'), json: JSON.parse(file('conversation.json')) as ExportTurn[] };
}

describe('Discord /export', () => {
  it("gives the asker alone this channel's two exchanges as conversation.md and conversation.json, nothing of another channel", async () => {
    const here = discord.addChannel('export-here');
    const elsewhere = discord.addChannel('export-elsewhere');
    await chat(here.id, ALICE, 'What do herons eat?', 'Herons eat fish.');
    await chat(elsewhere.id, ALICE, 'A secret about owls.', 'Owls keep it.');
    await chat(here.id, BOB, 'And egrets?', 'Egrets eat fish too.');

    const { interaction, outcome } = await run(here.id, ALICE, 'export');
    expect(outcome.ok).toBe(true);
    const { message, markdown, json } = exported(interaction);
    expect(message.ephemeral).toBe(true);
    expect(message.text).toContain('4 turns');
    expect(markdown).toMatch(
      new RegExp(`^# Conversation export: Discord channel ${here.id} \\(server ${discord.guildId}\\)`),
    );
    expect(markdown).toMatch(/Exported \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z; 4 turns\./);
    for (const text of ['What do herons eat?', 'Herons eat fish.', 'And egrets?', 'Egrets eat fish too.'])
      expect(markdown).toContain(text);
    expect(markdown).toContain(`## ${ALICE.id} · `);
    expect(markdown).toContain(`## ${BOB.id} · `);
    expect(markdown).not.toMatch(/owls/i);
    expect(json.map((t) => [t.role, t.author, t.text])).toEqual([
      ['user', ALICE.id, 'What do herons eat?'],
      ['assistant', 'bot', 'Herons eat fish.'],
      ['user', BOB.id, 'And egrets?'],
      ['assistant', 'bot', 'Egrets eat fish too.'],
    ]);
    for (const turn of json) {
      expect(Object.keys(turn).sort()).toEqual(['author', 'files', 'images', 'role', 'text', 'time']);
      expect(new Date(turn.time).toISOString()).toBe(turn.time);
      expect(turn.files).toEqual([]);
      expect(turn.images).toEqual([]);
    }
    // Nobody else saw anything: no message in either channel came from the export.
    expect(interaction.messages.every((m) => m.ephemeral)).toBe(true);
  });

  it('speaks the asker’s language: a Japanese user’s export message and the headings of conversation.md are Japanese, the turns as they were', async () => {
    const channel = discord.addChannel('export-ja');
    await chat(channel.id, HANA, 'What do herons eat?', 'Herons eat fish.');
    const { interaction, outcome } = await run(channel.id, HANA, 'export', {}, 'ja');
    expect(outcome.ok).toBe(true);
    const { message, markdown, json } = exported(interaction);
    expect(message.ephemeral).toBe(true);
    const ja = wordsOf('ja');
    const place = ja.t('commands.export.place.discord_channel', { channel: channel.id, guild: discord.guildId });
    expect(message.text).toBe(ja.t('commands.export.ready', { place, count: 2, partial: 'no', note: '' }));
    expect(message.text).toContain('の履歴：2 件');
    expect(
      markdown.startsWith(`# 会話のエクスポート：Discord チャンネル ${channel.id}（サーバー ${discord.guildId}）`),
    ).toBe(true);
    expect(markdown).toMatch(/エクスポート日時 \d{4}-\d\d-\d\dT[\d:.]+Z、2 件。/);
    expect(markdown).toContain('What do herons eat?');
    expect(json.map((t) => t.text)).toEqual(['What do herons eat?', 'Herons eat fish.']);
  });

  it('leaves the oldest turns out of an export over the upload limit and says so at the top of both files', async () => {
    const channel = discord.addChannel('export-large');
    const long = (n: number) => `Answer ${n}: ${'lorem ipsum '.repeat(150)}`; // about 1.8 KB each
    for (let n = 1; n <= 4; n++) await chat(channel.id, ALICE, `Question ${n}?`, long(n));

    const { interaction, outcome } = await run(channel.id, ALICE, 'export');
    expect(outcome.ok).toBe(true);
    const { message, markdown, json } = exported(interaction);
    const note = json[0]!;
    expect(note.role).toBe('note');
    const leftOut = Number(/The (\d+) oldest turns? (?:was|were) left out/.exec(note.text)?.[1]);
    expect(leftOut).toBeGreaterThan(0);
    const kept = json.slice(1);
    expect(kept.length + leftOut).toBe(8);
    // The newest turns are the ones kept, the last answer among them; the first question is not.
    expect(kept.at(-1)!.text).toBe(long(4));
    expect(JSON.stringify(kept)).not.toContain('Question 1?');
    expect(markdown.split('\n').slice(0, 6).join('\n')).toContain(note.text);
    expect(markdown).not.toContain('Question 1?');
    expect(message.text).toContain(note.text);
  });

  it("through a user's own install where the bot is no member: that user's own conversation there, through the interaction alone", async () => {
    const elsewhere = discord.addGuildWithoutBot();
    await chat(elsewhere.id, ALICE, 'Alice, through her install.', 'Answered to Alice.');
    await chat(elsewhere.id, BOB, 'Bob, through his install.', 'Answered to Bob.');
    const botTokenCalls = () => discord.requests.filter((r) => r.path.includes(`/channels/${elsewhere.id}`)).length;
    const before = botTokenCalls();

    const { interaction, outcome } = await run(elsewhere.id, ALICE, 'export');
    expect(outcome.ok).toBe(true);
    expect(outcome.conversationId).toBe(`discord:user:${ALICE.id}:${elsewhere.id}`);
    const { message, markdown, json } = exported(interaction);
    expect(message.ephemeral).toBe(true);
    expect(json.map((t) => t.text)).toEqual(['Alice, through her install.', 'Answered to Alice.']);
    expect(markdown).toContain('through your own install of the app');
    expect(markdown).not.toContain('Bob');
    expect(botTokenCalls()).toBe(before);
  });

  it('refuses a sixth export in ten minutes, naming the limit, to the asker alone', async () => {
    const channel = discord.addChannel('export-rate');
    await chat(channel.id, CAROL, 'Hello?', 'Hello.');
    for (let n = 0; n < 5; n++) expect((await run(channel.id, CAROL, 'export')).outcome.ok).toBe(true);
    const { interaction, outcome } = await run(channel.id, CAROL, 'export');
    expect(outcome.ok).toBe(false);
    const shown = interaction.messages.filter((m) => !m.deleted);
    expect(shown).toHaveLength(1);
    expect(shown[0]!.ephemeral).toBe(true);
    expect(shown[0]!.attachments).toEqual([]);
    expect(shown[0]!.text).toMatch(/^You can export 5 times in 10 minutes\. Try again in \d+ (min|s)\./);
  });
});
