/**
 * The core's dependencies in one object, built by the composition root (src/main.ts) and
 * handed to every command. Tests build it with fakes.
 */

import { CONFIG_DEFAULTS, type CoreLimits } from '../config.ts';
import type { Logger } from '../log.ts';
import { WriteScheduler } from './delivery/scheduler.ts';
import { SharedBudgets } from './delivery/shared-budgets.ts';
import { StopButtons } from './delivery/stops.ts';
import { BotEvents } from './events.ts';
import { Languages } from './i18n/languages.ts';
import type { ImageAttachmentLimits } from './media/attachments.ts';
import { Downloader } from './media/download.ts';
import { ImagePool, type ImagePoolOptions } from './media/image-pool.ts';
import { DEFAULT_IMAGE_INPUT_LIMITS, PDF_WORKER_NICE } from './media/images.ts';
import { ModelCatalog } from './models/catalog.ts';
import { ModelDefaults, type ModelSettings } from './models/defaults.ts';
import type { ServiceClient } from './service/client.ts';
import { Claims } from './state/claims.ts';
import { StoreHealth } from './state/health.ts';
import { ConversationStore } from './state/history.ts';
import { PendingTurns } from './state/pending-turns.ts';
import { NO_QUOTAS, type QuotaLimits, Quotas } from './state/quotas.ts';
import { RetentionSweeper, setRetention } from './state/retention.ts';
import { SeenConversations, seenTtlMs } from './state/seen.ts';
import { SettingsStore } from './state/settings.ts';
import { Spend, type SpendConfig } from './state/spend.ts';
import type { StateStore } from './state/store.ts';
import { UserIndex } from './state/user-index.ts';

/** Everything a command may use. */
export interface Core {
  service: ServiceClient;
  /** The store behind every kind of state (state/store.ts): SQLite or Redis. */
  store: StateStore;
  history: ConversationStore;
  /** What each user left in each workspace: what `/forget me` erases (state/user-index.ts). */
  userIndex: UserIndex;
  /** The history retention's sweep (HISTORY_RETENTION_DAYS): started with the bot, then hourly (state/retention.ts). */
  retention: RetentionSweeper;
  /** Once-only markers (event de-duplication). */
  claims: Claims;
  /** Where messages to the bot were seen: what catch-up reads after downtime (core/catch-up.ts). */
  seen: SeenConversations;
  /** Whether the store answers (answers go on without history when it does not). */
  storeHealth: StoreHealth;
  /** Exchanges answered while the store did not take them, stored once it does. */
  pendingTurns: PendingTurns;
  /** Per-user quotas (off unless configured) and usage counts. */
  quotas: Quotas;
  /** Spend in money and its caps (state/spend.ts); undefined without a price table (PRICES_FILE). */
  spend: Spend | undefined;
  /** Capped downloads of users' files. */
  downloader: Downloader;
  /** Caps on the images users send. */
  inputImages: ImageAttachmentLimits;
  /** The image workers: every image decode and encode runs there, in processes of their own, with a deadline. */
  images: ImagePool;
  /**
   * The PDF workers: users' PDFs are read there (pdf-text.ts), in processes of their own, apart
   * from the image workers and below them in priority, so that a PDF never delays an image.
   */
  pdfs: ImagePool;
  /** Per-channel settings (/settings). */
  settings: SettingsStore;
  /** Whose language the bot's words are in: a user's, a place's, DEFAULT_LOCALE (i18n/languages.ts). */
  languages: Languages;
  /** The service's model lists, cached. */
  catalog: ModelCatalog;
  /** Which model a channel's requests use. */
  models: ModelDefaults;
  /** Paces every streamed write within the platforms' rate-limit budgets (adapters declare them). */
  scheduler: WriteScheduler;
  /** The Stop buttons of the answers streaming in this process. */
  stops: StopButtons;
  /** Limits of what users may ask for. */
  limits: CoreLimits;
  /** Admins named by the operator, besides each platform's own admins (adapters check both). */
  admins: AdminList;
  events: BotEvents;
  log: Logger;
}

/** Limits of what users may ask for (environment): config.ts's section, re-exported for the core's users. */
export type { CoreLimits };

/** Admins named by the operator (`ADMIN_USER_IDS`, `ADMIN_ROLE_IDS`). */
export interface AdminList {
  /** Platform user ids (Discord snowflakes, Slack `U…` ids). */
  userIds: ReadonlySet<string>;
  /** Discord role ids. */
  roleIds: ReadonlySet<string>;
}

/**
 * Builds a Core from its parts: the service client, the keyv store (history, claims and
 * settings are made on it), the logger, the default models, the caps on users' images
 * (defaults: 4 images of at most 20 MiB and 40 megapixels each) and the request limits.
 */
