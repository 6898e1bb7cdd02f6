/**
 * The Bolt App of the Slack adapter and what it is built with: the Web API client options, the
 * token (single workspace) or the OAuth installer and its installation store (oauth.ts,
 * installations.ts), and the receiver (our guarded HTTPReceiver, or Socket Mode).
 */
// A named import: Node's ESM gives `import bolt from` the whole CommonJS exports object, but
// bundler-style interop (vitest/vite) gives it `exports.default` (the App class), so `bolt.App`
// is undefined there. `exports.App` is found by both.
import { App, type AppOptions, HTTPReceiver } from '@slack/bolt';
import type { Logger as SlackLogger } from '@slack/logger';
import type { SlackConfig } from '../../config.ts';
import type { Core } from '../../core/core.ts';
import { KeyRing } from '../../core/state/sealed.ts';
import type { Logger } from '../../log.ts';
import { SlackInstallationStore } from './installations.ts';
import { oauthAppOptions } from './oauth.ts';

/** The Web API client options of every client (SLACK_API_URL, retries fit for a chat answer, 429s not waited out). */
export function clientOptions(config: SlackConfig, logger?: SlackLogger): NonNullable<AppOptions['clientOptions']> {
  return {
    ...(config.apiUrl ? { slackApiUrl: config.apiUrl } : {}),
    ...(logger ? { logger } : {}),
    // Bolt's default retries for ~30 minutes; a chat answer is worth a few seconds at most.
    // A call Slack does not answer ends after 6 s (twice, with the retry): the user is told.
    retryConfig: { retries: 1, factor: 2, minTimeout: 500, maxTimeout: 4000 },
    timeout: 6_000,
    // A 429 is not waited out by the client: web-api pauses every call of the workspace's
    // client for the whole Retry-After, so one channel's 429 naming an hour held every channel
    // for the hour. It rejects at once instead; the write scheduler holds the bucket hit (at
    // most a minute) and submits the write again (rate-limits.ts slackRateLimitWait).
    rejectRateLimitedCalls: true,
  };
}

/**
 * Bolt's App options: the token (single workspace) or the OAuth installer (oauth.ts), the
 * receiver (Socket Mode with the app token, else our HTTP receiver), the Web API base
 * (SLACK_API_URL) for every client, and retries fit for a chat answer.
 */
function appOptions(
  config: SlackConfig,
  logger: SlackLogger,
  receiver: HTTPReceiver | undefined,
  oauth: ReturnType<typeof oauthAppOptions> | undefined,
): AppOptions {
  const slackApiUrl = config.apiUrl ? { slackApiUrl: config.apiUrl } : {};
  return {
    ...(config.auth.mode === 'token' ? { token: config.auth.botToken } : {}),
    ...(receiver ? { receiver } : { signingSecret: config.signingSecret }),
    ...(config.appToken !== undefined
      ? {
          socketMode: true,
          appToken: config.appToken,
          // The OAuth installer's options: Bolt's SocketModeReceiver builds the InstallProvider
          // from them and serves /slack/install and /slack/oauth_redirect on SLACK_PORT.
          ...(oauth ? { clientId: oauth.clientId, clientSecret: oauth.clientSecret } : {}),
          ...(oauth ? { scopes: oauth.scopes, installationStore: oauth.installationStore } : {}),
          // Socket Mode's own WebClient (apps.connections.open, with the app token) is built by
          // SocketModeReceiver from `installerOptions.clientOptions`, not from `clientOptions`.
          // Bolt 5.1 happens to default the former to the latter (the very same object, into which
          // SocketModeClient writes a `retryConfig` of its own when it has none); set it explicitly
          // so that SLACK_API_URL holds for every Web API call whatever Bolt's default (checked by
          // test/e2e/slack-socket-mode.test.ts). Its retries are patient on purpose: this call
          // also runs on every reconnect, where @slack/socket-mode lets a final network error
          // escape as an unhandled rejection (fatal on Node 20): ~2 minutes of retries (1 s
          // doubling up to 30 s) instead of the few seconds a chat answer is worth. Slack's
          // refusals (invalid_auth) are not retried. The installer's oauth.v2.access uses it too.
          installerOptions: {
            ...oauth?.installerOptions,
            ...(oauth ? { port: config.port } : {}),
            clientOptions: {
              ...slackApiUrl,
              retryConfig: { retries: 8, factor: 2, minTimeout: 1000, maxTimeout: 30_000 },
            },
          },
        }
      : {}),
    logger,
    clientOptions: clientOptions(config),
    // Bolt otherwise calls auth.test in this constructor and keeps the promise: a wrong token
    // or an unreachable Slack becomes an unhandled rejection (which ends a Node 20 process)
    // while start() reports success. start() runs it instead (App#init) and fails clearly.
    deferInitialization: true,
  };
}

/**
 * Builds the App: in the OAuth mode with its installation store (sealed with
 * SLACK_INSTALLATION_KEY) and Bolt's installer; in HTTP mode with the HTTPReceiver our own server
 * (http.ts) guards, which also serves the installer's paths.
 */
export function boltApp(
  config: SlackConfig,
  core: Pick<Core, 'store' | 'claims'> & Partial<Pick<Core, 'languages'>>,
  logger: SlackLogger,
  log: Logger,
): { app: App; receiver: HTTPReceiver | undefined; installations: SlackInstallationStore | undefined } {
  const auth = config.auth;
  const installations =
    auth.mode === 'oauth'
      ? new SlackInstallationStore(
          core.store,
          new KeyRing(auth.installationKey, auth.previousInstallationKey),
          log.child({ lib: 'slack-installations' }),
        )
      : undefined;
  const oauth =
    auth.mode === 'oauth' && installations
      ? oauthAppOptions(auth, installations, core.claims, core.languages?.defaultLocale)
      : undefined;
  const receiver =
    config.appToken !== undefined
      ? undefined
      : new HTTPReceiver({
          signingSecret: config.signingSecret,
          logger,
          endpoints: '/slack/events',
          ...(oauth
            ? {
                ...oauth,
                installerOptions: { ...oauth.installerOptions, clientOptions: clientOptions(config, logger) },
              }
            : {}),
        });
  return { app: new App(appOptions(config, logger, receiver, oauth)), receiver, installations };
}
