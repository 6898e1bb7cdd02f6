/**
 * The bot's configuration: one zod schema over the process environment.
 *
 * Every variable is listed, with a one-line comment, in `.env.example`; keep the two in step.
 */
import { z } from 'zod';
import type { CoreLimits } from './core/core.ts';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** An empty string in the environment means "not set" (as in a `.env` line `FOO=`). */
const optionalString = z.preprocess((v) => (v === '' ? undefined : v), z.string().optional());
const optionalUrl = z.preprocess((v) => (v === '' ? undefined : v), z.url().optional());
const optionalInt = (fallback: number, min: number, max: number) =>
  z.preprocess((v) => (v === '' || v === undefined ? fallback : v), z.coerce.number().int().min(min).max(max));
const optionalBoolean = z.preprocess(
  (v) => (v === '' || v === undefined ? 'false' : typeof v === 'string' ? v.toLowerCase() : v),
  z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true'),
);
const idList = z.preprocess(
  (v) => (typeof v === 'string' ? v.split(/[\s,]+/).filter(Boolean) : v === undefined ? [] : v),
  z.array(z.string().regex(/^[A-Za-z0-9]+$/, 'must be a comma-separated list of user or role ids')),
);
const optionalMs = (fallback: number) =>
  z.preprocess((v) => (v === '' || v === undefined ? fallback : v), z.coerce.number().int().min(1).max(3_600_000));

const envSchema = z.object({
  SERVICE_BASE_URL: z.url({ error: 'must be an http(s) URL, e.g. https://api.example.com/v1' }),
  SERVICE_API_KEY: z.string({ error: 'is required' }).min(1, 'is required'),
  SERVICE_CONNECT_TIMEOUT_MS: optionalMs(10_000),
  SERVICE_HEADERS_TIMEOUT_MS: optionalMs(60_000),
  SERVICE_BODY_TIMEOUT_MS: optionalMs(60_000),
  SERVICE_MAX_CONCURRENCY: optionalInt(256, 1, 100_000),

  DISCORD_TOKEN: optionalString,
  DISCORD_APPLICATION_ID: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .regex(/^\d{15,22}$/, 'must be a Discord application id (a snowflake)')
      .optional(),
  ),
  DISCORD_API_URL: optionalUrl,
  DISCORD_MESSAGE_CONTENT: optionalBoolean,
  DISCORD_SHARDS: z.preprocess(
    (v) => (v === '' || v === undefined ? undefined : v),
    z
      .union([z.literal('auto'), z.coerce.number().int().min(1).max(10_000)], {
        error: 'must be auto or a number of shards',
      })
      .optional(),
  ),
  DISCORD_SHARD_IDS: z.preprocess(
    (v) =>
      typeof v === 'string' && v !== ''
        ? v
            .split(/[\s,]+/)
            .filter(Boolean)
            .map(Number)
        : undefined,
    z.array(z.number().int().min(0), { error: 'must be a comma-separated list of shard ids, e.g. 0,1' }).optional(),
  ),

  SLACK_BOT_TOKEN: optionalString,
  SLACK_SIGNING_SECRET: optionalString,
  SLACK_APP_TOKEN: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.string().startsWith('xapp-', 'must be an app-level token starting with xapp-').optional(),
  ),
  SLACK_API_URL: optionalUrl,
  SLACK_PORT: z.preprocess((v) => (v === '' || v === undefined ? 3000 : v), z.coerce.number().int().min(0).max(65535)),

  STORE_URL: z.preprocess(
    (v) => (v === '' || v === undefined ? 'sqlite://data/history.sqlite' : v),
    z.string().regex(/^(sqlite|redis|rediss):\/\/.+/, 'must be sqlite://<path> or redis://<host>:<port>'),
  ),
  DEFAULT_CHAT_MODEL: optionalString,
  DEFAULT_IMAGE_MODEL: optionalString,
  DEFAULT_VISION_MODEL: optionalString,
  MAX_INPUT_IMAGES: optionalInt(4, 1, 10),
  MAX_INPUT_IMAGE_BYTES: optionalInt(20 * 1024 * 1024, 1024, 100 * 1024 * 1024),
  IMAGE_PREP_TIMEOUT_MS: optionalInt(5_000, 100, 120_000),
  IMAGE_PREP_CONCURRENCY: optionalInt(2, 1, 64),
  MAX_TOKENS_LIMIT: optionalInt(4096, 1, 1_000_000),
  MAX_ANSWER_CHARS: optionalInt(20_000, 2_000, 1_000_000),
  STREAM_IDLE_TIMEOUT_MS: optionalInt(60_000, 1_000, 3_600_000),
  QUOTA_CHAT_PER_MINUTE: optionalInt(0, 0, 1_000_000),
  QUOTA_IMAGES_PER_DAY: optionalInt(0, 0, 1_000_000),
  QUOTA_TOKENS_PER_DAY: optionalInt(0, 0, 1_000_000_000),
  QUOTA_ADMINS: optionalBoolean,
  SHUTDOWN_GRACE_MS: z.preprocess(
    (v) => (v === '' || v === undefined ? 10_000 : v),
    z.coerce.number().int().min(0).max(600_000),
  ),
  HISTORY_TOKEN_BUDGET: optionalInt(6000, 100, 10_000_000),
  ADMIN_USER_IDS: idList,
  ADMIN_ROLE_IDS: idList,
  ALLOW_DISABLE_SAFETY_CHECKER: optionalBoolean,
  IMAGINE_BUTTONS: z.preprocess(
    (v) => (v === '' || v === undefined ? 'requester' : v),
    z.enum(['requester', 'everyone'], { error: 'must be requester or everyone' }),
  ),
  VARY_DENOISING_STRENGTH: z.preprocess(
    (v) => (v === '' || v === undefined ? 0.6 : v),
    z.coerce
      .number({ error: 'must be a number from 0 to 1' })
      .min(0, 'must be from 0 to 1')
      .max(1, 'must be from 0 to 1'),
  ),
  HTTP_PORT: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(0).max(65535).optional()),
  LOG_FORMAT: z.preprocess(
    (v) => (v === '' || v === undefined ? 'json' : v),
    z.enum(['json', 'pretty'], { error: 'must be json or pretty' }),
  ),
  LOG_LEVEL: z.preprocess((v) => (v === '' || v === undefined ? 'info' : v), z.enum(LOG_LEVELS)),
});

