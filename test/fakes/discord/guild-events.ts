/**
 * The guild's own lifecycle as the gateway tells a bot of it (events/gateway-events.mdx, "Guild
 * Delete"): GUILD_DELETE `{ id, unavailable: true }` during an outage, and GUILD_CREATE with the
 * whole guild when it is available again (the bot removed, GUILD_DELETE without `unavailable`, is
 * fake.ts `removeBotFromGuild`). Each goes to the sessions
 * with the GUILDS intent on the guild's shard (gateway.ts `dispatch`).
 */
import type { Ctx } from './context.ts';
import { guildCreatePayload } from './wire.ts';

/** The guild went down in an outage: GUILD_DELETE with `unavailable: true` (the bot is still a member). */
export function guildOutage(ctx: Ctx): void {
  ctx.gateway.dispatch('GUILD_DELETE', { id: ctx.state.guildId, unavailable: true });
}

/** The guild is back after an outage: GUILD_CREATE with its channels, roles and the bot's member. */
export function guildRestored(ctx: Ctx): void {
  ctx.gateway.dispatch('GUILD_CREATE', guildCreatePayload(ctx.state));
}
