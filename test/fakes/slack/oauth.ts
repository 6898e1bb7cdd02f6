/**
 * The app's OAuth side, and the several workspaces one fake serves (docs.slack.dev: "Installing
 * with OAuth", oauth.v2.access, "Token rotation"):
 *
 * - {@link OAuthApp.approve}: what `https://slack.com/oauth/v2/authorize` does once a workspace's
 *   user approves the app: it checks the link the app's install page gave (its `client_id`, a
 *   `scope`, a `state`) and issues a one-time `code` (10 minutes) for that workspace (or, with
 *   `orgWide`, for the whole enterprise: an Enterprise Grid org-wide install).
 * - `oauth.v2.access` (no token: `client_id` and `client_secret` as parameters or HTTP Basic):
 *   `code` → the workspace's bot token `xoxb-…` (a new one per install; a reinstall revokes the
 *   previous one), `token_type: 'bot'`, `scope`, `bot_user_id`, `app_id`, `team`, `enterprise`,
 *   `is_enterprise_install`, `authed_user: { id }`; with rotation on ({@link OAuthApp.setRotation})
 *   also `refresh_token` (`xoxe-1-…`) and `expires_in` (s), the bot token then `xoxe.xoxb-1-…`.
 *   `grant_type=refresh_token` → new access and refresh tokens; the refresh token used is spent
 *   (`invalid_refresh_token` again), the access token it replaces stays good until it expires.
 *   Refusals: `invalid_client_id`, `bad_client_secret`, `invalid_code` (unknown, used or expired),
 *   `bad_redirect_uri`, `invalid_refresh_token`, `invalid_grant_type`.
 * - Every other method resolves the workspace from the bearer token ({@link OAuthApp.tokenTeam}):
 *   an unknown or revoked token is `invalid_auth`, an expired one `token_expired`.
 *
 * One bot user id and app id serve every workspace (on Slack each workspace's bot user differs:
 * the fake's simplification); channels and users name their workspace (`team`), and a token
 * sees only its own workspace's.
 */
import { randomBytes } from 'node:crypto';
import type { MethodTable } from './web-api.ts';
import { type Json, SlackApiError } from './wire.ts';

/** How long a code is good for, in ms (Slack: 10 minutes). */
const CODE_TTL_MS = 10 * 60_000;

/** A workspace (or org-wide enterprise) the app is installed in. */
export interface FakeInstallation {
  teamId: string | undefined;
  teamName: string | undefined;
  enterpriseId: string | undefined;
  isEnterpriseInstall: boolean;
  /** The current bot token. */
  botToken: string;
  refreshToken: string | undefined;
  /** The installing user. */
  userId: string;
  scopes: string[];
}

/** A token the fake issued, and what it is good for. */
interface IssuedToken {
  /** The workspace it acts in, or the enterprise of an org-wide install (team undefined). */
  teamId: string | undefined;
  enterpriseId: string | undefined;
  kind: 'bot' | 'refresh';
  /** Ms (fake clock) after which it is `token_expired`; none without rotation. */
  expiresAt: number | undefined;
  revoked: boolean;
}

interface IssuedCode {
  installation: Omit<FakeInstallation, 'botToken' | 'refreshToken'>;
  redirectUri: string | undefined;
  expiresAt: number;
  used: boolean;
}

/** The app's OAuth credentials, its codes, and its installations' tokens. */
export class OAuthApp {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Installations by `team:<T>` or `enterprise:<E>`. */
  readonly installations = new Map<string, FakeInstallation>();
  private readonly codes = new Map<string, IssuedCode>();
  private readonly tokens = new Map<string, IssuedToken>();
  private rotation: { expiresInSec: number } | undefined;

  constructor(
    private readonly app: { appId: string; botUserId: string; now: () => number },
    options: { clientId?: string; clientSecret?: string } = {},
  ) {
    this.clientId = options.clientId ?? `${randomDigits(12)}.${randomDigits(13)}`;
    this.clientSecret = options.clientSecret ?? randomBytes(16).toString('hex');
  }

  /** Token rotation from now on (`expires_in` of new tokens, s), or off (`undefined`). */
  setRotation(rotation: { expiresInSec: number } | undefined): void {
    this.rotation = rotation;
  }

  /**
   * A user approves the app on Slack's authorize page, reached by the install page's link.
   * @param link the "Add to Slack" URL the app gave (`https://slack.com/oauth/v2/authorize?…`).
   * @returns the `code` (and the `state` of the link) Slack sends to the app's redirect URL.
   * @throws Error for a link Slack would refuse: another host or path, another `client_id`,
   *   no `scope`, no `state` (the test's mistake or the app's bug).
   */
  approve(
    link: string,
    who: { teamId: string; teamName?: string; userId: string; enterpriseId?: string; orgWide?: boolean },
  ): { code: string; state: string } {
    const url = new URL(link);
    if (url.origin !== 'https://slack.com' || url.pathname !== '/oauth/v2/authorize')
      throw new Error(`approve: not Slack's authorize URL: ${url.origin}${url.pathname}`);
    if (url.searchParams.get('client_id') !== this.clientId) throw new Error('approve: another client_id');
    const scopes = (url.searchParams.get('scope') ?? '').split(',').filter(Boolean);
    if (scopes.length === 0) throw new Error('approve: no scope asked for');
    const state = url.searchParams.get('state');
    if (!state) throw new Error('approve: no state in the link');
    const code = `${randomDigits(12)}.${randomDigits(13)}.${randomBytes(16).toString('hex')}`;
    const orgWide = Boolean(who.orgWide);
    if (orgWide && !who.enterpriseId) throw new Error('approve: an org-wide install needs its enterpriseId');
    this.codes.set(code, {
      installation: {
        teamId: orgWide ? undefined : who.teamId,
        teamName: orgWide ? undefined : (who.teamName ?? who.teamId),
        enterpriseId: who.enterpriseId,
        isEnterpriseInstall: orgWide,
        userId: who.userId,
        scopes,
      },
      redirectUri: url.searchParams.get('redirect_uri') ?? undefined,
      expiresAt: this.app.now() + CODE_TTL_MS,
      used: false,
    });
    return { code, state };
  }

