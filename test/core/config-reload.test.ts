/**
 * The reload's half of the configuration schema (config-reload.ts) and the environment a reload
 * reads (reload.ts `environmentWithFile`): every variable classified, and `.env` read again the
 * way the start reads it, without touching `process.env`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, ENV_VARIABLES } from '../../src/config.ts';
import { changedVariables, RELOAD_KINDS } from '../../src/config-reload.ts';
import { environmentWithFile } from '../../src/reload.ts';

describe('the reload classification', () => {
  it('classifies every variable of the schema as live or restart, and nothing else', () => {
    expect(Object.keys(RELOAD_KINDS).sort()).toEqual([...ENV_VARIABLES].sort());
    for (const name of ENV_VARIABLES) expect(['live', 'restart'], name).toContain(RELOAD_KINDS[name as never]);
  });

  it('names the variables whose value changed, in the schema order, an empty value being no value', () => {
    expect(
      changedVariables(
        { LOG_LEVEL: 'info', DEFAULT_CHAT_MODEL: 'a', HTTP_PORT: '', OTHER: 'x' },
        { LOG_LEVEL: 'debug', DEFAULT_CHAT_MODEL: 'a', SERVICE_API_KEY: 'k', OTHER: 'y' },
      ),
    ).toEqual(['SERVICE_API_KEY', 'LOG_LEVEL']);
  });
});

describe('environmentWithFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'genbot-reload-env-'));

  it("reads .env under the start's environment, which wins as at start, and leaves process.env alone", () => {
    const file = join(dir, 'a.env');
    writeFileSync(file, 'DEFAULT_CHAT_MODEL=from-file\nLOG_LEVEL=debug\n# a comment\nQUOTED="two words"\n');
    const before = { ...process.env };
    const env = environmentWithFile(file, { LOG_LEVEL: 'warn', PATH: '/bin' });
    expect(env).toEqual({ DEFAULT_CHAT_MODEL: 'from-file', LOG_LEVEL: 'warn', QUOTED: 'two words', PATH: '/bin' });
    expect(process.env).toEqual(before);
  });

  it("a .env that is gone gives the start's environment alone; one that cannot be read is a ConfigError naming no value", () => {
    expect(environmentWithFile(join(dir, 'none.env'), { LOG_LEVEL: 'warn' })).toEqual({ LOG_LEVEL: 'warn' });
    // A folder where the file should be: read by nobody, root included.
    const folder = mkdtempSync(join(dir, 'folder-'));
    expect(() => environmentWithFile(folder, { SERVICE_API_KEY: 'sk-secret-not-to-show' })).toThrow(
      new ConfigError(['.env cannot be read (EISDIR)']),
    );
  });
});
