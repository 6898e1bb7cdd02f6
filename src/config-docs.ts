/**
 * What each variable of the configuration schema does, in an operator's words: the one place
 * those words are written. `npm run docs:config` (scripts/config-docs.ts) renders them, with the
 * type, default and range read from the zod schemas themselves (config-env.ts and its section
 * files) and the reload kind from `RELOAD_KINDS` (config-reload.ts), into docs/configuration.md
 * and .env.example; test/core/config-docs.test.ts fails when either file is out of date.
 *
 * {@link VARIABLE_DOCS} is typed over the schema's keys: a variable added to the schema without a
 * description here does not compile. A description says what the variable does and what its
 * value means, never its default or range (those come from the schema, so they cannot disagree).
 */
import type { z } from 'zod';
import {
  discordEnv,
  IMAGINE_STATE_MAX_BYTES_DEFAULT,
  imagesEnv,
  limitsEnv,
  opsEnv,
  quotasEnv,
  serviceEnv,
  slackEnv,
  spendEnv,
  storeAndModelsEnv,
} from './config-env.ts';
import { fallbackEnv } from './config-fallback.ts';
import type { EnvName } from './config-reload.ts';
import { tracingEnv } from './config-tracing.ts';
import { SHIPPED_LOCALES } from './core/i18n/locales.ts';

/** The variables only `npm run deploy-commands` reads (its own schema, deploy.ts `deployEnv`). */
export type DeployOnlyName = 'DISCORD_GUILD_ID';

/**
 * One section of the configuration: a title, a paragraph or two of Markdown said before its
 * table, and the schema whose keys it lists, in their order.
 */
export interface ConfigSection {
  title: string;
  about: string;
  schema: z.ZodObject;
  /** Variables read by a tool beside the bot (deploy-commands), listed after the schema's. */
  deployOnly?: readonly DeployOnlyName[];
}

/** The sections, in the order of `envSchema` (config-env.ts); together they hold each of its keys once. */
export const CONFIG_SECTIONS: readonly ConfigSection[] = [
  {
    title: 'The generation service',
    about: 'Where the OpenAI-compatible service is, the key the bot calls it with, and how long it waits.',
    schema: serviceEnv,
  },
  {
    title: 'Discord',
    about:
      'Set `DISCORD_TOKEN` and `DISCORD_APPLICATION_ID` to run on Discord. At least one platform, Discord or Slack, must be configured.',
    schema: discordEnv,
    deployOnly: ['DISCORD_GUILD_ID'],
  },
  {
    title: 'Slack',
    about:
      'Two modes, one at a time. One workspace: `SLACK_BOT_TOKEN` and `SLACK_SIGNING_SECRET`. Any number of workspaces, installed through `/slack/install`: `SLACK_CLIENT_ID`, `SLACK_CLIENT_SECRET`, `SLACK_STATE_SECRET`, `SLACK_INSTALLATION_KEY` and `SLACK_SIGNING_SECRET`; quotas, `/usage` and admins are then per workspace.',
    schema: slackEnv,
  },
  {
    title: 'Store and default models',
    about: 'Where the state lives, and the models used when nobody chose one.',
    schema: storeAndModelsEnv,
  },
  {
    title: 'Fallback models',
    about:
      'Models that answer in turn when the one asked is unavailable before any text came: a 5xx, a connect or headers timeout, or a model the service does not know. The answer names the model that answered; a stream cut in the middle is never asked again. docs/service-api.md, "Model fallback", has the rule.',
    schema: fallbackEnv,
  },
  {
    title: 'Images, PDFs and worker processes',
    about:
      "The users' images and PDFs are read in worker processes apart from the bot, bounded in count, bytes, time and memory.",
    schema: imagesEnv,
  },
  {
    title: 'Limits, answers and history',
    about: 'What users may ask for, how answers are shown, and how long what the bot keeps is kept.',
    schema: limitsEnv,
  },
  {
    title: 'Per-user quotas',
    about: "Enforced across every instance sharing the store. In Slack's OAuth mode a user is counted per workspace.",
    schema: quotasEnv,
  },
  {
    title: 'Prices and spending caps',
    about: [
      '`PRICES_FILE` names a JSON price table in one currency (an ISO 4217 code), checked at start (a bad currency or a negative price stops the bot, naming its place in the file): per chat model, the price of a million prompt and of a million completion tokens; per image model, of one image, by style where it differs; a `default` row for models not listed:',
      '',
      '```json',
      '{',
      '  "currency": "USD",',
      '  "chat": { "gpt-4o-mini": { "prompt": 0.15, "completion": 0.6 }, "default": { "prompt": 2.5, "completion": 10 } },',
      '  "images": { "Flux": { "perImage": 0.04, "styles": { "upscaled": 0.02 } }, "default": { "perImage": 0.05 } }',
      '}',
      '```',
      '',
      'The caps are in that currency (e.g. `0.10`), per UTC day and month, and need `PRICES_FILE`. While any cap is on, a model the table prices neither by a row nor by `default` is refused (the start-up log names the default models it does not price). How caps hold under parallel requests: docs/architecture.md, "Prices and spending caps".',
    ].join('\n'),
    schema: spendEnv,
  },
  {
    title: 'Admins, shutdown, health and logs',
    about: 'Who administers the bot, and how it is operated.',
    schema: opsEnv,
  },
  {
    title: 'Traces (OpenTelemetry)',
    about:
      'OTLP over HTTP, with OpenTelemetry\'s own variable names; off unless an endpoint is set, and then the SDK is not even loaded. The SDK reads its other standard variables itself ("Read outside the configuration" in docs/configuration.md). Pointing it at a collector: docs/deploy.md, "Traces".',
    schema: tracingEnv,
  },
];

