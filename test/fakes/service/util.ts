/**
 * Small utilities of the fake service: the seeded PRNG that cuts streams, ids and timestamps,
 * token estimates, and header names.
 */
import { randomBytes } from 'node:crypto';

/** mulberry32: a small seeded PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random id with a prefix (`chatcmpl-…`, `req_…`). */
export const newId = (prefix: string) => `${prefix}${randomBytes(12).toString('hex')}`;
/** Seconds since the epoch. */
export const now = () => Math.floor(Date.now() / 1000);
/** The fake's token estimate: a token per 4 characters. */
export const tokensOf = (text: string) => Math.ceil(text.length / 4);

/** Cuts text into pieces of 1–6 code points. */
export function cutText(text: string, rnd: () => number): string[] {
  const chars = Array.from(text);
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; ) {
    const n = 1 + Math.floor(rnd() * 6);
    pieces.push(chars.slice(i, i + n).join(''));
    i += n;
  }
  return pieces;
}

/** The headers with lower-case names (as node:http sends them). */
export function lowerKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}
