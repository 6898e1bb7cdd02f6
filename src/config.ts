/**
 * The bot's configuration: the process environment, validated by the schemas of
 * config-env.ts (where every default is written), turned into one section per part of the
 * bot (`service`, `discord`, `slack`, `models`, `limits`…), which the composition root
 * (src/bot.ts) hands whole to the part that needs it.
 *
 * Every variable is in docs/configuration.md and .env.example, generated from the schema (`npm run docs:config`).
 */
import { ENV_DEFAULTS, type Env, envSchema, type LOG_LEVELS, shardProblems } from './config-env.ts';
import { type FallbackModels, fallbacksOf } from './config-fallback.ts';
import { type SpendConfig, spendOf } from './config-prices.ts';
import { platformProblems, type SlackConfig, slackOf } from './config-slack.ts';
import { type TracingConfig, tracingOf, tracingSecrets } from './config-tracing.ts';
import type { Locale } from './core/i18n/locales.ts';

export type { SlackConfig, SlackOAuthConfig } from './config-slack.ts';

/** Names of every environment variable the bot reads (docs/configuration.md and .env.example list each). */
export const ENV_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

/** Discord settings, present when the Discord adapter is to run. */
export interface DiscordConfig {
  token: string;
  applicationId: string;
  /** REST base, e.g. `http://proxy:8080/api`; discord.js's default (`https://discord.com/api`) when unset. */
  apiUrl: string | undefined;
  /** Gateway shards: `auto` (Discord's count), a total count, or undefined (one); `ids`: this process's (default all). */
  shards: { count: 'auto' | number; ids: number[] | undefined } | undefined;
  /**
   * Whether the privileged Message Content intent is requested (`DISCORD_MESSAGE_CONTENT`):
   * needed only to read the attachments of a message that a mention replies to when that
   * message neither mentioned the bot nor is its own. Enable it in the Developer Portal first.
   */
  messageContent: boolean;
}

/** The generation service's section (`SERVICE_*`): timeouts in ms. */
export interface ServiceConfig {
  baseUrl: string;
  apiKey: string;
  /** Timeouts in ms: TCP+TLS connect, response headers, silence between body chunks. */
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** SERVICE_MAX_CONCURRENCY: generation requests at once and pool connections. */
  maxConcurrency: number;
}

