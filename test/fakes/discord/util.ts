/** Small helpers shared by the Discord fake's modules. */
import { DISCORD_EPOCH } from './constants.ts';
import type { Json } from './types.ts';

let snowflakeIncrement = 0n;
/** A snowflake for `at` (ms since 1970), unique within the process. */
export function snowflake(at = Date.now()): string {
  snowflakeIncrement = (snowflakeIncrement + 1n) & 0xfffn;
  return (((BigInt(at) - DISCORD_EPOCH) << 22n) | (1n << 17n) | snowflakeIncrement).toString();
}

/** Length as Discord counts it: Unicode code points. */
export const codePoints = (s: string) => [...s].length;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** ISO 8601 with Discord's `+00:00` offset, from ms since 1970. */
export const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');

/** `decodeURIComponent`, or the segment as it is when it does not decode. */
export function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
