/**
 * What a request costs in money (state/spend.ts, the price table: spend/prices.ts), as the
 * features use it: its worst case reserved before it is sent (a chat completion or completion:
 * the prompt's estimate plus `max_tokens` at the model's prices; an image: one image at its
 * model's and style's price), settled to the cost of the service's `usage` (or of the bot's own
 * count, marked as an estimate) or of the image made, reported to /metrics, and the 80 % notices
 * told to the user whose request reached them. Without a price table nothing is counted.
 *
 * A model the table prices neither by a row of its own nor by `default` is refused while any cap
 * is on (a request that cannot be priced cannot be held to a cap; the sentence says so); with no
 * cap on, it is let through and not counted. Either way it is logged once per model (and the
 * default models are named at start: state/spend.ts `Spend.warnUnpriced`).
 */
import type { Core } from '../core.ts';
import { InputError } from '../errors.ts';
import { workspaceOf } from '../keys.ts';
import type { CommandContext } from '../platform.ts';
import type { Charge } from '../spend/charge.ts';
import { chatPriceOf, imagePriceOf, tokensCost } from '../spend/prices.ts';
import { capNotice, unpricedModel } from '../spend/sentences.ts';
import type { CapLine, Spend, Spender, SpendReservation } from '../state/spend.ts';
import { estimateMessageTokens, estimateTextTokens } from '../tokens.ts';
import type { KeptRequest } from './answer-state.ts';
import { subjectOf } from './usage.ts';

export type { Charge } from '../spend/charge.ts';

const FREE: Charge = {
  settleTokens: async () => undefined,
  settleImage: async () => undefined,
  release: async () => undefined,
};

/** Whom an invocation's spend counts for: the user, the channel, the server (none for a Discord DM). */
export function spenderOf(ctx: Pick<CommandContext, 'platform' | 'user' | 'channelKey'>): Spender {
  const server = workspaceOf(ctx.channelKey);
  return {
    user: subjectOf(ctx),
    channel: ctx.channelKey,
    server: server === undefined || server === 'discord:dm' ? undefined : server,
  };
}

/**
 * Reserves the worst case of a text request (a chat completion §4.1 or completion §4.2) before it
 * is sent.
 * @throws SpendCapError (a cap reached: which, what is left, when it resets); InputError for a
 *   model the table does not price while caps are on.
 */
export async function chargeText(ctx: CommandContext, core: Core, request: KeptRequest): Promise<Charge> {
  const spend = core.spend;
  if (!spend) return FREE;
  const { model } = request.body;
  const price = chatPriceOf(spend.config.prices, model);
  if (!price) return refuseUnpriced(spend, model);
  const prompt =
    request.endpoint === 'chat'
      ? estimateMessageTokens(request.body.messages)
      : estimateTextTokens(request.body.prompt);
  const worst = tokensCost(price, prompt, request.body.max_tokens ?? core.limits.maxTokens);
  const reservation = await spend.reserve(spenderOf(ctx), model, worst);
  return charge(ctx, core, spend, model, reservation, (p, c) => tokensCost(price, p, c));
}

/**
 * Reserves one image of `model` (the service's choice when undefined) in `style` before it is
 * asked for.
 * @throws as {@link chargeText}.
 */
export async function chargeImage(
  ctx: CommandContext,
  core: Core,
  model: string | undefined,
  style: string | undefined,
): Promise<Charge> {
  const spend = core.spend;
  if (!spend) return FREE;
  const price = imagePriceOf(spend.config.prices, model, style);
  const name = model ?? 'default';
  if (price === undefined) return refuseUnpriced(spend, name);
  const reservation = await spend.reserve(spenderOf(ctx), name, price);
  return charge(ctx, core, spend, name, reservation, () => price);
}

/** A model without a price: refused while caps are on, else let through uncounted. */
function refuseUnpriced(spend: Spend, model: string): Charge {
  spend.unpriced(model);
  if (spend.capped) throw new InputError(unpricedModel(model));
  return FREE;
}

/**
 * The {@link Charge} of a reservation: `costOf` prices tokens (an image's ignores them). It
 * settles with the `spend` it was reserved on, even when a configuration reload has since
 * turned spending off or on (core.spend replaced).
 */
function charge(
  ctx: CommandContext,
  core: Core,
  spend: Spend,
  model: string,
  reservation: SpendReservation,
  costOf: (prompt: number, completion: number) => number,
): Charge {
  let done = false;
  const settle = async (cost: number, estimated: boolean) => {
    if (done) return;
    done = true;
    const crossed = await reservation.settle(cost, estimated);
    const currency = spend.currency;
    if (cost > 0) core.events.emit('spend', { model, currency, micro: cost, estimated });
    for (const line of crossed) core.events.emit('spend.cap_notice', { scope: line.scope, period: line.period });
    await tell(ctx, core, currency, crossed);
  };
  return {
    settleTokens: (prompt, completion, estimated) => settle(costOf(prompt, completion), estimated),
    settleImage: (made) => settle(made ? costOf(0, 0) : 0, false),
    release: () => settle(0, false),
  };
}

/** Tells the user, privately and in their language, each cap whose 80 % their request reached first. Never throws. */
async function tell(ctx: CommandContext, core: Core, currency: string, crossed: readonly CapLine[]): Promise<void> {
  if (crossed.length === 0) return;
  const words = await core.languages.forUser(ctx);
  for (const line of crossed) {
    await ctx.reply
      .sendEphemeral(words.say(capNotice(line, currency, Date.now())))
      .catch((error: unknown) =>
        ctx.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'spend notice not sent'),
      );
  }
}
