/**
 * Claims (event de-duplication) on the keyv store: the first claim of a key wins, within
 * one process under concurrency and across two processes' stores sharing one SQLite file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Keyv from 'keyv';
import { Claims } from '../../src/core/state/claims.ts';
import { openStore } from '../../src/core/state/store.ts';

const stores: Keyv[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.disconnect()));
});

function store(path: string): Keyv {
  const keyv = openStore(`sqlite://${path}`);
  stores.push(keyv);
  return keyv;
}

const tempFile = () => join(mkdtempSync(join(tmpdir(), 'genbot-claims-')), 'state.sqlite');

describe('Claims', () => {
  it('the first claim of a key wins and every later one loses, other keys are independent', async () => {
    const claims = new Claims(store(tempFile()));
    expect(await claims.claim('slack:event:Ev1', 60_000)).toBe(true);
    expect(await claims.claim('slack:event:Ev1', 60_000)).toBe(false);
    expect(await claims.claim('slack:event:Ev2', 60_000)).toBe(true);
  });

  it('of 20 concurrent claims of one key in one process exactly one wins', async () => {
    const claims = new Claims(store(tempFile()));
    const results = await Promise.all(Array.from({ length: 20 }, () => claims.claim('slack:event:EvX', 60_000)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('a second instance on the same store sees the first one\'s claim', async () => {
    const path = tempFile();
    const first = new Claims(store(path));
    const second = new Claims(store(path));
    expect(await first.claim('slack:event:Ev9', 60_000)).toBe(true);
    expect(await second.claim('slack:event:Ev9', 60_000)).toBe(false);
  });

  it('a claim expires after its time to live', async () => {
    const claims = new Claims(store(tempFile()));
    expect(await claims.claim('k', 50)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await claims.claim('k', 50)).toBe(true);
  });
});
