/**
 * Helpers shared by the fake Slack's own tests (test/fakes/slack/*.test.ts): a silent logger, a
 * Slack-side clock moved by hand, the real WebClient pointed at a fake, raw Web API calls, and
 * real Bolt apps (HTTP receiver or Socket Mode) for what the app sees.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App } from '@slack/bolt';
import { ErrorCode, type Logger, LogLevel, type WebAPIPlatformError, WebClient } from '@slack/web-api';
import type { FakeSlack } from '../slack.ts';

/** The WebClient logs Slack's `[ERROR]` response messages; the refusals in these tests are on purpose. */
export const quiet: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  setLevel: () => undefined,
  getLevel: () => LogLevel.ERROR,
  setName: () => undefined,
};

/** A Slack-side clock the tests move by hand. */
export function handClock(): { ms: number; now: () => number; advance: (ms: number) => void } {
  const clock = {
    ms: Date.now(),
    now: () => clock.ms,
    advance: (ms: number) => {
      clock.ms += ms;
    },
  };
  return clock;
}

/** The real WebClient (what Bolt uses inside) against `fake`, without retries. */
export function webClient(
  fake: FakeSlack,
  token = fake.botToken,
  options: ConstructorParameters<typeof WebClient>[1] = {},
): WebClient {
  return new WebClient(token, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 }, logger: quiet, ...options });
}

/** The Slack error code of a failed WebClient call (with the whole answer). */
export async function slackFailure(call: Promise<unknown>): Promise<WebAPIPlatformError['data']> {
  try {
    await call;
  } catch (error) {
    const e = error as WebAPIPlatformError;
    if (e.code === ErrorCode.PlatformError) return e.data;
    throw error;
  }
  throw new Error('the call succeeded');
}

/** The Slack error code of a failed WebClient call. */
export async function slackError(call: Promise<unknown>): Promise<string> {
  return (await slackFailure(call)).error;
}

/** A raw form POST to a Web API method of `fake`. */
export async function rawCall(
  fake: FakeSlack,
  method: string,
  form: Record<string, string>,
  headers: Record<string, string> = { authorization: `Bearer ${fake.botToken}` },
) {
  const res = await fetch(`${fake.apiUrl}${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
}

/** A real Bolt app in HTTP mode (its HTTPReceiver verifies the fake's signatures), listening on a random port. */
export async function boltHttpApp(
  fake: FakeSlack,
  setup: (app: App) => void,
): Promise<{ app: App; url: string; stop: () => Promise<void> }> {
  const app = new App({
    token: fake.botToken,
    signingSecret: fake.signingSecret,
    botId: fake.botId,
    botUserId: fake.botUserId,
    logger: quiet,
    clientOptions: { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } },
  });
  setup(app);
  const server = (await app.start(0)) as Server;
  return {
    app,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => app.stop() as Promise<void>,
  };
}

/** A real Bolt app in Socket Mode (@slack/socket-mode inside), connected to `fake`. */
export async function boltSocketApp(
  fake: FakeSlack,
  setup: (app: App) => void,
): Promise<{ app: App; stop: () => Promise<void> }> {
  const clientOptions = { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } };
  const app = new App({
    token: fake.botToken,
    appToken: fake.appToken,
    socketMode: true,
    botId: fake.botId,
    botUserId: fake.botUserId,
    logger: quiet,
    clientOptions,
    installerOptions: { clientOptions },
  });
  setup(app);
  await app.start();
  return { app, stop: () => app.stop() as Promise<void> };
}
