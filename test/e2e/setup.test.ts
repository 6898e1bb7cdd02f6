/**
 * `npm run setup`, run as an operator runs it unattended (a child process, no terminal, answers
 * as flags and environment variables), against the fakes: the .env it writes is one the bot
 * accepts, with the answers; the Discord commands are registered and the install links printed;
 * a wrong key or a token missing a scope is named, exit 1, nothing written; an existing .env
 * keeps its other variables; no secret ever appears in what it prints.
 */

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { commands, messageActions } from '../../commands/index.ts';
import { loadConfig } from '../../src/config.ts';
import { SLACK_BOT_SCOPES } from '../../src/platforms/slack/manifest.ts';
import type { FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { FakeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';

const root = resolve(import.meta.dirname, '../..');
let service: FakeService;
let discord: FakeDiscord;

useE2E({ discord: {} }, (e2e) => {
  ({ service, discord } = e2e);
});

interface Run {
  code: number;
  /** stdout and stderr together. */
  output: string;
  dir: string;
  envFile: string;
}

/**
 * Runs `npm run setup -- …args` from a fresh folder (its .env is `dir/.env`, npm's INIT_CWD),
 * with no terminal and `env` as the whole environment besides PATH and HOME.
 * @param existing the text of a .env already there.
 */
function setup(args: string[], env: Record<string, string>, existing?: string): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'genbot-setup-'));
  const envFile = join(dir, '.env');
  if (existing !== undefined) writeFileSync(envFile, existing);
  const store = `sqlite://${join(dir, 'store.sqlite')}`;
  return new Promise((done) => {
    execFile(
      'npm',
      ['--prefix', root, 'run', '--silent', 'setup', '--', '--store-url', store, ...args],
      { cwd: dir, env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        done({
          code: error ? Number((error as NodeJS.ErrnoException).code) : 0,
          output: stdout + stderr,
          dir,
          envFile,
        }),
    );
  });
}

const serviceArgs = () => ['--service-url', `${service.baseUrl}/v1`];
const discordArgs = () => ['--discord-api-url', discord.apiUrl];

/** Every secret given must be absent from the output, in any of its forms. */
function expectNoSecret(output: string, secrets: string[]): void {
  for (const secret of secrets) expect(output, `a secret of ${secret.length} characters`).not.toContain(secret);
}