/** Limits of what users may ask for, and of how answers are shown (the core's `limits`). */
export interface CoreLimits {
  /** Largest `max_tokens` a user may ask for (`MAX_TOKENS_LIMIT`). */
  maxTokens: number;
  /** Estimated tokens of history sent with a chat (`HISTORY_TOKEN_BUDGET`). */
  historyTokenBudget: number;
  /**
   * Files read as context: characters of one (`MAX_FILE_CHARS`), files of one message
   * (`MAX_FILES_PER_MESSAGE`), bytes downloaded for one message's files
   * (`MAX_FILE_BYTES_PER_MESSAGE`), PDF pages (`MAX_PDF_PAGES`), and the ms that one message's
   * PDFs may take (`PDF_TIMEOUT_MS`).
   */
  files: { maxChars: number; maxFiles: number; maxMessageBytes: number; maxPdfPages: number; pdfTimeoutMs: number };
  /** Messages of a reply chain read as a mention's conversation, at most (`REPLY_CHAIN_MAX`; Discord). */
  replyChainMax: number;
  /** Minutes after a mention during which editing it re-answers it in place (`EDIT_REANSWER_MINUTES`; 0: off). */
  editReanswerMinutes: number;
  /**
   * An answer that took longer than this, in seconds, from its command to its end notifies its
   * asker when it ends (`NOTIFY_AFTER_SECONDS`; 0: never): features/answer-notice.ts.
   */
  notifyAfterSeconds: number;
  /**
   * The language of the bot's words wherever no user's or place's language is known
   * (`DEFAULT_LOCALE`, a shipped locale): core/i18n/languages.ts.
   */
  defaultLocale: Locale;
  /** A user's newest answers that keep what Regenerate needs (`REGENERATE_STATES_PER_USER`); older ones are dropped. */
  regenerateStatesPerUser: number;
  /** Oldest message answered by catch-up after downtime, in minutes (`CATCH_UP_MAX_AGE_MINUTES`; 0: off). */
  catchUpMaxAgeMinutes: number;
  /**
   * Minutes between two sweeps for mentions and DMs the platform never delivered
   * (`SWEEP_MINUTES`, fractions allowed; 0: off): core/sweep.ts.
   */
  sweepMinutes: number;
  /**
   * Minutes without any event from a platform after which missed messages found by the sweep
   * mean a deaf connection, re-established (`EVENT_SILENCE_MINUTES`, fractions allowed; 0: never).
   */
  eventSilenceMinutes: number;
  /**
   * Days a conversation's turns, button states and feedback are kept (`HISTORY_RETENTION_DAYS`):
   * older ones are removed by the store (state/retention.ts; docs/data.md).
   */
  historyRetentionDays: number;
  /** Whether admins may use `disable_safety_checker` (`ALLOW_DISABLE_SAFETY_CHECKER`). */
  allowDisableSafetyChecker: boolean;
  /** Longest answer shown in messages, in characters (`MAX_ANSWER_CHARS`); the rest comes as a file. */
  maxAnswerChars: number;
  /** A stream that sends no text for this long is ended, in ms (`STREAM_IDLE_TIMEOUT_MS`). */
  streamIdleMs: number;
  /** Who may press an image's Reroll / Upscale / Vary (`IMAGINE_BUTTONS`): the requester and admins, or everyone. */
  imagineButtons: 'requester' | 'everyone';
  /** `denoising_strength` of Vary (`VARY_DENOISING_STRENGTH`). */
  varyDenoisingStrength: number;
  /**
   * Largest image kept in the store with an /imagine result's buttons, in bytes, each (the posted image, the
   * job's reference; `IMAGINE_STATE_MAX_BYTES`), for when the posted one is gone. Undefined: by the store. */
  imagineStateMaxBytes: number | undefined;
}

/** The validated configuration the composition root (src/bot.ts) builds everything from, one section per part. */
export interface Config {
  service: ServiceConfig;
  discord: DiscordConfig | undefined;
  slack: SlackConfig | undefined;
  /** keyv store URL: `sqlite://<path>` or `redis://…`. */
  storeUrl: string;
  /**
   * The default models; `vision` is for requests with images (the chat model when unset);
   * `fallbacks`, the models that answer in turn when the one asked is unavailable (FALLBACK_*_MODELS).
   */
  models: {
    chat: string | undefined;
    image: string | undefined;
    vision: string | undefined;
    fallbacks: FallbackModels;
  };
  /** Caps on the images users send: count per request, bytes per file. */
  inputImages: { maxCount: number; maxBytes: number };
  /**
   * Image workers: jobs at once (each a process), the time one request's images may take (ms),
   * and the memory of one worker process (MiB, `WORKER_MEMORY_MB`).
   */
  imageWorkers: { concurrency: number; timeoutMs: number; memoryMb: number };
  /** PDF workers: jobs at once (`PDF_WORKERS`, each a process of its own), and the memory of one (MiB). */
  pdfWorkers: { concurrency: number; memoryMb: number };
  /** Request limits, as the core takes them. */
  limits: CoreLimits;
  /** Per-user quotas (0: off); admins exempt unless `admins`. */
  quotas: { chatPerMinute: number; imagesPerDay: number; tokensPerDay: number; admins: boolean };
  /** The price table (`PRICES_FILE`) and the caps (`SPEND_CAP_*`) in micro-units; undefined: none (nothing counted). */
  spend: SpendConfig | undefined;
  /** Port of /healthz and /metrics (0: any free port); undefined: not served. */
  httpPort: number | undefined;
  /** On SIGTERM/SIGINT, how long running answers may take to finish before they are stopped, in ms. */
  shutdownGraceMs: number;
  /** Who is an admin besides the platforms' own admins: user ids (Discord or Slack) and Discord role ids. */
  admins: { userIds: string[]; roleIds: string[] };
  logLevel: (typeof LOG_LEVELS)[number];
  /** `json` lines (default) or `pretty` (pino-pretty, for a terminal). */
  logFormat: 'json' | 'pretty';
  /** Where traces go (OTEL_EXPORTER_OTLP_*); undefined: tracing off, the SDK never loaded. */
  tracing: TracingConfig | undefined;
  /** Every secret value, so the logger can scrub them from any line. */
  secrets: string[];
}

