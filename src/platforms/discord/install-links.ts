/**
 * The two links that install the application (Discord's "Developing a User-Installable App"):
 * a server's (`integration_type=0`, scopes `bot` and `applications.commands`, with the bot's
 * permissions) and a user's (`integration_type=1`, `applications.commands` alone). The
 * Developer Portal's *Installation → Installation Contexts* must allow each kind.
 */
import { PermissionFlagsBits } from 'discord.js';

/** Discord's authorization page (the Developer Portal's own install links use it). */
const AUTHORIZE_URL = 'https://discord.com/oauth2/authorize';

/**
 * The permissions the bot asks for in a server (a bitfield, 309237762048): Send Messages, Send
 * Messages in Threads and Create Public Threads (answers, `/chat thread:true`), Read Message
 * History (reply chains, threads, catch-up), Attach Files and Embed Links (files, images).
 */
export const DISCORD_BOT_PERMISSIONS: bigint =
  PermissionFlagsBits.SendMessages |
  PermissionFlagsBits.SendMessagesInThreads |
  PermissionFlagsBits.CreatePublicThreads |
  PermissionFlagsBits.ReadMessageHistory |
  PermissionFlagsBits.AttachFiles |
  PermissionFlagsBits.EmbedLinks;

/**
 * The install links of an application.
 * @param applicationId the application's id (a snowflake, DISCORD_APPLICATION_ID).
 * @returns `server`: the guild install (`oauth2/authorize?client_id=…&integration_type=0&scope=bot+applications.commands&permissions=…`);
 *   `user`: the user install (`…&integration_type=1&scope=applications.commands`).
 */
export function discordInstallLinks(applicationId: string): { server: string; user: string } {
  const link = (params: Record<string, string>) =>
    `${AUTHORIZE_URL}?${new URLSearchParams({ client_id: applicationId, ...params })}`;
  return {
    server: link({
      integration_type: '0',
      scope: 'bot applications.commands',
      permissions: String(DISCORD_BOT_PERMISSIONS),
    }),
    user: link({ integration_type: '1', scope: 'applications.commands' }),
  };
}
