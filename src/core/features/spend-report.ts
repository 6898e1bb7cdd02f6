/**
 * Spend as /usage shows it (commands/usage.ts): a user's or a channel's spend today and this
 * month beside its tokens, with the caps; for admins, their server's (Discord guild's, Slack
 * workspace's) spend this month per model, with its totals. Nothing without a price table.
 */
import type { Core } from '../core.ts';
import { InputError } from '../errors.ts';
import { english } from '../i18n/words.ts';
import type { CommandContext } from '../platform.ts';
import type { Card } from '../platform-cards.ts';
import { formatMoney } from '../spend/prices.ts';
import { spendLine } from '../spend/sentences.ts';
import type { SpendScope } from '../state/spend.ts';
import { spenderOf } from './spend.ts';

/** Models listed in the admins' card, at most (Discord: 25 fields an embed, two for the totals). */
const MAX_MODELS = 20;

/** The card fields of one scope's spend today and this month (none without a price table). Never throws. */
export async function spendFields(
  core: Core,
  scope: SpendScope,
  id: string,
): Promise<Array<{ name: string; value: string }>> {
  const spend = core.spend;
  if (!spend) return [];
  const now = Date.now();
  const [day, month] = await spend.usageOf(scope, id);
  return [
    { name: 'spend today', value: english.say(spendLine(day!, spend.currency, now)) },
    { name: 'spend this month', value: english.say(spendLine(month!, spend.currency, now)) },
  ];
}

/**
 * The admins' card: the server's spend today and this month (with its caps), and this month's
 * per model, most first.
 * @throws InputError without a price table, or in a DM (no server); the store's error.
 */
export async function spendCard(ctx: CommandContext, core: Core): Promise<Card> {
  const spend = core.spend;
  if (!spend) throw new InputError('No price table is set on this bot (PRICES_FILE), so no spend is counted.');
  const { server } = spenderOf(ctx);
  if (server === undefined) throw new InputError('A direct message belongs to no server: ask in a channel of one.');
  const totals = await spendFields(core, 'server', server);
  const models = await spend.byModel(server, MAX_MODELS);
  const where = ctx.platform === 'slack' ? 'workspace' : 'server';
  return {
    title: `Spend of this ${where}`,
    fields: [
      ...totals,
      ...models.map((m) => ({
        name: m.model.slice(0, 200),
        value: `${formatMoney(m.spent, spend.currency)} this month`,
      })),
    ],
    footer: models.length
      ? `Per model this month (UTC), most first; prices from the operator's table, in ${spend.currency}.`
      : 'Nothing spent on any model this month yet.',
  };
}
