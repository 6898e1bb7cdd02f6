/**
 * Discord's rate limits as the write scheduler sees them (docs/platform-limits.md, Discord: topics/rate-limits):
 * an interaction's webhook token allows about 5 writes per 2 s (`discord:webhook:<token hash>`);
 * bot-token writes about 5 per 5 s per channel (`discord:channel:<id>`), and 50 a second in all
 * (`discord:global`: Discord's global limit, which exempts interaction routes). Some channels put
 * every write, interactions' included, into one hidden budget, which no header announces: the
 * first write to a new bucket cannot know of it. So every write of a channel also spends the
 * channel's all-writes bucket (`discord:writes:<id>`), whose budget is what the bot knows of
 * the channel:
 *
 * - nothing yet: writes go one at a time (concurrency 1, no rate), so that a hidden budget
 *   answers its first 429 before any other write is under way: a burst costs one 429, not one
 *   per stream;
 * - `shared` (a 429 the scheduler did not expect): the channel's budget, 5 per 5 s, for every
 *   write, with the hold the 429 asked for;
 * - `separate` (more than twice the channel's budget accepted within its window, which one
 *   shared budget could not have done, even across a window's reset): no bound beyond the
 *   token's and the channel's own buckets.
 *
 * What is learned lasts 10 minutes. Every REST response's `X-RateLimit-*` headers and every
 * 429 are fed to the scheduler, with the waits Discord named (rest-waits.ts): the scheduler holds
 * a bucket at most MAX_HOLD_MS (core/delivery/bucket.ts), and the answers held say so.
 */
import { hash } from 'node:crypto';
import type { Budget } from '../../core/delivery/bucket.ts';
import type { Clock } from '../../core/delivery/clock.ts';
import type { WriteScheduler } from '../../core/delivery/scheduler.ts';
import type { BotEvents } from '../../core/events.ts';
import type { BucketId } from '../../core/keys.ts';
import type { Logger } from '../../log.ts';
import { sentHeader } from './rest-waits.ts';

/** The documented budgets, by bucket kind. */
export const DISCORD_BUDGETS = {
  webhook: { limit: 5, windowMs: 2_000 },
  channel: { limit: 5, windowMs: 5_000 },
  /**
   * Every bot-token request, 50 a second (Discord's global limit, per bot token: every
   * instance's together when they share a store) less 2 left for the few requests discord.js
   * makes outside the scheduler (`GET /gateway/bot` at each connection). Interaction callbacks
   * and webhooks are exempt, and discord.js is told not to hold requests back itself (adapter.ts).
   */
  global: { limit: 48, windowMs: 1_000 },
};

/** A Discord bucket counted in one scope: a channel's id, or a webhook token's hash. */
export type ScopedBucket = BucketId & { platform: 'discord'; scope: string };

/** The scheduler bucket of the bot token's global limit (`discord:global`). */
export const GLOBAL_BUCKET: BucketId = { platform: 'discord', kind: 'global' };

/**
 * Runs one REST read with the bot token (a message, a page of a channel's messages) as a write of
 * the scheduler in the bot token's global budget ({@link GLOBAL_BUCKET}), ahead of intermediate
 * writes (`final`): reply chains, thread reads, edited messages no longer cached.
 * @param key the read's scheduler key (one read of it at a time; a newer one replaces a pending one).
 * @param stream the invocation the read belongs to (served in turn with others).
 * @throws what `run` throws.
 */
export function readInGlobalBudget(
  scheduler: WriteScheduler,
  key: string,
  stream: string,
  run: () => Promise<void>,
): Promise<unknown> {
  return scheduler.submit({ key, stream, buckets: [GLOBAL_BUCKET], final: true, run });
}

/** A limit no channel reaches: the all-writes bucket bounds only concurrency, or nothing. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** The all-writes bucket of a channel whose sharing is not known yet: one write at a time. */
const PROBING: Budget = { limit: UNBOUNDED, windowMs: DISCORD_BUDGETS.channel.windowMs, concurrency: 1 };

