/**
 * Random ids (answers, exchanges' turns, Stop buttons, images): hex of cryptographically random
 * bytes, drawn from a pool filled 4 KiB at a time. `randomBytes(9)` per id asked the system's
 * generator four times per /chat, 40 ms of a 1,000-command burst's CPU (bench:streams); Node's
 * own randomUUID pools its entropy the same way.
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

/**
 * `bytes` random bytes as lowercase hex (2 × `bytes` characters).
 * @param bytes at most 4,096.
 */
export function randomHex(bytes: number): string {
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}
