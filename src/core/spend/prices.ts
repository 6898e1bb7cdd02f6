/**
 * The operator's price table (`PRICES_FILE`, read and validated by config-prices.ts) as the core
 * uses it: what a chat completion costs from its `usage` (prompt and completion tokens at the
 * model's prices per million), what one image costs (by model, and by style where the table
 * says so), and how an amount is written for users.
 *
 * Money is counted in micro-units of the table's currency (1 USD = 1,000,000 micro-units), as
 * integers: the store's counters are integers (Redis INCRBY), and sums of integers do not drift
 * as sums of binary fractions do. A cost is rounded up to the next micro-unit, once per request.
 */

/** Micro-units in one unit of the currency. */
export const MICRO = 1_000_000;

/** One chat model's prices, in micro-units per million tokens. */
export interface ChatPrice {
  prompt: number;
  completion: number;
}

/** One image model's price, in micro-units an image, with its styles' own where they differ. */
export interface ImagePrice {
  perImage: number;
  /** By §4.3 `style` (e.g. `upscaled`). */
  styles: Readonly<Record<string, number>>;
}

/**
 * A validated price table. `chat` and `images` are keyed by model id (chat) or the image model's
 * name as sent in `user_selected_model`; the key `default` prices any model not listed.
 */
export interface PriceTable {
  /** ISO 4217 code, e.g. `USD`. */
  currency: string;
  chat: ReadonlyMap<string, ChatPrice>;
  images: ReadonlyMap<string, ImagePrice>;
}

/** The row that prices a model not listed. */
export const DEFAULT_ROW = 'default';

/** The price of a chat model: its row, else the `default` row; undefined when neither exists (unpriced). */
export function chatPriceOf(table: PriceTable, model: string): ChatPrice | undefined {
  return table.chat.get(model) ?? table.chat.get(DEFAULT_ROW);
}

/**
 * The price of one image of `model` (the service's choice when undefined: the `default` row) in
 * `style`: the style's own price, else the model's. Undefined when unpriced.
 */
export function imagePriceOf(table: PriceTable, model: string | undefined, style?: string): number | undefined {
  const row = (model === undefined ? undefined : table.images.get(model)) ?? table.images.get(DEFAULT_ROW);
  if (!row) return undefined;
  return (style === undefined ? undefined : row.styles[style]) ?? row.perImage;
}

/**
 * What `prompt` and `completion` tokens cost at `price`, in micro-units, rounded up (exact in
 * BigInt: tokens × micro-units per million can pass 2⁵³).
 */
export function tokensCost(price: ChatPrice, prompt: number, completion: number): number {
  const p = BigInt(Math.max(0, Math.ceil(prompt)));
  const c = BigInt(Math.max(0, Math.ceil(completion)));
  const scaled = p * BigInt(price.prompt) + c * BigInt(price.completion);
  const million = 1_000_000n;
  return Number((scaled + million - 1n) / million);
}

/** Which of `models` the table prices neither by a row of their own nor by `default` (startup warnings). */
export function unpricedModels(
  table: PriceTable,
  models: { chat: readonly (string | undefined)[]; images: readonly (string | undefined)[] },
): string[] {
  const chat = models.chat.filter((m): m is string => m !== undefined && chatPriceOf(table, m) === undefined);
  const images = models.images.filter((m): m is string => m !== undefined && imagePriceOf(table, m) === undefined);
  return [...new Set([...chat, ...images])];
}

/**
 * An amount for users: micro-units as `0.0123 USD` (two to four decimals: a cent is not precise
 * enough for one request; a figure that is not a whole ten-thousandth is rounded down, so an
 * amount left is never overstated).
 */
export function formatMoney(micro: number, currency: string): string {
  const tenThousandths = Math.floor(Math.max(0, micro) / 100);
  const text = (tenThousandths / 10_000).toLocaleString('en-US', {
    minimumFractionDigits: 2,
    maximumFractionDigits: 4,
    useGrouping: false,
  });
  return `${text} ${currency}`;
}