describe('npm run setup, unattended', () => {
  it('checks the key and the token, registers the commands, prints the install links, and writes a .env the bot accepts (mode 0600), with no secret printed', async () => {
    discord.commands = [];
    const run = await setup([...serviceArgs(), ...discordArgs(), '--chat-model', 'fake-chat'], {
      SERVICE_API_KEY: service.apiKey,
      DISCORD_TOKEN: discord.token,
    });
    expect(run.code, run.output).toBe(0);
    const written = parseEnv(readFileSync(run.envFile, 'utf8')) as Record<string, string>;
    expect(written).toMatchObject({
      SERVICE_BASE_URL: `${service.baseUrl}/v1`,
      SERVICE_API_KEY: service.apiKey,
      DISCORD_TOKEN: discord.token,
      DISCORD_APPLICATION_ID: discord.applicationId,
      DISCORD_API_URL: discord.apiUrl,
      DEFAULT_CHAT_MODEL: 'fake-chat',
    });
    const config = loadConfig(written);
    expect(config.discord?.applicationId).toBe(discord.applicationId);
    expect(config.service.apiKey).toBe(service.apiKey);
    expect(statSync(run.envFile).mode & 0o777).toBe(0o600);
    // Registered in the fake Discord, globally: every command and message action.
    expect(discord.commands.filter((c) => c.type === 1).map((c) => c.name)).toEqual(commands.map((c) => c.name));
    expect(discord.commands.filter((c) => c.type === 3).map((c) => c.name)).toEqual(messageActions.map((a) => a.name));
    // Both install links, with the application id.
    expect(run.output).toContain(
      `https://discord.com/oauth2/authorize?client_id=${discord.applicationId}&integration_type=0&scope=bot+applications.commands&permissions=309237762048`,
    );
    expect(run.output).toContain(
      `https://discord.com/oauth2/authorize?client_id=${discord.applicationId}&integration_type=1&scope=applications.commands`,
    );
    // The doctor ran on the written file and found nothing; the last line is the command to start.
    expect(run.output).toContain('✓ Every command is registered');
    expect(run.output).not.toMatch(/^✗/m);
    expect(run.output.trim().endsWith('Start the bot with: npm start')).toBe(true);
    expectNoSecret(run.output, [service.apiKey, discord.token]);
  });

  it('with a wrong service key names the problem, exits 1 and writes nothing, without printing the key', async () => {
    const wrongKey = 'sk-wrong-key-0123456789';
    const run = await setup([...serviceArgs(), ...discordArgs(), '--service-key', wrongKey], {
      DISCORD_TOKEN: discord.token,
    });
    expect(run.code).toBe(1);
    expect(run.output).toMatch(
      /^✗ The service at .* did not work: The generation service refused the bot's API key\. An admin needs to check SERVICE_API_KEY\.$/m,
    );
    expect(run.output).toContain('Nothing was written.');
    expect(existsSync(run.envFile)).toBe(false);
    expect(run.output).not.toMatch(/\n\s+at /);
    expectNoSecret(run.output, [wrongKey, discord.token]);
  });

  it('without an answer it needs, names its flag and variable and exits 1', async () => {
    const run = await setup([...serviceArgs(), ...discordArgs()], { DISCORD_TOKEN: discord.token });
    expect(run.code).toBe(1);
    expect(run.output).toContain(
      'SERVICE_API_KEY is required: pass --service-key or set SERVICE_API_KEY in the environment.',
    );
    expect(existsSync(run.envFile)).toBe(false);
    expectNoSecret(run.output, [discord.token]);
  });

  it("keeps an existing .env's other variables and comments, and its values answer what is not given", async () => {
    const existing = [
      '# my settings',
      'LOG_LEVEL=debug',
      `SERVICE_API_KEY=${service.apiKey}`,
      'QUOTA_CHAT_PER_MINUTE=7',
      `DISCORD_TOKEN=${discord.token}`,
      '',
    ].join('\n');
    const run = await setup([...serviceArgs(), ...discordArgs()], {}, existing);
    expect(run.code, run.output).toBe(0);
    const text = readFileSync(run.envFile, 'utf8');
    expect(text.startsWith('# my settings\nLOG_LEVEL=debug\n')).toBe(true);
    const written = parseEnv(text) as Record<string, string>;
    expect(written).toMatchObject({
      LOG_LEVEL: 'debug',
      QUOTA_CHAT_PER_MINUTE: '7',
      SERVICE_API_KEY: service.apiKey,
      DISCORD_APPLICATION_ID: discord.applicationId,
    });
    expect(loadConfig(written).quotas.chatPerMinute).toBe(7);
    expectNoSecret(run.output, [service.apiKey, discord.token]);
  });

  it('for Slack, prints the manifest and names a scope the bot token lacks (exit 1, nothing written); with every scope, writes the .env', async () => {
    const slack = await FakeSlack.start({ scopes: SLACK_BOT_SCOPES.filter((scope) => scope !== 'files:read') });
    try {
      const args = [...serviceArgs(), '--slack-api-url', slack.apiUrl];
      const env = {
        SERVICE_API_KEY: service.apiKey,
        SLACK_BOT_TOKEN: slack.botToken,
        SLACK_SIGNING_SECRET: slack.signingSecret,
        SLACK_APP_TOKEN: slack.appToken,
      };
      const lacking = await setup(args, env);
      expect(lacking.code).toBe(1);
      expect(lacking.output).toMatch(
        /^✗ The Slack token lacks the scopes files:read: add them under OAuth & Permissions/m,
      );
      expect(lacking.output).toContain('"socket_mode_enabled": true');
      expect(existsSync(lacking.envFile)).toBe(false);
      expectNoSecret(lacking.output, Object.values(env));

      slack.setScopes([...SLACK_BOT_SCOPES]);
      const granted = await setup(args, env);
      expect(granted.code, granted.output).toBe(0);
      const written = parseEnv(readFileSync(granted.envFile, 'utf8')) as Record<string, string>;
      const config = loadConfig(written);
      expect(config.slack?.auth).toEqual({ mode: 'token', botToken: slack.botToken });
      expect(config.slack?.appToken).toBe(slack.appToken);
      expect(config.discord).toBeUndefined();
      expectNoSecret(granted.output, Object.values(env));
    } finally {
      await slack.close();
    }
  });

  it('for Slack through OAuth, generates the state secret and the installations key, prints the install page, and never prints a secret', async () => {
    const slack = await FakeSlack.start({});
    try {
      const env = {
        SERVICE_API_KEY: service.apiKey,
        SLACK_CLIENT_SECRET: 'client-secret-0123456789abcdef',
        SLACK_SIGNING_SECRET: slack.signingSecret,
      };
      const run = await setup(
        [...serviceArgs(), '--slack-client-id', '1234.5678', '--public-url', 'https://bot.example.com'],
        env,
        `SLACK_BOT_TOKEN=${slack.botToken}\n`,
      );
      expect(run.code, run.output).toBe(0);
      expect(run.output).toContain('https://bot.example.com/slack/install');
      expect(run.output).toContain('"https://bot.example.com/slack/oauth_redirect"');
      const written = parseEnv(readFileSync(run.envFile, 'utf8')) as Record<string, string>;
      // The one-workspace token is gone: the bot refuses both modes at once.
      expect(written.SLACK_BOT_TOKEN).toBeUndefined();
      const auth = loadConfig(written).slack?.auth;
      expect(auth).toMatchObject({ mode: 'oauth', clientId: '1234.5678', clientSecret: env.SLACK_CLIENT_SECRET });
      expectNoSecret(run.output, [
        ...Object.values(env),
        slack.botToken,
        written.SLACK_STATE_SECRET as string,
        written.SLACK_INSTALLATION_KEY as string,
      ]);
    } finally {
      await slack.close();
    }
  });
});
