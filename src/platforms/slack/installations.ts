/**
 * Slack's installations (the OAuth mode: any number of workspaces) in the bot's store, behind
 * Bolt's `InstallationStore` interface (@slack/oauth 4: storeInstallation, fetchInstallation,
 * deleteInstallation), so that every instance sharing the store (SQLite or Redis) serves every
 * workspace, and Bolt's own authorize reads them for each request.
 *
 * - One row per installation, `slack-installation:<id>` (keys.ts `slackInstallationId`): a
 *   workspace's `team:<T…>`, or for an Enterprise Grid org-wide install (`isEnterpriseInstall`)
 *   the enterprise's `enterprise:<E…>`, as Bolt's own stores key them.
 * - The whole installation (bot token, refresh token, user token, webhook URL, ids) is sealed
 *   with AES-256-GCM under SLACK_INSTALLATION_KEY (state/sealed.ts), the row's id authenticated
 *   with it: the store file holds no token. A row sealed with SLACK_INSTALLATION_KEY_PREVIOUS is
 *   read, then written again with the current key (only if it is still the row read: a token
 *   rotated meanwhile is never overwritten by the older one).
 * - `slack-installations` lists every id (doctor, listings), edited under the store's lock.
 * - What authorize reads is kept {@link CACHE_TTL_MS} in this process (at most
 *   {@link CACHE_ENTRIES} installations), replaced when this process stores one and dropped when
 *   it deletes one; another instance's change shows here within the TTL (a rotated token's
 *   predecessor stays valid at Slack until it expires, hours later).
 *
 * Token rotation is Bolt's: its authorize refreshes a bot token that expires within two hours
 * (`oauth.v2.access`, grant_type=refresh_token) and calls {@link storeInstallation} with the new
 * tokens, which seals and stores them like any other.
 */
import type { Installation, InstallationQuery, InstallationStore } from '@slack/bolt';
import { WebClient, type WebClientOptions } from '@slack/web-api';
import { slackInstallationId, storeKeys } from '../../core/keys.ts';
import type { KeyRing, SealedValue } from '../../core/state/sealed.ts';
import type { StateStore } from '../../core/state/store.ts';
import type { Logger } from '../../log.ts';
import type { WorkspaceClients } from './catch-up.ts';

/** How long this process trusts an installation it read, in ms. */
export const CACHE_TTL_MS = 5_000;
/** Installations cached at most (the cache starts afresh past it). */
export const CACHE_ENTRIES = 10_000;

/** An installation as Bolt hands it over and reads it back. */
export type SlackInstallation = Installation<'v1' | 'v2', boolean>;

/** Thrown by fetchInstallation for a workspace or enterprise with no installation (Bolt's authorize then refuses the request). */
export class NoInstallationError extends Error {
  constructor(readonly installationId: string | undefined) {
    super(`no Slack installation for ${installationId ?? 'a request that names no workspace'}`);
    this.name = 'NoInstallationError';
  }
}

/** The id of an installation Bolt hands over (keys.ts slackInstallationId). */
function idOf(installation: SlackInstallation): string | undefined {
  return slackInstallationId({
    teamId: installation.team?.id,
    enterpriseId: installation.enterprise?.id,
    isEnterpriseInstall: installation.isEnterpriseInstall,
  });
}

/** The installations in the store, sealed. One per adapter (and one per doctor run). */
export class SlackInstallationStore implements InstallationStore {
  /** Told of each installation stored (a workspace installing the app, again or anew), by team id: the uninstall listeners serve it again. */
  onStored: ((teamId: string) => void) | undefined;
  /** Installations read or stored lately, as JSON (each fetch parses its own copy: Bolt's refresh mutates what it gets). */
  private readonly cache = new Map<string, { json: string; until: number }>();

  /**
   * @param options.cacheMs how long a read is trusted in this process (default {@link CACHE_TTL_MS}; 0: no cache).
   */
  constructor(
    private readonly store: StateStore,
    private readonly keys: KeyRing,
    private readonly log: Logger,
    private readonly options: { cacheMs?: number; now?: () => number } = {},
  ) {}

  /**
   * Seals and stores an installation (a new one from the OAuth redirect, or one whose tokens
   * Bolt just rotated), and lists its id.
   * @throws Error for an installation that names neither its workspace nor (org-wide) its
   *   enterprise; what the store throws.
   */
  async storeInstallation(installation: SlackInstallation): Promise<void> {
    const id = idOf(installation);
    if (!id) throw new Error('a Slack installation names neither its workspace nor its enterprise');
    const key = storeKeys.slackInstallation(id);
    const json = JSON.stringify(installation);
    await this.store.withLock(key, () => this.store.keyv.set(key, this.keys.seal(json, id)));
    this.remember(id, json);
    await this.list(id, true);
    this.log.info({ installation: id }, 'slack installation stored');
    if (installation.team?.id) this.onStored?.(installation.team.id);
  }

  /**
   * The installation that serves a request (what Bolt's authorize asks for every event,
   * command and action).
   * @throws NoInstallationError when there is none; SealError when its row does not open with
   *   the bot's keys; what the store throws.
   */
  async fetchInstallation(query: InstallationQuery<boolean>): Promise<SlackInstallation> {
    const id = slackInstallationId(query);
    if (!id) throw new NoInstallationError(undefined);
    const now = (this.options.now ?? Date.now)();
    const cached = this.cache.get(id);
    if (cached && cached.until > now) return JSON.parse(cached.json) as SlackInstallation;
    const key = storeKeys.slackInstallation(id);
    const row = await this.store.keyv.get<SealedValue>(key);
    if (row === undefined) {
      this.cache.delete(id);
      throw new NoInstallationError(id);
    }
    const { plaintext, stale } = this.keys.open(row, id);
    const installation = JSON.parse(plaintext) as SlackInstallation;
    this.remember(id, plaintext);
    if (stale) void this.reseal(id, row, installation);
    return installation;
  }

