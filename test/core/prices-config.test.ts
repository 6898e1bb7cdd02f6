/**
 * The price table (PRICES_FILE) and the spending caps (SPEND_CAP_*) in the one configuration:
 * a valid table becomes integer micro-units; a bad currency, a negative price, a file that is
 * not JSON or a cap without a table are refused at start, each with a sentence naming the place.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { chatPriceOf, formatMoney, imagePriceOf, tokensCost } from '../../src/core/spend/prices.ts';

const base = {
  SERVICE_BASE_URL: 'http://127.0.0.1:1/v1',
  SERVICE_API_KEY: 'sk-test-key-123456',
  DISCORD_TOKEN: 't',
  DISCORD_APPLICATION_ID: '123456789012345678',
};

/** Writes `content` to a file of its own and returns its path. */
function file(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'genbot-prices-')), 'prices.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('PRICES_FILE and SPEND_CAP_*', () => {
  it('reads a table into micro-units, with its default rows and the caps', () => {
    const config = loadConfig({
      ...base,
      PRICES_FILE: file({
        currency: 'EUR',
        chat: { 'gpt-x': { prompt: 0.15, completion: 0.6 }, default: { prompt: 3, completion: 15 } },
        images: { flux: { perImage: 0.04, styles: { upscaled: 0.015 } } },
      }),
      SPEND_CAP_USER_DAY: '0.10',
      SPEND_CAP_SERVER_MONTH: '25',
    });
    const { prices, caps } = config.spend!;
    expect(prices.currency).toBe('EUR');
    expect(chatPriceOf(prices, 'gpt-x')).toEqual({ prompt: 150_000, completion: 600_000 });
    expect(chatPriceOf(prices, 'other')).toEqual({ prompt: 3_000_000, completion: 15_000_000 });
    expect([imagePriceOf(prices, 'flux'), imagePriceOf(prices, 'flux', 'upscaled'), imagePriceOf(prices, 'x')]).toEqual(
      [40_000, 15_000, undefined],
    );
    expect(caps).toEqual({
      user: { day: 100_000, month: 0 },
      channel: { day: 0, month: 0 },
      server: { day: 0, month: 25_000_000 },
    });
    // 1,000 prompt and 3 completion tokens of gpt-x: 150 + 1.8 micro-units, rounded up once.
    expect(tokensCost(chatPriceOf(prices, 'gpt-x')!, 1_000, 3)).toBe(152);
    expect(formatMoney(123_456, 'EUR')).toBe('0.1234 EUR');
    expect(loadConfig(base).spend).toBeUndefined();
  });

  it('refuses a bad currency, a negative price, a file that is not JSON or is missing, and a cap without a table', () => {
    expect(
      problemsOf({ ...base, PRICES_FILE: file({ currency: 'usd', chat: { m: { prompt: 1, completion: 1 } } }) }),
    ).toEqual(['PRICES_FILE currency must be an ISO 4217 currency code, e.g. USD or EUR']);
    expect(problemsOf({ ...base, PRICES_FILE: file({ currency: 'XYZ', images: { m: { perImage: 1 } } }) })).toEqual([
      'PRICES_FILE currency must be an ISO 4217 currency code, e.g. USD or EUR',
    ]);
    expect(
      problemsOf({ ...base, PRICES_FILE: file({ currency: 'USD', chat: { 'gpt-x': { prompt: -1, completion: 2 } } }) }),
    ).toEqual(['PRICES_FILE chat.gpt-x.prompt must be 0 or more']);
    expect(
      problemsOf({
        ...base,
        PRICES_FILE: file({ currency: 'USD', images: { flux: { perImage: 0.04, styles: { upscaled: -0.5 } } } }),
      }),
    ).toEqual(['PRICES_FILE images.flux.styles.upscaled must be 0 or more']);
    expect(problemsOf({ ...base, PRICES_FILE: file('{"currency": "USD",') })).toEqual([
      'PRICES_FILE is not valid JSON',
    ]);
    expect(problemsOf({ ...base, PRICES_FILE: '/nonexistent/prices.json' })).toEqual([
      'PRICES_FILE cannot be read (ENOENT): give the path of a JSON price table',
    ]);
    expect(problemsOf({ ...base, SPEND_CAP_CHANNEL_DAY: '1' })).toEqual([
      'SPEND_CAP_CHANNEL_DAY needs PRICES_FILE (a cap is in its currency)',
    ]);
    expect(problemsOf({ ...base, SPEND_CAP_USER_DAY: '-0.1' })).toEqual(['SPEND_CAP_USER_DAY must be 0 (off) or more']);
  });
});
