/**
 * Secrets at rest: a value sealed with AES-256-GCM (node:crypto) before it is written to the
 * store, opened after it is read. Each seal draws a random 12-byte IV (NIST SP 800-38D's
 * recommended length), binds the row's own name as additional authenticated data (a sealed value
 * copied under another key does not open), and keeps the 16-byte authentication tag, which
 * `open` checks: a changed byte, a wrong key or another row's name is refused.
 *
 * A key ring holds the current key, which seals, and optionally the previous one, which only
 * opens (a key rotation: rows sealed with the previous key are read, and their owner writes
 * them again with the current one). Each sealed value names its key by an id, the first 8 hex
 * digits of SHA-256 over the key, so the right key is tried and nothing about the key leaks.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** A sealed value as stored (JSON): version, key id, and base64 IV, ciphertext and tag. */
export interface SealedValue {
  v: 1;
  /** The sealing key's id: 8 hex digits of SHA-256(key). */
  kid: string;
  iv: string;
  data: string;
  tag: string;
}

/** Thrown when a sealed value does not open: unknown key, a changed byte, or another row's name. */
export class SealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealError';
  }
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A key's id: the first 8 hex digits of its SHA-256. */
function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** The keys values are sealed and opened with. */
export class KeyRing {
  private readonly current: { id: string; key: Buffer };
  private readonly previous: { id: string; key: Buffer } | undefined;

  /**
   * @param current the 32-byte key that seals (and opens).
   * @param previous the 32-byte key before a rotation, which only opens.
   * @throws RangeError for a key that is not 32 bytes.
   */
  constructor(current: Buffer, previous?: Buffer) {
    for (const key of [current, previous]) {
      if (key !== undefined && key.length !== 32) throw new RangeError('an AES-256 key is 32 bytes');
    }
    this.current = { id: keyId(current), key: current };
    this.previous = previous && { id: keyId(previous), key: previous };
  }

  /**
   * Seals `plaintext` with the current key.
   * @param name the row's own name (authenticated, not stored): `open` needs the same.
   */
  seal(plaintext: string, name: string): SealedValue {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(name, 'utf8'));
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return {
      v: 1,
      kid: this.current.id,
      iv: iv.toString('base64'),
      data: data.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
    };
  }

  /**
   * Opens a sealed value.
   * @returns the plaintext, and `stale` when it was sealed with the previous key (write it again).
   * @throws SealError when it is not a sealed value, its key is neither of the ring's, or its
   *   tag does not check (a changed byte, a wrong key, another row's name).
   */
  open(sealed: unknown, name: string): { plaintext: string; stale: boolean } {
    if (!isSealed(sealed)) throw new SealError('not a sealed value');
    const entry = [this.current, this.previous].find((k) => k?.id === sealed.kid);
    if (!entry) throw new SealError('sealed with a key this bot does not have (SLACK_INSTALLATION_KEY)');
    const iv = Buffer.from(sealed.iv, 'base64');
    const tag = Buffer.from(sealed.tag, 'base64');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SealError('malformed sealed value');
    try {
      const decipher = createDecipheriv('aes-256-gcm', entry.key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(name, 'utf8'));
      decipher.setAuthTag(tag);
      const plaintext = Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]);
      return { plaintext: plaintext.toString('utf8'), stale: entry !== this.current };
    } catch {
      throw new SealError('sealed value refused: its authentication tag does not check');
    }
  }
}

function isSealed(value: unknown): value is SealedValue {
  const v = value as Partial<SealedValue> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.v === 1 &&
    typeof v.kid === 'string' &&
    typeof v.iv === 'string' &&
    typeof v.data === 'string' &&
    typeof v.tag === 'string'
  );
}
