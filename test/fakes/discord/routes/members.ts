/**
 * A guild's members: `GET /guilds/{guild.id}/members/{user.id}` (resources/guild.mdx, "Get Guild
 * Member"), which discord.js's `guild.members.fetch(id)` sends for a member it has not cached (a
 * message read through REST carries no `member`). Every user the fake knows is a member of
 * its guild (the bot with its managed role); an unknown user is 404 code 10007
 * Unknown Member, a guild the bot is not a member of 403 code 50001 Missing Access, another guild
 * 10004 Unknown Guild.
 */
import type { Ctx } from '../context.ts';
import { discordError } from '../errors.ts';
import { memberJson, userJson } from '../wire.ts';
import type { AreaRoutes } from './index.ts';

export const memberRoutes: AreaRoutes = (ctx: Ctx, rq) => {
  if (!rq.is('guilds', '*', 'members', '*')) return undefined;
  rq.allow('GET');
  rq.requireBot();
  const { state } = ctx;
  const [, guildId, , userId] = rq.p;
  if (state.absentGuilds.has(guildId!)) throw discordError(403, 50001, 'Missing Access');
  if (guildId !== state.guildId) throw discordError(404, 10004, 'Unknown Guild');
  const user = state.users.get(userId!);
  if (!user) throw discordError(404, 10007, 'Unknown Member');
  return { status: 200, body: { ...memberJson(state, user), user: userJson(user) } };
};
