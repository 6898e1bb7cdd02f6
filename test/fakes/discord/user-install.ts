/**
 * Discord's user install, as the fake models it: guilds the bot is not a member of
 * ({@link FakeDiscord.addGuildWithoutBot}), where a user's own install of the app still answers
 * them ("Developing a User-Installable App"; interactions/receiving-and-responding):
 *
 * - An interaction there names the user install only: `authorizing_integration_owners: { "1":
 *   <user id> }` (for a press of a button on that install's message, or a modal's submit, the
 *   user who installed it), `context: 0`; only a global command registered with
 *   `integration_types` holding 1 and `contexts` holding 0 (or none) is shown there (Discord reads
 *   both for global commands only).
 * - Every bot-token route of the place is refused, 403 code 50001 Missing Access (channels, their
 *   messages, threads, the guild's members), and no gateway event of the guild reaches the bot;
 *   the interaction's callback and webhook routes serve as anywhere.
 * - At most {@link USER_INSTALL_FOLLOW_UPS} follow-ups an interaction ("Create Followup Message":
 *   "Apps are limited to 5 followup messages per interaction if it was initiated from a
 *   user-installed app and isn't installed in the server"). The 6th is refused with 400; Discord
 *   documents the limit, not its error, so the code here (0, a general error) is the fake's.
 * - `app_permissions` there: Attach Files, Embed Links and Mention Everyone, what Discord
 *   documents for DMs and group DMs; for a server without the bot it is assumed the same.
 */
import { P } from './constants.ts';
import { discordError } from './errors.ts';
import type { FakeChannel, FakeInteraction } from './model.ts';
import type { FakeState } from './state.ts';
import type { FakeCommand, Json } from './types.ts';

/** Follow-ups Discord allows an interaction only a user install authorized. */
export const USER_INSTALL_FOLLOW_UPS = 5;

/** `app_permissions` of an interaction where the bot is not a member (see the file's comment). */
export const USER_INSTALL_APP_PERMISSIONS = P.AttachFiles | P.EmbedLinks | P.MentionEveryone;

/** Whether the bot is not a member of the channel's guild (a DM is no guild's). */
export function botAbsent(state: FakeState, channel: Pick<FakeChannel, 'guildId'>): boolean {
  return channel.guildId !== undefined && state.absentGuilds.has(channel.guildId);
}

/** @throws HttpError 403 (50001 Missing Access) for a bot-token call in a guild the bot is not a member of. */
export function refuseWhereAbsent(state: FakeState, channel: Pick<FakeChannel, 'guildId'>): void {
  if (botAbsent(state, channel)) throw discordError(403, 50001, 'Missing Access');
}

/**
 * The installation fields of an interaction's envelope in `channel`: a user install's where the
 * bot is not a member (`installer`: whose install; the invoker for a command), else the guild's.
 */
export function installationFields(
  state: FakeState,
  channel: FakeChannel,
  installer: string,
): Pick<Json, 'authorizing_integration_owners' | 'app_permissions' | 'context'> {
  if (!botAbsent(state, channel))
    return {
      authorizing_integration_owners: { '0': channel.guildId },
      app_permissions: String(state.botPermissions),
      context: 0,
    };
  return {
    authorizing_integration_owners: { '1': installer },
    app_permissions: String(USER_INSTALL_APP_PERMISSIONS),
    context: 0,
  };
}

/** The user whose install an earlier interaction ran through, where only a user install authorized it. */
export function installerOf(interaction: FakeInteraction | undefined): string | undefined {
  const owners = interaction?.payload.authorizing_integration_owners as Record<string, string> | undefined;
  return owners && owners['0'] === undefined ? owners['1'] : undefined;
}

/**
 * @throws Error when a command is used where the bot is not a member without being registered
 *   for it (a global command whose `integration_types` hold 1 and `contexts` hold 0): Discord's
 *   client would not show it there.
 */
export function checkUserInstallable(
  state: FakeState,
  channel: FakeChannel,
  name: string,
  registered: FakeCommand | undefined,
): void {
  if (!botAbsent(state, channel)) return;
  const types = registered?.integration_types;
  const contexts = registered?.contexts;
  const installable =
    registered !== undefined &&
    registered.guild_id === undefined &&
    Array.isArray(types) &&
    types.includes(1) &&
    (contexts === null || contexts === undefined || (Array.isArray(contexts) && contexts.includes(0)));
  if (!installable)
    throw new Error(
      `FakeDiscord: "${name}" is not registered for user installs in servers, so Discord would not show it`,
    );
}

/** @throws HttpError 400 for a follow-up past {@link USER_INSTALL_FOLLOW_UPS} of an interaction only a user install authorized. */
export function checkFollowUp(interaction: FakeInteraction): void {
  if (installerOf(interaction) === undefined) return;
  if (interaction.followUps.length >= USER_INSTALL_FOLLOW_UPS)
    throw discordError(400, 0, `Maximum number of followup messages (${USER_INSTALL_FOLLOW_UPS}) reached`);
}
