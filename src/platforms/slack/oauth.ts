/**
 * Slack's OAuth mode (any number of workspaces): Bolt's own installer (@slack/oauth 4's
 * InstallProvider, which Bolt's HTTPReceiver and SocketModeReceiver build from the App's
 * `clientId`, `clientSecret`, `stateSecret`, `scopes`, `installationStore` and
 * `installerOptions`). It serves:
 *
 * - `GET /slack/install`: a page with the "Add to Slack" link to
 *   `https://slack.com/oauth/v2/authorize?scope=…&state=…&client_id=…`, and the `state` in a
 *   cookie (`slack-app-oauth-state`, HttpOnly, Secure, 10 minutes);
 * - `GET /slack/oauth_redirect?code=…&state=…`: the state checked (the cookie must equal the
 *   query's, its signature under SLACK_STATE_SECRET must verify, it must be under 10 minutes old,
 *   and, here, it must not have been used before), then `oauth.v2.access` exchanges the code and
 *   the installation is stored (installations.ts).
 *
 * In HTTP mode both paths are on the bot's own server (http.ts hands GETs to Bolt's receiver);
 * in Socket Mode on SLACK_PORT, Bolt's SocketModeReceiver's own HTTP server.
 *
 * Each request is then authorized by Bolt with the installation of its workspace (or org-wide
 * enterprise): `context.botToken` and the `client` it hands listeners carry that token. A
 * request for a workspace with no installation is acknowledged (200) and dropped
 * ({@link UninstalledTeams}).
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { AppOptions, InstallURLOptions, StateStore } from '@slack/bolt';
import { InvalidStateError } from '@slack/oauth';
import type { SlackOAuthConfig } from '../../config.ts';
import { type Locale, SOURCE_LOCALE } from '../../core/i18n/locales.ts';
import { slackClaims } from '../../core/keys.ts';
import type { Claims } from '../../core/state/claims.ts';
import type { Logger } from '../../log.ts';
import { NoInstallationError, type SlackInstallationStore } from './installations.ts';
import { SLACK_BOT_SCOPES } from './manifest.ts';
import { localizedOAuthPages } from './oauth-pages.ts';

// @slack/oauth re-exports ClearStateStore as a getter of a `default` that Node's ESM loader does
// not find among a CommonJS module's named exports (InvalidStateError it finds): required instead.
const { ClearStateStore } = createRequire(import.meta.url)('@slack/oauth') as typeof import('@slack/oauth');

/** Where Bolt's installer serves the install page and the OAuth redirect. */
export const SLACK_INSTALL_PATH = '/slack/install';
export const SLACK_REDIRECT_PATH = '/slack/oauth_redirect';

/** How long a `state` is good for, in s (Bolt's default: its cookie's life too). */
export const STATE_TTL_SEC = 600;

/**
 * Bolt's signed state (ClearStateStore: a JWT under SLACK_STATE_SECRET with its time), used once:
 * a state that verifies is claimed in the shared store, and a second use within its life is an
 * InvalidStateError (Bolt then answers the redirect with its failure page, and stores nothing).
 */
export class OnceStateStore implements StateStore {
  private readonly signed: InstanceType<typeof ClearStateStore>;

  constructor(
    stateSecret: string,
    private readonly claims: Claims,
  ) {
    this.signed = new ClearStateStore(stateSecret, STATE_TTL_SEC);
  }

  generateStateParam(installOptions: InstallURLOptions, now: Date): Promise<string> {
    return this.signed.generateStateParam(installOptions, now);
  }

  /** @throws InvalidStateError for a forged, expired or already used state; what the store throws. */
  async verifyStateParam(now: Date, state: string): Promise<InstallURLOptions> {
    const options = await this.signed.verifyStateParam(now, state);
    const digest = createHash('sha256').update(state).digest('hex');
    if (!(await this.claims.claim(slackClaims.oauthState(digest), STATE_TTL_SEC * 1000)))
      throw new InvalidStateError('The state parameter was used already');
    return options;
  }
}

/**
 * The App options of the OAuth mode (Bolt reads them into its receiver's InstallProvider): its
 * pages (the install page, the redirect's outcome) in the visitor's language (oauth-pages.ts).
 * @param defaultLocale DEFAULT_LOCALE, for a browser that accepts none of the shipped languages.
 */
export function oauthAppOptions(
  oauth: SlackOAuthConfig,
  installations: SlackInstallationStore,
  claims: Claims,
  defaultLocale: Locale = SOURCE_LOCALE,
): Pick<AppOptions, 'clientId' | 'clientSecret' | 'scopes' | 'installationStore'> & {
  installerOptions: NonNullable<AppOptions['installerOptions']>;
} {
  const stateStore = new OnceStateStore(oauth.stateSecret, claims);
  const pages = localizedOAuthPages(
    {
      clientId: oauth.clientId,
      clientSecret: oauth.clientSecret,
      stateStore,
      stateCookieExpirationSeconds: STATE_TTL_SEC,
    },
    defaultLocale,
  );
  return {
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret,
    scopes: [...SLACK_BOT_SCOPES],
    installationStore: installations,
    installerOptions: {
      installPath: SLACK_INSTALL_PATH,
      redirectUriPath: SLACK_REDIRECT_PATH,
      stateStore,
      stateVerification: true,
      stateCookieExpirationSeconds: STATE_TTL_SEC,
      installPathOptions: pages.installPathOptions,
      callbackOptions: pages.callbackOptions,
    },
  };
}

/** Workspaces remembered at most as having sent a request with no installation (the set starts afresh past it). */
export const MAX_UNINSTALLED_TEAMS_LOGGED = 1_000;

/**
 * Requests Bolt could not authorize because their workspace has no installation: each is
 * dropped (Bolt acknowledges it once the error handler returns: Slack does not retry it), and
 * logged once per workspace (at most {@link MAX_UNINSTALLED_TEAMS_LOGGED} remembered).
 */
export class UninstalledTeams {
  private readonly logged = new Set<string>();

  constructor(private readonly log: Logger) {}

  /**
   * Whether `error` (what Bolt hands its error handler) is an authorization that failed for lack
   * of an installation; if so it is logged once per workspace.
   */
  handled(error: unknown): boolean {
    const missing = noInstallationIn(error);
    if (!missing) return false;
    const id = missing.installationId ?? 'unknown';
    if (this.logged.has(id)) return true;
    if (this.logged.size >= MAX_UNINSTALLED_TEAMS_LOGGED) this.logged.clear();
    this.logged.add(id);
    this.log.warn({ installation: id }, 'slack request for a workspace with no installation: acknowledged and dropped');
    return true;
  }
}

/** The NoInstallationError in an error's `original` / `cause` chain (Bolt's and @slack/oauth's AuthorizationErrors wrap it). */
function noInstallationIn(error: unknown): NoInstallationError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (current instanceof NoInstallationError) return current;
    const e = current as { original?: unknown; cause?: unknown };
    current = e.original ?? e.cause;
  }
  return undefined;
}
