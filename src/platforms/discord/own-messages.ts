/**
 * The bot's own messages stay out of discord.js's message cache, and edits of messages no longer
 * cached come from the raw gateway event.
 *
 * Why: with the Guild Messages intent (mentions need it), the gateway sends the bot a
 * MESSAGE_CREATE for every answer it posts and a MESSAGE_UPDATE for every edit of it (a streamed
 * answer: one a second). discord.js patches a cached message on each update (a clone of the
 * whole Message, then its fields again): ~0.25 s of CPU and ~60 MB of garbage per 1,000 answers
 * (bench:streams), for messages the bot wrote itself. Not cached, with `Partials.Message` off,
 * their updates are dropped at once.
 *
 * What reads a bot message now reads it over REST where it did from the cache (discord.js's
 * `messages.fetch` falls back by itself; reply-chain.ts `readMessage` within the bot token's
 * global budget). An edit of a message not (or no longer) cached, e.g. a mention edited after a
 * restart, is not emitted by discord.js without `Partials.Message`: {@link onUncachedEdits}
 * picks those addressed to the bot (a DM, a mention of the bot, a reply to it) from the raw
 * MESSAGE_UPDATE and fetches the message (one REST read within the global budget).
 *
 * Before that, {@link withoutOwnMessages} keeps the gateway's MESSAGE_CREATE and MESSAGE_UPDATE
 * of the bot's own messages from discord.js altogether: discord.js builds a Message (its author,
 * member, mentions, components) for every MESSAGE_CREATE whether its cache keeps it or not, one
 * per answer, in the middle of a burst of commands (bench:streams: ~50 ms of a 1,000-command
 * burst's first 2 s, and its garbage). Nothing of the bot reads its own messages from the gateway.
 */
import {
  type Client,
  type ClientOptions,
  Events,
  type GatewayDispatchPayload,
  type GatewayMessageUpdateDispatchData,
  LimitedCollection,
  type Message,
  Options,
  SimpleShardingStrategy,
} from 'discord.js';
import type { Core } from '../../core/core.ts';
import type { Logger } from '../../log.ts';
import { readInGlobalBudget } from './rate-limits.ts';

/** Messages of others kept per channel: discord.js's default. */
const MESSAGES_PER_CHANNEL = Options.DefaultMakeCacheSettings.MessageManager as number;

/** A channel's message cache that does not keep the bot's own messages. */
class OthersMessages extends LimitedCollection<string, Message> {
  override set(key: string, message: Message): this {
    if (message.author?.id !== undefined && message.author.id === message.client.user?.id) return this;
    return super.set(key, message);
  }
}

const defaultCache = Options.cacheWithLimits(Options.DefaultMakeCacheSettings);

/** discord.js's `makeCache`: its defaults, but channels' message caches keep no message of the bot's. */
export const makeCache: NonNullable<ClientOptions['makeCache']> = (managerType, holds, manager) =>
  managerType.name === 'MessageManager'
    ? (new OthersMessages({ maxSize: MESSAGES_PER_CHANNEL }) as unknown as ReturnType<typeof defaultCache>)
    : defaultCache(managerType, holds, manager);

/** discord.js's `ClientOptions.ws.buildStrategy`: given its gateway manager (`@discordjs/ws`), the strategy that runs the shards. */
type BuildStrategy = NonNullable<NonNullable<ClientOptions['ws']>['buildStrategy']>;

/** `@discordjs/ws`'s event of a shard's dispatch (WebSocketShardEvents.Dispatch; discord.js exports an older enum by that name). */
const DISPATCH = 'dispatch';

/**
 * discord.js's `ws.buildStrategy` (https://discord.js.org/docs/packages/ws: a strategy decides
 * how shards run; this is its default, one process's shards in its main thread), with the
 * dispatches of the bot's own messages dropped before discord.js sees them: a MESSAGE_CREATE or
 * MESSAGE_UPDATE whose author is the user READY named. Every other dispatch, and every other
 * event of the shards (hello, ready, closed, debug), goes on as it was.
 * @returns the strategy for `manager` (a SimpleShardingStrategy that emits through a view of it).
 */
export const withoutOwnMessages: BuildStrategy = (manager) => {
  let botId: string | undefined;
  const isOwnMessage = (packet: GatewayDispatchPayload): boolean => {
    if (packet.t === 'READY') botId = packet.d.user.id;
    return (
      (packet.t === 'MESSAGE_CREATE' || packet.t === 'MESSAGE_UPDATE') &&
      botId !== undefined &&
      packet.d.author?.id === botId
    );
  };
  const emit = (event: string, payload: { data?: GatewayDispatchPayload }): boolean =>
    event === DISPATCH && payload.data && isOwnMessage(payload.data)
      ? false
      : (manager.emit as (event: string, payload: unknown) => boolean)(event, payload);
  // The strategy emits its shards' events through the manager it holds: this view of the manager
  // is the manager itself but for `emit`.
  const view = new Proxy(manager, {
    get: (target, property) => {
      if (property === 'emit') return emit;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return new SimpleShardingStrategy(view);
};

/** Whether a raw MESSAGE_UPDATE may be an edit the bot answers: a person's edit of a DM, a mention of the bot or a reply to it. */
function mayBeAddressed(data: GatewayMessageUpdateDispatchData, botId: string): boolean {
  const author = data.author;
  if (!author || author.bot || data.webhook_id || !data.edited_timestamp) return false;
  if (!data.guild_id) return true;
  return (data.mentions ?? []).some((user) => user.id === botId) || data.referenced_message?.author?.id === botId;
}

/**
 * Calls `onEdit` with each message edited that discord.js will not emit (not in its cache) and
 * that may be addressed to the bot, fetched over REST within the bot token's global budget.
 * Messages discord.js has cached come through its `messageUpdate` as before. Never throws: a
 * message that cannot be read is logged at debug and left alone.
 */
export function onUncachedEdits(
  client: Client,
  deps: { core: Core; log: Logger },
  onEdit: (message: Message) => void,
): void {
  client.on(Events.Raw, (packet: { t?: string; d?: unknown }) => {
    if (packet.t !== 'MESSAGE_UPDATE') return;
    const data = packet.d as GatewayMessageUpdateDispatchData;
    const botId = client.user?.id;
    if (!botId || !mayBeAddressed(data, botId)) return;
    // Raw comes before discord.js handles the packet: a cached message is emitted by it.
    const cached = client.channels.cache.get(data.channel_id);
    if (cached?.isTextBased() && cached.messages.cache.has(data.id)) return;
    void readEdited(client, deps, data).then((message) => message && onEdit(message));
  });
}

/** The edited message, over REST (the bot token's global budget); undefined when it cannot be read. */
async function readEdited(
  client: Client,
  deps: { core: Core; log: Logger },
  data: GatewayMessageUpdateDispatchData,
): Promise<Message | undefined> {
  let message: Message | undefined;
  try {
    await readInGlobalBudget(
      deps.core.scheduler,
      `read:edit:${data.id}:${data.edited_timestamp}`,
      `edit:${data.id}`,
      async () => {
        const channel = await client.channels.fetch(data.channel_id);
        if (channel?.isTextBased()) message = await channel.messages.fetch({ message: data.id, cache: false });
      },
    );
  } catch (error) {
    deps.log.debug({ err: error, message: data.id }, 'an edited message not cached could not be read');
  }
  return message;
}
