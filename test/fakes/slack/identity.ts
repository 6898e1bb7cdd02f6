/**
 * Who is who: `api.test` (no token needed), `auth.test` (the bot's identity) and `users.info`.
 */
import type { MethodTable } from './web-api.ts';
import { required, SlackApiError } from './wire.ts';
import type { Workspace } from './workspace.ts';

export function identityMethods(ws: Workspace): MethodTable {
  return {
    'api.test': (p) => ({ args: p }),
    'auth.test': () => ({
      url: `https://${ws.teamDomain}.slack.com/`,
      team: 'Fake Workspace',
      user: 'genbot',
      team_id: ws.teamId,
      user_id: ws.botUserId,
      bot_id: ws.botId,
      is_enterprise_install: false,
    }),
    'users.info': (p) => {
      const user = ws.users.get(required(p, 'user', 'user_not_found'));
      if (!user) throw new SlackApiError('user_not_found');
      return {
        user: {
          id: user.id,
          team_id: ws.teamId,
          name: user.name,
          real_name: user.name,
          deleted: false,
          is_admin: Boolean(user.isAdmin),
          is_owner: false,
          is_bot: false,
          profile: { display_name: user.name, real_name: user.name },
        },
      };
    },
  };
}
