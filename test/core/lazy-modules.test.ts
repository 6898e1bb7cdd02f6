/**
 * The bot loads what its configuration uses and no more: the store backend STORE_URL names
 * (open-store.ts), the adapters of the configured platforms (bot.ts `createAdapters`) and
 * pino-pretty only for LOG_FORMAT=pretty (log.ts). Each check runs in a process of its own,
 * so that what this test process loaded does not count.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = (path: string) => JSON.stringify(new URL(`../../src/${path}`, import.meta.url).href);

/** Runs `body` (an ES module's code, with `loaded(pkg)` telling whether a package was loaded) and returns its stdout. */
function inProcess(body: string): string {
  const script = `
    const { createRequire } = await import('node:module');
    const loaded = (pkg) => Object.keys(createRequire(import.meta.url).cache).some((p) => p.includes('/node_modules/' + pkg + '/'));
    ${body}
  `;
  return execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
}

describe('modules loaded on demand', () => {
  it('a SQLite store loads the SQLite driver and not the Redis client', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'genbot-lazy-')), 'state.sqlite');
    const out = inProcess(`
      const { openStore } = await import(${src('core/state/open-store.ts')});
      const before = [loaded('sqlite3'), loaded('@redis/client')];
      const store = await openStore(${JSON.stringify(`sqlite://${path}`)});
      await store.keyv.set('k', 1);
      const after = [loaded('sqlite3'), loaded('@redis/client')];
      await store.close();
      process.stdout.write(JSON.stringify({ before, after }));
    `);
    expect(JSON.parse(out)).toEqual({ before: [false, false], after: [true, false] });
  });

  it("the bot's entry module loads no platform SDK, store backend or pino-pretty until it starts with a configuration", () => {
    const out = inProcess(`
      await import(${src('bot.ts')});
      process.stdout.write(JSON.stringify(['discord.js', '@slack/bolt', '@redis/client', 'sqlite3', 'pino-pretty'].filter(loaded)));
    `);
    expect(JSON.parse(out)).toEqual([]);
  });

  it('loads pino-pretty only when LOG_FORMAT=pretty asks, and writes to stdout through it', () => {
    const out = inProcess(`
      const { createLogger } = await import(${src('log.ts')});
      createLogger({ level: 'info', secrets: [], format: 'json' }).info('json line');
      const before = loaded('pino-pretty');
      createLogger({ level: 'info', secrets: ['sk-secret-123456'], format: 'pretty' }).info({ key: 'sk-secret-123456' }, 'pretty line');
      process.stdout.write('loaded before/after: ' + before + '/' + loaded('pino-pretty') + '\\n');
    `);
    expect(out).toContain('"msg":"json line"');
    expect(out).toMatch(/INFO.*: pretty line\n\s+key: "\[redacted\]"/);
    expect(out).toContain('loaded before/after: false/true');
  });
});
