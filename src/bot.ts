/**
 * Composition root: configuration → logger → service client → keyv store → core →
 * platform adapters. `src/main.ts` runs it for `npm start`; end-to-end tests call
 * {@link startBot} with the same environment variables an operator sets.
 */

import { getHeapStatistics } from 'node:v8';
import type { DestinationStream } from 'pino';
import { commands, messageActions } from '../commands/index.ts';
import { type Config, loadConfig } from './config.ts';
import { type Core, closeCore, createCore } from './core/core.ts';
import { BotEvents } from './core/events.ts';
import { ServiceClient } from './core/service/client.ts';
import { readTally } from './core/state/feedback.ts';
import { openStore } from './core/state/open-store.ts';
import { createLogger, type Logger } from './log.ts';
import { type BotMetrics, createMetrics } from './ops/metrics.ts';
import type { SignalSources } from './ops/metrics-signals.ts';
import { type HealthCheck, type OpsServer, startOpsServer } from './ops/server.ts';
import { startTracing, type TracingHandle } from './ops/tracing.ts';
import type { DiscordAdapter } from './platforms/discord/adapter.ts';
import type { SlackAdapter } from './platforms/slack/adapter.ts';
import { ConfigReloader, type ReloadOutcome } from './reload.ts';

/**
 * Logs the store's background errors (a Redis connection lost and retried) without flooding:
 * the first one, then at most one a minute with the count of those in between.
 */
function storeErrors(log: Logger): (error: unknown) => void {
  let last = 0;
  let skipped = 0;
  return (error) => {
    const now = Date.now();
    if (now - last < 60_000) {
      skipped += 1;
      return;
    }
    log.warn({ err: error instanceof Error ? error.message : String(error), repeated: skipped }, 'state store error');
    last = now;
    skipped = 0;
  };
}

/** The /healthz checks: each configured platform's connection and the store's ping. */
function healthChecks(core: Core, discord: DiscordAdapter | undefined, slack: SlackAdapter | undefined): HealthCheck[] {
  return [
    ...(discord ? [{ name: 'discord', check: () => discord.health() }] : []),
    ...(slack ? [{ name: 'slack', check: () => slack.health() }] : []),
    {
      name: 'store',
      check: () =>
        core.store.ping().then(
          () => undefined,
          (error: unknown) =>
            `store (${core.store.kind}) not answering: ${error instanceof Error ? error.message : String(error)}`,
        ),
    },
  ];
}

/**
 * What the alert rules' metrics read (ops/metrics-signals.ts): the health checks, each
 * configured platform's last event, the spending caps that are on (SPEND_CAP_*).
 */
function signalsOf(
  config: Config,
  checks: readonly HealthCheck[],
  discord: DiscordAdapter | undefined,
  slack: SlackAdapter | undefined,
): SignalSources {
  const spend = config.spend;
  return {
    checks,
    events: [
      ...(discord ? [{ platform: 'discord' as const, lastEventAt: () => discord.lastEventAt }] : []),
      ...(slack ? [{ platform: 'slack' as const, lastEventAt: () => slack.lastEventAt }] : []),
    ],
    spendCaps: spend
      ? (['user', 'channel', 'server'] as const).flatMap((scope) =>
          (['day', 'month'] as const)
            .filter((period) => spend.caps[scope][period] > 0)
            .map((period) => ({ scope, period })),
        )
      : [],
  };
}

/** What the adapters serve: every slash command and message action under commands/. */
const DEFINITIONS = { commands, messageActions };

/** A running bot. */
export interface Bot {
  /** The configuration running: the start's, with the live values of the last reload applied. */
  config: Config;
  core: Core;
  log: Logger;
  discord: DiscordAdapter | undefined;
  slack: SlackAdapter | undefined;
  /** Prometheus metrics of the bot's events. */
  metrics: BotMetrics;
  /** The health and metrics endpoint, when HTTP_PORT is set. */
  ops: OpsServer | undefined;
  /** The OpenTelemetry SDK, when an OTLP endpoint is set (ops/tracing.ts); `stop` flushes and shuts it down. */
  tracing: TracingHandle | undefined;
  /** Why the bot is unhealthy (every platform connected, the store answering), or undefined. */
  health(): Promise<string[]>;
  /**
   * Told when a platform is gone for good (Discord closed the gateway with 4004…), with
   * whether any configured platform is left. `src/main.ts` exits non-zero when none is.
   */
  onPlatformLost: ((reason: string, platformsLeft: number) => void) | undefined;
  /**
   * Reloads the configuration (SIGHUP; src/reload.ts): `read` gives the new environment
   * (src/main.ts reads `.env` again over the start's environment); it is validated whole, then
   * its live values are applied without touching a connection or a stream, or it is refused
   * and the running configuration stays. Never rejects.
   */
  reload(read: () => Record<string, string | undefined>): Promise<ReloadOutcome>;
  /**
   * Stops the adapters (new work refused; running answers get `graceMs`, default
   * SHUTDOWN_GRACE_MS, then are stopped with their partial text), then closes the store and client,
   * and last exports the spans not sent yet and stops the tracing SDK.
   */
  stop(graceMs?: number): Promise<void>;
}

