/**
 * Uninstall and revocation (docs.slack.dev/reference/events/app_uninstalled, tokens_revoked):
 * when a workspace removes the app (`app_uninstalled`) or its bot token is revoked
 * (`tokens_revoked` with `event.tokens.bot` not empty; user tokens alone change nothing here),
 * the workspace's installation is forgotten at once (the `forgetInstallation` seam: nothing in
 * the single-token mode, the installation store's `deleteInstallation` in the OAuth mode) and its
 * data purged from the store in the background (core/state/purge.ts: histories, settings,
 * feedback, button and Regenerate states, catch-up's entries…; usage and quota counters stay).
 *
 * Slack sends both events, in either order, and retries each: an event id is handled once
 * (keys.ts `slackClaims.event`), one purge of a team runs at a time (a second event meanwhile
 * waits for it), and a purge that finds nothing is harmless. Bolt acknowledges events before
 * any listener runs and does not authorize these two (their workspace may have no token left),
 * so nothing here delays the ack or needs the workspace's token. From then on, until the team
 * installs the app again ({@link UninstallHandle.reinstalled}), its other requests reaching this
 * process are acknowledged and dropped, logged once.
 */
import type { App } from '@slack/bolt';
import type { Core } from '../../core/core.ts';
import { slackClaims, slackWorkspace } from '../../core/keys.ts';
import { type PurgeCounts, purgeWorkspace } from '../../core/state/purge.ts';
import type { Logger } from '../../log.ts';

/** The events of this file (the manifest's `bot_events`; neither needs a scope). */
export const SLACK_UNINSTALL_EVENTS = ['app_uninstalled', 'tokens_revoked'] as const;

/** How long an uninstall event's id is remembered, in ms (Slack's retries come within about an hour). */
const UNINSTALL_CLAIM_MS = 2 * 3_600_000;

/**
 * Forgets a workspace's installation (the OAuth mode's InstallationStore.deleteInstallation;
 * nothing in the single-token mode). `enterpriseId` is the Enterprise Grid org's id, if any.
 * @throws what the installation store throws (logged; the purge runs all the same).
 */
export type ForgetInstallation = (teamId: string, enterpriseId: string | undefined) => Promise<void>;

/** What the listeners need from the adapter. */
export interface UninstallDeps {
  core: Core;
  log: Logger;
  forgetInstallation: ForgetInstallation;
}

/** What {@link registerUninstall} hands back. */
export interface UninstallHandle {
  /** The team installed the app again: its requests are served again (the OAuth installer calls it). */
  reinstalled(teamId: string): void;
  /** The purge running for a team, if one is (tests wait for it). */
  purging(teamId: string): Promise<PurgeCounts | undefined> | undefined;
}

/** The fields of the two events and their envelope that are read here. */
interface UninstallBody {
  event_id?: string;
  team_id?: string;
  event?: { type?: string; tokens?: { bot?: unknown; oauth?: unknown } };
}

/**
 * Registers the `app_uninstalled` and `tokens_revoked` listeners, and the middleware that drops
 * an uninstalled team's other requests.
 */
export function registerUninstall(app: App, deps: UninstallDeps): UninstallHandle {
  const removed = new Set<string>();
  /** The teams whose dropped requests were logged (once each). */
  const told = new Set<string>();
  const running = new Map<string, Promise<PurgeCounts | undefined>>();

  app.use(async (args) => {
    const teamId = args.context.teamId;
    const type = (args.body as UninstallBody).event?.type;
    if (!teamId || !removed.has(teamId) || SLACK_UNINSTALL_EVENTS.includes(type as never)) return args.next();
    // Events are acknowledged already; a command, press or view is acknowledged here, and nothing more.
    await (args as unknown as { ack?: () => Promise<void> }).ack?.();
    if (told.has(teamId)) return;
    told.add(teamId);
    deps.log.info({ team: teamId, type }, 'requests of an uninstalled workspace dropped (logged once)');
  });

  const uninstall = async (body: UninstallBody, enterpriseId: string | undefined) => {
    const teamId = body.team_id;
    if (!teamId || !body.event_id) return;
    const trigger = body.event?.type;
    const first = await deps.core.claims.claim(slackClaims.event(body.event_id), UNINSTALL_CLAIM_MS).catch(() => true); // without the store the purge fails anyway; the installation is still forgotten
    if (!first) return;
    const log = deps.log.child({ platform: 'slack', team: teamId, event: body.event_id, trigger });
    if (!removed.has(teamId)) log.info('app uninstalled or bot token revoked: dropping the workspace and its data');
    removed.add(teamId);
    await deps
      .forgetInstallation(teamId, enterpriseId)
      .catch((error: unknown) =>
        log.error({ err: error instanceof Error ? error.message : String(error) }, 'installation not forgotten'),
      );
    const before = running.get(teamId) ?? Promise.resolve(undefined);
    const purge = before.then(() => purgeTeam(deps, teamId, log));
    running.set(teamId, purge);
    void purge.finally(() => {
      if (running.get(teamId) === purge) running.delete(teamId);
    });
  };

  app.event('app_uninstalled', async ({ body, context }) => {
    await uninstall(body as UninstallBody, context.enterpriseId);
  });
  app.event('tokens_revoked', async ({ body, context }) => {
    const bot = (body as UninstallBody).event?.tokens?.bot;
    if (!Array.isArray(bot) || bot.length === 0) return; // user tokens only: the bot still works
    await uninstall(body as UninstallBody, context.enterpriseId);
  });

  return {
    reinstalled: (teamId) => {
      removed.delete(teamId);
      told.delete(teamId);
    },
    purging: (teamId) => running.get(teamId),
  };
}

/**
 * Forgets what this process holds of the team (exchanges waiting for the store, catch-up notes,
 * cached settings, users' index notes), then purges its data from the store, logged once with counts.
 * @returns the counts, or undefined when the purge failed (logged).
 */
async function purgeTeam(deps: UninstallDeps, teamId: string, log: Logger): Promise<PurgeCounts | undefined> {
  const workspace = slackWorkspace(teamId);
  const within = `${workspace}:`;
  deps.core.pendingTurns.forgetWithin(within);
  deps.core.seen.dropNotes('slack', within);
  deps.core.settings.forgetCached(within);
  deps.core.userIndex.forgetWorkspace(workspace);
  try {
    const counts = await purgeWorkspace(deps.core.store, workspace);
    log.info({ ...counts }, 'workspace data purged (usage and quota counters kept)');
    return counts;
  } catch (error) {
    log.error(
      { err: error instanceof Error ? error.message : String(error) },
      'workspace data not purged (what was deleted stays deleted; a later uninstall event purges again)',
    );
    return undefined;
  }
}
