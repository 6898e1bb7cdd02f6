/**
 * The container, without Docker (it cannot run here): the Dockerfile's own steps are run on a
 * clean copy of what it copies — its `npm ci` (which builds dist/) and `npm prune --omit=dev`,
 * then its CMD with an empty environment, which must exit 2 naming the missing variables — so
 * a production install without dev dependencies is proven to start. The Dockerfile and compose.yaml are checked for
 * what an operator relies on (multi-stage, slim Node 22 or 24 and later, non-root, health check; Redis and
 * two bot replicas).
 */

import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
/** Instructions with their continuation lines joined. */
const instructions = dockerfile
  .replace(/\\\n\s*/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const stages = instructions.reduce<string[][]>((all, line) => {
  if (line.startsWith('FROM ')) all.push([]);
  all.at(-1)?.push(line);
  return all;
}, []);

describe('Dockerfile', () => {
  it('is multi-stage on node:22-slim, node:24-slim or newer (supported releases), runs as a non-root user, has a HEALTHCHECK and an exec-form CMD', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage[0]).toMatch(/^FROM node:(22|2[4-9]|[3-9]\d)-slim\b/);
    const final = stages.at(-1)!;
    expect(final.find((l) => l.startsWith('USER '))).toMatch(/^USER (node|\d+)$/);
    expect(final.some((l) => l.startsWith('HEALTHCHECK ') && l.includes('/healthz'))).toBe(true);
    expect(JSON.parse(final.find((l) => l.startsWith('CMD '))!.slice(4))).toEqual(['node', 'dist/src/main.js']);
    expect(stages[0]!.some((l) => /^RUN npm ci\b.*&& npm prune --omit=dev\b/.test(l))).toBe(true);
    expect(final).toEqual(
      expect.arrayContaining([
        'COPY --from=deps /app/node_modules ./node_modules',
        'COPY --from=deps /app/dist ./dist',
      ]),
    );
  });

  it('its npm ci on a clean copy builds dist/, its prune leaves no dev dependency, and its CMD, with an empty environment, exits 2 naming the missing variables', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'genbot-image-'));
    // What the stages copy from the build context (COPY without --from).
    const copied = stages
      .flat()
      .filter((l) => l.startsWith('COPY ') && !l.includes('--from'))
      .flatMap((l) => l.slice(5).split(/\s+/).slice(0, -1));
    expect(copied).toEqual(
      expect.arrayContaining([
        'package.json',
        'package-lock.json',
        'tsconfig.json',
        'tsconfig.build.json',
        'src',
        'commands',
      ]),
    );
    for (const path of new Set(copied)) cpSync(join(root, path), join(dir, path), { recursive: true });
    const install = stages[0]!.find((l) => /^RUN npm ci\b/.test(l))!.slice(4);
    // At the lowest priority: sqlite3 compiles for about a minute, and the other tests run meanwhile.
    const installed = await run(
      'nice',
      ['-n', '19', 'sh', '-c', install],
      dir,
      { PATH: process.env.PATH!, HOME: process.env.HOME! },
      600_000,
    );
    expect(installed.code, installed.stderr).toBe(0);
    expect(existsSync(join(dir, 'dist/src/main.js'))).toBe(true);
    for (const dev of ['typescript', 'tsx', 'vitest']) expect(existsSync(join(dir, 'node_modules', dev))).toBe(false);
    const [command, ...args] = JSON.parse(
      stages
        .at(-1)!
        .find((l) => l.startsWith('CMD '))!
        .slice(4),
    ) as string[];
    const started = await run(command!, args, dir, { PATH: process.env.PATH! }, 60_000);
    expect(started.code).toBe(2);
    expect(started.stderr).toContain('SERVICE_BASE_URL is required');
    expect(started.stderr).toContain('SERVICE_API_KEY is required');
    expect(started.stderr).not.toMatch(/\n\s+at /);
  }, 660_000);
});

describe('compose.yaml', () => {
  it('runs Redis and two bot replicas that share it, and points Slack at both through one ingress', () => {
    const compose = readFileSync(join(root, 'compose.yaml'), 'utf8');
    expect(compose).toMatch(/^\s{2}redis:\n\s{4}image: redis:/m);
    expect(compose).toMatch(/STORE_URL: redis:\/\/redis:6379/);
    expect(compose.match(/^\s{2}bot-\d:$/gm)).toHaveLength(2);
    expect(compose).toMatch(/DISCORD_SHARD_IDS: "0"[\s\S]*DISCORD_SHARD_IDS: "1"/);
    expect(compose).toMatch(/upstream bots \{ server bot-1:3000; server bot-2:3000; \}/);
  });
});

function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  timeout: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(command, args, { cwd, env, timeout });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('close', (code) => done({ code: code ?? -1, stdout, stderr }));
  });
}