/**
 * The credentials written in a URL (`redis://user:password@host`): the password and the user
 * name, as written and percent-decoded, for the logger to scrub. None for a URL without them.
 */
export function urlCredentials(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const decode = (text: string) => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text;
    }
  };
  const values = [parsed.password, decode(parsed.password), parsed.username, decode(parsed.username)];
  return [...new Set(values.filter((v) => v !== ''))];
}

/** Thrown by {@link loadConfig}; `message` names every offending variable, one per line. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The problems zod found, one line per variable, never echoing a value. */
function schemaProblems(
  env: Record<string, string | undefined>,
  issues: readonly { path: PropertyKey[]; code: string; message: string }[],
): string[] {
  return issues.map((issue) => {
    const name = String(issue.path[0] ?? 'environment');
    return `${name} ${issue.code === 'invalid_type' && env[name] === undefined ? 'is required' : issue.message}`;
  });
}

function serviceOf(e: Env): ServiceConfig {
  return {
    baseUrl: e.SERVICE_BASE_URL,
    apiKey: e.SERVICE_API_KEY,
    connectTimeoutMs: e.SERVICE_CONNECT_TIMEOUT_MS,
    headersTimeoutMs: e.SERVICE_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: e.SERVICE_BODY_TIMEOUT_MS,
    maxConcurrency: e.SERVICE_MAX_CONCURRENCY,
  };
}

function discordOf(e: Env): DiscordConfig | undefined {
  if (!e.DISCORD_TOKEN || !e.DISCORD_APPLICATION_ID) return undefined;
  return {
    token: e.DISCORD_TOKEN,
    applicationId: e.DISCORD_APPLICATION_ID,
    apiUrl: e.DISCORD_API_URL,
    messageContent: e.DISCORD_MESSAGE_CONTENT,
    shards: e.DISCORD_SHARDS === undefined ? undefined : { count: e.DISCORD_SHARDS, ids: e.DISCORD_SHARD_IDS },
  };
}

function limitsOf(e: Pick<Env, keyof typeof ENV_DEFAULTS.limits>): CoreLimits {
  return {
    maxTokens: e.MAX_TOKENS_LIMIT,
    historyTokenBudget: e.HISTORY_TOKEN_BUDGET,
    files: {
      maxChars: e.MAX_FILE_CHARS,
      maxFiles: e.MAX_FILES_PER_MESSAGE,
      maxMessageBytes: e.MAX_FILE_BYTES_PER_MESSAGE,
      maxPdfPages: e.MAX_PDF_PAGES,
      pdfTimeoutMs: e.PDF_TIMEOUT_MS,
    },
    replyChainMax: e.REPLY_CHAIN_MAX,
    editReanswerMinutes: e.EDIT_REANSWER_MINUTES,
    notifyAfterSeconds: e.NOTIFY_AFTER_SECONDS,
    defaultLocale: e.DEFAULT_LOCALE,
    regenerateStatesPerUser: e.REGENERATE_STATES_PER_USER,
    catchUpMaxAgeMinutes: e.CATCH_UP_MAX_AGE_MINUTES,
    sweepMinutes: e.SWEEP_MINUTES,
    eventSilenceMinutes: e.EVENT_SILENCE_MINUTES,
    historyRetentionDays: e.HISTORY_RETENTION_DAYS,
    allowDisableSafetyChecker: e.ALLOW_DISABLE_SAFETY_CHECKER,
    maxAnswerChars: e.MAX_ANSWER_CHARS,
    streamIdleMs: e.STREAM_IDLE_TIMEOUT_MS,
    imagineButtons: e.IMAGINE_BUTTONS,
    varyDenoisingStrength: e.VARY_DENOISING_STRENGTH,
    imagineStateMaxBytes: e.IMAGINE_STATE_MAX_BYTES,
  };
}

