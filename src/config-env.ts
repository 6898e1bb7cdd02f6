/**
 * The environment the bot reads, as zod schemas by section, and every default value, written
 * once here: `loadConfig` (config.ts) parses the process environment with them, and the parts
 * that can be built without a configuration (tests, `createCore` without limits) take their
 * defaults from the same schemas ({@link CONFIG_DEFAULTS}).
 *
 * What each variable does: config-docs.ts; `npm run docs:config` renders docs/configuration.md and .env.example.
 */
import { z } from 'zod';
import { fallbackEnv } from './config-fallback.ts';
import { tracingEnv } from './config-tracing.ts';
import { localeTag } from './core/i18n/locales.ts';

/** Levels pino knows, from the most to the least severe, and `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** An empty string in the environment means "not set" (as in a `.env` line `FOO=`). */
const unset = (v: unknown) => v === '' || v === undefined;
const optionalString = z.preprocess((v) => (v === '' ? undefined : v), z.string().optional());
const optionalUrl = z.preprocess((v) => (v === '' ? undefined : v), z.url().optional());
const withDefault = <T extends z.ZodType>(fallback: unknown, schema: T) =>
  z.preprocess((v) => (unset(v) ? fallback : v), schema);
const optionalInt = (fallback: number, min: number, max: number) =>
  withDefault(fallback, z.coerce.number().int().min(min).max(max));
/** Minutes, fractions allowed (`0.5`: 30 s), from 0 (off) to a day (1440). */
const optionalMinutes = (fallback: number) => withDefault(fallback, z.coerce.number().min(0).max(1440));
const optionalBoolean = z.preprocess(
  (v) => (unset(v) ? 'false' : typeof v === 'string' ? v.toLowerCase() : v),
  z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true'),
);
const idList = z.preprocess(
  (v) => (typeof v === 'string' ? v.split(/[\s,]+/).filter(Boolean) : v === undefined ? [] : v),
  z.array(z.string().regex(/^[A-Za-z0-9]+$/, 'must be a comma-separated list of user or role ids')),
);
const optionalMs = (fallback: number) => optionalInt(fallback, 1, 3_600_000);

/** The generation service: where, with which key, and its timeouts (ms) and concurrency. */
export const serviceEnv = z.object({
  SERVICE_BASE_URL: z.url({ error: 'must be an http(s) URL, e.g. https://api.example.com/v1' }),
  SERVICE_API_KEY: z.string({ error: 'is required' }).min(1, 'is required'),
  SERVICE_CONNECT_TIMEOUT_MS: optionalMs(10_000),
  SERVICE_HEADERS_TIMEOUT_MS: optionalMs(60_000),
  SERVICE_BODY_TIMEOUT_MS: optionalMs(60_000),
  SERVICE_MAX_CONCURRENCY: optionalInt(256, 1, 100_000),
});

/** Discord: the bot token, the application, the REST base, the intent and the shards. */
export const discordEnv = z.object({
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
  DISCORD_SHARDS: withDefault(
    undefined,
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
});

/** One suggested prompt of Slack's agent view: its button's title and the message it sends. */
export interface AssistantPrompt {
  title: string;
  message: string;
}

/**
 * The suggested prompts of Slack's agent view when ASSISTANT_PROMPTS is unset: what the bot can
 * do there (an answer, an image, a summary of the channel the user is viewing).
 */
export const DEFAULT_ASSISTANT_PROMPTS: readonly AssistantPrompt[] = [
  { title: 'Ask anything', message: 'What can you help me with?' },
  { title: 'Imagine an image', message: 'imagine a lighthouse on a cliff at dawn, in watercolor' },
  { title: 'Summarize this channel', message: 'Summarize the channel I am viewing' },
];

/** A text field of each suggested prompt: 1 to `max` characters once trimmed, refused as needing `what`. */
function promptField(what: string, max: number) {
  const error = `needs ${what} in each prompt`;
  return z.string({ error }).trim().min(1, error).max(max, error);
}

/** What ASSISTANT_PROMPTS must be, said for any value that is not such an array (an element included). */
const ASSISTANT_PROMPTS_SHAPE = 'must be a JSON array of {"title": "…", "message": "…"}';

/**
 * ASSISTANT_PROMPTS: a JSON array of at most 4 `{ "title", "message" }` (Slack shows up to
 * four), titles at most 75 and messages at most 2,000 characters (the bot's own bounds);
 * `[]` shows none. Unset: {@link DEFAULT_ASSISTANT_PROMPTS}. Every refusal is said in the
 * schema's own words (what the operator reads at start), never zod's ("expected object").
 */
const assistantPrompts = z.preprocess(
  (v) => {
    if (unset(v)) return DEFAULT_ASSISTANT_PROMPTS;
    try {
      return typeof v === 'string' ? JSON.parse(v) : v;
    } catch {
      return v;
    }
  },
  z
    .array(
      z.object(
        {
          title: promptField('a title of 1 to 75 characters', 75),
          message: promptField('a message of 1 to 2,000 characters', 2000),
        },
        { error: ASSISTANT_PROMPTS_SHAPE },
      ),
      { error: ASSISTANT_PROMPTS_SHAPE },
    )
    // A refinement, not .max(): zod 4 runs a length check on a string that is no array too.
    .refine((list) => list.length <= 4, 'takes at most 4 prompts'),
);

/**
 * SLACK_INSTALLATION_KEY and SLACK_INSTALLATION_KEY_PREVIOUS: 32 bytes, written as 64 hex digits or
 * as base64 (44 characters with its `=`; base64url too). Refused in the schema's own words, never
 * echoing the value.
 */
const installationKey = z.preprocess(
  (v) => (v === '' ? undefined : v),
  z
    .string()
    .trim()
    .refine((text) => installationKeyBytes(text) !== undefined, {
      error: 'must be 32 random bytes written as 64 hex digits or as base64 (e.g. openssl rand -base64 32)',
    })
    .transform((text) => installationKeyBytes(text)!)
    .optional(),
);

/**
 * The 32 bytes of an installation key written as 64 hex digits or base64 (standard or url-safe).
 * @returns undefined for any other text (wrong length included).
 */
export function installationKeyBytes(text: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === 32 ? bytes : undefined;
}

/**
 * Slack: the bot token (one workspace) or the OAuth app's credentials and the installations' key
 * (any number of workspaces, installed through /slack/install), the signing secret, Socket Mode's
 * app token, the Web API base, the HTTP port, the agent view's prompts.
 */
export const slackEnv = z.object({
  SLACK_BOT_TOKEN: optionalString,
  SLACK_CLIENT_ID: optionalString,
  SLACK_CLIENT_SECRET: optionalString,
  SLACK_STATE_SECRET: optionalString,
  SLACK_INSTALLATION_KEY: installationKey,
  SLACK_INSTALLATION_KEY_PREVIOUS: installationKey,
  SLACK_SIGNING_SECRET: optionalString,
  SLACK_APP_TOKEN: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.string().startsWith('xapp-', 'must be an app-level token starting with xapp-').optional(),
  ),
  SLACK_API_URL: optionalUrl,
  SLACK_PORT: optionalInt(3000, 0, 65535),
  ASSISTANT_PROMPTS: assistantPrompts,
});

