/**
 * Identity and gateway discovery (`/gateway`, `/gateway/bot`, `/users/@me`,
 * `/applications/@me`), and DMs: `POST /users/@me/channels` `{ recipient_id }` (what
 * discord.js `createDM` sends) answers the DM channel with that user, opening it if needed
 * (resources/user.mdx, "Create DM"); an unknown user is 404 code 10013, the bot itself 50007.
 */
import type { Ctx } from '../context.ts';
import { discordError, fieldError } from '../errors.ts';
import { openDm } from '../user-actions.ts';
import { isObject } from '../util.ts';
import { channelJson, userJson } from '../wire.ts';
import type { AreaRoutes } from './index.ts';

export const identityRoutes: AreaRoutes = (ctx: Ctx, rq) => {
  const { state } = ctx;
  if (rq.is('gateway')) {
    rq.allow('GET');
    return { status: 200, body: { url: state.gatewayUrl } };
  }
  if (rq.is('gateway', 'bot')) {
    rq.allow('GET');
    rq.requireBot();
    return {
      status: 200,
      body: {
        url: state.gatewayUrl,
        shards: 1,
        session_start_limit: {
          total: 1000,
          remaining: state.options.sessionStartRemaining,
          reset_after: 86_400_000,
          max_concurrency: 1,
        },
      },
    };
  }
  if (rq.is('users', '@me', 'channels')) {
    rq.allow('POST');
    rq.requireBot();
    return rq.body().then((body) => {
      const id = isObject(body.json) ? body.json.recipient_id : undefined;
      if (typeof id !== 'string' && typeof id !== 'number')
        throw fieldError(['recipient_id'], 'BASE_TYPE_REQUIRED', 'This field is required');
      if (String(id) === state.botUser.id) throw discordError(400, 50007, 'Cannot send messages to this user');
      const user = state.users.get(String(id));
      if (!user) throw discordError(404, 10013, 'Unknown User');
      return { status: 200, body: channelJson(state, openDm(ctx, user)) };
    });
  }
  if (rq.is('users', '@me')) {
    rq.allow('GET');
    rq.requireBot();
    return {
      status: 200,
      body: { ...userJson(state.botUser), verified: true, mfa_enabled: false, flags: 0, locale: 'en-US' },
    };
  }
  if (rq.is('oauth2', 'applications', '@me') || rq.is('applications', '@me')) {
    rq.allow('GET');
    rq.requireBot();
    return {
      status: 200,
      body: {
        id: state.applicationId,
        name: state.botUser.username,
        icon: null,
        description: '',
        bot_public: true,
        bot_require_code_grant: false,
        flags: 0,
        bot: userJson(state.botUser),
        verify_key: 'fake',
        team: null,
      },
    };
  }
  return undefined;
};
