/**
 * What discord.js sees of the waits Discord names (docs/platform-limits.md, "Long waits"):
 * discord.js (@discordjs/rest) honours every `Retry-After` and `X-RateLimit-Reset-After` in full,
 * inside the request, and a global 429 holds every request it makes, interaction webhooks
 * included (which Discord exempts from the global limit). A 429 naming an hour, or a reset
 * announced an hour away, would hold the answer, and every later write of that route, for the
 * hour. So each response reaches discord.js with:
 *
 * - `Retry-After` and `X-RateLimit-Reset-After` at most MAX_HOLD_MS (core/delivery/bucket.ts):
 *   discord.js then waits at most that long before it tries the write again;
 * - no `X-RateLimit-Global`: the bot token's global limit is kept by the write scheduler
 *   (`discord:global`, which bot-token writes spend and interaction webhooks do not), so
 *   discord.js treats the 429 as its route's own and holds that route alone.
 *
 * What Discord sent travels on as `x-genbot-sent-<header>` ({@link sentHeader}), so that the
 * adapter's rate-limit learner (rate-limits.ts) reads the wait as named: the scheduler holds the
 * bucket at most MAX_HOLD_MS and the answer says that Discord is refusing the bot's writes.
 */
import type { ResponseLike } from 'discord.js';
import { MAX_HOLD_MS } from '../../core/delivery/bucket.ts';

/** Prefix of a header carrying what Discord sent in a header changed for discord.js. */
const SENT_PREFIX = 'x-genbot-sent-';

/** The headers naming a wait in seconds, capped for discord.js. */
const WAIT_HEADERS = ['retry-after', 'x-ratelimit-reset-after'] as const;

/** A rate-limit header of a response as Discord sent it (before {@link cappedWaits} changed it), or null. */
export function sentHeader(headers: Headers, name: string): string | null {
  return headers.get(SENT_PREFIX + name) ?? headers.get(name);
}

/**
 * The response as discord.js is to see it (see the file's comment): the same response when it
 * names no wait longer than MAX_HOLD_MS and is no global 429, else one with changed headers.
 * Never throws.
 */
export function cappedWaits(response: ResponseLike): ResponseLike {
  const sent = response.headers;
  const maxSec = MAX_HOLD_MS / 1000;
  const changes = new Map<string, string | undefined>();
  for (const name of WAIT_HEADERS) {
    const seconds = Number(sent.get(name));
    if (sent.has(name) && seconds > maxSec) changes.set(name, String(maxSec));
  }
  if (response.status === 429 && sent.has('x-ratelimit-global')) changes.set('x-ratelimit-global', undefined);
  if (changes.size === 0) return response;
  const headers = new Headers(sent);
  for (const [name, value] of changes) {
    headers.set(SENT_PREFIX + name, sent.get(name) ?? '');
    if (value === undefined) headers.delete(name);
    else headers.set(name, value);
  }
  return withHeaders(response, headers);
}

/** `response` with other headers: every other property and method is the response's own (methods bound to it). */
function withHeaders(response: ResponseLike, headers: Headers): ResponseLike {
  return new Proxy(response, {
    get(target, property) {
      if (property === 'headers') return headers;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
