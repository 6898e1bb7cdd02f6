/**
 * The seam between core and platforms (docs/architecture.md): nothing under commands/ or src/core/
 * imports a platform SDK, so every command and the whole core serve Discord and Slack alike.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
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

  it('no import cycle among the files of src/ and commands/ (type-only imports included, as madge counts them)', () => {
    const files = [...tsFiles(join(root, 'src')), ...tsFiles(join(root, 'commands'))];
    const graph = new Map(files.map((f) => [f, importsOf(f).filter((target) => files.includes(target))]));
    expect(graph.size).toBeGreaterThan(50);
    expect(cycleIn(graph)).toEqual([]);
    // The check finds a cycle when there is one.
    expect(
      cycleIn(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
        ]),
      ),
    ).toEqual(['a', 'b', 'c', 'a']);
  });
});

/** The files a module imports by relative path (`from './x.ts'`, `import type`, `export … from`). */
function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const specifiers = [...source.matchAll(/\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]|\bimport\s+['"](\.{1,2}\/[^'"]+)['"]/g)];
  return specifiers.map((m) => resolve(dirname(file), (m[1] ?? m[2])!));
}

/** One import cycle of `graph` (its files from the first back to it), or [] when there is none. */
function cycleIn(graph: Map<string, string[]>): string[] {
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] => {
    if (state.get(node) === 'done') return [];
    if (state.get(node) === 'visiting') return [...path.slice(path.indexOf(node)), node];
    state.set(node, 'visiting');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle.length) return cycle;
    }
    path.pop();
    state.set(node, 'done');
    return [];
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle.length) return cycle.map((f) => relative(root, f) || f);
  }
  return [];
}
