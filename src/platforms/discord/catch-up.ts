/**
 * Catch-up on Discord (core/catch-up.ts): after each new gateway session of a shard — the
 * bot's start, or a session Discord would not resume (discord.js `shardReady`, for a READY;
 * a resumed session, `shardResume`, has its missed events replayed by Discord and needs
 * none) — the channels, threads and DMs where the bot was addressed (state/seen.ts) are read
 * with Get Channel Messages (`GET /channels/{id}/messages?after=<id>&limit=50`: the oldest 50
 * after that id, which Discord returns newest first), and the messages addressed to the bot
 * (messages.ts `isAddressedToBot`: a mention or a reply to the bot has its content without the
 * Message Content intent, as does a DM) that no instance answered are answered, late.
 */
import { type Client, Events, type Message, ShardClientUtil, SnowflakeUtil } from 'discord.js';
import { CatchUpRunner, type CatchUpSource, catchUp } from '../../core/catch-up.ts';
import type { Core } from '../../core/core.ts';
import { discordClaims, parseConversationKey } from '../../core/keys.ts';
import { newerId, type SeenConversation } from '../../core/state/seen.ts';
import type { Logger } from '../../log.ts';
import { isAddressedToBot } from './messages.ts';

/**
 * Pause between two channels' reads, in ms: 4 reads a second, a small share of the bot
 * token's 50 requests a second (docs/platform-limits.md); each read's own route bucket is
 * kept by discord.js.
 */
export const DISCORD_READ_SPACING_MS = 250;

/** What a catch-up needs from the adapter. */
export interface DiscordCatchUpDeps {
  core: Core;
  log: Logger;
  /** True once the adapter stops. */
  stopping: () => boolean;
  /** Answers a message as late (mentions.ts handleMessage with `late`); resolves when it is over. */
  answer: (message: Message, botId: string) => Promise<void>;
}

/** The smallest snowflake of a time (ms since 1970): `after` it are the messages sent from then on. */
function snowflakeAt(ms: number): string {
  return ((BigInt(Math.max(ms, Number(SnowflakeUtil.epoch))) - SnowflakeUtil.epoch) << 22n).toString();
}

/**
 * Whether this process runs the shard of a conversation's guild (DMs come to shard 0); never a
 * user install's, where the bot is not a member and can read nothing (user-install.ts).
 */
function ownsConversation(client: Client, entry: SeenConversation): boolean {
  const ref = parseConversationKey(entry.conversation);
  if (ref?.platform !== 'discord' || ref.user !== undefined) return false;
  const shards = client.options.shards;
  const mine = Array.isArray(shards) ? shards : [0];
  const count = client.options.shardCount ?? 1;
  return mine.includes(ref.guild === undefined ? 0 : ShardClientUtil.shardIdForGuildId(ref.guild, count));
}

/**
 * Reads one channel's messages after the newest seen (and not before `sinceMs`): those
 * addressed to the bot, oldest first, and the newest id read.
 */
async function readChannel(client: Client, entry: SeenConversation, sinceMs: number, limit: number) {
  const ref = parseConversationKey(entry.conversation);
  const botId = client.user?.id;
  if (ref?.platform !== 'discord' || !botId) return { messages: [] };
  const channel = await client.channels.fetch(ref.channel);
  if (!channel?.isTextBased()) return { messages: [] };
  const floor = snowflakeAt(sinceMs);
  const after = newerId(entry.last, floor) ? entry.last : floor;
  const fetched = await channel.messages.fetch({ after, limit, cache: false });
  const read = [...fetched.values()].sort((a, b) => (newerId(a.id, b.id) ? 1 : -1));
  const messages = read.filter((m) => m.createdTimestamp >= sinceMs && isAddressedToBot(m, botId));
  return { messages, ...(read.length ? { newest: read.at(-1)!.id } : {}) };
}

/** Discord's side of a catch-up (and of the sweep, core/sweep.ts): reads with the bot token, answers late. */
export function discordCatchUpSource(client: Client, deps: DiscordCatchUpDeps): CatchUpSource<Message> {
  return {
    platform: 'discord',
    readSpacingMs: DISCORD_READ_SPACING_MS,
    owns: (entry) => ownsConversation(client, entry),
    read: (entry, sinceMs, limit) => readChannel(client, entry, sinceMs, limit),
    claimKey: (message) => discordClaims.message(message.channelId, message.id),
    sentAt: (message) => message.createdTimestamp,
    answer: (message) => deps.answer(message, client.user?.id ?? ''),
    stopping: deps.stopping,
  };
}

/**
 * Registers the catch-up that runs after each new gateway session of the client's shards
 * (one at a time; see the file's comment).
 */
export function catchUpOnNewSessions(client: Client, deps: DiscordCatchUpDeps): CatchUpRunner {
  const { core, log } = deps;
  const source = discordCatchUpSource(client, deps);
  const runner = new CatchUpRunner(() =>
    catchUp(core, source, log.child({ catchUp: 'discord' })).then(
      () => undefined,
      (error: unknown) => log.warn({ err: error }, 'discord catch-up failed'),
    ),
  );
  if (core.limits.catchUpMaxAgeMinutes > 0) client.on(Events.ShardReady, () => runner.request());
  return runner;
}
