/**
 * Who is who on Slack, per workspace (team id): an admin of the bot is a workspace admin or owner
 * (`is_admin`, `is_owner`, `is_primary_owner`; scope `users:read`), or is listed in
 * `ADMIN_USER_IDS`; and the names people are shown by (a thread's or a channel's authors).
 *
 * What Slack says of a user is kept {@link USER_CACHE_TTL_MS}, in one directory per workspace, so
 * that a multi-workspace install keeps each apart. Naming many authors at once reads the
 * workspace's `users.list` (tier 2, about 20 calls a minute; pages of {@link LIST_PAGE_SIZE}, at
 * most {@link MAX_LIST_PAGES}) instead of one `users.info` each (tier 4, about 100 a minute for
 * the whole workspace, which 40 authors would spend in one summary, leaving admins' checks
 * waiting); one listing a workspace runs at a time, and at most once per TTL. Authors it does not
 * find get `users.info`, a few at a time, at most {@link MAX_INFO_LOOKUPS}; the rest are named
 * by id (docs.slack.dev users.list, users.info; Rate limits).
 *
 * A rights check that fails (Slack did not answer, refused, or asked to wait longer than
 * {@link RIGHTS_WAIT_MS}) is never read as "not an admin": it throws {@link RightsNotChecked},
 * whose sentence says the rights could not be checked. Slack has no "manage messages": /forget
 * in a channel is for admins.
 */
import type { WebClient } from '@slack/web-api';
import type { AdminList } from '../../core/core.ts';
import { sentence } from '../../core/i18n/words.ts';
import type { InvocationUser } from '../../core/platform.ts';
import type { Logger } from '../../log.ts';
import { SlackRefusal, slackErrorCode } from './errors.ts';
import { patiently, slackRateLimitWait } from './rate-limits.ts';

/** The bot scope users.info and users.list need. */
export const SLACK_USER_SCOPES = ['users:read'] as const;

/** How long what Slack said of a user is trusted, in ms (rights too: a change shows within this). */
export const USER_CACHE_TTL_MS = 5 * 60_000;
/** Authors missing from the directory past which users.list is read rather than users.info each. */
export const LIST_WHEN_MISSING = 3;
/** Users asked for per users.list page (Slack advises at most 200). */
export const LIST_PAGE_SIZE = 200;
/** users.list pages read at most per listing (so {@link LIST_PAGE_SIZE} × this users). */
export const MAX_LIST_PAGES = 10;
/** users.info lookups at most per naming, after the listing; further authors are named by id. */
export const MAX_INFO_LOOKUPS = 10;
/** users.info lookups run at once when naming. */
const INFO_CONCURRENCY = 4;
/** The longest Retry-After a rights check waits out once, in ms (a user waits for the answer). */
export const RIGHTS_WAIT_MS = 5_000;
/** The longest Retry-After a language lookup waits out once, in ms (English is better than a late answer). */
const LOCALE_WAIT_MS = 1_000;
/** The longest Retry-After a naming waits out once, in ms (names are not worth a long wait). */
const NAMES_WAIT_MS = 2_000;
/** Users kept per workspace at most (the directory starts afresh past it). */
const MAX_USERS_PER_TEAM = 20_000;

/** A user as users.info or users.list describes one (the fields read here). */
interface SlackUser {
  id?: string;
  name?: string;
  real_name?: string;
  is_admin?: boolean;
  is_owner?: boolean;
  is_primary_owner?: boolean;
  profile?: { display_name?: string };
  /** The user's language, e.g. `ja-JP` (only with `include_locale`). */
  locale?: string;
}

interface KnownUser {
  isAdmin: boolean;
  /** The name people see: the profile's display name, else the real name, else the user name. */
  name: string;
  /** The user's language as Slack gave it (`include_locale`), e.g. `ja-JP`; absent when Slack gave none. */
  locale?: string | undefined;
  /** When Slack said so (the directory's clock, ms). */
  at: number;
}

/** One workspace's users as last read. */
interface TeamUsers {
  users: Map<string, KnownUser>;
  /** When users.list was last read (the directory's clock, ms). */
  listedAt?: number;
  /** The listing under way, which other namings wait for. */
  listing?: Promise<void>;
}

