/**
 * Reloading the configuration without a restart: `SIGHUP` (src/main.ts) reads `.env` again over
 * the environment the process started with, validates all of it with the one schema
 * (`loadConfig`), and only then applies what can change live (config-reload.ts says which
 * variables): nothing is half applied, and a bad value leaves the running configuration as it
 * is.
 *
 * How the running bot takes the new values: nothing is made again (no client, store, adapter,
 * connection or stream is touched). Every live value sits on an object the core reads where it
 * uses the value (each request, answer, press or log line), and a reload sets it there:
 * `core.limits` and `core.inputImages` (assigned in place), the default models
 * (`core.models.configure`), the quotas and the price table with its caps
 * (`core.quotas.reconfigure`, `core.spend.reconfigure`; spending turned on or off replaces
 * `core.spend`, a reservation settling with the one it was made on), the admin lists
 * (`core.admins`), DEFAULT_LOCALE (`core.languages.defaultLocale`), the agent view's prompts (the
 * Slack section of the configuration, read at each showing) and pino's level (loggers made from
 * the bot's follow it). A request under way keeps what it already read: an answer streaming
 * ends with the model it started with; the next request reads the new values.
 *
 * The configuration applied is the new environment's live variables with the restart-only ones
 * as the process started with them, so `bot.config` always says what runs.
 */
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { changedVariables, type EnvName, RELOAD_KINDS } from './config-reload.ts';
import type { Core } from './core/core.ts';
import { Spend } from './core/state/spend.ts';
import type { Logger } from './log.ts';

/** An environment as the schema reads it. */
type Environment = Record<string, string | undefined>;

/**
 * The environment a reload reads: the variables of `envFile` (parsed with `util.parseEnv`, as
 * `process.loadEnvFile` reads it at start) under `startEnv`, the process's own environment as it
 * was before the file was loaded, which wins as it does at start. A file that is gone gives the
 * environment alone. `process.env` is not changed.
 * @throws ConfigError when the file exists but cannot be read (naming the error code only).
 */
export function environmentWithFile(envFile: string, startEnv: Environment): Environment {
  let text: string;
  try {
    text = readFileSync(envFile, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    if (code === 'ENOENT') return { ...startEnv };
    throw new ConfigError([`.env cannot be read (${code})`]);
  }
  return { ...parseEnv(text), ...startEnv };
}

/** What a reload did. */
export interface ReloadOutcome {
  result: 'applied' | 'refused';
  /** Refused: the problems, one per line, as at start (naming variables, never values). */
  problems: string[];
  /** Applied: the live variables whose value changed since the configuration last applied. */
  changed: EnvName[];
  /** Applied: the variables that changed since start but need a restart (still as they were). */
  needRestart: EnvName[];
}

/** The parts of a running bot a reload reads and sets. */
export interface Reloadable {
  config: Config;
  core: Core;
  log: Logger;
}

/** Reloads one running bot; reloads run one after the other. */
export class ConfigReloader {
  /** The environment of the configuration last applied (the start's, then each reload's). */
  private applied: Environment;
  private queue: Promise<unknown> = Promise.resolve();

  /** @param startEnv the environment the bot was started with (copied). */
  constructor(
    private readonly bot: Reloadable,
    private readonly startEnv: Environment,
  ) {
    this.startEnv = { ...startEnv };
    this.applied = this.startEnv;
  }

  /**
   * Reads the environment with `read`, validates it whole, and applies its live values, or
   * refuses it (logged once, at error, with the start's message; the running configuration
   * stays). Restart-only variables that changed are named in one warn line. Counted in
   * `genbot_config_reloads_total{result}` (the `config.reload` event). Never throws.
   * @param read the new environment (src/main.ts: {@link environmentWithFile}); may throw ConfigError.
   */
  reload(read: () => Environment): Promise<ReloadOutcome> {
    const run = this.queue.then(() => this.reloadNow(read));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private reloadNow(read: () => Environment): ReloadOutcome {
    const { core, log } = this.bot;
    let env: Environment;
    let next: Config;
    try {
      env = read();
      loadConfig(env);
      next = loadConfig(this.runnable(env));
    } catch (error) {
      const problems = error instanceof ConfigError ? error.problems : [String(error)];
      const message = error instanceof ConfigError ? error.message : `Invalid configuration: ${String(error)}`;
      log.error(
        { reload: 'refused', variables: namedIn(problems) },
        `configuration reload refused, the running configuration stays: ${message}`,
      );
      core.events.emit('config.reload', { result: 'refused' });
      return { result: 'refused', problems, changed: [], needRestart: [] };
    }
    const changed = changedVariables(this.applied, env).filter((name) => RELOAD_KINDS[name] === 'live');
    const needRestart = changedVariables(this.startEnv, env).filter((name) => RELOAD_KINDS[name] === 'restart');
    applyLive(this.bot, next);
    this.bot.config = next;
    this.applied = env;
    log.info({ reload: 'applied', changed }, 'configuration reloaded');
    if (needRestart.length > 0)
      log.warn({ variables: needRestart }, 'configuration changes that apply only after a restart: not applied');
    core.events.emit('config.reload', { result: 'applied' });
    return { result: 'applied', problems: [], changed, needRestart };
  }

  /** `env`'s live variables with the restart-only ones as the bot started with them. */
  private runnable(env: Environment): Environment {
    const out: Environment = { ...env };
    for (const [name, kind] of Object.entries(RELOAD_KINDS)) if (kind === 'restart') out[name] = this.startEnv[name];
    return out;
  }
}

/** The variables a list of problems names (each problem starts with one). */
function namedIn(problems: readonly string[]): string[] {
  return [...new Set(problems.map((p) => p.split(' ')[0]!).filter((word) => word in RELOAD_KINDS))];
}

/** Sets `next`'s live values on the running bot's objects (the file's comment says which). */
function applyLive(bot: Reloadable, next: Config): void {
  const { core, log } = bot;
  core.models.configure(next.models);
  Object.assign(core.inputImages, next.inputImages);
  Object.assign(core.limits, next.limits);
  core.languages.defaultLocale = next.limits.defaultLocale;
  core.quotas.reconfigure(next.quotas);
  applySpend(core, log, next);
  core.admins.userIds = new Set(next.admins.userIds);
  core.admins.roleIds = new Set(next.admins.roleIds);
  // The adapter holds the start's Slack section and reads its prompts at each showing.
  if (bot.config.slack && next.slack) bot.config.slack.assistantPrompts = next.slack.assistantPrompts;
  next.slack = bot.config.slack;
  log.level = next.logLevel;
}

/**
 * The price table and caps: set on the running counters; a table where there was none starts
 * counting (a new Spend on the same store); none where there was one stops it (the old one's
 * counts written).
 */
function applySpend(core: Core, log: Logger, next: Config): void {
  if (next.spend && core.spend) core.spend.reconfigure(next.spend);
  else if (next.spend) core.spend = new Spend(core.store, next.spend, log);
  else if (core.spend) {
    const previous = core.spend;
    core.spend = undefined;
    void previous.flush();
  }
  core.spend?.warnUnpriced(next.models);
}
