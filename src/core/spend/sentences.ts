/**
 * What users read about spend (the price table's caps, state/spend.ts), one place each: a
 * refusal naming the cap, what is left and when it resets; the 80 % notice; a model the table
 * does not price while caps are on; the lines of /usage.
 */
import { waitText } from '../state/quotas.ts';
import { formatMoney } from './prices.ts';

/** A cap as the sentences name it. */
export interface CapRef {
  scope: 'user' | 'channel' | 'server';
  period: 'day' | 'month';
  /** Micro-units. */
  cap: number;
  /** Micro-units spent in the period. */
  spent: number;
  /** When the period ends, ms since the epoch. */
  endsAt: number;
}

/** "your daily spending cap", "this channel's monthly spending cap", "this server's daily spending cap". */
export function capName(line: Pick<CapRef, 'scope' | 'period'>): string {
  const whose = line.scope === 'user' ? 'your' : line.scope === 'channel' ? "this channel's" : "this server's";
  return `${whose} ${line.period === 'day' ? 'daily' : 'monthly'} spending cap`;
}

/** When a period ends: "in 3 h 5 min (00:00 UTC)", or the date for a month. */
function resetText(endsAt: number, now: number): string {
  const at = new Date(endsAt);
  const when =
    at.getUTCDate() === 1 && at.getUTCHours() === 0 ? `${at.toISOString().slice(0, 10)} 00:00 UTC` : '00:00 UTC';
  return `${waitText(endsAt - now)} (${when})`;
}

/** A request refused by a cap: which, what is left of it, when it resets. */
export function capReached(line: CapRef, currency: string, now: number): string {
  const left = formatMoney(Math.max(0, line.cap - line.spent), currency);
  return (
    `This request would go past ${capName(line)} of ${formatMoney(line.cap, currency)}: ${left} left. ` +
    `It resets ${resetText(line.endsAt, now)}.`
  );
}

/** Told once per cap and period, to the user whose request passed 80 % of it. */
export function capNotice(line: CapRef, currency: string, now: number): string {
  const figures = `${formatMoney(line.spent, currency)} of ${formatMoney(line.cap, currency)}`;
  const resets = `It resets ${resetText(line.endsAt, now)}.`;
  if (line.spent >= line.cap)
    return `Heads-up: ${capName(line)} is used up (${figures}): more requests are refused. ${resets}`;
  const share = Math.floor((line.spent / line.cap) * 100);
  return `Heads-up: ${share} % of ${capName(line)} is used (${figures}). ${resets}`;
}

/** A model the price table does not price (no row, no `default`) while spending caps are on. */
export function unpricedModel(model: string): string {
  return (
    `The model \`${model}\` has no price in this bot's price table, and spending caps are on, so it cannot be used. ` +
    'Choose another model, or ask the operator to price it (PRICES_FILE).'
  );
}

/** One period's spend for /usage: "0.0123 USD of 0.10 USD today (resets in 5 h 2 min)", "~" marking estimates. */
export function spendLine(line: CapRef & { estimated?: number }, currency: string, now: number): string {
  const spent = formatMoney(line.spent, currency);
  const of = line.cap > 0 ? ` of ${formatMoney(line.cap, currency)}` : '';
  const when = line.period === 'day' ? 'today' : 'this month';
  const estimate = line.estimated
    ? ` (${formatMoney(line.estimated, currency)} of it estimated: the service sent no usage)`
    : '';
  const reset = line.cap > 0 ? `, resets ${waitText(line.endsAt - now)}` : '';
  return `${spent}${of} ${when}${reset}${estimate}`;
}