/**
 * A rights check Slack did not let the bot make (users.info failed): the sentence says the rights
 * could not be checked and to try again, never that the user is no admin (a SlackRefusal:
 * errors.ts `explainSlackError` tells it).
 */
export class RightsNotChecked extends SlackRefusal {
  /**
   * @param slackError Slack's `error` (or the fault's code), named in the sentence.
   * @param waitMs how long Slack asked to wait (a 429's Retry-After), in ms; else "in a minute".
   */
  constructor(
    readonly slackError: string,
    waitMs: number | undefined,
  ) {
    super(
      waitMs && waitMs > 0
        ? sentence('slack.errors.rights_not_checked_in', { error: slackError, seconds: Math.ceil(waitMs / 1000) })
        : sentence('slack.errors.rights_not_checked', { error: slackError }),
    );
    this.name = 'RightsNotChecked';
  }
}

/** Slack's users, per workspace; one per adapter. */
export class SlackDirectory {
  private readonly teams = new Map<string, TeamUsers>();
  /** The users.info calls under way, by `team:user`. */
  private readonly lookups = new Map<string, Promise<KnownUser>>();

  constructor(
    private readonly admins: AdminList,
    private readonly log: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * The user as the core sees it; Slack is asked only when a right is asked for, and only when
   * the directory does not know the user.
   * @param at the workspace (team id), the user id, and the name Slack sent with the request
   *   (slash commands carry `user_name`; default the id).
   * @returns an InvocationUser whose `isAdmin` / `canManageMessages` reject with
   *   {@link RightsNotChecked} when users.info fails (logged).
   */
  user(client: WebClient, at: { team: string; id: string; name?: string | undefined }): InvocationUser {
    const isAdmin = async () => this.admins.userIds.has(at.id) || (await this.rightsOf(client, at.team, at.id));
    return { id: at.id, name: at.name || at.id, isAdmin, canManageMessages: isAdmin };
  }

  /**
   * The user's language as Slack gives it (`users.info` with `include_locale`, e.g. `ja-JP`), from
   * the directory while fresh: what the bot's words to them (and, Slack having no workspace
   * language, its public words where they asked) are in (i18n/languages.ts). Never throws:
   * undefined when Slack says nothing (logged), the bot then speaking DEFAULT_LOCALE.
   */
  async locale(client: WebClient, team: string, userId: string): Promise<string | undefined> {
    const known = this.known(team, userId);
    if (known) return known.locale;
    try {
      return (await this.lookup(client, team, userId, LOCALE_WAIT_MS)).locale;
    } catch (error) {
      this.log.info({ user: userId, err: errorText(error) }, "users.info failed; the user's language is not known");
      return undefined;
    }
  }

  /** The user's language as the directory knows it now (see {@link locale}), no lookup started. */
  knownLocale(team: string, userId: string): string | undefined {
    return this.known(team, userId)?.locale;
  }

  /** The name one user is shown by ({@link names}). Never throws: the user id when Slack says nothing. */
  async displayName(client: WebClient, team: string, userId: string): Promise<string> {
    return (await this.names(client, team, [userId])).get(userId) ?? userId;
  }

  /**
   * The names `userIds` are shown by, from the directory, users.list when more than
   * {@link LIST_WHEN_MISSING} are unknown, then users.info for at most {@link MAX_INFO_LOOKUPS}
   * left (see the file's comment). Never throws: a user Slack says nothing of is named by id
   * (the failure is logged).
   * @returns every id given, mapped to its name.
   */
  async names(client: WebClient, team: string, userIds: Iterable<string>): Promise<Map<string, string>> {
    const ids = [...new Set(userIds)];
    const missing = () => ids.filter((id) => !this.known(team, id));
    if (missing().length > LIST_WHEN_MISSING) await this.list(client, team);
    const left = missing().slice(0, MAX_INFO_LOOKUPS);
    for (let i = 0; i < left.length; i += INFO_CONCURRENCY) {
      await Promise.all(
        left.slice(i, i + INFO_CONCURRENCY).map((id) =>
          this.lookup(client, team, id, NAMES_WAIT_MS).catch((error: unknown) => {
            this.log.info({ user: id, err: errorText(error) }, 'users.info failed; the user is named by id');
          }),
        ),
      );
    }
    return new Map(ids.map((id) => [id, this.known(team, id)?.name ?? id]));
  }

  /** Whether the user is a workspace admin or owner. @throws RightsNotChecked when users.info fails. */
  private async rightsOf(client: WebClient, team: string, userId: string): Promise<boolean> {
    const known = this.known(team, userId);
    if (known) return known.isAdmin;
    try {
      return (await this.lookup(client, team, userId, RIGHTS_WAIT_MS)).isAdmin;
    } catch (error) {
      const code = slackErrorCode(error) ?? 'no answer';
      this.log.warn({ user: userId, err: errorText(error) }, 'users.info failed: the rights could not be checked');
      throw new RightsNotChecked(code, slackRateLimitWait(error));
    }
  }

  /** What the directory knows of a user, while fresh. */
  private known(team: string, userId: string): KnownUser | undefined {
    const known = this.teams.get(team)?.users.get(userId);
    return known && this.now() - known.at < USER_CACHE_TTL_MS ? known : undefined;
  }

  /**
   * users.info for one user, kept; one call at a time per user (the language lookup an invocation
   * starts and its rights check share it, and its failure).
   * @throws what the call throws (a 429 waited out once, up to `maxWaitMs` of the first caller).
   */
  private lookup(client: WebClient, team: string, userId: string, maxWaitMs: number): Promise<KnownUser> {
    const key = `${team}:${userId}`;
    let pending = this.lookups.get(key);
    if (!pending) {
      pending = patiently(() => client.users.info({ user: userId, include_locale: true }), undefined, maxWaitMs)
        .then(({ user }) => this.keep(team, { ...user, id: userId }))
        .finally(() => this.lookups.delete(key));
      this.lookups.set(key, pending);
    }
    return pending;
  }

  /**
   * Reads the workspace's users.list into the directory, unless it was read within the TTL; one
   * listing a workspace at a time (others wait for it). Never throws: a failure is logged, and
   * users.info names the rest.
   */
  private async list(client: WebClient, team: string): Promise<void> {
    const users = this.team(team);
    if (users.listing !== undefined) return users.listing;
    if (users.listedAt !== undefined && this.now() - users.listedAt < USER_CACHE_TTL_MS) return;
    users.listing = (async () => {
      let cursor: string | undefined;
      try {
        for (let page = 0; page < MAX_LIST_PAGES; page++) {
          const answer = await patiently(
            () => client.users.list({ limit: LIST_PAGE_SIZE, include_locale: true, ...(cursor ? { cursor } : {}) }),
            undefined,
            NAMES_WAIT_MS,
          );
          for (const member of answer.members ?? []) if (member.id) this.keep(team, { ...member, id: member.id });
          cursor = answer.response_metadata?.next_cursor || undefined;
          if (!cursor) break;
        }
      } catch (error) {
        this.log.warn({ team, err: errorText(error) }, 'users.list failed; authors are looked up one by one');
      } finally {
        // Tried, whatever came of it: not again within the TTL.
        users.listedAt = this.now();
        users.listing = undefined;
      }
    })();
    return users.listing;
  }

  /** Keeps what Slack said of a user. */
  private keep(team: string, user: SlackUser & { id: string }): KnownUser {
    const users = this.team(team).users;
    if (users.size >= MAX_USERS_PER_TEAM) users.clear();
    const known: KnownUser = {
      isAdmin: user.is_admin === true || user.is_owner === true || user.is_primary_owner === true,
      name: user.profile?.display_name || user.real_name || user.name || user.id,
      locale: typeof user.locale === 'string' ? user.locale : undefined,
      at: this.now(),
    };
    users.set(user.id, known);
    return known;
  }

  /** A workspace's users, made on first use. */
  private team(team: string): TeamUsers {
    let users = this.teams.get(team);
    if (!users) {
      users = { users: new Map() };
      this.teams.set(team, users);
    }
    return users;
  }
}

/** An error's message for a log line. */
function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
