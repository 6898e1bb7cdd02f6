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
 */
import {
  type Client,
  type ClientOptions,
  Events,
  type GatewayMessageUpdateDispatchData,
  LimitedCollection,
  type Message,
  Options,
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
