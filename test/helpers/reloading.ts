/**
 * A bot started as src/main.ts starts it, `.env` loaded under the process's environment, and
 * reloaded with the very function its SIGHUP handler calls
 * (`bot.reload(() => environmentWithFile(.env, startEnv))`) after the test rewrote `.env`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { environmentWithFile } from '../../src/reload.ts';
import { startTestBot, type TestBot } from '../e2e/harness.ts';

/** A bot started from a `.env`, and how to rewrite that file and reload it. */
export interface Reloading {
  testBot: TestBot;
  /** Writes `.env` anew: the file's fixed lines, then these (`NAME=value`). */
  write(lines: Record<string, string>): void;
  /** What the SIGHUP handler runs. */
  reload(): ReturnType<TestBot['bot']['reload']>;
}

/**
 * Starts the bot from `processEnv` (the process's own environment, which wins over the file, as
 * at start) with a `.env` of `fixed` and `lines` (LOG_LEVEL=debug unless they say otherwise, as
 * startTestBot's); a temporary SQLite store.
 */
export async function startFromEnvFile(
  processEnv: Record<string, string>,
  fixed: Record<string, string>,
  lines: Record<string, string>,
): Promise<Reloading> {
  const dir = mkdtempSync(join(tmpdir(), 'genbot-reload-'));
  const envFile = join(dir, '.env');
  const startEnv = { ...processEnv, STORE_URL: `sqlite://${join(dir, 'history.sqlite')}` };
  const write = (more: Record<string, string>) =>
    writeFileSync(
      envFile,
      `${Object.entries({ LOG_LEVEL: 'debug', ...fixed, ...more })
        .map(([name, value]) => `${name}=${value}`)
        .join('\n')}\n`,
    );
  write(lines);
  const env = environmentWithFile(envFile, startEnv) as Record<string, string>;
  const testBot = await startTestBot(env, join(dir, 'history.sqlite'));
  return { testBot, write, reload: () => testBot.bot.reload(() => environmentWithFile(envFile, startEnv)) };
}
