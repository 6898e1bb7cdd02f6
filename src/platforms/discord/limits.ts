/**
 * Discord's rate limits as the write scheduler sees them (PLATFORM-LIMITS.md, topics/rate-limits):
 * an interaction's webhook token allows about 5 writes per 2 s; bot-token writes about 5 per
 * 5 s per channel. Some channels put every write, interactions' included, into one hidden
 * budget: a 429 on an interaction write the scheduler thought open teaches it that the
 * channel shares, and its interactions then spend the channel's budget too (for a while).
 * Every REST response's `X-RateLimit-*` headers and every 429 are fed to the scheduler.
 */
import { createHash } from 'node:crypto';
import type { WriteScheduler } from '../../core/delivery/scheduler.ts';
import type { BotEvents } from '../../core/events.ts';
import type { Logger } from '../../log.ts';

/** The documented budgets, by bucket prefix. */
export const DISCORD_BUDGETS = {
  webhook: { limit: 5, windowMs: 2_000 },
  channel: { limit: 5, windowMs: 5_000 },
};

/** How long a channel learned to share one budget is treated so, in ms. */
const SHARED_FOR_MS = 10 * 60_000;

/** The scheduler bucket of an interaction's webhook token (the token itself never appears). */
export function webhookBucket(token: string): string {
  return `discord:webhook:${createHash('sha256').update(token).digest('hex').slice(0, 16)}`;
}

/** The scheduler bucket of a channel's bot-token writes. */
export function channelBucket(channelId: string): string {
  return `discord:channel:${channelId}`;
}

/** What the adapter learns about Discord's limits, and feeds to the scheduler. */
export class DiscordLimits {
  /** Channels found to share one budget among all writes, until when (ms since epoch). */
  private readonly shared = new Map<string, number>();
  /** The channel of each interaction webhook bucket (to learn sharing from its 429s). */
  private readonly webhookChannels = new Map<string, string>();

  constructor(private readonly scheduler: WriteScheduler, private readonly events: BotEvents, private readonly log: Logger) {
    scheduler.define('discord:webhook:', DISCORD_BUDGETS.webhook);
    scheduler.define('discord:channel:', DISCORD_BUDGETS.channel);
  }

  /** The buckets of an interaction's write in `channelId`; registers the pair (forgotten after 20 minutes). */
  interactionBuckets(token: string, channelId: string): string[] {
    const bucket = webhookBucket(token);
    if (!this.webhookChannels.has(bucket)) {
      this.webhookChannels.set(bucket, channelId);
      setTimeout(() => this.webhookChannels.delete(bucket), 20 * 60_000).unref();
    }
    return this.isShared(channelId) ? [bucket, channelBucket(channelId)] : [bucket];
  }

  /** Whether a channel was found to share one budget. */
  isShared(channelId: string): boolean {
    const until = this.shared.get(channelId);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.shared.delete(channelId);
    return false;
  }

  /**
   * Reads one REST response (discord.js's `response` event): its rate-limit headers, and a 429.
   * @param path the request's path, e.g. `/webhooks/<app>/<token>/messages/@original`.
   */
  response(method: string, path: string, status: number, headers: Headers): void {
    const bucket = bucketOfPath(path);
    if (!bucket) return;
    const remaining = Number(headers.get('x-ratelimit-remaining'));
    const resetAfter = Number(headers.get('x-ratelimit-reset-after'));
    const limit = Number(headers.get('x-ratelimit-limit'));
    if (Number.isFinite(remaining) && Number.isFinite(resetAfter) && headers.has('x-ratelimit-remaining')) {
      this.scheduler.observe(bucket, { remaining, resetAfterMs: resetAfter * 1000, ...(Number.isFinite(limit) && limit > 0 && bucket.startsWith('discord:webhook:') ? { limit } : {}) });
    }
    if (status !== 429) return;
    const retryAfterMs = Math.max(Number(headers.get('retry-after')) * 1000 || 0, (Number.isFinite(resetAfter) ? resetAfter : 1) * 1000);
    this.events.emit('platform.rate_limited', { platform: 'discord', route: `${method} ${routeOf(path)}` });
    this.scheduler.rateLimited(bucket, retryAfterMs);
    const channelId = bucket.startsWith('discord:webhook:') ? this.webhookChannels.get(bucket) : bucket.slice('discord:channel:'.length);
    if (!channelId) return;
    // A 429 means the channel's writes share a budget the scheduler did not know of: hold them all.
    this.scheduler.rateLimited(channelBucket(channelId), retryAfterMs);
    if (bucket.startsWith('discord:webhook:') && !this.isShared(channelId)) {
      this.shared.set(channelId, Date.now() + SHARED_FOR_MS);
      this.log.info({ channel: channelId }, 'discord: this channel shares one write budget among interactions: pacing them together');
    }
  }
}

/** The scheduler bucket a REST path writes to, or undefined for paths streamed answers do not use. */
function bucketOfPath(path: string): string | undefined {
  const webhook = /^\/webhooks\/\d+\/([^/?]+)/.exec(path);
  if (webhook) return webhookBucket(decodeURIComponent(webhook[1]!));
  const channel = /^\/channels\/(\d+)\/messages/.exec(path);
  return channel ? channelBucket(channel[1]!) : undefined;
}

/** A path with ids and tokens as placeholders, for metrics labels. */
function routeOf(path: string): string {
  return path.replace(/\/webhooks\/\d+\/[^/?]+/, '/webhooks/:id/:token').replace(/\/\d{15,}/g, '/:id').split('?')[0]!;
}