/** The all-writes bucket of a channel found not to share one budget. */
const SEPARATE: Budget = { limit: UNBOUNDED, windowMs: DISCORD_BUDGETS.channel.windowMs };

/** How long what was learned about a channel holds, in ms. */
const LEARNED_FOR_MS = 10 * 60_000;

/** What the bot knows of a channel's writes: one budget for all (`shared`), its own per token and for the bot token (`separate`), or nothing yet. */
export type ChannelSharing = 'shared' | 'separate' | 'unknown';

/**
 * The buckets of the webhook tokens seen lately, by token (every write of a streamed answer, and
 * every response, asks: the hash is made once a token). One per learner, not per process.
 */
class WebhookBuckets {
  private readonly byToken = new Map<string, ScopedBucket>();

  /** The scheduler bucket of an interaction's webhook token, `discord:webhook:<token hash>` (the token itself never appears). */
  of(token: string): ScopedBucket {
    let bucket = this.byToken.get(token);
    if (bucket === undefined) {
      // Tokens live 15 minutes: a full table is simply started afresh.
      if (this.byToken.size >= 10_000) this.byToken.clear();
      bucket = { platform: 'discord', kind: 'webhook', scope: hash('sha256', token).slice(0, 16) };
      this.byToken.set(token, bucket);
    }
    return bucket;
  }
}

/** The scheduler bucket of a channel's bot-token writes (`discord:channel:<id>`). */
export function channelBucket(channelId: string): ScopedBucket {
  return { platform: 'discord', kind: 'channel', scope: channelId };
}

/** The scheduler bucket every write of a channel spends, bot token and interaction tokens alike (`discord:writes:<id>`). */
export function writesBucket(channelId: string): ScopedBucket {
  return { platform: 'discord', kind: 'writes', scope: channelId };
}

/** How long the channel of an interaction's webhook bucket is kept, in ms: 20 minutes (an interaction token lives 15). */
const WEBHOOK_CHANNEL_MS = 20 * 60_000;

/** What the adapter learns about Discord's rate limits, and feeds to the scheduler (one per adapter). */
export class DiscordRateLimits {
  /** Channels whose sharing was learned, and until when (clock ms). */
  private readonly learned = new Map<string, { sharing: 'shared' | 'separate'; until: number }>();
  /**
   * The channel of each interaction webhook bucket, by its scope (to learn sharing from its
   * answers), and until when it is kept (clock ms): forgotten oldest first as new ones come
   * ({@link forgetWebhookChannels}), not by a timer each (a burst of commands made a thousand
   * timers that lived 20 minutes).
   */
  private readonly webhookChannels = new Map<string, { channelId: string; until: number }>();
  /** Times (clock ms) of the writes Discord accepted lately, by channel (to learn `separate`). */
  private readonly accepted = new Map<string, number[]>();
  private acceptedSincePrune = 0;
  /** The buckets of the interaction tokens seen lately. */
  private readonly webhooks = new WebhookBuckets();
  /** The scheduler's clock: what is learned expires on the same time the budgets are kept on. */
  private readonly clock: Clock;

  /**
   * Declares Discord's budgets to the scheduler (webhook, channel, writes and global buckets).
   * @param scheduler the bot's write scheduler; its clock is this learner's too.
   * @param events where each 429 is reported (`platform.rate_limited`).
   */
  constructor(
    private readonly scheduler: WriteScheduler,
    private readonly events: BotEvents,
    private readonly log: Logger,
  ) {
    this.clock = scheduler.clock;
    const channels = { platform: 'discord', kind: 'channel' } as const;
    scheduler.define({ platform: 'discord', kind: 'webhook' }, DISCORD_BUDGETS.webhook);
    scheduler.define(channels, DISCORD_BUDGETS.channel);
    scheduler.define({ platform: 'discord', kind: 'writes' }, PROBING);
    // Bot-token writes of a channel spend its all-writes bucket too, and the global bot-token budget.
    scheduler.alsoSpend(channels, (bucket) =>
      bucket.scope === undefined ? undefined : this.writesBucketOf(bucket.scope),
    );
    scheduler.setBudget(GLOBAL_BUCKET, DISCORD_BUDGETS.global);
    scheduler.alsoSpend(channels, () => GLOBAL_BUCKET);
  }

