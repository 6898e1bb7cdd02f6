/**
 * `npm run deploy-commands`: registers every command under commands/ with Discord, slash
 * commands and message actions (message commands, type 3) alike
 * (`PUT /applications/:id/commands`, or the guild route when DISCORD_GUILD_ID is set, which
 * applies at once and suits development). Needs DISCORD_TOKEN and DISCORD_APPLICATION_ID
 * (and DISCORD_API_URL when going through a proxy); reads `.env` like `npm start`. With
 * ADMIN_USER_IDS or ADMIN_ROLE_IDS set, the admin commands are registered without
 * `default_member_permissions`, so that the admins listed there see them (commands.ts).
 * Commands anyone may run are registered for both installation kinds, a server's and a user's
 * (commands.ts `installationOf`); Discord reads that only for global commands, so a user
 * install sees the commands registered without DISCORD_GUILD_ID.
 * Exit codes: 0 registered, 2 bad configuration, 1 Discord refused.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REST, Routes } from 'discord.js';
import { z } from 'zod';
import { commands, messageActions } from '../../../commands/index.ts';
import { opsEnv } from '../../config-env.ts';
import type { Command } from '../../core/command.ts';
import type { MessageAction } from '../../core/message-action.ts';
import { type ListedAdmins, toDiscordCommand, toDiscordMessageCommand } from './commands.ts';

/** What `npm run deploy-commands` reads: its own schema (DISCORD_GUILD_ID is read by it alone). */
export const deployEnv = z.object({
  DISCORD_TOKEN: z.string({ error: 'is required' }).min(1, 'is required'),
  DISCORD_APPLICATION_ID: z
    .string({ error: 'is required' })
    .regex(/^\d{15,22}$/, 'must be a Discord application id (a snowflake)'),
  DISCORD_API_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url().optional()),
  DISCORD_GUILD_ID: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .regex(/^\d{15,22}$/)
      .optional(),
  ),
  ADMIN_USER_IDS: opsEnv.shape.ADMIN_USER_IDS,
  ADMIN_ROLE_IDS: opsEnv.shape.ADMIN_ROLE_IDS,
});

/** Names of the environment variables `npm run deploy-commands` reads. */
export const DEPLOY_ENV_VARIABLES: readonly string[] = Object.keys(deployEnv.shape);

/**
 * Registers `list` and `actions` for the application, replacing what was registered before
 * (Discord's "Bulk Overwrite Global / Guild Application Commands", which takes slash and message
 * commands in one list).
 * @param options.admins the admins the operator lists (ADMIN_USER_IDS, ADMIN_ROLE_IDS): when
 *   it names anyone, the admin commands are registered without `default_member_permissions`.
 * @returns the registered commands as Discord answered them (with their ids).
 * @throws DiscordAPIError when Discord refuses (bad token, invalid command JSON).
 */
export async function deployCommands(
  options: {
    token: string;
    applicationId: string;
    apiUrl?: string | undefined;
    guildId?: string | undefined;
    admins?: ListedAdmins | undefined;
  },
  list: readonly Command[] = commands,
  actions: readonly MessageAction[] = messageActions,
): Promise<Array<{ id: string; name: string; type: number }>> {
  const rest = new REST(options.apiUrl ? { api: options.apiUrl } : {}).setToken(options.token);
  const route = options.guildId
    ? Routes.applicationGuildCommands(options.applicationId, options.guildId)
    : Routes.applicationCommands(options.applicationId);
  const body = [
    ...list.map((command) => toDiscordCommand(command, options.admins)),
    ...actions.map(toDiscordMessageCommand),
  ];
  return (await rest.put(route, { body })) as Array<{ id: string; name: string; type: number }>;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const envFile = join(process.env.INIT_CWD ?? process.cwd(), '.env');
  if (existsSync(envFile)) process.loadEnvFile(envFile);
  const parsed = deployEnv.safeParse(process.env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  - ${String(i.path[0])} ${i.message}`);
    process.stderr.write(`Invalid configuration:\n${problems.join('\n')}\n`);
    process.exit(2);
  }
  const env = parsed.data;
  try {
    const registered = await deployCommands({
      token: env.DISCORD_TOKEN,
      applicationId: env.DISCORD_APPLICATION_ID,
      apiUrl: env.DISCORD_API_URL,
      guildId: env.DISCORD_GUILD_ID,
      admins: { userIds: env.ADMIN_USER_IDS, roleIds: env.ADMIN_ROLE_IDS },
    });
    process.stdout.write(
      `Registered ${registered.length} commands${env.DISCORD_GUILD_ID ? ` in guild ${env.DISCORD_GUILD_ID}` : ' globally'}: ${registered.map((c) => (c.type === 3 ? `“${c.name}” (message menu)` : `/${c.name}`)).join(', ')}\n`,
    );
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error))
      .split(env.DISCORD_TOKEN)
      .join('[redacted]');
    process.stderr.write(`Discord refused the commands: ${message}\n`);
    process.exit(1);
  }
}