/** Names of every environment variable the bot reads (`.env.example` lists each, with a comment). */
export const ENV_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

/** Which platforms are configured, and what is missing for them (checked on the raw values). */
function platformProblems(env: Record<string, string | undefined>): string[] {
  const set = (name: string) => env[name] !== undefined && env[name] !== '';
  const discord = set('DISCORD_TOKEN') || set('DISCORD_APPLICATION_ID');
  const slack = set('SLACK_BOT_TOKEN') || set('SLACK_SIGNING_SECRET');
  if (!discord && !slack) {
    return [
      'no platform is configured: set DISCORD_TOKEN and DISCORD_APPLICATION_ID, or SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (or all four)',
    ];
  }
  const pairs: Array<[string, string, boolean]> = [
    ['DISCORD_TOKEN', 'DISCORD_APPLICATION_ID', discord],
    ['DISCORD_APPLICATION_ID', 'DISCORD_TOKEN', discord],
    ['SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET', slack],
    ['SLACK_SIGNING_SECRET', 'SLACK_BOT_TOKEN', slack],
  ];
  return pairs
    .filter(([name, other, on]) => on && !set(name) && set(other))
    .map(([name, other]) => `${name} is required when ${other} is set`);
}

/** Discord settings, present when the Discord adapter is to run. */
export interface DiscordConfig {
  token: string;
  applicationId: string;
  /** REST base, e.g. `http://proxy:8080/api`; discord.js's default (`https://discord.com/api`) when unset. */
  apiUrl: string | undefined;
  /**
   * Gateway shards: `auto` (as many as Discord recommends), a total count, or undefined (one);
   * `shardIds` are the shards this process runs (default: all of them), so that several
   * processes can split them.
   */
  shards: { count: 'auto' | number; ids: number[] | undefined } | undefined;
  /**
   * Whether the privileged Message Content intent is requested (`DISCORD_MESSAGE_CONTENT`):
   * needed only to read the attachments of a message that a mention replies to when that
   * message neither mentioned the bot nor is its own. Enable it in the Developer Portal first.
   */
  messageContent: boolean;
}

