/**
 * Starts the whole bot for an end-to-end test the way an operator does: `startBot` with
 * environment variables only, pointed at local fakes. Log lines are collected (parsed pino
 * JSON) so that a test can check what was logged, and that no secret ever was.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type Bot, startBot } from '../../src/bot.ts';
import type { CommandOutcome } from '../../src/core/command.ts';
import type { FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import type { FakeSlack } from '../fakes/slack.ts';

/** A bot started for a test, with its log lines. */
export interface TestBot {
  bot: Bot;
  /** Every log line written so far, parsed. */
  logs: Array<Record<string, unknown> & { msg?: string; level: number }>;
  /** The raw log text (for secret checks). */
  rawLog(): string;
  /** The SQLite file holding the history. */
  storePath: string;
  /**
   * Resolves with the next `count` command outcomes that `where` accepts (the bot emits
   * `command.done` after everything it sent for a command).
   * @throws Error (rejects) when fewer arrive within `timeoutMs` (default 20,000 ms).
   */
  outcomes(where: (outcome: CommandOutcome) => boolean, count?: number, timeoutMs?: number): Promise<CommandOutcome[]>;
  stop(): Promise<void>;
}

/**
 * Starts the bot with `env` (merged over a temporary SQLite store and `LOG_LEVEL=debug`).
 * @param env the variables an operator would set (SERVICE_*, DISCORD_*, SLACK_*, …).
 * @param storePath an existing SQLite file to use instead of a new one (a restart: stop the
 *   previous bot first, then start another on its `storePath`).
 * @throws whatever startBot throws (ConfigError, login errors).
 */
export async function startTestBot(
  env: Record<string, string>,
  storePath = join(mkdtempSync(join(tmpdir(), 'genbot-e2e-')), 'history.sqlite'),
): Promise<TestBot> {
  const lines: string[] = [];
  const logs: TestBot['logs'] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of String(chunk).split('\n')) {
        if (!line) continue;
        lines.push(line);
        logs.push(JSON.parse(line) as TestBot['logs'][number]);
      }
      done();
    },
  });
  const bot = await startBot(
    { STORE_URL: `sqlite://${storePath}`, LOG_LEVEL: 'debug', ...env },
    { logDestination: destination },
  );
  return {
    bot,
    logs,
    rawLog: () => lines.join('\n'),
    storePath,
    outcomes: (where, count = 1, timeoutMs = 20_000) => {
      const events = bot.core.events;
      return new Promise((resolve, reject) => {
        const seen: CommandOutcome[] = [];
        const off = () => {
          clearTimeout(timer);
          events.off('command.done', listener);
        };
        const listener = (outcome: CommandOutcome) => {
          if (!where(outcome)) return;
          seen.push(outcome);
          if (seen.length < count) return;
          off();
          resolve(seen);
        };
        const timer = setTimeout(() => {
          off();
          reject(new Error(`${seen.length} of ${count} commands finished within ${timeoutMs} ms`));
        }, timeoutMs);
        events.on('command.done', listener);
      });
    },
    stop: () => bot.stop(0),
  };
}

/** The environment an operator would set for the service and Discord, pointed at the fakes. */
export function discordEnv(service: FakeService, discord: FakeDiscord): Record<string, string> {
  return {
    SERVICE_BASE_URL: service.baseUrl,
    SERVICE_API_KEY: service.apiKey,
    DISCORD_TOKEN: discord.token,
    DISCORD_APPLICATION_ID: discord.applicationId,
    DISCORD_API_URL: discord.apiUrl,
  };
}

/**
 * The environment an operator would set for the service and Slack, pointed at the fakes:
 * HTTP mode on a free port, or Socket Mode with `{ socketMode: true }` (the fake's app token).
 */
export function slackEnv(
  service: FakeService,
  slack: FakeSlack,
  options: { socketMode?: boolean } = {},
): Record<string, string> {
  return {
    SERVICE_BASE_URL: `${service.baseUrl}/v1`,
    SERVICE_API_KEY: service.apiKey,
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: slack.signingSecret,
    SLACK_API_URL: slack.apiUrl,
    ...(options.socketMode ? { SLACK_APP_TOKEN: slack.appToken } : { SLACK_PORT: '0' }),
  };
}