  /** The buckets of an interaction's write in `channelId`; registers the pair (forgotten after {@link WEBHOOK_CHANNEL_MS}). */
  interactionBuckets(token: string, channelId: string): BucketId[] {
    const bucket = this.webhooks.of(token);
    if (!this.webhookChannels.has(bucket.scope)) {
      const now = this.clock.now();
      this.forgetWebhookChannels(now);
      this.webhookChannels.set(bucket.scope, { channelId, until: now + WEBHOOK_CHANNEL_MS });
    }
    return [bucket, this.writesBucketOf(channelId)];
  }

  /**
   * Forgets the webhook buckets' channels past their time. Each is kept as long, so the Map's
   * insertion order is their order of expiry: the loop stops at the first still kept (amortized
   * O(1) per registration).
   */
  private forgetWebhookChannels(now: number): void {
    for (const [scope, entry] of this.webhookChannels) {
      if (entry.until > now) break;
      this.webhookChannels.delete(scope);
    }
  }

  /** What is known of a channel's writes now (a learned state ends after 10 minutes). */
  sharing(channelId: string): ChannelSharing {
    const known = this.learned.get(channelId);
    if (!known) return 'unknown';
    if (known.until > this.clock.now()) return known.sharing;
    this.learned.delete(channelId);
    this.scheduler.setBudget(writesBucket(channelId), undefined);
    return 'unknown';
  }

  /** Whether a channel was found to share one budget among all its writes. */
  isShared(channelId: string): boolean {
    return this.sharing(channelId) === 'shared';
  }

  /**
   * Reads one REST response (discord.js's `response` event): its rate-limit headers, an
   * accepted write, and a 429. Never throws.
   * @param path the request's path, e.g. `/webhooks/<app>/<token>/messages/@original`.
   */
  response(method: string, path: string, status: number, headers: Headers): void {
    if (status === 429 && sentHeader(headers, 'x-ratelimit-global') === 'true') {
      // The bot token's global limit (every instance's requests together): hold the global bucket.
      this.events.emit('platform.rate_limited', { platform: 'discord', route: `${method} ${routeOf(path)}` });
      this.scheduler.rateLimited(GLOBAL_BUCKET, Number(sentHeader(headers, 'retry-after')) * 1000 || 1000);
      return;
    }
    // A read (a reply chain's GET of a message) has a route bucket of its own, which discord.js keeps: not a write budget.
    const bucket = method === 'GET' ? undefined : bucketOfPath(path, this.webhooks);
    if (!bucket) return;
    const isWebhook = bucket.kind === 'webhook';
    const channelId = isWebhook ? this.webhookChannels.get(bucket.scope)?.channelId : bucket.scope;
    const remaining = Number(headers.get('x-ratelimit-remaining'));
    const resetAfter = Number(sentHeader(headers, 'x-ratelimit-reset-after'));
    const limit = Number(headers.get('x-ratelimit-limit'));
    if (Number.isFinite(remaining) && Number.isFinite(resetAfter) && headers.has('x-ratelimit-remaining')) {
      const report = { remaining, resetAfterMs: resetAfter * 1000 };
      this.scheduler.observe(bucket, {
        ...report,
        ...(Number.isFinite(limit) && limit > 0 && isWebhook ? { limit } : {}),
      });
      // In a shared channel the bot-token bucket's headers describe the one budget.
      if (!isWebhook && channelId && this.isShared(channelId)) this.scheduler.observe(writesBucket(channelId), report);
    }
    if (status >= 200 && status < 300 && (method === 'POST' || method === 'PATCH') && channelId) this.accept(channelId);
    if (status !== 429) return;
    const retryAfterMs = Math.max(
      Number(sentHeader(headers, 'retry-after')) * 1000 || 0,
      (Number.isFinite(resetAfter) ? resetAfter : 1) * 1000,
    );
    this.events.emit('platform.rate_limited', { platform: 'discord', route: `${method} ${routeOf(path)}` });
    if (!channelId) {
      this.scheduler.rateLimited(bucket, retryAfterMs);
      return;
    }
    if (this.isShared(channelId)) {
      // Known to share, and still refused: the budget is smaller than thought; slow down.
      this.scheduler.rateLimited(bucket, retryAfterMs);
      this.scheduler.rateLimited(writesBucket(channelId), retryAfterMs);
      return;
    }
    // A 429 the buckets did not expect: the channel's writes share a budget. Pace them all
    // together from now on, holding them until the reset the 429 named (no halving: the cause is known).
    this.learn(channelId, 'shared');
    this.scheduler.rateLimited(bucket, retryAfterMs, { slowDown: false });
    this.scheduler.rateLimited(writesBucket(channelId), retryAfterMs, { slowDown: false });
  }

