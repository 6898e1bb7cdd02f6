/**
 * `npm run deploy-commands`, run as an operator runs it (a child process with environment
 * variables), against FakeDiscord: exit codes 0 / 1 / 2 and what it prints.
 */

import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commands, messageActions } from '../../commands/index.ts';
import { wordsOf } from '../../src/core/i18n/words.ts';
import type { FakeDiscord } from '../fakes/discord.ts';
import { useE2E } from '../helpers/e2e.ts';

const root = resolve(import.meta.dirname, '../..');
let discord: FakeDiscord;

useE2E({ service: false, discord: {} }, (e2e) => {
  discord = e2e.discord;
});

/** Runs the deploy script from an empty folder (so no developer .env is read). */
function deploy(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const cwd = mkdtempSync(join(tmpdir(), 'genbot-deploy-'));
  return new Promise((done) => {
    execFile(
      'npm',
      ['--prefix', root, 'run', '--silent', 'deploy-commands'],
      { cwd, env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        done({ code: error ? Number((error as NodeJS.ErrnoException).code) : 0, stdout, stderr }),
    );
  });
}

describe('npm run deploy-commands', () => {
  it('registers every command and message action in the guild given by DISCORD_GUILD_ID, says so, and exits 0', async () => {
    const result = await deploy({
      DISCORD_TOKEN: discord.token,
      DISCORD_APPLICATION_ID: discord.applicationId,
      DISCORD_API_URL: discord.apiUrl,
      DISCORD_GUILD_ID: discord.guildId,
    });
    expect(result.code).toBe(0);
    const listed = [...commands.map((c) => `/${c.name}`), ...messageActions.map((a) => `“${a.name}” (message menu)`)];
    expect(result.stdout).toContain(
      `Registered ${commands.length + messageActions.length} commands in guild ${discord.guildId}: ${listed.join(', ')}`,
    );
    const registered = discord.guildCommands(discord.guildId);
    expect(registered.filter((c) => c.type === 1).map((c) => c.name)).toEqual(commands.map((c) => c.name));
    // The message actions, derived from the same definitions: message commands (type 3), no description or options.
    expect(registered.filter((c) => c.type === 3)).toEqual(
      messageActions.map((a) => expect.objectContaining({ name: a.name, type: 3, description: '' })),
    );
    expect(registered.filter((c) => c.type === 3).every((c) => c.options === undefined)).toBe(true);
  });

  it('registers every command, option, choice and message action with their names and descriptions in every shipped language, which the fake Discord accepts under its rules', async () => {
    const result = await deploy({
      DISCORD_TOKEN: discord.token,
      DISCORD_APPLICATION_ID: discord.applicationId,
      DISCORD_API_URL: discord.apiUrl,
      DISCORD_GUILD_ID: discord.guildId,
    });
    expect(result.code).toBe(0);
    const codes = ['de', 'es-419', 'es-ES', 'fr', 'ja', 'pt-BR'];
    const registered = discord.guildCommands(discord.guildId);
    for (const command of registered.filter((c) => c.type === 1)) {
      expect(Object.keys(command.name_localizations ?? {}).sort(), command.name).toEqual(codes);
      expect(Object.keys(command.description_localizations ?? {}).sort(), command.name).toEqual(codes);
      for (const option of (command.options ?? []) as Array<Record<string, unknown>>)
        expect(Object.keys((option.description_localizations as object | undefined) ?? {}).sort()).toEqual(codes);
    }
    const imagine = registered.find((c) => c.name === 'imagine')!;
    expect(imagine.description_localizations).toMatchObject({
      de: wordsOf('de').t('commands.command.imagine.description'),
      ja: wordsOf('ja').t('commands.command.imagine.description'),
      'es-419': wordsOf('es').t('commands.command.imagine.description'),
    });
    const style = (imagine.options as Array<{ name: string; choices?: Array<Record<string, unknown>> }>).find(
      (o) => o.name === 'style',
    )!;
    expect(style.choices![0]).toMatchObject({ name: 'vivid', value: 'vivid', name_localizations: { de: 'lebhaft' } });
    expect(registered.find((c) => c.type === 3 && c.name === 'Summarize')?.name_localizations).toMatchObject({
      fr: 'Résumer',
      ja: '要約',
    });
  });

  it('with ADMIN_USER_IDS set, registers /models and /settings without default_member_permissions, so that the listed admins see them', async () => {
    const env = {
      DISCORD_TOKEN: discord.token,
      DISCORD_APPLICATION_ID: discord.applicationId,
      DISCORD_API_URL: discord.apiUrl,
      DISCORD_GUILD_ID: discord.guildId,
    };
    const permissionsOf = () =>
      Object.fromEntries(discord.guildCommands(discord.guildId).map((c) => [c.name, c.default_member_permissions]));
    expect((await deploy(env)).code).toBe(0);
    // Without the lists, the admin commands are hidden from members without Manage Server (0x20).
    expect(permissionsOf()).toMatchObject({ models: '32', settings: '32', chat: null });
    const result = await deploy({ ...env, ADMIN_USER_IDS: '1290000000000000777' });
    expect(result.code).toBe(0);
    expect(permissionsOf()).toMatchObject({ models: null, settings: null, chat: null });
    expect(Object.values(permissionsOf()).every((p) => p === null)).toBe(true);
  });

  it("exits 1 with Discord's refusal, without the token, when the token is wrong", async () => {
    const token = 'MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.wrong-token.for-this-test-only';
    const result = await deploy({
      DISCORD_TOKEN: token,
      DISCORD_APPLICATION_ID: discord.applicationId,
      DISCORD_API_URL: discord.apiUrl,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Discord refused the commands: /);
    expect(result.stdout + result.stderr).not.toContain(token);
  });

  it('exits 2 naming the missing variables when nothing is configured', async () => {
    const result = await deploy({});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('DISCORD_TOKEN is required');
    expect(result.stderr).toContain('DISCORD_APPLICATION_ID is required');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
