/**
 * The setup every end-to-end file shares: `useE2E(options, ready)` registers a vitest
 * `beforeAll` that starts the fakes (FakeService, FakeDiscord, FakeSlack), Redis and the bot
 * the options ask for, and an `afterAll` that stops them, the bot first. Called at the top of a
 * file it serves the file; called inside a `describe`, that block.
 *
 * The started parts reach the file through `ready`, which assigns the file's own variables
 * (the tests read those by name):
 *
 * ```ts
 * let service: FakeService;
 * let slack: FakeSlack;
 * let testBot: TestBot;
 * let botUrl: string;
 *
 * useE2E({ slack: { channels }, bot: { env: { DEFAULT_VISION_MODEL: 'fake-vision' } } }, (e2e) => {
 *   ({ service, slack, bot: testBot, botUrl } = e2e);
 * });
 * ```
 *
 * A bot that a test starts itself (`startTestBot` in a test body) is the file's to stop: `ready`
 * may return a cleanup for it, or the file keeps its own hook.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { discordEnv, slackEnv, startTestBot, type TestBot } from '../e2e/harness.ts';
import { FakeDiscord, type FakeDiscordOptions } from '../fakes/discord.ts';
import { FakeService, type FakeServiceOptions } from '../fakes/service.ts';
import { FakeSlack, type FakeSlackOptions } from '../fakes/slack.ts';
import { type BotProcess, spawnBot } from './bot-process.ts';
import { startRedis, type TestRedis } from './redis.ts';

/** Undoes a step of a file's own: returned by `beforeBot` or `ready`, run at the end. */
export type Cleanup = () => unknown;

/** A step of a file's own setup (`beforeBot`, `ready`), given the started parts; it may return a cleanup. */
export type E2EStep = (e2e: E2E) => Cleanup | undefined | Promise<Cleanup | undefined>;

/** How useE2E starts the bot. */
export interface E2EBotOptions {
  /**
   * Variables set over the ones pointing the bot at the fakes (discordEnv / slackEnv, and
   * STORE_URL at Redis when `redis` is asked for), e.g. `{ HTTP_PORT: '0' }`.
   */
  env?: Record<string, string>;
  /** Slack in Socket Mode (SLACK_APP_TOKEN) instead of HTTP mode on a free port. */
  socketMode?: boolean;
  /**
   * `true`: the bot as an operator runs it, `npm start` in a process of its own (spawnBot; read
   * it as `botProcess`). Default: in this process (startTestBot; read it as `bot`).
   */
  process?: boolean;
  /**
   * For a file whose test replaces the bot (a restart into the file's variable): returns the
   * bot to stop at the end instead of the one started here.
   */
  current?: () => { stop(): Promise<void> } | undefined;
}

/** FakeSlack's channels from their ids, each named after its id (`C0HELD` → `held`). */
export function slackChannels(ids: Record<string, string>): Array<{ id: string; name: string }> {
  return Object.values(ids).map((id) => ({ id, name: id.slice(2).toLowerCase() }));
}

/** What useE2E starts. The service is started unless `service: false`; the rest only when asked for. */
export interface E2EOptions {
  /**
   * The FakeService's options (default `{}`); `false` for none; or a function returning a
   * service started elsewhere (the file's, for a `describe`'s useE2E) to use and not close.
   */
  service?: FakeServiceOptions | false | (() => FakeService);
  /** Starts a FakeDiscord with these options (`{}` for the defaults). */
  discord?: FakeDiscordOptions;
  /** Starts a FakeSlack with these options (`{}` for the defaults). */
  slack?: FakeSlackOptions;
  /** Starts a redis-server (`true`, or its options: `{ password }`); the bot's STORE_URL points at it. */
  redis?: boolean | { password?: string };
  /** Starts the bot once the rest is up, pointed at every fake started (Discord's and Slack's variables both when both are). */
  bot?: E2EBotOptions;
  /** Runs after the fakes and Redis start, before the bot (e.g. `slack.addUser`); its cleanup runs after the bot stops. */
  beforeBot?: E2EStep;
  /** Calls `service.reset()` after each test, so that answers a failed test scripted but never used do not reach the next one. */
  resetServiceAfterEach?: boolean;
  /** The `beforeAll` timeout in ms (default: vitest's hookTimeout). */
  timeoutMs?: number;
}

/** The started parts, as `ready` and `beforeBot` see them; reading a part that was not started throws. */
export interface E2E {
  readonly service: FakeService;
  readonly discord: FakeDiscord;
  readonly slack: FakeSlack;
  readonly redis: TestRedis;
  /** The bot started in this process. */
  readonly bot: TestBot;
  /** The bot started as its own process (`bot: { process: true }`). */
  readonly botProcess: BotProcess;
  /** The variables the bot was started with (to start another on the same fakes). */
  readonly botEnv: Record<string, string>;
  /** `http://127.0.0.1:<port>` of the in-process bot's Slack HTTP endpoint. */
  readonly botUrl: string;
}

