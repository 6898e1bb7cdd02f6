/**
 * The write scheduler's budgets for one interaction's one-off writes (core/delivery/one-off.ts):
 * what the interaction's responder (responder.ts) writes outside a streamed answer (an
 * ephemeral sentence, removing "is thinking…", the update of a pressed message after its
 * deferral, a sentence in the channel naming the user) spends the buckets a streamed answer's
 * writes spend (docs/platform-limits.md, Discord, "Rate budgets"):
 *
 * - with the interaction's token (follow-ups, edits and deletes of its messages): the token's
 *   webhook bucket and the channel's all-writes bucket (`rate-limits.ts` interactionBuckets);
 * - with the bot's token in the channel: the channel's bucket (which also spends the channel's
 *   all-writes bucket and the global one).
 *
 * Interaction callbacks (the first response: a reply, a deferral, UPDATE_MESSAGE, a modal) are
 * not written through here: Discord answers an interaction only within 3 s, and its callback
 * route is neither a webhook's budget nor the bot's global one ("Interaction endpoints are not
 * bound to the bot's Global Rate Limit", topics/rate-limits), so a callback waiting in a queue
 * behind streamed edits could only make the interaction fail.
 */

import type { Core } from '../../core/core.ts';
import { writeOnce } from '../../core/delivery/one-off.ts';
import type { WriteScheduler } from '../../core/delivery/scheduler.ts';
import type { AnswerableInteraction } from './channel-writes.ts';
import { channelBucket, type DiscordRateLimits } from './rate-limits.ts';

/** The budgets one interaction's one-off writes spend. */
export class InteractionBudget {
  /**
   * @param token the interaction's token (its webhook bucket is named by the token's hash).
   * @param channelId the interaction's channel.
   */
  constructor(
    private readonly scheduler: WriteScheduler,
    private readonly rateLimits: DiscordRateLimits,
    private readonly token: string,
    private readonly channelId: string,
  ) {}

  /** Runs a write with the interaction's token in its budgets. @throws what `run` throws. */
  interactionWrite<T>(run: () => Promise<T>): Promise<T> {
    return writeOnce(this.scheduler, { buckets: this.rateLimits.interactionBuckets(this.token, this.channelId), run });
  }

  /** Runs a write with the bot's token in the interaction's channel, in the channel's budgets. @throws what `run` throws. */
  channelWrite<T>(run: () => Promise<T>): Promise<T> {
    return writeOnce(this.scheduler, { buckets: [channelBucket(this.channelId)], run });
  }
}

/** Without budgets (no scheduler: a responder tested alone): every write runs at once. */
export const UNBUDGETED = {
  interactionWrite: <T>(run: () => Promise<T>): Promise<T> => run(),
  channelWrite: <T>(run: () => Promise<T>): Promise<T> => run(),
};

/** What a responder spends its one-off writes through. */
export type OneOffBudget = Pick<InteractionBudget, 'interactionWrite' | 'channelWrite'>;

/** The budgets of an interaction's one-off writes: the bot's scheduler with the adapter's learnt rate limits; none without them. */
export function interactionBudget(
  interaction: AnswerableInteraction,
  deps: { core: Core; rateLimits?: DiscordRateLimits | undefined },
): OneOffBudget {
  if (!deps.rateLimits) return UNBUDGETED;
  return new InteractionBudget(deps.core.scheduler, deps.rateLimits, interaction.token, interaction.channelId ?? '');
}
