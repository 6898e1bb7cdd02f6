/**
 * The price table's file (`PRICES_FILE`), part of the configuration schema: JSON, validated with
 * zod when the bot starts (loadConfig, config.ts), every problem named with its place in the
 * file and never with a value. Its shape:
 *
 * ```json
 * {
 *   "currency": "USD",
 *   "chat": {
 *     "gpt-4o-mini": { "prompt": 0.15, "completion": 0.6 },
 *     "default": { "prompt": 1, "completion": 4 }
 *   },
 *   "images": {
 *     "flux": { "perImage": 0.04, "styles": { "upscaled": 0.02 } },
 *     "default": { "perImage": 0.05 }
 *   }
 * }
 * ```
 *
 * Chat prices are per million prompt and per million completion tokens; image prices per image,
 * by style where it differs (§4.3 `style`); all in `currency` (an ISO 4217 code the runtime
 * knows, `Intl.supportedValuesOf('currency')`). A `default` row prices any model not listed.
 * Prices are 0 or more, at most 1,000,000, with at most six decimals (they become integer
 * micro-units: core/spend/prices.ts). JSON only: no YAML parser is among the dependencies.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Env } from './config-env.ts';
import { type ChatPrice, type ImagePrice, MICRO, type PriceTable } from './core/spend/prices.ts';
import type { SpendConfig, SpendPeriodCaps } from './core/state/spend.ts';

export type { SpendConfig } from './core/state/spend.ts';

/** Largest price the table takes, in currency units (per million tokens, or per image). */
const MAX_PRICE = 1_000_000;

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** A price in currency units, as integer micro-units. */
const price = z
  .number({ error: 'must be a number (a price in the currency)' })
  .min(0, 'must be 0 or more')
  .max(MAX_PRICE, `must be at most ${MAX_PRICE}`)
  .refine((v) => Math.abs(v * MICRO - Math.round(v * MICRO)) < 1e-6, 'takes at most six decimals')
  .transform((v) => Math.round(v * MICRO));

const modelName = z
  .string()
  .min(1, 'a model name must not be empty')
  .max(200, 'a model name is at most 200 characters');

const chatRow = z.strictObject(
  { prompt: price, completion: price },
  { error: 'must be { "prompt": <price per million>, "completion": <price per million> }' },
);
const imageRow = z.strictObject(
  { perImage: price, styles: z.record(z.string().min(1), price).optional() },
  { error: 'must be { "perImage": <price>, "styles"?: { "<style>": <price> } }' },
);

/** The file's schema; the result is a {@link PriceTable}. */
export const priceFileSchema = z
  .strictObject({
    currency: z
      .string({ error: 'must be an ISO 4217 currency code, e.g. USD' })
      .refine((c) => /^[A-Z]{3}$/.test(c) && CURRENCIES.has(c), 'must be an ISO 4217 currency code, e.g. USD or EUR'),
    chat: z.record(modelName, chatRow).optional(),
    images: z.record(modelName, imageRow).optional(),
  })
  .refine((t) => Object.keys(t.chat ?? {}).length + Object.keys(t.images ?? {}).length > 0, {
    error: 'prices no model: give "chat" or "images" rows (a "default" row prices any model)',
  })
  .transform(
    (t): PriceTable => ({
      currency: t.currency,
      chat: new Map(Object.entries(t.chat ?? {}).map(([m, p]): [string, ChatPrice] => [m, p])),
      images: new Map(
        Object.entries(t.images ?? {}).map(([m, p]): [string, ImagePrice] => [
          m,
          { perImage: p.perImage, styles: p.styles ?? {} },
        ]),
      ),
    }),
  );

/**
 * Reads and validates the price table at `path`.
 * @returns the table, or the problems (each `PRICES_FILE <place>: <what>`, naming no value).
 */
export function readPriceFile(path: string): { table: PriceTable; problems: [] } | { problems: string[] } {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    return { problems: [`PRICES_FILE cannot be read (${code}): give the path of a JSON price table`] };
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { problems: ['PRICES_FILE is not valid JSON'] };
  }
  const parsed = priceFileSchema.safeParse(json);
  if (parsed.success) return { table: parsed.data, problems: [] };
  return {
    problems: parsed.error.issues.map((issue) => {
      const place = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
      return `PRICES_FILE${place ? ` ${place.slice(1)}` : ''} ${issue.message}`;
    }),
  };
}

/** The SPEND_CAP_* variables. */
const CAP_VARIABLES = [
  'SPEND_CAP_USER_DAY',
  'SPEND_CAP_USER_MONTH',
  'SPEND_CAP_CHANNEL_DAY',
  'SPEND_CAP_CHANNEL_MONTH',
  'SPEND_CAP_SERVER_DAY',
  'SPEND_CAP_SERVER_MONTH',
] as const;

/**
 * The price table and the caps (in micro-units), or the problems: a PRICES_FILE that cannot be
 * read or is not a valid table; a cap set without a price table (its currency is the table's).
 */
export function spendOf(e: Env): { spend: SpendConfig | undefined; problems: string[] } {
  const cap = (day: number, month: number): SpendPeriodCaps => ({
    day: Math.round(day * MICRO),
    month: Math.round(month * MICRO),
  });
  const caps = {
    user: cap(e.SPEND_CAP_USER_DAY, e.SPEND_CAP_USER_MONTH),
    channel: cap(e.SPEND_CAP_CHANNEL_DAY, e.SPEND_CAP_CHANNEL_MONTH),
    server: cap(e.SPEND_CAP_SERVER_DAY, e.SPEND_CAP_SERVER_MONTH),
  };
  if (!e.PRICES_FILE) {
    const set = CAP_VARIABLES.filter((name) => e[name] > 0);
    return { spend: undefined, problems: set.map((name) => `${name} needs PRICES_FILE (a cap is in its currency)`) };
  }
  const read = readPriceFile(e.PRICES_FILE);
  if (!('table' in read)) return { spend: undefined, problems: read.problems };
  return { spend: { prices: read.table, caps }, problems: [] };
}
