/**
 * `npm run setup` in a terminal: its question flow, driven through the Prompter it asks with
 * (setup-io.ts) by a script of answers, against the fakes, in this process. A wrong key is
 * named and asked again; a malformed token is refused in the configuration's words; a token
 * missing a scope is named and asked again; a cancel writes nothing. And the .env editing
 * (setup-env-file.ts) keeps what it does not change.
 */

import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { runSetup } from '../../src/ops/setup.ts';
import { changedEnvText } from '../../src/ops/setup-env-file.ts';
import { type Prompter, type Reporter, SetupCancelled } from '../../src/ops/setup-io.ts';
import { SLACK_BOT_SCOPES } from '../../src/platforms/slack/manifest.ts';
import type { FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import { FakeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';

let service: FakeService;
let discord: FakeDiscord;

useE2E({ discord: {} }, (e2e) => {
  ({ service, discord } = e2e);
});

type Kind = 'text' | 'secret' | 'select' | 'confirm';
/** One expected question: its kind, what its message says, and the answer (a function may act first, e.g. reinstall). */
type Step = [Kind, RegExp, string | boolean | (() => string)];

/**
 * A Prompter that answers from `steps` in order, failing the test on a question it did not
 * expect. A text or secret answer its question's `validate` refuses is recorded in `refused`,
 * and the next step answers again (as clack asks again); an empty text answer is the default.
 */
function scripted(steps: Step[]) {
  const asked: string[] = [];
  const refused: string[] = [];
  const next = (kind: Kind, message: string) => {
    const step = steps.shift();
    asked.push(`${kind}: ${message}`);
    if (!step) throw new Error(`unexpected question: ${kind} ${message}`);
    expect(`${step[0]}: ${message}`).toMatch(new RegExp(`^${step[0]}: .*${step[1].source}`));
    return typeof step[2] === 'function' ? step[2]() : step[2];
  };
  const line = (kind: Kind, q: { message: string; defaultValue?: string; validate?: (v: string) => unknown }) => {
    for (;;) {
      const typed = String(next(kind, q.message));
      const value = typed === '' && q.defaultValue ? q.defaultValue : typed;
      const problem = q.validate?.(value);
      if (!problem) return Promise.resolve(typed === '' ? (q.defaultValue ?? '') : typed);
      refused.push(String(problem));
    }
  };
  const prompter: Prompter = {
    text: (q) => line('text', q),
    secret: (q) => line('secret', q),
    select: (q) => Promise.resolve(next('select', q.message) as never),
    confirm: (q) => Promise.resolve(next('confirm', q.message) as boolean),
  };
  return { prompter, asked, refused, left: steps };
}

/** A Reporter that keeps every line, each prefixed by its kind. */
function recording(): Reporter & { lines: string[] } {
  const lines: string[] = [];
  const keep = (kind: string) => (text: string, body?: string) =>
    lines.push(`${kind} ${text}${body === undefined ? '' : `\n${body}`}`);
  return {
    lines,
    step: keep('step'),
    ok: keep('ok'),
    fail: keep('fail'),
    warn: keep('warn'),
    info: keep('info'),
    block: keep('block'),
    end: keep('end'),
  };
}

function folder() {
  const dir = mkdtempSync(join(tmpdir(), 'genbot-setup-prompts-'));
  return { envFile: join(dir, '.env'), store: `sqlite://${join(dir, 'store.sqlite')}` };
}

describe('npm run setup in a terminal (its prompts scripted)', () => {
  it('names a wrong service key and asks again, keeping the URL on Enter; then picks the models, checks the Discord token and writes the answers', async () => {
    const { envFile, store } = folder();
    const wrongKey = 'sk-wrong-key-0123456789';
    const script = scripted([
      ['text', /base URL/, `${service.baseUrl}/v1`],
      ['secret', /API key$/, wrongKey],
      ['text', /base URL/, ''],
      ['secret', /API key \(Enter keeps the current one\)/, service.apiKey],
      ['select', /default chat model/, 'fake-chat'],
      ['select', /default image model/, 'Fake Image XL'],
      ['confirm', /Discord\?/, true],
      ['confirm', /Slack\?/, false],
      ['secret', /bot token/, discord.token],
    ]);
    const reporter = recording();
    const code = await runSetup({
      argv: ['--env-file', envFile, '--store-url', store, '--discord-api-url', discord.apiUrl],
      env: {},
      cwd: tmpdir(),
      terminal: true,
      prompter: script.prompter,
      reporter,
    });
    expect(code, reporter.lines.join('\n')).toBe(0);
    expect(script.left).toEqual([]);
    expect(reporter.lines).toContainEqual(
      expect.stringMatching(/^fail The service at .* did not work: The generation service refused the bot's API key/),
    );
    const written = parseEnv(readFileSync(envFile, 'utf8')) as Record<string, string>;
    expect(written).toMatchObject({
      SERVICE_BASE_URL: `${service.baseUrl}/v1`,
      SERVICE_API_KEY: service.apiKey,
      DEFAULT_CHAT_MODEL: 'fake-chat',
      DEFAULT_IMAGE_MODEL: 'Fake Image XL',
      DISCORD_TOKEN: discord.token,
      DISCORD_APPLICATION_ID: discord.applicationId,
    });
    expect(loadConfig(written).models.image).toBe('Fake Image XL');
    const printed = reporter.lines.join('\n');
    for (const secret of [wrongKey, service.apiKey, discord.token]) expect(printed).not.toContain(secret);
    expect(reporter.lines.at(-1)).toBe('end All is well. Start the bot with: npm start');
  });

  it('refuses a malformed app token in the configuration’s words, names a scope the bot token lacks and asks again until the reinstalled app has it', async () => {
    const slack = await FakeSlack.start({ scopes: SLACK_BOT_SCOPES.filter((scope) => scope !== 'im:write') });
    try {
      const { envFile, store } = folder();
      const script = scripted([
        ['select', /How is the Slack app installed/, 'token'],
        ['select', /How do Slack’s events reach the bot/, 'socket'],
        ['secret', /Bot User OAuth Token/, slack.botToken],
        ['secret', /signing secret/, slack.signingSecret],
        ['secret', /app-level token/, 'not-an-app-token'],
        ['secret', /app-level token/, slack.appToken],
        // Named, then asked again: the operator adds the scope, reinstalls, and keeps each answer.
        [
          'secret',
          /Bot User OAuth Token.*Enter keeps/,
          () => {
            slack.setScopes([...SLACK_BOT_SCOPES]);
            return '';
          },
        ],
        ['secret', /signing secret.*Enter keeps/, ''],
        ['secret', /app-level token.*Enter keeps/, ''],
      ]);
      const reporter = recording();
      const code = await runSetup({
        argv: ['--env-file', envFile, '--store-url', store, '--slack-api-url', slack.apiUrl],
        env: {
          SERVICE_BASE_URL: `${service.baseUrl}/v1`,
          SERVICE_API_KEY: service.apiKey,
          DEFAULT_CHAT_MODEL: 'fake-chat',
          DEFAULT_IMAGE_MODEL: 'Fake Image',
        },
        cwd: tmpdir(),
        terminal: true,
        prompter: { ...script.prompter, confirm: async (q) => /Slack/.test(q.message) } as Prompter,
        reporter,
      });
      expect(code, reporter.lines.join('\n')).toBe(0);
      expect(script.left).toEqual([]);
      expect(script.refused).toEqual(['SLACK_APP_TOKEN must be an app-level token starting with xapp-']);
      expect(reporter.lines).toContainEqual(expect.stringMatching(/^fail The Slack token lacks the scopes im:write: /));
      expect(reporter.lines).toContainEqual(expect.stringMatching(/^ok The Slack token has every scope the bot uses/));
      expect(reporter.lines).toContainEqual(expect.stringMatching(/^block The Slack app's manifest[\s\S]*"im:write"/));
      const written = parseEnv(readFileSync(envFile, 'utf8')) as Record<string, string>;
      expect(loadConfig(written).slack).toMatchObject({
        auth: { mode: 'token', botToken: slack.botToken },
        appToken: slack.appToken,
        signingSecret: slack.signingSecret,
      });
      const printed = reporter.lines.join('\n');
      for (const secret of [service.apiKey, slack.botToken, slack.signingSecret, slack.appToken])
        expect(printed).not.toContain(secret);
    } finally {
      await slack.close();
    }
  });

  it('writes nothing when the person cancels a question (exit 130)', async () => {
    const { envFile, store } = folder();
    const reporter = recording();
    const cancel = async (): Promise<never> => {
      throw new SetupCancelled();
    };
    const code = await runSetup({
      argv: ['--env-file', envFile, '--store-url', store],
      env: {},
      cwd: tmpdir(),
      terminal: true,
      prompter: { text: cancel, secret: cancel, select: cancel, confirm: cancel },
      reporter,
    });
    expect(code).toBe(130);
    expect(existsSync(envFile)).toBe(false);
    expect(reporter.lines.at(-1)).toBe('end Setup cancelled: nothing was written.');
  });
});

describe('the .env editing', () => {
  it('replaces a variable in place (dropping its duplicates), removes one, appends new ones (quoted only where # or a quote needs it), and keeps every other line', () => {
    const text = ['# mine', 'A=1', 'KEEP="x y" # note', 'B=2', 'A=3', ''].join('\n');
    const values = parseEnv(text) as Record<string, string>;
    const changes = { A: 'new', B: undefined, C: 'has # and spaces', D: 'Fake Image XL' };
    const changed = changedEnvText({ text, values }, changes);
    expect(changed).toBe(
      [
        '# mine',
        'A=new',
        'KEEP="x y" # note',
        '',
        '# Written by npm run setup.',
        "C='has # and spaces'",
        'D=Fake Image XL',
        '',
      ].join('\n'),
    );
    expect(parseEnv(changed)).toEqual({ A: 'new', KEEP: 'x y', C: 'has # and spaces', D: 'Fake Image XL' });
  });
});