/** The image sections of a {@link Config} (`inputImages`, `imageWorkers`, `pdfWorkers`). */
function imagesOf(e: Pick<Env, keyof typeof ENV_DEFAULTS.images>) {
  return {
    inputImages: { maxCount: e.MAX_INPUT_IMAGES, maxBytes: e.MAX_INPUT_IMAGE_BYTES },
    imageWorkers: {
      concurrency: e.IMAGE_PREP_CONCURRENCY,
      timeoutMs: e.IMAGE_PREP_TIMEOUT_MS,
      memoryMb: e.WORKER_MEMORY_MB,
    },
    pdfWorkers: { concurrency: e.PDF_WORKERS, memoryMb: e.WORKER_MEMORY_MB },
  };
}

/**
 * The sections that have a value without any environment, from the schemas' defaults: what
 * `createCore`, the image pool and the service client use when they are built without one.
 */
export const CONFIG_DEFAULTS = {
  limits: limitsOf(ENV_DEFAULTS.limits),
  ...imagesOf(ENV_DEFAULTS.images),
  service: {
    connectTimeoutMs: ENV_DEFAULTS.service.SERVICE_CONNECT_TIMEOUT_MS,
    headersTimeoutMs: ENV_DEFAULTS.service.SERVICE_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: ENV_DEFAULTS.service.SERVICE_BODY_TIMEOUT_MS,
    maxConcurrency: ENV_DEFAULTS.service.SERVICE_MAX_CONCURRENCY,
  },
} as const;

/**
 * Validates the environment and builds a {@link Config}.
 * @param env usually `process.env`.
 * @throws ConfigError naming every missing or malformed variable (never echoing a value).
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const parsed = envSchema.safeParse(env);
  const problems = parsed.success ? shardProblems(parsed.data) : schemaProblems(env, parsed.error.issues);
  const spend = parsed.success ? spendOf(parsed.data) : undefined;
  const tracing = parsed.success ? tracingOf(parsed.data) : undefined;
  problems.push(...(spend?.problems ?? []), ...(tracing?.problems ?? []), ...platformProblems(env));
  if (!parsed.success || problems.length > 0) throw new ConfigError([...new Set(problems)]);
  const e = parsed.data;
  return {
    service: serviceOf(e),
    discord: discordOf(e),
    slack: slackOf(e),
    storeUrl: e.STORE_URL,
    models: {
      chat: e.DEFAULT_CHAT_MODEL,
      image: e.DEFAULT_IMAGE_MODEL,
      vision: e.DEFAULT_VISION_MODEL,
      fallbacks: fallbacksOf(e),
    },
    ...imagesOf(e),
    limits: limitsOf(e),
    admins: { userIds: e.ADMIN_USER_IDS, roleIds: e.ADMIN_ROLE_IDS },
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    spend: spend?.spend,
    httpPort: e.HTTP_PORT,
    quotas: {
      chatPerMinute: e.QUOTA_CHAT_PER_MINUTE,
      imagesPerDay: e.QUOTA_IMAGES_PER_DAY,
      tokensPerDay: e.QUOTA_TOKENS_PER_DAY,
      admins: e.QUOTA_ADMINS,
    },
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    tracing: tracing?.tracing,
    secrets: [
      e.SERVICE_API_KEY,
      e.DISCORD_TOKEN,
      e.SLACK_BOT_TOKEN,
      e.SLACK_SIGNING_SECRET,
      e.SLACK_APP_TOKEN,
      e.SLACK_CLIENT_SECRET,
      e.SLACK_STATE_SECRET,
      env.SLACK_INSTALLATION_KEY?.trim(),
      env.SLACK_INSTALLATION_KEY_PREVIOUS?.trim(),
      ...urlCredentials(e.STORE_URL),
      e.OTEL_EXPORTER_OTLP_HEADERS,
      ...tracingSecrets(e),
    ].filter((s): s is string => typeof s === 'string' && s.length > 0),
  };
}
