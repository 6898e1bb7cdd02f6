/**
 * End-to-end on Discord (issue 41, item 5): `/forget scope:me` erases exactly the asker's turns
 * and the bot's answers to them, in every conversation of the server, and leaves another user's
 * exchange in the channel they shared; told to the asker alone, with the counts. The bot leaving
 * the server (GUILD_DELETE without `unavailable`) purges every key of that guild and leaves the
 * DMs' and another guild's; an outage's GUILD_DELETE (`unavailable: true`) purges nothing. The
 * whole bot (startTestBot), real discord.js, against the fakes; the store read directly.
 */
import { describe, expect, it, vi } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { storeKeys } from '../../src/core/keys.ts';
import type { StoredMessage } from '../../src/core/state/history.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import type { FakeDiscord, FakeInteraction } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const ALICE = { id: '1290000000000000501', username: 'alice' };
const BOB = { id: '1290000000000000502', username: 'bob' };

let service: FakeService;
let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: {}, bot: {}, timeoutMs: 30_000 }, async (e2e) => {
  ({ service, discord, bot: testBot } = e2e);
  await deployCommands({ token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl });
});

/** Every key of the store now. */
async function allKeys(store: StateStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const batch of store.scanKeys('')) keys.push(...batch);
  return [...new Set(keys)].sort();
}

/** A conversation's turns as the store holds them: `role user: text`. */
async function stored(conversationId: string): Promise<string[] | undefined> {
  const value = (await testBot.bot.core.store.keyv.get(storeKeys.history(conversationId))) as
    | { messages: StoredMessage[] }
    | undefined;
  return value?.messages.map((m) => `${m.role} ${m.userId ?? '-'}: ${m.content}`);
}

/** Runs a slash command by `user` in a channel and waits for its outcome. */
async function run(
  channelId: string,
  user: typeof ALICE,
  command: string,
  options: Record<string, string>,
): Promise<{ interaction: FakeInteraction; outcome: CommandOutcome }> {
  const done = testBot.outcomes((o) => o.conversationId.endsWith(`:${channelId}`) && o.command === command, 1, 30_000);
  const interaction = discord.dispatchInteraction({ channelId, command, options, user });
  return { interaction, outcome: (await done)[0]! };
}

async function chat(channelId: string, user: typeof ALICE, prompt: string, answer: string): Promise<void> {
  service.enqueue('chat', { stream: { text: answer } });
  expect((await run(channelId, user, 'chat', { prompt })).outcome.ok).toBe(true);
}

describe('Discord /forget me', () => {
  it("erases the asker's turns and the answers to them in every conversation of the server, leaves the other user's, and says how many, to the asker alone", async () => {
    const shared = discord.addChannel('shared');
    const own = discord.addChannel('alice-only');
    const sharedId = `discord:${discord.guildId}:${shared.id}`;
    const ownId = `discord:${discord.guildId}:${own.id}`;
    await chat(shared.id, ALICE, 'Alice asks about herons.', 'Herons wade.');
    await chat(shared.id, BOB, 'Bob asks about owls.', 'Owls hoot.');
    await chat(shared.id, ALICE, 'Alice again.', 'Again, herons.');
    await chat(own.id, ALICE, 'Alice alone.', 'Alone, noted.');
    expect(await stored(sharedId)).toHaveLength(6);

    const { interaction, outcome } = await run(shared.id, ALICE, 'forget', { scope: 'me' });
    expect(outcome.ok).toBe(true);
    const shown = interaction.messages.filter((m) => !m.deleted);
    expect(shown).toHaveLength(1);
    expect(shown[0]!.ephemeral).toBe(true);
    expect(shown[0]!.content).toBe(
      '🧹 Forgot 3 messages of yours and 3 answers to them in 2 conversations of this server, and 0 votes and button states. Your usage, quota and spend counters stay until they reset.',
    );
    expect(await stored(sharedId)).toEqual([`user ${BOB.id}: Bob asks about owls.`, 'assistant -: Owls hoot.']);
    expect(await stored(ownId)).toBeUndefined();
    expect(await testBot.bot.core.store.keyv.get(storeKeys.userIndex(`discord:${discord.guildId}`, ALICE.id))).toBe(
      undefined,
    );

    // Asked again: nothing left.
    const again = await run(own.id, ALICE, 'forget', { scope: 'me' });
    expect(again.interaction.messages.filter((m) => !m.deleted)[0]!.content).toBe(
      '🧹 Nothing of yours was stored in this server: nothing to forget.',
    );
  });
});