/** What each variable of the schema does, one or two sentences for an operator (Markdown). */
export const VARIABLE_DOCS: { readonly [Name in EnvName | DeployOnlyName]: string } = {
  SERVICE_BASE_URL: 'Base URL of the OpenAI-compatible generation service, with or without `/v1`.',
  SERVICE_API_KEY: 'API key for the service, sent as `Authorization: Bearer <key>`.',
  SERVICE_CONNECT_TIMEOUT_MS: 'Longest wait for the TCP (and TLS) connection to the service.',
  SERVICE_HEADERS_TIMEOUT_MS: "Longest wait for the service's response headers.",
  SERVICE_BODY_TIMEOUT_MS: 'Longest silence between two chunks of a streamed answer.',
  SERVICE_MAX_CONCURRENCY:
    'Generation requests running at once (streams, image generations) and connections to the service (HTTP/2 where the service offers it). More wait in a queue fair across channels, and their users see their place.',
  DISCORD_TOKEN: 'The bot token (Developer Portal → Bot → Reset Token).',
  DISCORD_APPLICATION_ID: 'The application id (Developer Portal → General Information), used to register the commands.',
  DISCORD_API_URL:
    "Discord's REST base, e.g. `http://proxy:8080/api` for a rate-limit proxy (the gateway URL then comes from its `/gateway/bot`). Unset: Discord's own.",
  DISCORD_MESSAGE_CONTENT:
    '`true` requests the privileged Message Content intent (enable it in the Developer Portal → Bot first). Only needed to read the images of a message that a mention replies to when that message did not mention the bot.',
  DISCORD_SHARDS:
    'Gateway shards: `auto` (as many as Discord recommends) or a total number. Unset: one shard. Large bots only.',
  DISCORD_SHARD_IDS:
    'With a number in `DISCORD_SHARDS`: the shards this process runs (e.g. `0` in one replica, `1` in another). Unset: all.',
  DISCORD_GUILD_ID:
    'Read by `npm run deploy-commands` only: registers the commands in this guild (at once, for development) instead of globally. A user install sees only the global commands.',
  SLACK_BOT_TOKEN: 'One workspace: the bot token (`xoxb-…`, OAuth & Permissions). Leave empty for the OAuth mode.',
  SLACK_CLIENT_ID:
    "Any number of workspaces (instead of `SLACK_BOT_TOKEN`): the app's Client ID (Basic Information → App Credentials); people install the app at `https://<the bot>/slack/install`.",
  SLACK_CLIENT_SECRET: "OAuth mode: the app's Client Secret (Basic Information → App Credentials).",
  SLACK_STATE_SECRET:
    "OAuth mode: any long random string that signs the install flow's `state` (each good for 10 minutes, once), e.g. from `openssl rand -hex 32`.",
  SLACK_INSTALLATION_KEY:
    "OAuth mode: the AES-256-GCM key the installations' tokens are stored under, 32 random bytes as base64 or 64 hex digits (`openssl rand -base64 32`). Losing it means every workspace must install again.",
  SLACK_INSTALLATION_KEY_PREVIOUS:
    'OAuth mode, while rotating `SLACK_INSTALLATION_KEY`: the previous key. Each installation is read with it and written again with the new one the next time it is used; drop it once `npm run doctor` shows none left unreadable.',
  SLACK_SIGNING_SECRET: "The app's signing secret (Basic Information → App Credentials), needed in both modes.",
  SLACK_APP_TOKEN:
    'An app-level token (`xapp-…`, scope `connections:write`): when set, the bot uses Socket Mode instead of HTTP.',
  SLACK_API_URL: "Slack's Web API base. Unset: `https://slack.com/api/`.",
  SLACK_PORT:
    "The port Slack's requests arrive on in HTTP mode (`/slack/events`; `/slack/install` and `/slack/oauth_redirect` in the OAuth mode); in Socket Mode with the OAuth install, the port of the install pages.",
  ASSISTANT_PROMPTS:
    'The suggested prompts of Slack\'s agent view (Messages tab): a JSON array of at most 4 `{"title": …, "message": …}`; `[]` shows none. Also read by `npm run slack-manifest`.',
  STORE_URL:
    'Where history and state are kept: `sqlite://<path>` for one instance, or `redis://host:6379` (`rediss://` with TLS) for several. A password in the URL is never logged.',
  DEFAULT_CHAT_MODEL: "Default chat model id. Unset: the first non-image model the service's `/v1/models` lists.",
  DEFAULT_IMAGE_MODEL: 'Default image model (its display name). Unset: the service chooses.',
  DEFAULT_VISION_MODEL:
    'Model for requests with images (mentions with attachments); it must accept image input. Unset: the chat model.',
  FALLBACK_CHAT_MODELS:
    'Comma-separated chat models tried in order when the chat model asked fails before any text (e.g. `model-b,model-c`). Unset: no fallback.',
  FALLBACK_IMAGE_MODELS:
    'Comma-separated image models tried in order when the image model asked fails before the image (e.g. `Fake Image XL`). Unset: no fallback.',
  MAX_INPUT_IMAGES: 'Most images read from one message.',
  MAX_INPUT_IMAGE_BYTES: 'Largest image file read; a larger one is named as not used, never downloaded whole.',
  IMAGE_PREP_TIMEOUT_MS:
    'Longest time the images of one request may take to convert; an image past it is named as not used. SVG is never read.',
  IMAGE_PREP_CONCURRENCY: 'Images converted at once, each in a worker process of its own at low priority.',
  PDF_WORKERS:
    'PDFs read at once, each in a worker process of its own, apart from the image workers and below them in priority.',
  WORKER_MEMORY_MB:
    'The most memory one worker process (image or PDF) may hold; a file that needs more is named as not used.',
  MAX_TOKENS_LIMIT: 'Largest `max_tokens` a user may ask for with /chat or /complete.',
  MAX_ANSWER_CHARS: 'Longest answer shown in messages; a longer answer shows its start and comes whole as `answer.md`.',
  STREAM_IDLE_TIMEOUT_MS:
    'A streamed answer that sends no text for this long (keep-alives do not count) is ended with a note.',
  HISTORY_TOKEN_BUDGET: 'Estimated tokens of conversation history sent with each chat; older turns are left out first.',
  MAX_FILE_CHARS:
    'Characters read of one attached text file or PDF; the files of one question together get at most the history budget.',
  MAX_FILES_PER_MESSAGE: 'Files (text files and PDFs) read of one message; the rest are named as not used.',
  MAX_FILE_BYTES_PER_MESSAGE:
    'Bytes downloaded for the files of one message together; a text file is downloaded only as far as the budget can use.',
  MAX_PDF_PAGES: 'Pages read of an attached PDF.',
  PDF_TIMEOUT_MS: 'Longest time reading the PDFs of one message may take in the worker processes, waiting included.',
  REPLY_CHAIN_MAX:
    'A Discord mention that replies to a message reads the reply chain, at most this many messages, within `HISTORY_TOKEN_BUDGET`.',
  EDIT_REANSWER_MINUTES:
    'Editing a message that mentioned the bot re-answers it in place within this many minutes; 0: off.',
  NOTIFY_AFTER_SECONDS:
    'An answer that took longer than this from its command to its end notifies its asker with a short message that mentions them alone; 0: off (per channel: `/settings notify:false`).',
  REGENERATE_STATES_PER_USER:
    "A user's newest answers (of the last day) that can be regenerated; an older one's Regenerate says it was dropped. Together they are kept within 16 MiB on SQLite, 2 MiB on Redis.",
  CATCH_UP_MAX_AGE_MINUTES:
    'After a restart (or a Discord gateway session that could not be resumed), mentions and DMs sent meanwhile and at most this many minutes old are answered, marked as late; 0: off.',
  SWEEP_MINUTES:
    'Every this many minutes (fractions allowed, e.g. 0.5) the bot reads the conversations where it was addressed lately and answers, marked as late, the mentions and DMs the platform never delivered; 0: off (needs `CATCH_UP_MAX_AGE_MINUTES` above 0).',
  EVENT_SILENCE_MINUTES:
    'A platform that delivered no event for this many minutes while the sweep found missed mentions is deaf: its connection is made again and `/healthz` fails until an event arrives; 0: never.',
  HISTORY_RETENTION_DAYS:
    'Days conversation turns, Regenerate and button states, votes and feedback records are kept; older ones are deleted from the store (at start, then every hour). docs/data.md says what is stored.',
  DEFAULT_LOCALE:
    "The language of the bot's own words where no user's or place's language is known. Users see their own (Discord's client language, Slack's user locale); `/settings locale` sets a channel's public messages (docs/i18n.md).",
  ALLOW_DISABLE_SAFETY_CHECKER:
    '`true` lets admins use `/imagine disable_safety_checker` (the service account must allow it too).',
  IMAGINE_BUTTONS:
    "Who may press an image's Reroll / Upscale / Vary buttons: `requester` (the person who asked, and admins) or `everyone`.",
  IMAGINE_STATE_MAX_BYTES: `Largest image kept in the store with an image's buttons (they find the posted image again; the kept bytes serve when it is gone, and as Reroll's \`reference_image\`). Unset: ${IMAGINE_STATE_MAX_BYTES_DEFAULT.redis} with Redis, ${IMAGINE_STATE_MAX_BYTES_DEFAULT.sqlite} with SQLite.`,
  VARY_DENOISING_STRENGTH: 'How far Vary strays from the image, as `denoising_strength`.',
  QUOTA_CHAT_PER_MINUTE: 'Chat requests (/chat, /complete, mentions) one user may make a minute; 0: off.',
  QUOTA_IMAGES_PER_DAY: 'Images (/imagine) one user may ask for a day; 0: off.',
  QUOTA_TOKENS_PER_DAY:
    "Tokens (prompt and completion, from the service's usage or estimated) one user may spend a day; 0: off.",
  QUOTA_ADMINS: '`true` holds admins to the quotas too; `false`: admins are exempt.',
  PRICES_FILE: 'Path of the price table, a JSON file (above). Unset: no spend is counted. Each reload reads it again.',
  SPEND_CAP_USER_DAY: 'Most one user may spend in a UTC day; 0: off.',
  SPEND_CAP_USER_MONTH: 'Most one user may spend in a UTC month; 0: off.',
  SPEND_CAP_CHANNEL_DAY: 'Most one channel may spend in a UTC day; 0: off.',
  SPEND_CAP_CHANNEL_MONTH: 'Most one channel may spend in a UTC month; 0: off.',
  SPEND_CAP_SERVER_DAY: 'Most one server (Discord guild or Slack workspace) may spend in a UTC day; 0: off.',
  SPEND_CAP_SERVER_MONTH: 'Most one server (Discord guild or Slack workspace) may spend in a UTC month; 0: off.',
  ADMIN_USER_IDS:
    "User ids (Discord or Slack) who are admins of the bot besides the platforms' own admins. With this or `ADMIN_ROLE_IDS` set, `npm run deploy-commands` registers /models and /settings for every member to see (the bot checks who runs them).",
  ADMIN_ROLE_IDS: 'Discord role ids whose members are admins of the bot.',
  SHUTDOWN_GRACE_MS:
    'On SIGTERM or SIGINT, how long running answers may take to finish before they are stopped (their partial text kept).',
  HTTP_PORT:
    'Port of the health check (`GET /healthz`: 200 when every platform is connected and the store answers, 503 otherwise) and of the Prometheus metrics (`GET /metrics`). Unset: not served.',
  LOG_FORMAT: '`json` (one JSON object a line) or `pretty` (readable, for a terminal).',
  LOG_LEVEL: 'The least severe level of the log lines written.',
  OTEL_EXPORTER_OTLP_ENDPOINT:
    "The collector's base URL, e.g. `http://otel-collector:4318` (`/v1/traces` is appended). Unset, with no `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`: tracing is off.",
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT:
    'The full traces URL instead, used as it is (e.g. `https://collector.example.com/v1/traces`).',
  OTEL_EXPORTER_OTLP_PROTOCOL: 'The encoding of the exports (gRPC is not supported).',
  OTEL_EXPORTER_OTLP_HEADERS:
    'Headers sent with every export, `key=value` pairs separated by commas, values percent-encoded (e.g. `x-api-key=abc123`).',
  OTEL_SERVICE_NAME: "The traces' `service.name`.",
};