/** Slack settings, present when the Slack adapter is to run. */
export interface SlackConfig {
  botToken: string;
  signingSecret: string;
  /** `xapp-` token: Socket Mode when set, HTTP receiver on `port` otherwise. */
  appToken: string | undefined;
  /** Web API base with a trailing slash, e.g. `https://slack.com/api/`. */
  apiUrl: string | undefined;
  /** TCP port of the HTTP receiver (0 = any free port). */
  port: number;
}

/** The validated configuration the composition root (`src/main.ts`) builds everything from. */
export interface Config {
  service: {
    baseUrl: string;
    apiKey: string;
    /** Timeouts in ms: TCP+TLS connect, response headers, silence between body chunks. */
    connectTimeoutMs: number;
    headersTimeoutMs: number;
    bodyTimeoutMs: number;
    /** SERVICE_MAX_CONCURRENCY: generation requests at once and pool connections (default 256). */
    maxConcurrency: number;
  };
  discord: DiscordConfig | undefined;
  slack: SlackConfig | undefined;
  /** keyv store URL: `sqlite://<path>` or `redis://…`. */
  storeUrl: string;
  defaultChatModel: string | undefined;
  defaultImageModel: string | undefined;
  /** Model for requests with images (`DEFAULT_VISION_MODEL`); the chat model when unset. */
  defaultVisionModel: string | undefined;
  /** Caps on the images users send: count per request, bytes per file. */
  inputImages: { maxCount: number; maxBytes: number };
  /** Image workers: jobs at once (each a process) and the time one request's images may take, in ms. */
  imageWorkers: { concurrency: number; timeoutMs: number };
  /** Request limits, as the core takes them (core.ts CoreLimits documents each). */
  limits: CoreLimits;
  /** Per-user quotas (0: off); admins exempt unless `admins`. */
  quotas: { chatPerMinute: number; imagesPerDay: number; tokensPerDay: number; admins: boolean };
  /** Port of /healthz and /metrics (0: any free port); undefined: not served. */
  httpPort: number | undefined;
  /** On SIGTERM/SIGINT, how long running answers may take to finish before they are stopped, in ms. */
  shutdownGraceMs: number;
  /** Who is an admin besides the platforms' own admins: user ids (Discord or Slack) and Discord role ids. */
  admins: { userIds: string[]; roleIds: string[] };
  logLevel: (typeof LOG_LEVELS)[number];
  /** `json` lines (default) or `pretty` (pino-pretty, for a terminal). */
  logFormat: 'json' | 'pretty';
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
  return [
    ...new Set(
      [parsed.password, decode(parsed.password), parsed.username, decode(parsed.username)].filter((v) => v !== ''),
    ),
  ];
}

