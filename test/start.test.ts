import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

describe('npm start', () => {
  it('with an empty environment exits 2 and names the missing variables, without a stack trace', async () => {
    // Run from an empty folder so that a developer's own .env (read from npm's INIT_CWD) is not used.
    const cwd = mkdtempSync(join(tmpdir(), 'genbot-start-'));
    const result = await new Promise<{ code: number | null; stderr: string; stdout: string }>((done) => {
      execFile('npm', ['--prefix', root, 'start'], { cwd, env: { PATH: process.env.PATH!, HOME: process.env.HOME! }, timeout: 60_000 }, (error, stdout, stderr) =>
        done({ code: error ? (error as NodeJS.ErrnoException & { code: number }).code : 0, stdout, stderr }),
      );
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('SERVICE_BASE_URL is required');
    expect(result.stderr).toContain('SERVICE_API_KEY is required');
    expect(result.stderr).toMatch(/DISCORD_TOKEN and DISCORD_APPLICATION_ID, or SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