/**
 * The variables whose value is a secret: never logged (config.ts `secrets` scrubs each), marked
 * as such in the docs. test/core/config-docs.test.ts checks this list against `secrets`.
 */
export const SECRET_VARIABLES: readonly EnvName[] = [
  'SERVICE_API_KEY',
  'DISCORD_TOKEN',
  'SLACK_BOT_TOKEN',
  'SLACK_CLIENT_SECRET',
  'SLACK_STATE_SECRET',
  'SLACK_INSTALLATION_KEY',
  'SLACK_INSTALLATION_KEY_PREVIOUS',
  'SLACK_SIGNING_SECRET',
  'SLACK_APP_TOKEN',
  'OTEL_EXPORTER_OTLP_HEADERS',
];

/** A value to show in .env.example for a variable that has no default (a required one's form). */
export const EXAMPLE_VALUES: { readonly [Name in EnvName]?: string } = {
  SERVICE_BASE_URL: 'https://api.example.com/v1',
};

/** The values a variable takes when its schema cannot say them (a transform checks them). */
export const VALUES_OF: { readonly [Name in EnvName]?: readonly string[] } = {
  DEFAULT_LOCALE: SHIPPED_LOCALES,
};

/**
 * Variables read outside the configuration schema: by npm, Node, a script or the OpenTelemetry
 * SDK. Listed in docs/configuration.md (not .env.example, which they do not belong in).
 */
export const OTHER_VARIABLES: readonly { name: string; readBy: string; description: string }[] = [
  {
    name: 'INIT_CWD',
    readBy: 'npm start, npm run doctor, deploy-commands and slack-manifest',
    description: 'Set by npm to the folder `npm` was run in: `.env` is read from there (else from the current folder).',
  },
  {
    name: 'NODE_OPTIONS',
    readBy: 'Node (npm start)',
    description: "`npm start` puts the heap's limits first and keeps yours after them.",
  },
  {
    name: 'SETUP_PUBLIC_URL',
    readBy: 'npm run setup',
    description:
      "The bot's public HTTPS address, for the Slack OAuth mode's redirect and install page that setup prints (`--public-url`); never written to `.env`.",
  },
  {
    name: 'CHROMIUM',
    readBy: 'npm run screenshots',
    description: "The Chromium binary that photographs the docs' screenshots (default `chromium`, Debian's package).",
  },
  {
    name: 'OTEL_TRACES_SAMPLER, OTEL_BSP_*, OTEL_RESOURCE_ATTRIBUTES, …',
    readBy: 'the OpenTelemetry SDK, when tracing is on',
    description:
      "The SDK's other standard variables (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).",
  },
];
