/**
 * `npm start`, run as an operator runs it: a child process that reads `.env` from the folder
 * it is started in.
 */

import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeDiscord } from './fakes/discord.ts';
import { FakeService } from './fakes/service.ts';

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
    expect(result.stderr).toMatch(
      /DISCORD_TOKEN and DISCORD_APPLICATION_ID, or SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET/,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("reads .env, connects to Discord, and on SIGTERM to npm's own PID lets a running answer finish, stops a longer one with its partial text, exits 0 and leaves no process", async () => {
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
        'SHUTDOWN_GRACE_MS=4000',
        'LOG_LEVEL=info',
      ].join('\n'),
    );
    const child = spawn('npm', ['--prefix', root, 'start'], { cwd, env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
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
      const botPids = descendants(child.pid!);
      expect(botPids.length).toBeGreaterThanOrEqual(1);
      // npm start caps V8's heap at 384 MB of old space (the limit V8 reports adds the young generation).
      const started = JSON.parse(stdout.split('\n').find((line) => line.includes('"msg":"bot started"'))!) as {
        heapLimitMb: number;
      };
      expect(started.heapLimitMb).toBeGreaterThanOrEqual(384);
      expect(started.heapLimitMb).toBeLessThan(512);

      // Two answers streaming: one ends within the grace time (4 s), one would take 30 s.
      const short = Array.from({ length: 12 }, (_, i) => `short${i} `);
      const long = Array.from({ length: 100 }, (_, i) => `long${i} `);
      service.enqueue('chat', { stream: { pieces: short, chunkDelayMs: 150 } });
      const a = discord.dispatchInteraction({ command: 'chat', options: { prompt: 'short one' } });
      await discord.waitFor('write', (w) => w.interactionId === a.id);
      service.enqueue('chat', { stream: { pieces: long, chunkDelayMs: 300 } });
      const b = discord.dispatchInteraction({ command: 'chat', options: { prompt: 'long one' } });
      await discord.waitFor('write', (w) => w.interactionId === b.id);

      const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
      const closed = new Promise<void>((done) => child.once('close', () => done()));
      const signalledAt = Date.now();
      process.kill(child.pid!, 'SIGTERM');
      // A command arriving while the bot stops (the signal handled: give it a moment) is told so.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const late = discord.dispatchInteraction({ command: 'chat', options: { prompt: 'too late' } });
      expect(await exited).toBe(0);
      await closed;
      expect(Date.now() - signalledAt).toBeLessThan(15_000);

      expect(a.original!.content).toBe(short.join(''));
      expect(b.original!.content).toMatch(
        /^long0 long1 .*\n\n⚠️ Stopped: the bot is restarting\. Ask again in a moment\.$/s,
      );
      expect(b.original!.content.length).toBeLessThan(long.join('').length);
      expect(late.messages.map((m) => m.content)).toEqual(['The bot is restarting; try again in a few seconds.']);
      expect(late.messages[0]!.ephemeral).toBe(true);
      expect(stdout).toContain('"msg":"stopping"');
      expect(stdout).toContain('"msg":"stopped"');
      expect(stderr).not.toMatch(/error/i);
      for (const secret of [service.apiKey, discord.token]) expect(stdout + stderr).not.toContain(secret);
      for (const pid of botPids) expect(alive(pid), `process ${pid} is left`).toBe(false);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await discord.close();
      await service.close();
    }
  });
});

/** The processes below `pid` (npm's shell, if any, and the bot), read from /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(
        readFileSync(`/proc/${entry}/stat`, 'utf8')
          .replace(/^.*\) /, '')
          .split(' ')[1],
      );
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while being read.
    }
  }
  const out: number[] = [];
  const visit = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      visit(c);
    }
  };
  visit(pid);
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
