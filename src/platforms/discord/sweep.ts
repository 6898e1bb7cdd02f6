/**
 * The sweep on Discord (core/sweep.ts): catch-up's reading (catch-up.ts) every `SWEEP_MINUTES`
 * over the channels active lately, and, when the gateway has dispatched nothing for
 * `EVENT_SILENCE_MINUTES` while the sweep found mentions it never dispatched, each shard's
 * connection re-established: @discordjs/ws `WebSocketShard.destroy({ recover: Resume })` closes
 * the WebSocket (close code 4200, not a session-ending one) and resumes the session on a new one
 * (Discord replays what the session missed; if it will not resume, discord.js identifies anew,
 * and catch-up runs after the new READY). discord.js 14 has no public handle on its shards'
 * connections: the strategy that runs them is the one the adapter builds (own-messages.ts
 * `withoutOwnMessages`, @discordjs/ws `SimpleShardingStrategy`), whose shards are read here.
 */
import {
  type Client,
  type GatewayDispatchPayload,
  type IShardingStrategy,
  type Message,
  Status,
  WebSocketShardDestroyRecovery,
} from 'discord.js';
import { Sweep } from '../../core/sweep.ts';
import { type DiscordCatchUpDeps, discordCatchUpSource } from './catch-up.ts';

/** A gateway shard's connection as @discordjs/ws runs it (`WebSocketShard`). */
interface GatewayShard {
  destroy(options: { reason?: string; recover?: WebSocketShardDestroyRecovery }): Promise<void>;
}

/**
 * Dispatches that start a session (a deaf connection sends them too): they end silence, not
 * deafness.
 */
const SESSION_DISPATCHES = new Set(['READY', 'RESUMED', 'GUILD_CREATE']);

/** Whether a gateway dispatch is an event of users (a message, an interaction…), which ends deafness. */
export function isDelivery(packet: GatewayDispatchPayload): boolean {
  return !SESSION_DISPATCHES.has(packet.t);
}

/** What the Discord sweep needs from the adapter. */
export interface DiscordSweepDeps extends DiscordCatchUpDeps {
  /** When the gateway last dispatched anything, and an event of users, in ms since 1970. */
  lastEventAt(): number;
  lastDeliveryAt(): number;
  /** The sharding strategy that runs the client's shards (undefined before login). */
  strategy(): IShardingStrategy | undefined;
}

/**
 * Resumes each shard's session on a new WebSocket (see the file's comment). Never rejects: a
 * failure is logged, and discord.js goes on reconnecting by itself.
 */
async function reconnectShards(deps: DiscordSweepDeps): Promise<void> {
  const shards = (deps.strategy() as unknown as { shards?: Map<number, GatewayShard> } | undefined)?.shards;
  if (!shards?.size) deps.log.warn('discord shards not found: nothing reconnected (restart the bot)');
  await Promise.all(
    [...(shards?.entries() ?? [])].map(([id, shard]) =>
      shard
        .destroy({ reason: 'no event delivered', recover: WebSocketShardDestroyRecovery.Resume })
        .catch((error: unknown) => deps.log.warn({ err: error, shard: id }, 'discord shard could not reconnect')),
    ),
  );
}

/** The Discord sweep of a client (started by the adapter once ready). */
export function discordSweep(client: Client, deps: DiscordSweepDeps): Sweep<Message> {
  return new Sweep(
    deps.core,
    discordCatchUpSource(client, deps),
    {
      lastEventAt: deps.lastEventAt,
      lastDeliveryAt: deps.lastDeliveryAt,
      reconnect: () => reconnectShards(deps),
      looksUp: () => client.isReady() && [...client.ws.shards.values()].every((s) => s.status === Status.Ready),
    },
    deps.log.child({ sweep: 'discord' }),
  );
}