/** The state store and the default models. */
export const storeAndModelsEnv = z.object({
  STORE_URL: withDefault(
    'sqlite://data/history.sqlite',
    z.string().regex(/^(sqlite|redis|rediss):\/\/.+/, 'must be sqlite://<path> or redis://<host>:<port>'),
  ),
  DEFAULT_CHAT_MODEL: optionalString,
  DEFAULT_IMAGE_MODEL: optionalString,
  DEFAULT_VISION_MODEL: optionalString,
});

/**
 * Users' images: count per request, bytes per file; the image workers: deadline (ms) and
 * processes; the PDF workers' processes; the memory of any one worker process (MiB).
 */
export const imagesEnv = z.object({
  MAX_INPUT_IMAGES: optionalInt(4, 1, 10),
  MAX_INPUT_IMAGE_BYTES: optionalInt(20 * 1024 * 1024, 1024, 100 * 1024 * 1024),
  IMAGE_PREP_TIMEOUT_MS: optionalInt(5_000, 100, 120_000),
  IMAGE_PREP_CONCURRENCY: optionalInt(2, 1, 64),
  PDF_WORKERS: optionalInt(2, 1, 64),
  WORKER_MEMORY_MB: optionalInt(512, 192, 65_536),
});

/**
 * IMAGINE_STATE_MAX_BYTES when unset, by store: the largest image kept in the store with an
 * /imagine result's buttons, in bytes. Redis keeps its data in memory: no image there (the
 * buttons find the posted image again on the platform); SQLite, on disk: images up to 4 MiB
 * (most generated images), the fallback when the posted one is gone.
 */
export const IMAGINE_STATE_MAX_BYTES_DEFAULT = { sqlite: 4 * 1024 * 1024, redis: 0 } as const;