describe('Discord GUILD_DELETE', () => {
  it("an outage (unavailable) purges nothing; the bot removed from the server purges that guild's keys and leaves the DMs' and another guild's", async () => {
    const store = testBot.bot.core.store;
    const channel = discord.addChannel('leaving');
    await chat(channel.id, BOB, 'Remember the word kestrel.', 'Kestrel, noted.');
    const settings = testBot.outcomes((o) => o.conversationId.endsWith(`:${channel.id}`) && o.command === 'settings');
    discord.dispatchInteraction({
      channelId: channel.id,
      command: 'settings',
      options: { system_prompt: 'Be brief.' },
      admin: true,
    });
    expect((await settings)[0]!.ok).toBe(true);
    // A mention: its answer's link (by channel and message id: no guild in the key) goes with the guild.
    service.enqueue('chat', { stream: { text: 'A mention answer.' } });
    const mentioned = testBot.outcomes((o) => o.command === 'mention' && o.conversationId.endsWith(`:${channel.id}`));
    discord.postUserMessage({ channelId: channel.id, content: `<@${discord.botUser.id}> Hello`, author: BOB });
    expect((await mentioned)[0]!.ok).toBe(true);
    const links = (keys: string[]) =>
      keys.filter((k) => k.startsWith(storeKeys.mentionAnswer(`discord:${channel.id}:`)));
    const dm = discord.openDm({ username: 'dm-user' });
    service.enqueue('chat', { stream: { text: 'A DM answer.' } });
    const dmDone = testBot.outcomes((o) => o.conversationId === `discord:dm:${dm.id}`, 1, 30_000);
    discord.postUserMessage({ channelId: dm.id, content: 'Hello in a DM' });
    expect((await dmDone)[0]!.ok).toBe(true);
    // Another guild's data (this fake serves one guild): written as the bot writes it.
    const otherGuild = 'discord:1290000000000009999:1290000000000009998';
    await testBot.bot.core.history.append(otherGuild, {
      role: 'user',
      content: 'elsewhere',
      at: Date.now(),
      userId: BOB.id,
    });
    const ofGuild = (keys: string[]) =>
      keys.filter((k) => k.includes(`discord:${discord.guildId}`) && !/^(quota|usage):/.test(k));
    const before = await allKeys(store);
    expect(links(before)).toHaveLength(1);
    expect(ofGuild(before)).toEqual(
      expect.arrayContaining([
        storeKeys.history(`discord:${discord.guildId}:${channel.id}`),
        storeKeys.settings(`discord:${discord.guildId}:${channel.id}`),
        storeKeys.userIndex(`discord:${discord.guildId}`, BOB.id),
      ]),
    );

    discord.guildOutage();
    await vi.waitFor(() => expect(testBot.logs.some((l) => l.msg?.startsWith('guild unavailable'))).toBe(true), {
      timeout: 10_000,
    });
    expect(await allKeys(store)).toEqual(before);
    discord.guildRestored();

    discord.removeBotFromGuild();
    await vi.waitFor(() => expect(testBot.logs.some((l) => l.msg?.startsWith('server data purged'))).toBe(true), {
      timeout: 20_000,
      interval: 50,
    });
    const after = await allKeys(store);
    expect(ofGuild(after)).toEqual([]);
    expect(links(after)).toEqual([]);
    // The DM's and the other guild's data stay, and usage counters (an exit lifts no quota).
    expect(after).toContain(storeKeys.history(`discord:dm:${dm.id}`));
    expect(after).toContain(storeKeys.history(otherGuild));
    expect(after.filter((k) => /^(quota|usage):/.test(k))).toEqual(before.filter((k) => /^(quota|usage):/.test(k)));
  });
});
