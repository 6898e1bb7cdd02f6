/**
 * Admins the operator lists (ADMIN_USER_IDS, ADMIN_ROLE_IDS) on Discord, end to end: Discord
 * shows a command registered with `default_member_permissions` (Manage Server) only to members
 * who hold it, so the admin commands (/models, /settings) are registered without it when a list
 * is set: a listed admin without Manage Server sees and runs them (the bot checks who runs them
 * either way). The fake refuses an interaction for a command the member does not see, as
 * Discord's client never sends one.
 */
import { describe, expect, it } from 'vitest';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import type { FakeDiscord } from '../fakes/discord.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

/** A member without Manage Server, listed in ADMIN_USER_IDS. */
const LISTED = { id: '1290000000000000888', username: 'lea' };

let discord: FakeDiscord;
let testBot: TestBot;

useE2E({ discord: {}, bot: { env: { ADMIN_USER_IDS: LISTED.id } } }, (e2e) => {
  ({ discord, bot: testBot } = e2e);
});

/** Registers the commands in the guild as `npm run deploy-commands` does, with or without the admin lists. */
function deploy(admins?: { userIds: string[]; roleIds: string[] }) {
  return deployCommands({
    token: discord.token,
    applicationId: discord.applicationId,
    apiUrl: discord.apiUrl,
    guildId: discord.guildId,
    ...(admins ? { admins } : {}),
  });
}

describe('Discord admins listed by the operator', () => {
  it('a listed admin without Manage Server does not see /models registered without the lists, and sees and runs it once registered with them', async () => {
    const channel = discord.addChannel('listed-admin');
    await deploy();
    expect(() => discord.dispatchInteraction({ command: 'models', user: LISTED, channelId: channel.id })).toThrow(
      /\/models is not shown to lea/,
    );

    await deploy({ userIds: [LISTED.id], roleIds: [] });
    const registered = discord.guildCommands(discord.guildId).find((c) => c.name === 'models')!;
    expect(registered.default_member_permissions).toBeNull();
    const done = testBot.outcomes((o) => o.conversationId === `discord:${discord.guildId}:${channel.id}`);
    const interaction = discord.dispatchInteraction({ command: 'models', user: LISTED, channelId: channel.id });
    const [outcome] = await done;
    expect(outcome).toMatchObject({ command: 'models', ok: true });
    const [list] = interaction.messages.filter((m) => m.ephemeral && !m.deleted);
    expect(list!.embeds[0]!.title).toMatch(/^Models: \d+ text, \d+ image$/);
  });
});
