/**
 * What a request costs, for quotas and metrics: admitting it against the user's quotas
 * before any service call, and counting the tokens it used after (the service's `usage`
 * when a chunk carried one, else estimated: §4.1 image input rule 3, src/core/tokens.ts).
 */

import type { Core } from '../core.ts';
import { type Sentence, sentence } from '../i18n/words.ts';
import { quotaSubject } from '../keys.ts';
import { IMAGE_TOKENS } from '../media/images.ts';
import type { CommandContext } from '../platform.ts';
import type { ChatMessage, Usage } from '../service/schemas.ts';
import type { Charge } from '../spend/charge.ts';
import type { TokenReservation } from '../state/quotas.ts';
import { estimateMessageTokens, estimateTextTokens } from '../tokens.ts';

/** The quota subject of an invocation's user (keys.ts quotaSubject): `discord:<user id>`, `slack:<team id>:<user id>`. */
export function subjectOf(ctx: Pick<CommandContext, 'platform' | 'user' | 'channelKey'>): string {
  return quotaSubject(ctx.platform, ctx.user.id, ctx.channelKey);
}

/**
 * How long until a window rolls over, as words of the reader's language: `in 42 seconds`, `in 3
 * minutes`, `in 3 hours 5 minutes` (as state/waits.ts `waitIn`, rounded up, at least 1 s).
 * @param ms the wait, in ms.
 */
export function waitSentence(ms: number): Sentence {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  if (seconds < 120) return sentence('commands.wait.seconds', { n: seconds });
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 120) return sentence('commands.wait.minutes', { n: minutes });
  return sentence('commands.wait.hours', { h: Math.floor(minutes / 60), m: minutes % 60 });
}

/**
 * Lets a request through the user's quotas (counting it) or refuses it.
 * @returns gives the count back (an image that was not generated).
 * @throws QuotaError naming the quota and when to try again.
 */
export async function admit(ctx: CommandContext, core: Core, kind: 'chat' | 'image'): Promise<() => Promise<void>> {
  return core.quotas.admit(kind, subjectOf(ctx), ctx.user, ctx.channelKey);
}

/**
 * Reserves what a chat request may cost in the user's tokens a day before it runs: the
 * prompt's estimate (text, and {@link IMAGE_TOKENS} an image) plus its `max_tokens`
 * (`MAX_TOKENS_LIMIT` when the user set none). Settled by {@link countTokens}.
 * @throws QuotaError when the day's tokens are used up.
 */
export function reserveTokens(
  ctx: CommandContext,
  core: Core,
  prompt: string,
  options: { images?: number; maxTokens?: number | undefined } = {},
): Promise<TokenReservation> {
  const estimate =
    estimateTextTokens(prompt) + (options.images ?? 0) * IMAGE_TOKENS + (options.maxTokens ?? core.limits.maxTokens);
  return core.quotas.reserveTokens(subjectOf(ctx), ctx.user, estimate);
}

/**
 * Counts the tokens a request used against the user's day (settling its reservation) and the
 * channel's, settles its money (`charge`: the cost of the same tokens, an estimate when the
 * service sent no `usage`), and reports them. Never throws.
 * @param prompt the messages sent (or the prompt text of a completion).
 * @param usage the service's `usage`, when a chunk carried one.
 */
export async function countTokens(
  ctx: CommandContext,
  core: Core,
  reservation: TokenReservation,
  prompt: readonly ChatMessage[] | string,
  answer: string,
  usage: Usage | undefined,
  charge?: Charge,
): Promise<void> {
  const estimated = usage === undefined;
  const promptTokens =
    usage?.prompt_tokens ?? (typeof prompt === 'string' ? estimateTextTokens(prompt) : estimateMessageTokens(prompt));
  const completionTokens = usage?.completion_tokens ?? estimateTextTokens(answer);
  core.events.emit('tokens', { platform: ctx.platform, prompt: promptTokens, completion: completionTokens, estimated });
  await Promise.all([
    reservation.settle(promptTokens + completionTokens),
    core.quotas.recordChannelTokens(ctx.channelKey, promptTokens + completionTokens),
    charge?.settleTokens(promptTokens, completionTokens, estimated),
  ]);
}
