/**
 * `npm start`, run as an operator runs it: a child process that reads `.env` from the folder
 * it is started in.
 */
import { describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FakeService } from './fakes/service.ts';
import { FakeDiscord } from './fakes/discord.ts';

const root = resolve(import.meta.dirname, '..');
const baseEnv = () => ({ PATH: process.env.PATH!, HOME: process.env.HOME! });

describe('npm start', () => {
  it('with an empty environment exits 2 and names the missing variables, without a stack trace', async () => {
    // Run from an empty folder so that a developer's own .env (read from npm's INIT_CWD) is not used.
    const cwd = mkdtempSync(join(tmpdir(), 'genbot-start-'));
    const result = await new Promise<{ code: number | null; stderr: string; stdout: string }>((done) => {
      execFile('npm', ['--prefix', root, 'start'], { cwd, env: baseEnv(), timeout: 60_000 }, (error, stdout, stderr) =>
        done({ code: error ? (error as NodeJS.ErrnoException & { code: number }).code : 0, stdout, stderr }),
      );
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('SERVICE_BASE_URL is required');
    expect(result.stderr).toContain('SERVICE_API_KEY is required');
    expect(result.stderr).toMatch(/DISCORD_TOKEN and DISCORD_APPLICATION_ID, or SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('reads .env from the folder it runs in, connects to Discord, and stops cleanly on SIGTERM', async () => {
    const service = await FakeService.start();
    const discord = await FakeDiscord.start();
    const cwd = mkdtempSync(join(tmpdir(), 'genbot-start-'));
    writeFileSync(
      join(cwd, '.env'),
      [
        `SERVICE_BASE_URL=${service.baseUrl}/v1`,
        `SERVICE_API_KEY=${service.apiKey}`,
        `DISCORD_TOKEN=${discord.token}`,
        `DISCORD_APPLICATION_ID=${discord.applicationId}`,
        `DISCORD_API_URL=${discord.apiUrl}`,
        `STORE_URL=sqlite://${join(cwd, 'data', 'history.sqlite')}`,
        'LOG_LEVEL=info',
      ].join('\n'),
    );
    // Its own process group, signalled as a whole: what Ctrl-C in a terminal or systemd's stop does
    // (npm itself does not pass a SIGTERM sent to it alone on to the bot).
    const child = spawn('npm', ['--prefix', root, 'start'], { cwd, env: baseEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    try {
      await new Promise<void>((started, failed) => {
        child.stdout.on('data', (d) => {
          stdout += String(d);
          if (stdout.includes('"msg":"bot started"')) started();
        });
        child.once('exit', (code) => failed(new Error(`npm start exited ${code} before starting: ${stderr}`)));
      });
      // npm dies of the signal itself; the bot's clean stop is read from its log, complete once
      // every stdio pipe has closed (the bot holds them until it exits).
      const closed = new Promise<void>((done) => child.once('close', () => done()));
      process.kill(-child.pid!, 'SIGTERM');
      await closed;
      expect(stdout).toContain('"msg":"discord ready"');
      expect(stdout).toContain('"msg":"stopping"');
      expect(stdout).toContain('"msg":"stopped"');
      expect(stderr).not.toMatch(/error/i);
      for (const secret of [service.apiKey, discord.token]) expect(stdout + stderr).not.toContain(secret);
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
      await discord.close();
      await service.close();
    }
  });
});
