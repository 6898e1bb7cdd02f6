/**
 * Whether a reload (SIGHUP: src/reload.ts) applies each variable of the configuration schema
 * (config-env.ts), part of that one schema: `live` values are read where they are used (each
 * request, each answer, each log line), so a reload swaps them in place on the running bot;
 * `restart` values built something that lives as long as the process (a connection, a client,
 * a pool, a port, a timer, the store), so only a restart applies them: a reload that finds one
 * changed names it in the log and leaves it as it runs.
 *
 * The table is typed over the schema's keys: a variable added to config-env.ts without a line
 * here does not compile (and test/core/config-reload.test.ts checks the same at run time).
 * docs/configuration.md and .env.example, generated (`npm run docs:config`), say from it whether a
 * reload applies each variable.
 */
import { envSchema } from './config-env.ts';

/** `live`: a reload applies it; `restart`: only a restart does. */
export type ReloadKind = 'live' | 'restart';

/** The name of a variable of the configuration schema. */
export type EnvName = keyof typeof envSchema.shape;

/** Every variable of the schema and whether a reload applies it. */
export const RELOAD_KINDS: { readonly [Name in EnvName]: ReloadKind } = {
  // The service client's pool, timeouts and key are set when it is made.
  SERVICE_BASE_URL: 'restart',
  SERVICE_API_KEY: 'restart',
  SERVICE_CONNECT_TIMEOUT_MS: 'restart',
  SERVICE_HEADERS_TIMEOUT_MS: 'restart',
  SERVICE_BODY_TIMEOUT_MS: 'restart',
  SERVICE_MAX_CONCURRENCY: 'restart',
  // The platforms' connections (gateway, Socket Mode, the HTTP receiver) and their clients.
  DISCORD_TOKEN: 'restart',
  DISCORD_APPLICATION_ID: 'restart',
  DISCORD_API_URL: 'restart',
  DISCORD_MESSAGE_CONTENT: 'restart',
  DISCORD_SHARDS: 'restart',
  DISCORD_SHARD_IDS: 'restart',
  SLACK_BOT_TOKEN: 'restart',
  SLACK_CLIENT_ID: 'restart',
  SLACK_CLIENT_SECRET: 'restart',
  SLACK_STATE_SECRET: 'restart',
  SLACK_INSTALLATION_KEY: 'restart',
  SLACK_INSTALLATION_KEY_PREVIOUS: 'restart',
  SLACK_SIGNING_SECRET: 'restart',
  SLACK_APP_TOKEN: 'restart',
  SLACK_API_URL: 'restart',
  SLACK_PORT: 'restart',
  // Read each time the agent view shows its suggested prompts.
  ASSISTANT_PROMPTS: 'live',
  // The store's connection.
  STORE_URL: 'restart',
  // Read by each request (ModelDefaults).
  DEFAULT_CHAT_MODEL: 'live',
  DEFAULT_IMAGE_MODEL: 'live',
  DEFAULT_VISION_MODEL: 'live',
  // Read by each request (ModelDefaults.fallbacks).
  FALLBACK_CHAT_MODELS: 'live',
  FALLBACK_IMAGE_MODELS: 'live',
  // Read by each request (core.inputImages).
  MAX_INPUT_IMAGES: 'live',
  MAX_INPUT_IMAGE_BYTES: 'live',
  // The worker pools' processes and deadlines are set when they are made.
  IMAGE_PREP_TIMEOUT_MS: 'restart',
  IMAGE_PREP_CONCURRENCY: 'restart',
  PDF_WORKERS: 'restart',
  WORKER_MEMORY_MB: 'restart',
  // core.limits, read by each request or answer.
  MAX_TOKENS_LIMIT: 'live',
  MAX_ANSWER_CHARS: 'live',
  STREAM_IDLE_TIMEOUT_MS: 'live',
  HISTORY_TOKEN_BUDGET: 'live',
  MAX_FILE_CHARS: 'live',
  MAX_FILES_PER_MESSAGE: 'live',
  MAX_FILE_BYTES_PER_MESSAGE: 'live',
  MAX_PDF_PAGES: 'live',
  // The PDF workers' deadline, set when the pool is made.
  PDF_TIMEOUT_MS: 'restart',
  REPLY_CHAIN_MAX: 'live',
  EDIT_REANSWER_MINUTES: 'live',
  NOTIFY_AFTER_SECONDS: 'live',
  REGENERATE_STATES_PER_USER: 'live',
  // The seen conversations' TTL and the connection listeners that start catch-up are set at start.
  CATCH_UP_MAX_AGE_MINUTES: 'restart',
  // Read by each sweep (core/sweep.ts): the next one is timed with the value then.
  SWEEP_MINUTES: 'live',
  EVENT_SILENCE_MINUTES: 'live',
  // The store's retention (its TTLs and the sweep) is set at start.
  HISTORY_RETENTION_DAYS: 'restart',
  DEFAULT_LOCALE: 'live',
  ALLOW_DISABLE_SAFETY_CHECKER: 'live',
  IMAGINE_BUTTONS: 'live',
  IMAGINE_STATE_MAX_BYTES: 'live',
  VARY_DENOISING_STRENGTH: 'live',
  // Read by each request (core.quotas, core.spend); PRICES_FILE is read again by each reload.
  QUOTA_CHAT_PER_MINUTE: 'live',
  QUOTA_IMAGES_PER_DAY: 'live',
  QUOTA_TOKENS_PER_DAY: 'live',
  QUOTA_ADMINS: 'live',
  PRICES_FILE: 'live',
  SPEND_CAP_USER_DAY: 'live',
  SPEND_CAP_USER_MONTH: 'live',
  SPEND_CAP_CHANNEL_DAY: 'live',
  SPEND_CAP_CHANNEL_MONTH: 'live',
  SPEND_CAP_SERVER_DAY: 'live',
  SPEND_CAP_SERVER_MONTH: 'live',
  // Checked when each command or button press runs.
  ADMIN_USER_IDS: 'live',
  ADMIN_ROLE_IDS: 'live',
  // The stop's grace is taken when the signal handler is set up; the ops server's port and the
  // log's output format when they are made.
  SHUTDOWN_GRACE_MS: 'restart',
  HTTP_PORT: 'restart',
  LOG_FORMAT: 'restart',
  // pino's level, which every logger made from the bot's reads.
  LOG_LEVEL: 'live',
  // The OpenTelemetry SDK and its exporter are started once, at start.
  OTEL_EXPORTER_OTLP_ENDPOINT: 'restart',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'restart',
  OTEL_EXPORTER_OTLP_PROTOCOL: 'restart',
  OTEL_EXPORTER_OTLP_HEADERS: 'restart',
  OTEL_SERVICE_NAME: 'restart',
};

/**
 * The variables whose value differs between two environments, in the schema's order (a variable
 * set to `''` is the same as one not set, as the schema reads it). Values are compared, never
 * returned.
 */
export function changedVariables(
  before: Record<string, string | undefined>,
  after: Record<string, string | undefined>,
): EnvName[] {
  return (Object.keys(envSchema.shape) as EnvName[]).filter((name) => (before[name] ?? '') !== (after[name] ?? ''));
}