interface Parts {
  service?: FakeService;
  discord?: FakeDiscord;
  slack?: FakeSlack;
  redis?: TestRedis;
  bot?: TestBot;
  botProcess?: BotProcess;
  botEnv?: Record<string, string>;
}

/**
 * Registers the hooks that start and stop what `options` asks for (see {@link E2EOptions}).
 * Setup order: service, Discord, Slack, Redis, `beforeBot`, the bot, `ready`; teardown is the
 * reverse: `ready`'s cleanup, the bot (or `bot.current()`), `beforeBot`'s cleanup, then Slack,
 * Discord, the service (unless it is shared) and Redis.
 * @param ready called once everything has started, to assign the file's variables and do the
 *   file's own setup; may return (or resolve with) a cleanup.
 */
export function useE2E(options: E2EOptions, ready?: E2EStep): void {
  const parts: Parts = {};
  const e2e = contextOf(parts);
  const cleanups: { beforeBot?: Cleanup; ready?: Cleanup } = {};
  beforeAll(async () => {
    await startParts(options, parts);
    cleanups.beforeBot = await options.beforeBot?.(e2e);
    if (options.bot) await startBot(options.bot, parts);
    cleanups.ready = await ready?.(e2e);
  }, options.timeoutMs);
  if (options.resetServiceAfterEach) afterEach(() => parts.service?.reset());
  afterAll(async () => {
    await runCleanup(cleanups.ready);
    await (options.bot?.current ? options.bot.current() : (parts.bot ?? parts.botProcess))?.stop();
    await runCleanup(cleanups.beforeBot);
    await parts.slack?.close();
    await parts.discord?.close();
    if (typeof options.service !== 'function') await parts.service?.close();
    await parts.redis?.stop();
  });
}

/** Starts the service, the fakes and Redis that `options` ask for, into `parts`. */
async function startParts(options: E2EOptions, parts: Parts): Promise<void> {
  const { service } = options;
  if (typeof service === 'function') parts.service = service();
  else if (service !== false) parts.service = await FakeService.start(service);
  if (options.discord) parts.discord = await FakeDiscord.start(options.discord);
  if (options.slack) parts.slack = await FakeSlack.start(options.slack);
  if (options.redis) parts.redis = await startRedis(options.redis === true ? {} : options.redis);
}

/** Starts the bot on the started parts, with the environment an operator would set for them. */
async function startBot(options: E2EBotOptions, parts: Parts): Promise<void> {
  const { service, discord, slack, redis } = parts;
  if (!service) throw new Error('useE2E: a bot needs the service (do not pass service: false)');
  const env = {
    ...(discord ? discordEnv(service, discord) : {}),
    ...(slack ? slackEnv(service, slack, { socketMode: options.socketMode }) : {}),
    ...(redis ? { STORE_URL: redis.url } : {}),
    // An image's first preparation starts a worker process (nice 10: Node, sharp): on a CI machine
    // whose two cores run the suite's files in parallel, its start alone passed the default 5 s,
    // and the image was left out of a question a test expected it in. The bound itself is tested
    // where it is the subject (abuse-images.test.ts sets it; image-pool.test.ts).
    IMAGE_PREP_TIMEOUT_MS: '30000',
    ...options.env,
  };
  parts.botEnv = env;
  if (options.process) parts.botProcess = await spawnBot(env);
  else parts.bot = await startTestBot(env);
}

/** Runs a cleanup that `beforeBot` or `ready` returned, if it returned one. */
async function runCleanup(cleanup: Cleanup | undefined): Promise<void> {
  if (cleanup) await cleanup();
}

/** The read-only view of `parts` that `ready` and `beforeBot` get. */
function contextOf(parts: Parts): E2E {
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`useE2E: no ${what} was started (see its options)`);
    return value;
  };
  return {
    get service() {
      return need(parts.service, 'service');
    },
    get discord() {
      return need(parts.discord, 'FakeDiscord');
    },
    get slack() {
      return need(parts.slack, 'FakeSlack');
    },
    get redis() {
      return need(parts.redis, 'Redis');
    },
    get bot() {
      return need(parts.bot, 'in-process bot');
    },
    get botProcess() {
      return need(parts.botProcess, 'bot process');
    },
    get botEnv() {
      return need(parts.botEnv, 'bot');
    },
    get botUrl() {
      return `http://127.0.0.1:${need(need(parts.bot, 'in-process bot').bot.slack?.port, 'Slack HTTP endpoint')}`;
    },
  };
}
