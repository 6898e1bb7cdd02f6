/**
 * Who is who: `api.test` (no token needed), `auth.test` (the bot's identity in the token's
 * workspace), `users.info` (one
 * user; tier 4, about 100 a minute per workspace) and `users.list` (the workspace's users, by
 * pages: `limit` up to 1000, default 100 here; `cursor`; tier 2, about 20 a minute), both with
 * the user object's admin fields (`is_admin`, `is_owner`, `is_primary_owner`), names, and with
 * `include_locale` the user's `locale` (e.g. `ja-JP`)
 * (docs.slack.dev users.info, users.list; limits.ts applies the windows).
 */
import type { FakeSlackUser } from './types.ts';
import type { MethodTable } from './web-api.ts';
import { type Json, paginate, required, SlackApiError } from './wire.ts';
import type { Workspace } from './workspace.ts';

export function identityMethods(ws: Workspace): MethodTable {
  return {
    'api.test': (p) => ({ args: p }),
    // The token's own workspace (web-api.ts resolved it: `callerTeam`; undefined for an org-wide token).
    'auth.test': () => {
      const team = ws.callerTeam;
      const installation = team && team !== ws.teamId ? ws.oauth.installations.get(`team:${team}`) : undefined;
      return {
        url: `https://${team === ws.teamId ? ws.teamDomain : (team ?? 'enterprise').toLowerCase()}.slack.com/`,
        team: team === ws.teamId ? 'Fake Workspace' : (installation?.teamName ?? team ?? null),
        user: 'genbot',
        team_id: team ?? null,
        user_id: ws.botUserId,
        bot_id: ws.botId,
        is_enterprise_install: team === undefined,
      };
    },
    'users.info': (p) => {
      ws.limits.takeWindowSlot('usersInfo');
      const user = ws.users.get(required(p, 'user', 'user_not_found'));
      if (!user || !ws.userVisible(user)) throw new SlackApiError('user_not_found');
      return { user: userObject(ws, user, p.include_locale) };
    },
    'users.list': (p) => {
      ws.limits.takeWindowSlot('usersList');
      const page = paginate(
        [...ws.users.values()].filter((u) => ws.userVisible(u)),
        p,
        100,
        1000,
      );
      return {
        members: page.items.map((user) => userObject(ws, user, p.include_locale)),
        cache_ts: Math.floor(ws.now() / 1000),
        response_metadata: { next_cursor: page.nextCursor },
      };
    },
  };
}

/** A user as users.info and users.list describe one (the fields the fake knows). */
function userObject(ws: Workspace, user: FakeSlackUser, includeLocale: unknown): Json {
  return {
    // `locale` only when asked (`include_locale`), as Slack does; Slack's default is en-US.
    ...(includeLocale === true || includeLocale === 'true' || includeLocale === '1'
      ? { locale: user.locale ?? 'en-US' }
      : {}),
    id: user.id,
    team_id: ws.callerTeam ?? user.team ?? ws.teamId,
    name: user.name,
    real_name: user.name,
    deleted: false,
    // Admin rights are a workspace's: the calling token's.
    is_admin: Array.isArray(user.isAdmin) ? user.isAdmin.includes(ws.callerTeam ?? ws.teamId) : Boolean(user.isAdmin),
    is_owner: false,
    is_primary_owner: false,
    is_bot: false,
    profile: { display_name: user.name, real_name: user.name },
  };
}
