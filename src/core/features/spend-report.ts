/**
 * Spend as /usage shows it (commands/usage.ts): a user's or a channel's spend today and this
 * month beside its tokens, with the caps; for admins, their server's (Discord guild's, Slack
 * workspace's) spend this month per model, with its totals. Nothing without a price table.
 */
import type { Core } from '../core.ts';
import { InputError } from '../errors.ts';
import type { Words } from '../i18n/words.ts';
import type { CommandContext } from '../platform.ts';
import type { Card } from '../platform-cards.ts';
import { formatMoney } from '../spend/prices.ts';
import { spendLine } from '../spend/sentences.ts';
import type { SpendScope } from '../state/spend.ts';
import { spenderOf } from './spend.ts';

/** Models listed in the admins' card, at most (Discord: 25 fields an embed, two for the totals). */
const MAX_MODELS = 20;

/** The card fields of one scope's spend today and this month in `words` (none without a price table). Never throws. */
export async function spendFields(
  core: Core,
  scope: SpendScope,
  id: string,
  words: Words,
): Promise<Array<{ name: string; value: string }>> {
  const spend = core.spend;
  if (!spend) return [];
  const now = Date.now();
  const [day, month] = await spend.usageOf(scope, id);
  return [
    { name: words.t('commands.usage.spend_today'), value: words.say(spendLine(day!, spend.currency, now)) },
    { name: words.t('commands.usage.spend_month'), value: words.say(spendLine(month!, spend.currency, now)) },
  ];
}

/**
 * The admins' card in `words` (theirs: it is shown to them alone): the server's spend today and
 * this month (with its caps), and this month's per model, most first.
 * @throws InputError without a price table, or in a DM (no server); the store's error.
 */
export async function spendCard(ctx: CommandContext, core: Core, words: Words): Promise<Card> {
  const spend = core.spend;
  if (!spend) throw new InputError('commands.usage.no_prices');
  const { server } = spenderOf(ctx);
  if (server === undefined) throw new InputError('commands.usage.no_server');
  const totals = await spendFields(core, 'server', server, words);
  const models = await spend.byModel(server, MAX_MODELS);
  return {
    title: words.t('commands.usage.spend_title', { platform: ctx.platform }),
    fields: [
      ...totals,
      ...models.map((m) => ({
        name: m.model.slice(0, 200),
        value: words.t('commands.usage.spend_model', { amount: formatMoney(m.spent, spend.currency) }),
      })),
    ],
    footer: models.length
      ? words.t('commands.usage.spend_footer', { currency: spend.currency })
      : words.t('commands.usage.spend_footer_none'),
  };
}