/** Thrown by {@link loadConfig}; `message` names every offending variable, one per line. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Validates the environment and builds a {@link Config}.
 * @param env usually `process.env`.
 * @throws ConfigError naming every missing or malformed variable (never echoing a value).
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const parsed = envSchema.safeParse(env);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? 'environment');
        return `${name} ${issue.code === 'invalid_type' && env[name] === undefined ? 'is required' : issue.message}`;
      });
  problems.push(...platformProblems(env));
  if (parsed.success && parsed.data.DISCORD_SHARD_IDS) {
    const count = parsed.data.DISCORD_SHARDS;
    if (typeof count !== 'number')
      problems.push('DISCORD_SHARD_IDS needs DISCORD_SHARDS set to the total number of shards');
    else if (parsed.data.DISCORD_SHARD_IDS.some((id) => id >= count))
      problems.push(`DISCORD_SHARD_IDS must be below DISCORD_SHARDS (${count})`);
  }
  if (!parsed.success || problems.length > 0) throw new ConfigError([...new Set(problems)]);
  const e = parsed.data;
  return {
    service: {
      baseUrl: e.SERVICE_BASE_URL,
      apiKey: e.SERVICE_API_KEY,
      connectTimeoutMs: e.SERVICE_CONNECT_TIMEOUT_MS,
      headersTimeoutMs: e.SERVICE_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: e.SERVICE_BODY_TIMEOUT_MS,
      maxConcurrency: e.SERVICE_MAX_CONCURRENCY,
    },
    discord:
      e.DISCORD_TOKEN && e.DISCORD_APPLICATION_ID
        ? {
            token: e.DISCORD_TOKEN,
            applicationId: e.DISCORD_APPLICATION_ID,
            apiUrl: e.DISCORD_API_URL,
            messageContent: e.DISCORD_MESSAGE_CONTENT,
            shards: e.DISCORD_SHARDS === undefined ? undefined : { count: e.DISCORD_SHARDS, ids: e.DISCORD_SHARD_IDS },
          }
        : undefined,
    slack:
      e.SLACK_BOT_TOKEN && e.SLACK_SIGNING_SECRET
        ? {
            botToken: e.SLACK_BOT_TOKEN,
            signingSecret: e.SLACK_SIGNING_SECRET,
            appToken: e.SLACK_APP_TOKEN,
            apiUrl: e.SLACK_API_URL === undefined ? undefined : e.SLACK_API_URL.replace(/\/?$/, '/'),
            port: e.SLACK_PORT,
          }
        : undefined,
    storeUrl: e.STORE_URL,
    defaultChatModel: e.DEFAULT_CHAT_MODEL,
    defaultImageModel: e.DEFAULT_IMAGE_MODEL,
    defaultVisionModel: e.DEFAULT_VISION_MODEL,
    inputImages: { maxCount: e.MAX_INPUT_IMAGES, maxBytes: e.MAX_INPUT_IMAGE_BYTES },
    imageWorkers: { concurrency: e.IMAGE_PREP_CONCURRENCY, timeoutMs: e.IMAGE_PREP_TIMEOUT_MS },
    limits: {
      maxTokens: e.MAX_TOKENS_LIMIT,
      historyTokenBudget: e.HISTORY_TOKEN_BUDGET,
      allowDisableSafetyChecker: e.ALLOW_DISABLE_SAFETY_CHECKER,
      maxAnswerChars: e.MAX_ANSWER_CHARS,
      streamIdleMs: e.STREAM_IDLE_TIMEOUT_MS,
      imagineButtons: e.IMAGINE_BUTTONS,
      varyDenoisingStrength: e.VARY_DENOISING_STRENGTH,
    },
    admins: { userIds: e.ADMIN_USER_IDS, roleIds: e.ADMIN_ROLE_IDS },
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    httpPort: e.HTTP_PORT,
    quotas: {
      chatPerMinute: e.QUOTA_CHAT_PER_MINUTE,
      imagesPerDay: e.QUOTA_IMAGES_PER_DAY,
      tokensPerDay: e.QUOTA_TOKENS_PER_DAY,
      admins: e.QUOTA_ADMINS,
    },
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    secrets: [
      e.SERVICE_API_KEY,
      e.DISCORD_TOKEN,
      e.SLACK_BOT_TOKEN,
      e.SLACK_SIGNING_SECRET,
      e.SLACK_APP_TOKEN,
      ...urlCredentials(e.STORE_URL),
    ].filter((s): s is string => typeof s === 'string' && s.length > 0),
  };
}
