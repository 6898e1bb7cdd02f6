/**
 * The bot leaving a Discord server (kicked, banned, or the server deleted): Discord sends
 * GUILD_DELETE without `unavailable` (docs/topics/gateway-events#guild-delete: "If the unavailable
 * field is not set, the user was removed from the guild"), and the server's data is purged from
 * the store in the background, as a Slack uninstall's is (core/state/purge.ts: histories,
 * settings, feedback, button and Regenerate states, users' indexes, catch-up's entries…; usage
 * and quota counters stay).
 *
 * An outage sends GUILD_DELETE with `unavailable: true`: nothing is deleted. discord.js 14 makes
 * that distinction itself (client/actions/GuildDelete.js): an unavailable guild emits
 * `guildUnavailable`, a removal `guildDelete` (only for a guild it had: one the bot never saw
 * since it started is not announced, and its data goes with the retention, docs/data.md). Each
 * guild's events reach one shard, hence one instance; one purge of a guild runs at a time here,
 * and a purge that finds nothing is harmless.
 */
import { type Client, Events, type Guild } from 'discord.js';
import type { Core } from '../../core/core.ts';
import { type PurgeCounts, purgeWorkspace } from '../../core/state/purge.ts';
import type { Logger } from '../../log.ts';

/** A guild's workspace, as keys.ts `workspaceOf` gives it for the guild's channels. */
export function guildWorkspace(guildId: string): string {
  return `discord:${guildId}`;
}

/** What {@link registerGuildLeave} hands back. */
export interface GuildLeaveHandle {
  /** The purge running for a guild, if one is (tests wait for it). */
  purging(guildId: string): Promise<PurgeCounts | undefined> | undefined;
}

/** Registers the `guildDelete` (purge) and `guildUnavailable` (logged, nothing deleted) listeners. */
export function registerGuildLeave(client: Client, deps: { core: Core; log: Logger }): GuildLeaveHandle {
  const running = new Map<string, Promise<PurgeCounts | undefined>>();
  client.on(Events.GuildUnavailable, (guild: Guild) => {
    deps.log.info({ platform: 'discord', guild: guild.id }, 'guild unavailable (an outage): its data is kept');
  });
  client.on(Events.GuildDelete, (guild: Guild) => {
    const log = deps.log.child({ platform: 'discord', guild: guild.id });
    log.info('the bot left the server (or it was deleted): purging its data');
    const before = running.get(guild.id) ?? Promise.resolve(undefined);
    const purge = before.then(() => purgeGuild(deps.core, guild.id, log));
    running.set(guild.id, purge);
    void purge.finally(() => {
      if (running.get(guild.id) === purge) running.delete(guild.id);
    });
  });
  return { purging: (guildId) => running.get(guildId) };
}

/**
 * Forgets what this process holds of the guild (exchanges waiting for the store, catch-up notes,
 * cached settings, index notes), then purges its data from the store, logged once with counts.
 * @returns the counts, or undefined when the purge failed (logged).
 */
async function purgeGuild(core: Core, guildId: string, log: Logger): Promise<PurgeCounts | undefined> {
  const workspace = guildWorkspace(guildId);
  const within = `${workspace}:`;
  core.pendingTurns.forgetWithin(within);
  core.seen.dropNotes('discord', within);
  core.settings.forgetCached(within);
  core.userIndex.forgetWorkspace(workspace);
  try {
    const counts = await purgeWorkspace(core.store, workspace);
    log.info({ ...counts }, 'server data purged (usage and quota counters kept)');
    return counts;
  } catch (error) {
    log.error(
      { err: error instanceof Error ? error.message : String(error) },
      'server data not purged (what was deleted stays deleted; its histories go with the retention)',
    );
    return undefined;
  }
}
