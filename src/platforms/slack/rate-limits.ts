/**
 * Slack's rate budgets as the write scheduler spends them (docs/platform-limits.md), and its
 * rate-limit refusals as the scheduler tells them. The workspace's chat.startStream count is kept
 * apart, in the store (stream.ts SlackStreaming), because a start never waits: without budget,
 * the answer is posted instead.
 */
import { type WebClient, WebClientEvent } from '@slack/web-api';
import type { Core } from '../../core/core.ts';
import { MAX_HOLD_MS } from '../../core/delivery/bucket.ts';
import { type Clock, systemClock } from '../../core/delivery/clock.ts';

/**
 * Slack's budgets for the write scheduler, by bucket kind (docs/platform-limits.md):
 * `chat.postMessage` about one a second per channel, `chat.update` tier 3 (about 50 a minute per
 * workspace, shared by every answer streaming there). The per-minute edit budgets are spread evenly (`spacingMs`): spent
 * at once by many streams, they would leave every stream without an update for most of a minute.
 */
export const SLACK_BUDGETS = {
  post: { limit: 1, windowMs: 1_000 },
  update: { limit: 50, windowMs: 60_000, spacingMs: 60_000 / 50 },
  /** `chat.appendStream`: tier 4, 100+ a minute per workspace. */
  appendStream: { limit: 100, windowMs: 60_000, spacingMs: 60_000 / 100 },
};

/**
 * The wait a refusal for Slack's rate limit named, in ms (0 when it named none), or undefined for
 * any other error: a 429 that web-api rejected at once (`slack_webapi_rate_limited_error`, its
 * `retryAfter` in seconds: the bot's clients never wait one out, adapter.ts) or an answer
 * `ratelimited`. The write scheduler submits such a write again after the wait
 * (core/delivery/refusals.ts), at most a minute later.
 */
export function slackRateLimitWait(error: unknown): number | undefined {
  const e = error as
    | { code?: unknown; retryAfter?: unknown; data?: { error?: unknown; response_metadata?: { retryAfter?: unknown } } }
    | undefined;
  const seconds = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value * 1000 : 0);
  if (e?.code === 'slack_webapi_rate_limited_error') return seconds(e.retryAfter);
  const code = e?.data?.error;
  if (code === 'ratelimited' || code === 'rate_limited') return seconds(e?.data?.response_metadata?.retryAfter);
  return undefined;
}

/**
 * Runs a Web API call made outside the write scheduler (a read, the close of a stream), and once
 * more after a 429, which the bot's clients reject at once (adapter.ts), when its Retry-After has
 * passed: at most MAX_HOLD_MS (core/delivery/bucket.ts) later, at least a second.
 * @param maxWaitMs the longest wait worth the caller's while, in ms (default MAX_HOLD_MS): a 429
 *   naming a longer one is thrown at once, without waiting (e.g. a rights check a user waits for).
 * @throws what the call threw (the second time, after a 429).
 */
export async function patiently<T>(
  call: () => Promise<T>,
  clock: Pick<Clock, 'sleep'> = systemClock,
  maxWaitMs = MAX_HOLD_MS,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const waitMs = slackRateLimitWait(error);
    if (waitMs === undefined || waitMs > maxWaitMs) throw error;
    await clock.sleep(Math.min(Math.max(waitMs, 1_000), MAX_HOLD_MS));
    return call();
  }
}

/**
 * Reports a WebClient's 429s (which it rejects at once: `rejectRateLimitedCalls`): counted in the
 * metrics, and the bucket hit held by the scheduler for the retry-after, at most a minute
 * (chat.update and chat.appendStream per workspace, chat.postMessage and chat.postEphemeral per
 * channel). Each client is watched once.
 */
export function rateLimitWatcher(core: Core): (client: WebClient, team: string | undefined) => void {
  const watched = new WeakSet<WebClient>();
  return (client, team) => {
    if (watched.has(client)) return;
    watched.add(client);
    client.on(WebClientEvent.RATE_LIMITED, (retrySec: number, info: { url?: string; body?: { channel?: unknown } }) => {
      const method = info.url?.replace(/^.*\/api\//, '').split('?')[0] ?? 'unknown';
      core.events.emit('platform.rate_limited', { platform: 'slack', route: method });
      const retryMs = retrySec * 1000;
      if (method === 'chat.update' && team)
        core.scheduler.rateLimited({ platform: 'slack', kind: 'update', scope: team }, retryMs);
      if (method === 'chat.appendStream' && team)
        core.scheduler.rateLimited({ platform: 'slack', kind: 'appendStream', scope: team }, retryMs);
      const posted = method === 'chat.postMessage' || method === 'chat.postEphemeral';
      if (posted && typeof info.body?.channel === 'string')
        core.scheduler.rateLimited({ platform: 'slack', kind: 'post', scope: info.body.channel }, retryMs);
    });
  };
}
