/**
 * `npm start` (`exec node dist/src/main.js`: the shell is replaced by node, so the
 * SIGTERM npm passes on, or docker stop's, reaches this process): reads `.env` from the
 * directory npm was run in (when it exists), validates the configuration, starts the bot, and
 * on SIGINT/SIGTERM stops it cleanly: new work is refused, running answers get
 * SHUTDOWN_GRACE_MS to finish, the rest stop with their partial text; a second signal stops at
 * once. On SIGHUP it reloads the configuration (src/reload.ts): `.env` read again over the
 * environment the process started with, validated whole, its live values applied, or refused
 * and logged with the running configuration kept. npm does not pass SIGHUP on: send it to the
 * bot's own pid (the `bot started` line's `pid`). A promise rejection that nothing handled is
 * logged, not fatal.
 * Exit codes: 0 after a clean stop, 2 for bad configuration, 1 for any other startup failure
 * (and for a stop forced by a second signal, or when every platform is gone for good, e.g.
 * Discord closing the gateway with 4004).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startBot } from './bot.ts';
import { ConfigError } from './config.ts';
import { logUnhandledRejections, scrubSecrets } from './log.ts';
import { environmentWithFile } from './reload.ts';

// Set first: without a handler, a SIGHUP while the bot starts would end the process.
let onHangUp: (() => void) | undefined;
process.on('SIGHUP', () => onHangUp?.());

const envFile = join(process.env.INIT_CWD ?? process.cwd(), '.env');
// The environment before `.env` is loaded: what a reload reads the file again under.
const startEnv = { ...process.env };
if (existsSync(envFile)) process.loadEnvFile(envFile);

try {
  const bot = await startBot(process.env);
  logUnhandledRejections(bot.log);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      bot.log.warn({ signal }, 'second signal: stopping at once');
      bot.log.flush();
      process.exit(1);
    }
    stopping = true;
    bot.log.info({ signal, graceMs: bot.config.shutdownGraceMs }, 'stopping');
    void bot.stop().then(() => {
      bot.log.info('stopped');
      bot.log.flush();
      process.exit(0);
    });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  onHangUp = () => {
    if (!stopping) void bot.reload(() => environmentWithFile(envFile, startEnv));
  };
  // A platform gone for good (a revoked token): with none left, there is nothing to serve.
  bot.onPlatformLost = (reason, platformsLeft) => {
    if (platformsLeft > 0 || stopping) return;
    stopping = true;
    bot.log.error({ reason }, 'no platform left: stopping');
    void bot.stop(0).finally(() => {
      bot.log.flush();
      process.exit(1);
    });
  };
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\nSee docs/configuration.md for every variable.\n`);
    process.exit(2);
  }
  const secrets = [
    process.env.SERVICE_API_KEY,
    process.env.DISCORD_TOKEN,
    process.env.SLACK_BOT_TOKEN,
    process.env.SLACK_SIGNING_SECRET,
    process.env.SLACK_APP_TOKEN,
  ].filter((s): s is string => Boolean(s));
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`The bot could not start: ${scrubSecrets(message, secrets)}\n`);
  process.exit(1);
}