export function createCore(parts: {
  service: ServiceClient;
  store: StateStore;
  log: Logger;
  defaults: ModelSettings;
  inputImages?: Partial<ImageAttachmentLimits>;
  limits?: Partial<CoreLimits>;
  admins?: { userIds?: readonly string[]; roleIds?: readonly string[] };
  downloader?: Downloader;
  /** The image workers' concurrency, per-request deadline and memory (IMAGE_PREP_CONCURRENCY, IMAGE_PREP_TIMEOUT_MS, WORKER_MEMORY_MB). */
  imageWorkers?: Omit<ImagePoolOptions, 'log'>;
  /** The PDF workers' concurrency and memory (PDF_WORKERS, WORKER_MEMORY_MB); their deadline is `limits.files.pdfTimeoutMs`. */
  pdfWorkers?: Omit<ImagePoolOptions, 'log' | 'nice' | 'timeoutMs'>;
  /** How long the model lists are cached, in ms (default 60,000). */
  catalogTtlMs?: number;
  /** Per-user quotas (default: none). */
  quotas?: QuotaLimits;
  /** The price table and spending caps (default: none, nothing counted). */
  spend?: SpendConfig | undefined;
  /** The events object, when the composition root made it first (the service client reports to it). */
  events?: BotEvents;
}): Core {
  const settings = new SettingsStore(parts.store.keyv);
  const catalog = new ModelCatalog(parts.service, {
    log: parts.log,
    ...(parts.catalogTtlMs !== undefined ? { ttlMs: parts.catalogTtlMs } : {}),
  });
  const limits = { ...CONFIG_DEFAULTS.limits, ...parts.limits };
  const languages = new Languages(settings, limits.defaultLocale);
  const retentionMs = limits.historyRetentionDays * 24 * 3_600_000;
  setRetention(parts.store, retentionMs);
  const userIndex = new UserIndex(parts.store, retentionMs);
  const history = new ConversationStore(parts.store, { retentionMs, userIndex });
  const storeHealth = new StoreHealth();
  return {
    service: parts.service,
    store: parts.store,
    history,
    userIndex,
    retention: new RetentionSweeper(parts.store, history, parts.log),
    claims: new Claims(parts.store),
    seen: new SeenConversations(parts.store, { ttlMs: seenTtlMs(limits.catchUpMaxAgeMinutes), log: parts.log }),
    storeHealth,
    pendingTurns: new PendingTurns(history, storeHealth, parts.log),
    quotas: new Quotas(parts.store, parts.quotas ?? NO_QUOTAS, parts.log),
    spend: parts.spend ? openSpend(parts.store, parts.spend, parts.log, parts.defaults) : undefined,
    downloader: parts.downloader ?? new Downloader(),
    inputImages: { ...DEFAULT_IMAGE_INPUT_LIMITS, ...CONFIG_DEFAULTS.inputImages, ...parts.inputImages },
    images: new ImagePool({ ...parts.imageWorkers, log: parts.log }),
    pdfs: new ImagePool({
      ...CONFIG_DEFAULTS.pdfWorkers,
      ...parts.pdfWorkers,
      timeoutMs: limits.files.pdfTimeoutMs,
      nice: PDF_WORKER_NICE,
      log: parts.log,
    }),
    settings,
    languages,
    catalog,
    models: new ModelDefaults(catalog, parts.defaults, settings, (error) =>
      parts.log.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'channel settings unreadable: using the defaults',
      ),
    ),
    scheduler: new WriteScheduler({
      log: parts.log,
      ...(parts.store.budgets ? { shared: new SharedBudgets(parts.store.budgets, parts.log) } : {}),
    }),
    stops: new StopButtons(parts.store, languages),
    limits,
    admins: { userIds: new Set(parts.admins?.userIds ?? []), roleIds: new Set(parts.admins?.roleIds ?? []) },
    log: parts.log,
    events: parts.events ?? new BotEvents(),
  };
}

/** The spend counters; the default models the price table does not price are named in the log. */
function openSpend(store: StateStore, config: SpendConfig, log: Logger, defaults: ModelSettings): Spend {
  const spend = new Spend(store, config, log);
  spend.warnUnpriced(defaults);
  return spend;
}

/**
 * Closes what the core holds open: the store's connection (after the usage counts, seen
 * conversations and exchanges waiting for it are written, as far as it takes them), the download
 * sockets and the image workers.
 */
export async function closeCore(core: Core): Promise<void> {
  core.scheduler.close();
  core.pendingTurns.close();
  await core.retention.stop();
  await Promise.allSettled([
    Promise.all([core.quotas.flush(), core.spend?.flush(), core.seen.flush(), storeWaitingTurns(core)]).then(() =>
      core.store.close(),
    ),
    core.downloader.close(),
    core.images.close(),
    core.pdfs.close(),
  ]);
}

/** The last try at storing the exchanges that wait for the store; those it still refuses are lost (logged). */
async function storeWaitingTurns(core: Core): Promise<void> {
  if (!(await core.pendingTurns.flush()))
    core.log.warn(
      { exchanges: core.pendingTurns.size },
      'stopping with exchanges the state store did not take: they are lost',
    );
}
