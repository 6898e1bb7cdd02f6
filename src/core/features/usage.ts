/**
 * What a request costs, for quotas and metrics: admitting it against the user's quotas
 * before any service call, and counting the tokens it used after (the service's `usage`
 * when a chunk carried one, else estimated: §4.1 image input rule 3, src/core/tokens.ts).
 */
import type { CommandContext } from '../platform.ts';
import type { Core } from '../core.ts';
import type { ChatMessage, Usage } from '../service/schemas.ts';
import { estimateMessageTokens, estimateTextTokens } from '../tokens.ts';

/** The quota subject of an invocation's user: `<platform>:<user id>`. */
export function subjectOf(ctx: Pick<CommandContext, 'platform' | 'user'>): string {
  return `${ctx.platform}:${ctx.user.id}`;
}

/**
 * Lets a request through the user's quotas (counting it) or refuses it.
 * @throws QuotaError naming the quota and when to try again.
 */
export async function admit(ctx: CommandContext, core: Core, kind: 'chat' | 'image'): Promise<void> {
  await core.quotas.admit(kind, subjectOf(ctx), ctx.user, ctx.channelKey);
}

/**
 * Counts the tokens a request used against the user's day and reports them. Never throws.
 * @param prompt the messages sent (or the prompt text of a completion).
 * @param usage the service's `usage`, when a chunk carried one.
 */
export async function countTokens(ctx: CommandContext, core: Core, prompt: readonly ChatMessage[] | string, answer: string, usage: Usage | undefined): Promise<void> {
  const estimated = usage === undefined;
  const promptTokens = usage?.prompt_tokens ?? (typeof prompt === 'string' ? estimateTextTokens(prompt) : estimateMessageTokens(prompt));
  const completionTokens = usage?.completion_tokens ?? estimateTextTokens(answer);
  core.events.emit('tokens', { platform: ctx.platform, prompt: promptTokens, completion: completionTokens, estimated });
  await core.quotas.recordTokens(subjectOf(ctx), ctx.channelKey, promptTokens + completionTokens);
}