  /** The channel's all-writes bucket, its budget brought up to date. */
  private writesBucketOf(channelId: string): BucketId {
    this.sharing(channelId);
    return writesBucket(channelId);
  }

  private learn(channelId: string, sharing: 'shared' | 'separate'): void {
    this.learned.set(channelId, { sharing, until: this.clock.now() + LEARNED_FOR_MS });
    // Learnt for every instance sharing the store (their writes in the channel share its budget too).
    const budget = sharing === 'shared' ? DISCORD_BUDGETS.channel : SEPARATE;
    this.scheduler.setBudget(writesBucket(channelId), budget, LEARNED_FOR_MS);
    this.log.info(
      { channel: channelId, sharing },
      sharing === 'shared'
        ? 'discord: this channel shares one write budget among all writes: pacing them together'
        : "discord: this channel's interactions have budgets of their own: pacing them apart",
    );
  }

  /** Counts an accepted write; more than twice the channel's budget within its window proves it is not shared. */
  private accept(channelId: string): void {
    const now = this.clock.now();
    const { limit, windowMs } = DISCORD_BUDGETS.channel;
    const times = (this.accepted.get(channelId) ?? []).filter((t) => t > now - windowMs);
    times.push(now);
    if (times.length > 2 * limit && this.sharing(channelId) === 'unknown') this.learn(channelId, 'separate');
    this.accepted.set(channelId, times);
    // Now and then, forget channels with no write in the window.
    if (++this.acceptedSincePrune >= 1000) {
      this.acceptedSincePrune = 0;
      for (const [id, list] of this.accepted) if (list.at(-1)! <= now - windowMs) this.accepted.delete(id);
    }
  }
}

/** The scheduler bucket a REST path writes to (a webhook's from `webhooks`), or undefined for paths streamed answers do not use. */
function bucketOfPath(path: string, webhooks: WebhookBuckets): ScopedBucket | undefined {
  const webhook = /^\/webhooks\/\d+\/([^/?]+)/.exec(path);
  if (webhook) return webhooks.of(decodeURIComponent(webhook[1]!));
  const channel = /^\/channels\/(\d+)\/messages/.exec(path);
  return channel ? channelBucket(channel[1]!) : undefined;
}

/** A path with ids and tokens as placeholders, for metrics labels. */
function routeOf(path: string): string {
  return path
    .replace(/\/webhooks\/\d+\/[^/?]+/, '/webhooks/:id/:token')
    .replace(/\/\d{15,}/g, '/:id')
    .split('?')[0]!;
}
