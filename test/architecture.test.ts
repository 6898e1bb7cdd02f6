/**
 * The seam between core and platforms (docs/architecture.md): nothing under commands/ or src/core/
 * imports a platform SDK, so every command and the whole core serve Discord and Slack alike.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const PLATFORM_SDK =
  /\bfrom\s+['"](discord\.js|@discordjs\/[^'"]+|@slack\/[^'"]+)['"]|\bimport\(\s*['"](discord\.js|@discordjs\/|@slack\/)/;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

describe('architecture', () => {
  it('no file under commands/ or src/core/ imports discord.js, @discordjs/* or @slack/*', () => {
    const files = [...tsFiles(join(root, 'commands')), ...tsFiles(join(root, 'src/core'))];
    expect(files.length).toBeGreaterThan(10);
    const offenders = files.filter((f) => PLATFORM_SDK.test(readFileSync(f, 'utf8'))).map((f) => relative(root, f));
    expect(offenders).toEqual([]);
  });

  it('the check recognises a platform import when there is one (the adapters have them)', () => {
    const adapters = tsFiles(join(root, 'src/platforms')).filter((f) => PLATFORM_SDK.test(readFileSync(f, 'utf8')));
    expect(adapters.map((f) => relative(root, f)).sort()).toEqual(
      expect.arrayContaining(['src/platforms/discord/adapter.ts', 'src/platforms/slack/adapter.ts']),
    );
  });
});