  /**
   * The workspace a bot token acts in: `{ teamId, enterpriseId }`, or the Slack error for it
   * (`invalid_auth`: unknown or revoked; `token_expired`), or undefined for a token this app
   * never issued as a bot token.
   */
  tokenTeam(token: string): { teamId: string | undefined; enterpriseId: string | undefined } | string | undefined {
    const issued = this.tokens.get(token);
    if (issued?.kind !== 'bot') return undefined;
    if (issued.revoked) return 'invalid_auth';
    if (issued.expiresAt !== undefined && this.app.now() > issued.expiresAt) return 'token_expired';
    return { teamId: issued.teamId, enterpriseId: issued.enterpriseId };
  }

  /** Revokes every token of a workspace (or org-wide enterprise) and forgets its installation (an uninstall). */
  uninstall(id: { teamId?: string; enterpriseId?: string }): void {
    for (const issued of this.tokens.values())
      if (
        (id.teamId && issued.teamId === id.teamId) ||
        (id.enterpriseId && !issued.teamId && issued.enterpriseId === id.enterpriseId)
      )
        issued.revoked = true;
    this.installations.delete(id.teamId ? `team:${id.teamId}` : `enterprise:${id.enterpriseId}`);
  }

  /** `oauth.v2.access`. */
  methods(): MethodTable {
    return {
      'oauth.v2.access': (p) => {
        if (p.client_id !== this.clientId) throw new SlackApiError('invalid_client_id');
        if (p.client_secret !== this.clientSecret) throw new SlackApiError('bad_client_secret');
        if (p.grant_type === 'refresh_token') return this.refresh(p);
        if (p.grant_type !== undefined && p.grant_type !== 'authorization_code')
          throw new SlackApiError('invalid_grant_type');
        return this.exchange(p);
      },
    };
  }

  /** A code for a new installation's tokens. */
  private exchange(p: Json): Json {
    const issued = typeof p.code === 'string' ? this.codes.get(p.code) : undefined;
    if (!issued || issued.used || this.app.now() > issued.expiresAt) throw new SlackApiError('invalid_code');
    if ((p.redirect_uri ?? undefined) !== issued.redirectUri) throw new SlackApiError('bad_redirect_uri');
    issued.used = true;
    const i = issued.installation;
    const key = i.isEnterpriseInstall ? `enterprise:${i.enterpriseId}` : `team:${i.teamId}`;
    const previous = this.installations.get(key);
    if (previous)
      this.uninstall({ teamId: i.teamId, enterpriseId: i.isEnterpriseInstall ? i.enterpriseId : undefined });
    const tokens = this.issue(i.teamId, i.enterpriseId);
    this.installations.set(key, { ...i, botToken: tokens.access_token, refreshToken: tokens.refresh_token });
    return {
      ...tokens,
      token_type: 'bot',
      scope: i.scopes.join(','),
      bot_user_id: this.app.botUserId,
      app_id: this.app.appId,
      team: i.teamId ? { id: i.teamId, name: i.teamName } : null,
      enterprise: i.enterpriseId ? { id: i.enterpriseId, name: i.enterpriseId } : null,
      is_enterprise_install: i.isEnterpriseInstall,
      authed_user: { id: i.userId },
    };
  }

  /** A refresh token for new tokens; the refresh token is spent. */
  private refresh(p: Json): Json {
    const used = typeof p.refresh_token === 'string' ? this.tokens.get(p.refresh_token) : undefined;
    if (used?.kind !== 'refresh' || used.revoked) throw new SlackApiError('invalid_refresh_token');
    used.revoked = true;
    const tokens = this.issue(used.teamId, used.enterpriseId);
    for (const installation of this.installations.values())
      if (installation.refreshToken === p.refresh_token)
        Object.assign(installation, { botToken: tokens.access_token, refreshToken: tokens.refresh_token });
    return { ...tokens, token_type: 'bot', team: used.teamId ? { id: used.teamId } : null };
  }

  /** New tokens: a bot token, and with rotation a refresh token and `expires_in`. */
  private issue(
    teamId: string | undefined,
    enterpriseId: string | undefined,
  ): { access_token: string; refresh_token?: string; expires_in?: number } {
    const secret = () => `${randomDigits(13)}-${randomBytes(12).toString('hex')}`;
    const rotation = this.rotation;
    const access = rotation ? `xoxe.xoxb-1-${secret()}` : `xoxb-${secret()}`;
    const expiresAt = rotation ? this.app.now() + rotation.expiresInSec * 1000 : undefined;
    this.tokens.set(access, { teamId, enterpriseId, kind: 'bot', expiresAt, revoked: false });
    if (!rotation) return { access_token: access };
    const refresh = `xoxe-1-${secret()}`;
    this.tokens.set(refresh, { teamId, enterpriseId, kind: 'refresh', expiresAt: undefined, revoked: false });
    return { access_token: access, refresh_token: refresh, expires_in: rotation.expiresInSec };
  }
}

function randomDigits(n: number): string {
  let out = '';
  while (out.length < n) out += String(randomBytes(4).readUInt32BE(0));
  return out.slice(0, n);
}
