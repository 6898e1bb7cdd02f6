/**
 * Application commands: `GET`/`PUT /applications/:app/commands` and the same in a guild.
 * A PUT is a bulk overwrite, validated like Discord does (command-validation.ts); a command
 * keeps its id across overwrites while its name stays the same.
 */
import { checkCommand, MAX_COMMANDS_BY_TYPE } from '../command-validation.ts';
import type { Ctx } from '../context.ts';
import { addError, discordError, type ErrorTree, formError, hasErrors } from '../errors.ts';
import type { Reply } from '../http.ts';
import type { FakeCommand, Json } from '../types.ts';
import { isObject, snowflake } from '../util.ts';
import type { AreaRoutes } from './index.ts';

export const commandRoutes: AreaRoutes = (ctx, rq) => {
  const { p } = rq;
  if (
    !(
      p[0] === 'applications' &&
      (rq.is('applications', '*', 'commands') || rq.is('applications', '*', 'guilds', '*', 'commands'))
    )
  )
    return undefined;
  rq.allow('GET', 'PUT');
  rq.requireBot();
  const { state } = ctx;
  if (p[1] !== state.applicationId) throw discordError(403, 50001, 'Missing Access');
  const guildId = p.length === 5 ? p[3]! : undefined;
  if (guildId !== undefined && guildId !== state.guildId) throw discordError(404, 10004, 'Unknown Guild');
  if (rq.method === 'GET') return { status: 200, body: guildId ? state.guildCommands(guildId) : state.commands };
  return rq.body().then((body) => putCommands(ctx, body.json, guildId));
};

/** A bulk overwrite of the global (or a guild's) commands. @throws HttpError 400 (50035) naming every offending field. */
function putCommands(ctx: Ctx, list: unknown, guildId: string | undefined): Reply {
  const { state } = ctx;
  if (!Array.isArray(list)) throw formError({ _errors: [{ code: 'BASE_TYPE_LIST', message: 'Must be a list.' }] });
  const errors: ErrorTree = {};
  if (list.length > 130) addError(errors, [], 'BASE_TYPE_MAX_LENGTH', 'Must be 130 or fewer in length.');
  list.forEach((command, i) => checkCommand(command, i, errors));
  for (const [type, max] of Object.entries(MAX_COMMANDS_BY_TYPE)) {
    const count = list.filter((c) => isObject(c) && (c.type ?? 1) === Number(type)).length;
    if (count > max)
      addError(
        errors,
        [],
        'APPLICATION_COMMANDS_TOO_MANY',
        `Maximum number of application commands of type ${type} reached (${max})`,
      );
  }
  const seen = new Set<string>();
  list.forEach((command, i) => {
    if (!isObject(command)) return;
    const key = `${String(command.type ?? 1)}:${String(command.name)}`;
    if (seen.has(key))
      addError(errors, [i, 'name'], 'APPLICATION_COMMANDS_DUPLICATE_NAME', 'Application command names must be unique');
    seen.add(key);
  });
  if (hasErrors(errors)) throw formError(errors);
  const registered = (list as Json[]).map((command): FakeCommand => {
    const name = command.name as string;
    const type = (command.type as number | undefined) ?? 1;
    return {
      id: state.commandIdFor(name),
      application_id: state.applicationId,
      version: snowflake(),
      default_member_permissions: (command.default_member_permissions as string | null | undefined) ?? null,
      type,
      name,
      // Discord answers with the localizations as registered (null when none were sent).
      name_localizations: (command.name_localizations as Record<string, string> | null | undefined) ?? null,
      description: (command.description as string | undefined) ?? '',
      description_localizations:
        (command.description_localizations as Record<string, string> | null | undefined) ?? null,
      ...(guildId ? { guild_id: guildId } : {}),
      dm_permission: true,
      contexts: (command.contexts as number[] | undefined) ?? null,
      integration_types: (command.integration_types as number[] | undefined) ?? [0],
      nsfw: command.nsfw === true,
      ...(Array.isArray(command.options) ? { options: command.options } : {}),
    };
  });
  if (guildId) state.guildCommandLists.set(guildId, registered);
  else state.commands = registered;
  return { status: 200, body: registered };
}