/**
 * The adapters of the configured platforms. A platform's adapter, and with it its SDK (discord.js,
 * @slack/bolt and what they load), is imported only when that platform is configured: a bot on
 * one platform does not load the other's hundreds of modules, nor carry them in the heap its
 * garbage collector marks.
 */
async function createAdapters(
  config: Config,
  core: Core,
  log: Logger,
): Promise<{ discord: DiscordAdapter | undefined; slack: SlackAdapter | undefined }> {
  const discord = config.discord
    ? new (await import('./platforms/discord/adapter.ts')).DiscordAdapter(config.discord, core, DEFINITIONS, log)
    : undefined;
  const slack = config.slack
    ? new (await import('./platforms/slack/adapter.ts')).SlackAdapter(config.slack, core, DEFINITIONS, log)
    : undefined;
  return { discord, slack };
}

/**
 * The start line: what runs, the process's pid (what SIGHUP goes to: npm does not pass it on) and
 * the V8 heap limit (npm start's default --max-old-space-size=384, or NODE_OPTIONS'), in MB.
 */
function logStarted(log: Logger, running: Record<string, unknown>): void {
  const heapLimitMb = Math.round(getHeapStatistics().heap_size_limit / 2 ** 20);
  log.info({ pid: process.pid, ...running, heapLimitMb }, 'bot started');
}

/**
 * Starts the bot from environment variables.
 * @param env the environment (`process.env` in production).
 * @param options.logDestination where log lines go (tests collect them).
 * @throws ConfigError for bad configuration; platform login errors (e.g. a bad Discord token).
 */
export async function startBot(
  env: Record<string, string | undefined>,
  options: { logDestination?: DestinationStream } = {},
): Promise<Bot> {
  const config = loadConfig(env);
  const log = createLogger({
    level: config.logLevel,
    secrets: config.secrets,
    format: config.logFormat,
    ...(options.logDestination ? { destination: options.logDestination } : {}),
    traceIds: config.tracing !== undefined,
  });
  // Before the store is opened: with tracing on, its calls are spans (open-store.ts).
  const tracing = await startTracing(config.tracing, log);
  const events = new BotEvents();
  const service = new ServiceClient({
    ...config.service,
    onRetry: ({ attempt, delayMs, error, path }) =>
      log.warn({ attempt, delayMs, code: error.code, status: error.status, path }, 'retrying service request'),
    onResponse: (response) => events.emit('service.response', response),
  });
  const core = createCore({
    service,
    store: await openStore(config.storeUrl, { onError: storeErrors(log) }),
    log,
    defaults: config.models,
    inputImages: config.inputImages,
    imageWorkers: config.imageWorkers,
    pdfWorkers: config.pdfWorkers,
    limits: config.limits,
    admins: config.admins,
    quotas: config.quotas,
    spend: config.spend,
    events,
  });
  const { discord, slack } = await createAdapters(config, core, log);
  const checks = healthChecks(core, discord, slack);
  const metrics = createMetrics(events, {
    feedback: () => readTally(core.store),
    signals: signalsOf(config, checks, discord, slack),
  });
  let ops: OpsServer | undefined;
  const stop = async (graceMs = config.shutdownGraceMs) => {
    await Promise.allSettled([discord?.stop(graceMs), slack?.stop(graceMs)]);
    await Promise.allSettled([closeCore(core), service.close(), ops?.close()]);
    metrics.close();
    await tracing?.shutdown();
    log.flush();
  };
  try {
    await Promise.all([discord?.start(), slack?.start()]).then(() => core.retention.start());
    if (config.httpPort !== undefined)
      ops = await startOpsServer(config.httpPort, { checks, registry: metrics.registry, log });
  } catch (error) {
    await stop();
    throw error;
  }
  logStarted(log, { discord: Boolean(discord), slack: Boolean(slack), store: core.store.kind, http: ops?.port });
  const health = async () =>
    (await Promise.all(checks.map(async (c) => c.check()))).filter((r): r is string => r !== undefined);
  const reload: Bot['reload'] = (read) => reloader.reload(read);
  const parts = { config, core, log, discord, slack, metrics, tracing };
  const bot: Bot = { ...parts, ops, health, stop, reload, onPlatformLost: undefined };
  const reloader = new ConfigReloader(bot, env);
  if (discord) discord.onFatal = (reason) => bot.onPlatformLost?.(reason, slack ? 1 : 0);
  return bot;
}