/** What users may ask for and how answers are shown (the core's `CoreLimits`). */
export const limitsEnv = z.object({
  MAX_TOKENS_LIMIT: optionalInt(4096, 1, 1_000_000),
  MAX_ANSWER_CHARS: optionalInt(20_000, 2_000, 1_000_000),
  STREAM_IDLE_TIMEOUT_MS: optionalInt(60_000, 1_000, 3_600_000),
  HISTORY_TOKEN_BUDGET: optionalInt(6000, 100, 10_000_000),
  MAX_FILE_CHARS: optionalInt(100_000, 100, 10_000_000),
  MAX_FILES_PER_MESSAGE: optionalInt(5, 1, 50),
  MAX_FILE_BYTES_PER_MESSAGE: optionalInt(40 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
  MAX_PDF_PAGES: optionalInt(50, 1, 10_000),
  PDF_TIMEOUT_MS: optionalInt(15_000, 100, 300_000),
  REPLY_CHAIN_MAX: optionalInt(25, 1, 100),
  EDIT_REANSWER_MINUTES: optionalInt(10, 0, 1440),
  NOTIFY_AFTER_SECONDS: optionalInt(30, 0, 86_400),
  REGENERATE_STATES_PER_USER: optionalInt(20, 1, 1000),
  CATCH_UP_MAX_AGE_MINUTES: optionalInt(15, 0, 1440),
  SWEEP_MINUTES: optionalMinutes(5),
  EVENT_SILENCE_MINUTES: optionalMinutes(10),
  HISTORY_RETENTION_DAYS: optionalInt(90, 1, 3650),
  DEFAULT_LOCALE: withDefault('en', localeTag),
  ALLOW_DISABLE_SAFETY_CHECKER: optionalBoolean,
  IMAGINE_BUTTONS: withDefault(
    'requester',
    z.enum(['requester', 'everyone'], { error: 'must be requester or everyone' }),
  ),
  /** Unset: by the store ({@link IMAGINE_STATE_MAX_BYTES_DEFAULT}). */
  IMAGINE_STATE_MAX_BYTES: z.preprocess(
    (v) => (unset(v) ? undefined : v),
    z.coerce
      .number({ error: 'must be a number of bytes' })
      .int('must be a number of bytes')
      .min(0, 'must be 0 or more')
      .max(100 * 1024 * 1024, 'must be at most 104857600 (100 MiB)')
      .optional(),
  ),
  VARY_DENOISING_STRENGTH: withDefault(
    0.6,
    z.coerce
      .number({ error: 'must be a number from 0 to 1' })
      .min(0, 'must be from 0 to 1')
      .max(1, 'must be from 0 to 1'),
  ),
});

/** Per-user quotas (0: off) and whether admins are held to them. */
export const quotasEnv = z.object({
  QUOTA_CHAT_PER_MINUTE: optionalInt(0, 0, 1_000_000),
  QUOTA_IMAGES_PER_DAY: optionalInt(0, 0, 1_000_000),
  QUOTA_TOKENS_PER_DAY: optionalInt(0, 0, 1_000_000_000),
  QUOTA_ADMINS: optionalBoolean,
});

/** A spending cap in the price table's currency (e.g. `0.10`): 0 or empty is off. */
const optionalMoney = withDefault(
  0,
  z.coerce
    .number({ error: "must be an amount in the price table's currency, e.g. 0.10 (0: off)" })
    .min(0, 'must be 0 (off) or more')
    .max(1_000_000_000, 'must be at most 1000000000'),
);

/**
 * The price table (`PRICES_FILE`, a JSON file read by config-prices.ts) and the spending caps in
 * its currency, per user, channel and server (Discord guild or Slack workspace), per UTC day and
 * month (0: off).
 */
export const spendEnv = z.object({
  PRICES_FILE: optionalString,
  SPEND_CAP_USER_DAY: optionalMoney,
  SPEND_CAP_USER_MONTH: optionalMoney,
  SPEND_CAP_CHANNEL_DAY: optionalMoney,
  SPEND_CAP_CHANNEL_MONTH: optionalMoney,
  SPEND_CAP_SERVER_DAY: optionalMoney,
  SPEND_CAP_SERVER_MONTH: optionalMoney,
});

/** Admins, shutdown, the ops port and logging. */
export const opsEnv = z.object({
  ADMIN_USER_IDS: idList,
  ADMIN_ROLE_IDS: idList,
  SHUTDOWN_GRACE_MS: optionalInt(10_000, 0, 600_000),
  HTTP_PORT: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(0).max(65535).optional()),
  LOG_FORMAT: withDefault('json', z.enum(['json', 'pretty'], { error: 'must be json or pretty' })),
  LOG_LEVEL: withDefault('info', z.enum(LOG_LEVELS)),
});

/**
 * The whole environment. Sections are joined in this order, which is the order problems are
 * reported in (service, platforms, store and models, fallbacks, images, limits, quotas, spend,
 * ops and logging, traces).
 */
export const envSchema = z.object({
  ...serviceEnv.shape,
  ...discordEnv.shape,
  ...slackEnv.shape,
  ...storeAndModelsEnv.shape,
  ...fallbackEnv.shape,
  ...imagesEnv.shape,
  ...limitsEnv.shape,
  ...quotasEnv.shape,
  ...spendEnv.shape,
  ...opsEnv.shape,
  ...tracingEnv.shape,
});

/** The environment as parsed: defaults filled in, numbers coerced. */
export type Env = z.infer<typeof envSchema>;

/** Each defaulted section parsed from an empty environment: the defaults, as values. */
export const ENV_DEFAULTS = {
  service: serviceEnv.omit({ SERVICE_BASE_URL: true, SERVICE_API_KEY: true }).parse({}),
  images: imagesEnv.parse({}),
  limits: limitsEnv.parse({}),
};

/** Shard ids only with a numeric shard count, each below it. */
export function shardProblems(e: Env): string[] {
  if (!e.DISCORD_SHARD_IDS) return [];
  const count = e.DISCORD_SHARDS;
  if (typeof count !== 'number') return ['DISCORD_SHARD_IDS needs DISCORD_SHARDS set to the total number of shards'];
  if (e.DISCORD_SHARD_IDS.some((id) => id >= count))
    return [`DISCORD_SHARD_IDS must be below DISCORD_SHARDS (${count})`];
  return [];
}
