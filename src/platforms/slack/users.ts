/**
 * Who is invoking, on Slack: an admin of the bot is a workspace admin or owner (`users.info`:
 * `is_admin`, `is_owner`, `is_primary_owner`; scope `users:read`), or is listed in
 * `ADMIN_USER_IDS`. Answers are cached for a few minutes (users.info is tier 4, but every
 * admin command and /forget asks). Slack has no "manage messages": /forget in a channel is
 * for admins.
 */
import type { WebClient } from '@slack/web-api';
import type { AdminList } from '../../core/core.ts';
import type { InvocationUser } from '../../core/platform.ts';
import type { Logger } from '../../log.ts';
import { patiently } from './rate-limits.ts';

/** The bot scope users.info needs. */
export const SLACK_USER_SCOPES = ['users:read'] as const;

/** How long a users.info answer is trusted, in ms. */
export const USER_CACHE_TTL_MS = 5 * 60_000;

interface CachedUser {
  isAdmin: boolean;
  /** The name people see: the profile's display name, else the real name, else the user name. */
  name: string;
  at: number;
}

/** users.info with a cache; one per adapter. */
export class SlackDirectory {
  private readonly cache = new Map<string, CachedUser>();

  constructor(
    private readonly admins: AdminList,
    private readonly log: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * The user as the core sees it; users.info is called only when a right is asked for. When
   * it fails (a missing scope, Slack down) the user is no admin (unless listed) and the
   * failure is logged: admin rights are never guessed.
   * @param name the name Slack sent with the request (slash commands carry `user_name`).
   */
  user(client: WebClient, userId: string, name = userId): InvocationUser {
    const isAdmin = async () =>
      this.admins.userIds.has(userId) || (await this.lookup(client, userId))?.isAdmin === true;
    return { id: userId, name, isAdmin, canManageMessages: isAdmin };
  }

  /**
   * The name a user is shown by (users.info, cached; a thread's authors, issue 19).
   * @returns the user id when users.info fails (logged).
   */
  async displayName(client: WebClient, userId: string): Promise<string> {
    return (await this.lookup(client, userId))?.name ?? userId;
  }

  private async lookup(client: WebClient, userId: string): Promise<CachedUser | undefined> {
    const cached = this.cache.get(userId);
    if (cached && this.now() - cached.at < USER_CACHE_TTL_MS) return cached;
    try {
      const { user } = await patiently(() => client.users.info({ user: userId }));
      const entry: CachedUser = {
        isAdmin: user?.is_admin === true || user?.is_owner === true || user?.is_primary_owner === true,
        name: user?.profile?.display_name || user?.real_name || user?.name || userId,
        at: this.now(),
      };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(userId, entry);
      return entry;
    } catch (error) {
      this.log.warn(
        { user: userId, err: error instanceof Error ? error.message : String(error) },
        'users.info failed; treating the user as no admin',
      );
      return undefined;
    }
  }
}
