/**
 * `npm run setup` in a real terminal: run in a pseudo-terminal (util-linux's
 * script(1), part of every Debian), its @clack/prompts questions answered by keystrokes, against
 * the fakes. A wrong key is named and asked again; the .env is written with the answers; no
 * secret reaches the screen, typed or printed.
 */

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseEnv, stripVTControlCharacters } from 'node:util';
import { expect, it } from 'vitest';
import type { FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { useE2E } from '../helpers/e2e.ts';

const root = resolve(import.meta.dirname, '../..');
let service: FakeService;
let discord: FakeDiscord;

useE2E({ discord: {} }, (e2e) => {
  ({ service, discord } = e2e);
});

/** The screen so far, without terminal escapes. */
const screenOf = (raw: string) => stripVTControlCharacters(raw);

/** The setup in a pseudo-terminal 160 columns wide; `until(pattern)` waits for the screen to show it past `from`. */
function terminal(args: string[], cwd: string) {
  const quoted = args.map((a) => `'${a}'`).join(' ');
  const child: ChildProcessWithoutNullStreams = spawn(
    'script',
    ['-qfec', `stty cols 160 rows 50; exec npm --prefix '${root}' run --silent setup -- ${quoted}`, '/dev/null'],
    { cwd, env: { PATH: process.env.PATH!, HOME: process.env.HOME!, TERM: 'xterm' } },
  );
  let raw = '';
  let from = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    raw += chunk.toString();
  });
  const exited = new Promise<number>((done) => child.once('exit', (code) => done(code ?? -1)));
  return {
    screen: () => screenOf(raw),
    exited,
    /** Resolves once `pattern` shows after the last keystrokes; rejects when the setup exits first. */
    until(pattern: RegExp): Promise<void> {
      return new Promise((done, fail) => {
        const look = () => {
          if (pattern.test(screenOf(raw.slice(from)))) {
            child.stdout.off('data', look);
            done();
          }
        };
        child.stdout.on('data', look);
        void exited.then(() => fail(new Error(`the setup exited before ${pattern}:\n${screenOf(raw).slice(-2000)}`)));
        look();
      });
    },
    type(keys: string) {
      from = raw.length;
      child.stdin.write(keys);
    },
  };
}

it('asks in a pseudo-terminal, names a wrong key and asks again, writes the answers, and shows no secret', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'genbot-setup-tty-'));
  const wrongKey = 'sk-wrong-key-0123456789';
  const setup = terminal(
    ['--discord-api-url', discord.apiUrl, '--store-url', `sqlite://${join(dir, 'store.sqlite')}`],
    dir,
  );
  const answer = async (keys: string, next: RegExp) => {
    setup.type(keys);
    await setup.until(next);
  };
  await setup.until(/base URL/);
  await answer(`${service.baseUrl}/v1\r`, /API key/);
  await answer(`${wrongKey}\r`, /refused the bot's API key[\s\S]*base URL/);
  await answer('\r', /API key \(Enter keeps the current one\)/);
  await answer(`${service.apiKey}\r`, /default chat model/);
  await answer('\r', /default image model/);
  await answer('\r', /Connect the bot to Discord\?/);
  await answer('\r', /Connect the bot to Slack\?/);
  await answer('\r', /The bot token/);
  await answer(`${discord.token}\r`, /Start the bot with: npm start/);
  expect(await setup.exited).toBe(0);
  const written = parseEnv(readFileSync(join(dir, '.env'), 'utf8'));
  expect(written).toMatchObject({
    SERVICE_BASE_URL: `${service.baseUrl}/v1`,
    SERVICE_API_KEY: service.apiKey,
    DEFAULT_CHAT_MODEL: 'fake-chat',
    DISCORD_TOKEN: discord.token,
    DISCORD_APPLICATION_ID: discord.applicationId,
  });
  const screen = setup.screen();
  expect(screen).toContain(`client_id=${discord.applicationId}&integration_type=1`);
  for (const secret of [wrongKey, service.apiKey, discord.token]) expect(screen).not.toContain(secret);
});
