/**
 * What users read about spend (the price table's caps, state/spend.ts), one place each, as
 * {@link Sentence}s (catalog `errors.spend.*`) put into words by whoever knows the reader: a
 * refusal naming the cap, what is left and when it resets; the 80 % notice; a model the table
 * does not price while caps are on; the lines of /usage.
 *
 * Amounts are a number and the price table's currency code (`errors.spend.money`:
 * `{amount, number, ::.00## group-off} {currency}`), so the reader's locale formats the number
 * (`0.10 USD`, `0,10 USD`) while the currency, the operator's choice in PRICES_FILE, is not
 * written into any catalog (an ICU `::currency/EUR` skeleton would fix it there). Reset times are
 * the period's end as a date and time in UTC (`{at, date, utc}`: i18n/words.ts), where the
 * periods end, after the wait (`in 3 h 5 min`).
 */
import type { Sentence } from '../i18n/words.ts';
import { sentence } from '../i18n/words.ts';
import { waitIn } from '../state/waits.ts';

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

/**
 * An amount for users: micro-units as `0.0123 USD` in English (two to four decimals: a cent is
 * not precise enough for one request; a figure that is not a whole ten-thousandth is rounded
 * down, so an amount left is never overstated), the number in the reader's locale (`0,0123 USD`).
 */
export function money(micro: number, currency: string): Sentence {
  const amount = Math.floor(Math.max(0, micro) / 100) / 10_000;
  return sentence('errors.spend.money', { amount, currency });
}

/** "your daily spending cap", "this channel's monthly spending cap", "this server's daily spending cap". */
export function capName(line: Pick<CapRef, 'scope' | 'period'>): Sentence {
  return sentence('errors.spend.cap_name', { scope: line.scope, period: line.period });
}

/** The values every cap sentence shares: its name, its amount, the wait and the moment it resets. */
function capValues(line: CapRef, currency: string, now: number) {
  return {
    cap: capName(line),
    limit: money(line.cap, currency),
    wait: waitIn(line.endsAt - now),
    at: new Date(line.endsAt),
  };
}

/** A request refused by a cap: which, what is left of it, when it resets. */
export function capReached(line: CapRef, currency: string, now: number): Sentence {
  return sentence('errors.spend.cap_reached', {
    ...capValues(line, currency, now),
    left: money(Math.max(0, line.cap - line.spent), currency),
  });
}

/** Told once per cap and period, to the user whose request passed 80 % of it. */
export function capNotice(line: CapRef, currency: string, now: number): Sentence {
  const values = { ...capValues(line, currency, now), spent: money(line.spent, currency) };
  if (line.spent >= line.cap) return sentence('errors.spend.used_up', values);
  return sentence('errors.spend.near', { ...values, share: Math.floor((line.spent / line.cap) * 100) });
}

/** A model the price table does not price (no row, no `default`) while spending caps are on. */
export function unpricedModel(model: string): Sentence {
  return sentence('errors.spend.unpriced', { model });
}

/** One period's spend for /usage: "0.0123 USD of 0.10 USD today, resets in 5 h 2 min", with what of it is estimated. */
export function spendLine(line: CapRef & { estimated?: number }, currency: string, now: number): Sentence {
  const spent = money(line.spent, currency);
  const said =
    line.cap > 0
      ? sentence('errors.spend.line_capped', {
          period: line.period,
          spent,
          limit: money(line.cap, currency),
          wait: waitIn(line.endsAt - now),
        })
      : sentence('errors.spend.line', { period: line.period, spent });
  return line.estimated
    ? sentence('errors.spend.estimated', { line: said, estimated: money(line.estimated, currency) })
    : said;
}