  /**
   * Deletes an installation (its row and its id in the list) and forgets it in this process:
   * the seam for an uninstall (`app_uninstalled`, `tokens_revoked`). Another instance may serve
   * it from its cache for up to {@link CACHE_TTL_MS}.
   * @param query the workspace (`teamId`) or, for an org-wide install, the enterprise
   *   (`enterpriseId` with `isEnterpriseInstall: true`).
   * @throws Error when the query names neither; what the store throws.
   */
  async deleteInstallation(query: InstallationQuery<boolean>): Promise<void> {
    const id = slackInstallationId(query);
    if (!id) throw new Error('a Slack installation query names neither a workspace nor an enterprise');
    this.cache.delete(id);
    await this.store.keyv.delete(storeKeys.slackInstallation(id));
    this.cache.delete(id); // again: a fetch that read the row before the delete may have cached it meanwhile
    await this.list(id, false);
    this.log.info({ installation: id }, 'slack installation deleted');
  }

  /** The ids of every installation (`team:<T…>`, `enterprise:<E…>`). @throws what the store throws. */
  async ids(): Promise<string[]> {
    return (await this.store.keyv.get<string[]>(storeKeys.slackInstallations())) ?? [];
  }

  /**
   * The installation serving a workspace, or undefined when it has none: outside a request
   * (catch-up, the streaming probe, the doctor). The workspace's own first, then (with
   * `enterpriseId`) its enterprise's org-wide one.
   * @throws SealError, what the store throws.
   */
  async ofTeam(teamId: string, enterpriseId?: string): Promise<SlackInstallation | undefined> {
    const queries: InstallationQuery<boolean>[] = [{ teamId, enterpriseId, isEnterpriseInstall: false }];
    if (enterpriseId) queries.push({ teamId: undefined, enterpriseId, isEnterpriseInstall: true });
    for (const query of queries) {
      try {
        return await this.fetchInstallation(query);
      } catch (error) {
        if (!(error instanceof NoInstallationError)) throw error;
      }
    }
    return undefined;
  }

  /** Writes a row read with the previous key again with the current one, if it is still that row. */
  private async reseal(id: string, read: SealedValue, installation: SlackInstallation): Promise<void> {
    const key = storeKeys.slackInstallation(id);
    try {
      const resealed = await this.store.withLock(key, async () => {
        const now = await this.store.keyv.get<SealedValue>(key);
        if (now?.iv !== read.iv || now.data !== read.data) return false;
        await this.store.keyv.set(key, this.keys.seal(JSON.stringify(installation), id));
        return true;
      });
      if (resealed) this.log.info({ installation: id }, 'slack installation sealed again with the current key');
    } catch (error) {
      this.log.warn({ err: error, installation: id }, 'could not seal a slack installation again with the current key');
    }
  }

  private remember(id: string, json: string): void {
    const ttl = this.options.cacheMs ?? CACHE_TTL_MS;
    if (ttl <= 0) return;
    if (this.cache.size >= CACHE_ENTRIES && !this.cache.has(id)) this.cache.clear();
    this.cache.set(id, { json, until: (this.options.now ?? Date.now)() + ttl });
  }

  /** Adds an id to the list, or removes it. */
  private async list(id: string, present: boolean): Promise<void> {
    const key = storeKeys.slackInstallations();
    await this.store.withLock(key, async () => {
      const listed = await this.ids();
      if (listed.includes(id) === present) return;
      await this.store.keyv.set(key, present ? [...listed, id] : listed.filter((i) => i !== id));
    });
  }
}

/** Clients kept at most by {@link installedWorkspaces} (one per bot token; the map starts afresh past it). */
const MAX_CLIENTS = 1_000;

/**
 * How a workspace's bot token is got outside a request: Bolt's installer's `authorize`
 * (@slack/oauth InstallProvider), which reads the installation and, when the app rotates tokens,
 * refreshes a bot token that expires within two hours and stores the new one back.
 * @throws what the installer throws (no installation, a refused refresh).
 */
export type AuthorizeWorkspace = (query: InstallationQuery<false>) => Promise<{ botToken?: string }>;

/**
 * The OAuth mode's catch-up clients (catch-up.ts WorkspaceClients): a workspace's installation
 * read from the store, its bot token (refreshed first by `authorize` when given: a rotating token
 * may have expired while the bot was down) in a WebClient made once per token; undefined for a
 * workspace with no installation (or none with a bot).
 */
export function installedWorkspaces(
  installations: SlackInstallationStore,
  options: WebClientOptions,
  authorize?: AuthorizeWorkspace,
): WorkspaceClients {
  const clients = new Map<string, WebClient>();
  return async (team) => {
    const installation = await installations.ofTeam(team);
    const bot = installation?.bot;
    if (!bot?.token) return undefined;
    const token = authorize
      ? (await authorize({ teamId: team, enterpriseId: installation?.enterprise?.id, isEnterpriseInstall: false }))
          .botToken
      : bot.token;
    if (!token) return undefined;
    let client = clients.get(token);
    if (!client) {
      if (clients.size >= MAX_CLIENTS) clients.clear();
      client = new WebClient(token, options);
      clients.set(token, client);
    }
    return { client, botUserId: bot.userId };
  };
}
