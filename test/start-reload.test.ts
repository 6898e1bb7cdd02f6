/**
 * SIGHUP to the bot as an operator runs it (issue 43 item 4): `npm start` in a child process
 * reading `.env` from the folder it is started in; the signal goes to the pid the start line
 * logs (npm does not pass SIGHUP on), after `.env` was rewritten.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { FakeDiscord } from './fakes/discord.ts';
import { FakeService } from './fakes/service.ts';

const root = resolve(import.meta.dirname, '..');

type Line = Record<string, unknown> & { msg?: string; level?: number };

describe('npm start and SIGHUP', () => {
  it('reloads .env on SIGHUP to the logged pid: a changed model reaches the next /chat, a bad file is refused and the bot runs on with the old one', async () => {
    const service = await FakeService.start();
    const discord = await FakeDiscord.start();
    const cwd = mkdtempSync(join(tmpdir(), 'genbot-sighup-'));
    const writeEnv = (more: string[]) =>
      writeFileSync(
        join(cwd, '.env'),
        [
          `SERVICE_BASE_URL=${service.baseUrl}/v1`,
          `SERVICE_API_KEY=${service.apiKey}`,
          `DISCORD_TOKEN=${discord.token}`,
          `DISCORD_APPLICATION_ID=${discord.applicationId}`,
          `DISCORD_API_URL=${discord.apiUrl}`,
          `STORE_URL=sqlite://${join(cwd, 'history.sqlite')}`,
          'LOG_LEVEL=info',
          ...more,
        ].join('\n'),
      );
    writeEnv(['DEFAULT_CHAT_MODEL=fake-chat']);
    const child = spawn('npm', ['--prefix', root, '--silent', 'start'], {
      cwd,
      env: { PATH: process.env.PATH!, HOME: process.env.HOME! },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: Line[] = [];
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    const waiters: Array<() => void> = [];
    createInterface({ input: child.stdout }).on('line', (text) => {
      try {
        lines.push(JSON.parse(text) as Line);
      } catch {
        lines.push({ msg: text });
      }
      for (const wake of waiters.splice(0)) wake();
    });
    child.once('exit', () => {
      for (const wake of waiters.splice(0)) wake();
    });
    /** The first log line `where` accepts, once it is written. */
    const line = async (where: (l: Line) => boolean): Promise<Line> => {
      for (;;) {
        const found = lines.find(where);
        if (found) return found;
        if (child.exitCode !== null) throw new Error(`the bot exited (${child.exitCode}): ${stderr}`);
        await new Promise<void>((wake) => waiters.push(wake));
      }
    };
    const chatModel = async (prompt: string) => {
      const interaction = discord.dispatchInteraction({ command: 'chat', options: { prompt } });
      await discord.waitFor('write', (w) => w.interactionId === interaction.id && w.content.startsWith('Echo:'));
      return service.chatRequests().find((b) => JSON.stringify(b.messages).includes(prompt))?.model;
    };
    try {
      const started = await line((l) => l.msg === 'bot started');
      const pid = started.pid as number;
      // The bot's own process, not npm's: npm would not pass the signal on.
      expect(pid).not.toBe(child.pid);
      expect(await chatModel('before the reload')).toBe('fake-chat');

      writeEnv(['DEFAULT_CHAT_MODEL=fake-vision']);
      process.kill(pid, 'SIGHUP');
      const applied = await line((l) => l.msg === 'configuration reloaded');
      expect(applied.changed).toEqual(['DEFAULT_CHAT_MODEL']);
      expect(await chatModel('after the reload')).toBe('fake-vision');

      writeEnv(['DEFAULT_CHAT_MODEL=fake-chat', 'QUOTA_TOKENS_PER_DAY=abc']);
      process.kill(pid, 'SIGHUP');
      const refused = await line((l) => l.level === 50);
      expect(refused.msg).toMatch(
        /^configuration reload refused, the running configuration stays: Invalid configuration:/,
      );
      expect(refused.variables).toEqual(['QUOTA_TOKENS_PER_DAY']);
      expect(await chatModel('after the refusal')).toBe('fake-vision');
      expect(child.exitCode).toBeNull();

      const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
      process.kill(pid, 'SIGTERM');
      expect(await exited).toBe(0);
      expect(lines.filter((l) => (l.level ?? 0) >= 50)).toEqual([refused]);
      expect(JSON.stringify(lines) + stderr).not.toContain(service.apiKey);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await discord.close();
      await service.close();
    }
  });
});
