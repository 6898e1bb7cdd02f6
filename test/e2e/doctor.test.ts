/**
 * `npm run doctor`, run as an operator runs it (a child process with environment variables),
 * against the fakes: all green when everything works; a wrong service key, a command not
 * registered, a store that does not answer: one sentence each, exit 1, no stack trace, no secret.
 */

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { WebClient } from '@slack/web-api';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/state/open-store.ts';
import { KeyRing } from '../../src/core/state/sealed.ts';
import { runtimeFinding } from '../../src/ops/doctor.ts';
import { deployCommands } from '../../src/platforms/discord/deploy.ts';
import { SlackInstallationStore } from '../../src/platforms/slack/installations.ts';
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

/** Runs the doctor from an empty folder (so no developer .env is read). */
function doctor(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const cwd = mkdtempSync(join(tmpdir(), 'genbot-doctor-'));
  return new Promise((done) => {
    execFile(
      'npm',
      ['--prefix', root, 'run', '--silent', 'doctor'],
      { cwd, env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        done({ code: error ? Number((error as NodeJS.ErrnoException).code) : 0, stdout, stderr }),
    );
  });
}

const env = (overrides: Record<string, string> = {}) => ({
  SERVICE_BASE_URL: `${service.baseUrl}/v1`,
  SERVICE_API_KEY: service.apiKey,
  DISCORD_TOKEN: discord.token,
  DISCORD_APPLICATION_ID: discord.applicationId,
  DISCORD_API_URL: discord.apiUrl,
  STORE_URL: `sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-doctor-store-')), 's.sqlite')}`,
  DEFAULT_CHAT_MODEL: 'fake-chat',
  ...overrides,
});

describe('the runtime line of npm run doctor', () => {
  it('warns (without failing) on Node 20, 22 before 22.13 and 23; passes on 22.13 and later 22s, 24 and later', () => {
    for (const version of ['v20.20.2', 'v22.12.0', 'v23.11.1', 'v18.20.8']) {
      const finding = runtimeFinding(version);
      expect(finding).toEqual({
        ok: true,
        warning: true,
        text: `Node.js ${version} runs the bot, a release it does not support: run it on Node 22 (22.13 or later) or 24 (Node 20's support ended on 2026-04-30).`,
      });
    }
    for (const version of ['v22.13.0', 'v22.23.5', 'v24.0.0', 'v24.22.3', 'v26.1.0']) {
      expect(runtimeFinding(version)).toEqual({
        ok: true,
        text: `Node.js ${version} runs the bot (supported: 22 from 22.13, and 24).`,
      });
    }
  });
});

describe('npm run doctor', () => {
  it('says a command is not registered (exit 1), and after deploy-commands that all is well (exit 0)', async () => {
    const before = await doctor(env());
    expect(before.code).toBe(1);
    expect(before.stdout).toMatch(/^✗ Commands not registered globally: \/chat, .*Run npm run deploy-commands/m);
    // The message actions too (message commands), by their menu names.
    expect(before.stdout).toContain('“Ask about this message”, “Summarize”.');
    await deployCommands({ token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl });
    const after = await doctor(env());
    expect(after.stdout.split('\n').filter((l) => l.startsWith('✗'))).toEqual([]);
    // First the Node.js that ran it (the same as this test's): on Node 20 a warning, not a problem.
    const runtime = runtimeFinding(process.version);
    expect(after.stdout.split('\n')[0]).toBe(`${runtime.warning ? '!' : '✓'} ${runtime.text}`);
    expect(after.stdout.split('\n')[0]).toContain(`Node.js ${process.version} runs the bot`);
    expect(after.stdout).toContain('✓ Every variable is set and well formed.');
    expect(after.stdout).toMatch(
      /✓ The service at .* answers and accepts the API key: 2 text models, 2 image models\./,
    );
    expect(after.stdout).toContain('✓ DEFAULT_CHAT_MODEL fake-chat is listed by the service.');
    expect(after.stdout).toContain('✓ Discord accepts DISCORD_TOKEN: the bot is genbot.');
    expect(after.stdout).toContain('✓ The store (sqlite) answers.');
    expect(after.stdout.trim().endsWith('All is well.')).toBe(true);
    expect(after.code).toBe(0);
  });

  it("checks each fallback model against the service's lists, naming one it does not list (exit 1)", async () => {
    const result = await doctor(
      env({ FALLBACK_CHAT_MODELS: 'fake-vision,model-gone', FALLBACK_IMAGE_MODELS: 'Fake Image XL' }),
    );
    expect(result.stdout).toContain('✓ FALLBACK_CHAT_MODELS fake-vision is listed by the service.');
    expect(result.stdout).toContain('✓ FALLBACK_IMAGE_MODELS Fake Image XL is listed by the service.');
    expect(result.stdout).toMatch(
      /^✗ FALLBACK_CHAT_MODELS model-gone is not listed by the service \(it lists fake-chat, fake-vision\)\.$/m,
    );
    expect(result.code).toBe(1);
  });

  it('with a wrong service key says so in one sentence and exits 1, without a stack trace or the key', async () => {
    const wrongKey = 'sk-wrong-key-0123456789';
    const result = await doctor(env({ SERVICE_API_KEY: wrongKey }));
    expect(result.code).toBe(1);
    const failures = result.stdout.split('\n').filter((l) => l.startsWith('✗'));
    expect(failures).toEqual([
      expect.stringMatching(
        /^✗ The service at .* did not work: The generation service refused the bot's API key\. An admin needs to check SERVICE_API_KEY\.$/,
      ),
    ]);
    expect(result.stdout + result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout + result.stderr).not.toContain(wrongKey);
  });

  it('names every bad variable, and a store that does not answer', async () => {
    const bad = await doctor({ SERVICE_API_KEY: 'x', DISCORD_TOKEN: 'y' });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/^✗ Configuration: SERVICE_BASE_URL is required\.$/m);
    expect(bad.stdout).toMatch(/^✗ Configuration: DISCORD_APPLICATION_ID is required when DISCORD_TOKEN is set\.$/m);
    const noStore = await doctor(env({ STORE_URL: 'redis://127.0.0.1:1' }));
    expect(noStore.code).toBe(1);
    expect(noStore.stdout).toMatch(/^✗ The store at redis:\/\/127\.0\.0\.1:1 does not answer \(.+\)\.$/m);
  });

  it('checks the Slack token against the scopes the manifest asks for: all there, then one removed and named', async () => {
    // A workspace that granted what the manifest asks for.
    const slack = await FakeSlack.start({ scopes: [...SLACK_BOT_SCOPES] });
    try {
      const slackEnv = {
        SERVICE_BASE_URL: `${service.baseUrl}/v1`,
        SERVICE_API_KEY: service.apiKey,
        SLACK_BOT_TOKEN: slack.botToken,
        SLACK_SIGNING_SECRET: slack.signingSecret,
        SLACK_API_URL: slack.apiUrl,
        STORE_URL: `sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-doctor-store-')), 's.sqlite')}`,
        DEFAULT_CHAT_MODEL: 'fake-chat',
      };
      const good = await doctor(slackEnv);
      expect(good.stdout).toMatch(/^✓ The Slack token has every scope the bot uses \(\d+\)\.$/m);
      expect(good.stdout.split('\n').filter((l) => l.startsWith('✗'))).toEqual([]);
      expect(good.code).toBe(0);

      slack.setScopes(SLACK_BOT_SCOPES.filter((scope) => scope !== 'files:read'));
      const missing = await doctor(slackEnv);
      expect(missing.code).toBe(1);
      expect(missing.stdout.split('\n').filter((l) => l.startsWith('✗'))).toEqual([
        expect.stringMatching(/^✗ The Slack token lacks the scopes files:read: add them under OAuth & Permissions/),
      ]);
      expect(missing.stdout + missing.stderr).not.toContain(slack.botToken);
    } finally {
      await slack.close();
    }
  });

  it("names channels:history and assistant:write when the Slack token lacks them (threads and the channel a user views are read with the first; the agent view's prompts and titles need the second)", async () => {
    const lacking = ['channels:history', 'assistant:write'];
    const slack = await FakeSlack.start({ scopes: SLACK_BOT_SCOPES.filter((scope) => !lacking.includes(scope)) });
    try {
      const result = await doctor({
        SERVICE_BASE_URL: `${service.baseUrl}/v1`,
        SERVICE_API_KEY: service.apiKey,
        SLACK_BOT_TOKEN: slack.botToken,
        SLACK_SIGNING_SECRET: slack.signingSecret,
        SLACK_API_URL: slack.apiUrl,
        STORE_URL: `sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-doctor-store-')), 's.sqlite')}`,
        DEFAULT_CHAT_MODEL: 'fake-chat',
      });
      expect(result.code).toBe(1);
      expect(result.stdout.split('\n').filter((l) => l.startsWith('✗'))).toEqual([
        expect.stringMatching(
          /^✗ The Slack token lacks the scopes channels:history, assistant:write: add them under OAuth & Permissions/,
        ),
      ]);
    } finally {
      await slack.close();
    }
  });
  it("in Slack's OAuth mode counts the installations in the store and checks their tokens, and says when one does not open with the key", async () => {
    const slack = await FakeSlack.start({ scopes: [...SLACK_BOT_SCOPES] });
    const storePath = join(mkdtempSync(join(tmpdir(), 'genbot-doctor-store-')), 's.sqlite');
    const key = randomBytes(32);
    try {
      // An installation made the way Bolt's installer makes one: approved on Slack, the code exchanged.
      const link = `https://slack.com/oauth/v2/authorize?scope=chat:write&state=s&client_id=${slack.oauth.clientId}`;
      const { code } = slack.oauth.approve(link, { teamId: slack.teamId, userId: 'U0ALICE' });
      const web = new WebClient(undefined, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
      const access = await web.oauth.v2.access({
        client_id: slack.oauth.clientId,
        client_secret: slack.oauth.clientSecret,
        code,
      });
      const store = await openStore(`sqlite://${storePath}`);
      await new SlackInstallationStore(store, new KeyRing(key), pino({ level: 'silent' })).storeInstallation({
        team: { id: slack.teamId },
        enterprise: undefined,
        user: { id: 'U0ALICE', token: undefined, scopes: undefined },
        bot: { token: access.access_token!, scopes: ['chat:write'], id: 'B0FAKEBOT', userId: slack.botUserId },
        isEnterpriseInstall: false,
        authVersion: 'v2',
      });
      await store.close();
      const oauthEnv = (installationKey: Buffer) => ({
        SERVICE_BASE_URL: `${service.baseUrl}/v1`,
        SERVICE_API_KEY: service.apiKey,
        SLACK_SIGNING_SECRET: slack.signingSecret,
        SLACK_CLIENT_ID: slack.oauth.clientId,
        SLACK_CLIENT_SECRET: slack.oauth.clientSecret,
        SLACK_STATE_SECRET: 'state-secret-of-the-doctor-test',
        SLACK_INSTALLATION_KEY: installationKey.toString('hex'),
        SLACK_API_URL: slack.apiUrl,
        STORE_URL: `sqlite://${storePath}`,
        DEFAULT_CHAT_MODEL: 'fake-chat',
      });
      const good = await doctor(oauthEnv(key));
      expect(good.stdout).toMatch(/^✓ 1 Slack installation\(s\) in the store; checking 1\.$/m);
      expect(good.stdout).toMatch(/^✓ Slack accepts the bot token of the installation team:T0FAKETEAM: the bot is/m);
      expect(good.stdout).toMatch(/^✓ The bot token of the installation team:T0FAKETEAM has every scope the bot uses/m);
      expect(good.code).toBe(0);
      const wrongKey = await doctor(oauthEnv(randomBytes(32)));
      expect(wrongKey.code).toBe(1);
      expect(wrongKey.stdout).toMatch(/^✗ The installation team:T0FAKETEAM does not open with SLACK_INSTALLATION_KEY/m);
      expect(good.stdout + good.stderr + wrongKey.stdout + wrongKey.stderr).not.toContain(access.access_token!);
    } finally {
      await slack.close();
    }
  });
});
