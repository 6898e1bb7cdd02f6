/**
 * Secrets at rest (src/core/state/sealed.ts): AES-256-GCM with a random IV, the row's name
 * authenticated, the tag checked; a previous key only opens, and says the row is stale.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyRing, SealError, type SealedValue } from '../../src/core/state/sealed.ts';

const key = randomBytes(32);
const other = randomBytes(32);
const secret = JSON.stringify({ bot: { token: 'xoxb-1-secret-token' } });

/** The value with one bit of a base64 field flipped. */
function flipped(sealed: SealedValue, field: 'data' | 'tag' | 'iv'): SealedValue {
  const bytes = Buffer.from(sealed[field], 'base64');
  bytes[0] = bytes[0]! ^ 1;
  return { ...sealed, [field]: bytes.toString('base64') };
}

describe('KeyRing', () => {
  it('seals to a value that holds no plaintext, with a fresh IV each time, and opens it again', () => {
    const ring = new KeyRing(key);
    const a = ring.seal(secret, 'team:T1');
    const b = ring.seal(secret, 'team:T1');
    expect(JSON.stringify(a)).not.toContain('xoxb-');
    expect(a.iv).not.toBe(b.iv);
    expect(Buffer.from(a.iv, 'base64')).toHaveLength(12);
    expect(Buffer.from(a.tag, 'base64')).toHaveLength(16);
    expect(ring.open(a, 'team:T1')).toEqual({ plaintext: secret, stale: false });
  });

  it('refuses a tampered ciphertext, tag or IV', () => {
    const ring = new KeyRing(key);
    const sealed = ring.seal(secret, 'team:T1');
    for (const field of ['data', 'tag', 'iv'] as const)
      expect(() => ring.open(flipped(sealed, field), 'team:T1')).toThrow(SealError);
  });

  it('refuses a wrong key (a ring without the sealing key), even one that claims the right key id', () => {
    const sealed = new KeyRing(key).seal(secret, 'team:T1');
    expect(() => new KeyRing(other).open(sealed, 'team:T1')).toThrow(/a key this bot does not have/);
    // Another key given the sealing key's id: the tag does not check.
    const forgedId = { ...new KeyRing(other).seal(secret, 'team:T1'), kid: sealed.kid };
    expect(() => new KeyRing(key).open(forgedId, 'team:T1')).toThrow(/authentication tag/);
  });

  it("refuses a value copied under another row's name", () => {
    const ring = new KeyRing(key);
    expect(() => ring.open(ring.seal(secret, 'team:T1'), 'team:T2')).toThrow(SealError);
  });

  it('opens with the previous key, saying the row is stale, and seals only with the current one', () => {
    const old = new KeyRing(other).seal(secret, 'team:T1');
    const rotated = new KeyRing(key, other);
    expect(rotated.open(old, 'team:T1')).toEqual({ plaintext: secret, stale: true });
    const resealed = rotated.seal(secret, 'team:T1');
    expect(() => new KeyRing(other).open(resealed, 'team:T1')).toThrow(SealError);
    expect(new KeyRing(key).open(resealed, 'team:T1').stale).toBe(false);
  });

  it('refuses what is not a sealed value, and keys that are not 32 bytes', () => {
    expect(() => new KeyRing(key).open({ token: 'xoxb-1' }, 'team:T1')).toThrow(/not a sealed value/);
    expect(() => new KeyRing(randomBytes(16))).toThrow(RangeError);
  });
});
