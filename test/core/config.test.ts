import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_DEFAULTS, ConfigError, ENV_VARIABLES, loadConfig } from '../../src/config.ts';
import { DEFAULT_ASSISTANT_PROMPTS, IMAGINE_STATE_MAX_BYTES_DEFAULT } from '../../src/config-env.ts';
import { DEFAULT_IMAGE_INPUT_LIMITS } from '../../src/core/media/images.ts';
import { DEPLOY_ENV_VARIABLES } from '../../src/platforms/discord/deploy.ts';

const base = { SERVICE_BASE_URL: 'http://127.0.0.1:1/v1', SERVICE_API_KEY: 'sk-test-key-123456' };

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('names every missing variable at once', () => {
    const problems = problemsOf({});
    expect(problems.join('\n')).toMatch(/SERVICE_BASE_URL is required/);
    expect(problems.join('\n')).toMatch(/SERVICE_API_KEY is required/);
    expect(problems.join('\n')).toMatch(/DISCORD_TOKEN.*SLACK_BOT_TOKEN/);
  });

  it('asks for the other half of a half-configured platform', () => {
    expect(problemsOf({ ...base, DISCORD_TOKEN: 'x' })).toEqual([
      'DISCORD_APPLICATION_ID is required when DISCORD_TOKEN is set',
    ]);
    expect(problemsOf({ ...base, SLACK_SIGNING_SECRET: 'x' })).toEqual([
      'SLACK_BOT_TOKEN is required when SLACK_SIGNING_SECRET is set',
    ]);
  });

  it("configures Slack's OAuth mode with its four variables, refuses both modes at once, names what is missing, and never echoes a key", () => {
    const key = Buffer.alloc(32, 7);
    const oauth = {
      SLACK_SIGNING_SECRET: 'signing-secret',
      SLACK_CLIENT_ID: '1.2',
      SLACK_CLIENT_SECRET: 'client-secret-123',
      SLACK_STATE_SECRET: 'state-secret-123',
      SLACK_INSTALLATION_KEY: key.toString('base64'),
    };
    const config = loadConfig({ ...base, ...oauth, SLACK_INSTALLATION_KEY_PREVIOUS: key.toString('hex') });
    expect(config.slack?.auth).toMatchObject({ mode: 'oauth', clientId: '1.2', stateSecret: 'state-secret-123' });
    if (config.slack?.auth.mode !== 'oauth') throw new Error('expected the OAuth mode');
    expect(config.slack.auth.installationKey.equals(key)).toBe(true);
    expect(config.slack.auth.previousInstallationKey?.equals(key)).toBe(true);
    expect(config.secrets).toEqual(
      expect.arrayContaining(['client-secret-123', 'state-secret-123', key.toString('base64')]),
    );
    expect(loadConfig({ ...base, SLACK_SIGNING_SECRET: 's', SLACK_BOT_TOKEN: 'xoxb-1' }).slack?.auth).toEqual({
      mode: 'token',
      botToken: 'xoxb-1',
    });
    expect(problemsOf({ ...base, ...oauth, SLACK_BOT_TOKEN: 'xoxb-1' })).toEqual([
      expect.stringMatching(/^Slack is configured twice: set SLACK_BOT_TOKEN .* not both$/),
    ]);
    const { SLACK_STATE_SECRET: _s, SLACK_INSTALLATION_KEY: _k, ...partial } = oauth;
    expect(problemsOf({ ...base, ...partial })).toEqual([
      'SLACK_STATE_SECRET is required when SLACK_CLIENT_ID, SLACK_CLIENT_SECRET is set',
      'SLACK_INSTALLATION_KEY is required when SLACK_CLIENT_ID, SLACK_CLIENT_SECRET is set',
    ]);
    const short = problemsOf({ ...base, ...oauth, SLACK_INSTALLATION_KEY: 'c2hvcnQta2V5' });
    expect(short).toEqual([
      expect.stringMatching(/^SLACK_INSTALLATION_KEY must be 32 random bytes written as 64 hex digits or as base64/),
    ]);
    expect(short.join('\n')).not.toContain('c2hvcnQta2V5');
  });

  it('rejects malformed values without echoing them', () => {
    const problems = problemsOf({
      ...base,
      SERVICE_BASE_URL: 'not a url',
      SLACK_BOT_TOKEN: 'b',
      SLACK_SIGNING_SECRET: 's',
      SLACK_APP_TOKEN: 'secret-value',
      LOG_LEVEL: 'loud',
      STORE_URL: 'mysql://db',
    });
    expect(problems.map((p) => p.split(' ')[0])).toEqual([
      'SERVICE_BASE_URL',
      'SLACK_APP_TOKEN',
      'STORE_URL',
      'LOG_LEVEL',
    ]);
    expect(problems.join('\n')).not.toContain('secret-value');
  });

  it('builds a config with defaults, and lists every secret for the log scrubber', () => {
    const config = loadConfig({
      ...base,
      DISCORD_TOKEN: 'discord-token-abc',
      DISCORD_APPLICATION_ID: '123456789012345678',
      SLACK_PORT: '',
    });
    expect(config.discord).toEqual({
      token: 'discord-token-abc',
      applicationId: '123456789012345678',
      apiUrl: undefined,
      messageContent: false,
      shards: undefined,
    });
    expect(config.slack).toBeUndefined();
    expect(config.storeUrl).toBe('sqlite://data/history.sqlite');
    expect(config.logLevel).toBe('info');
    expect(config.secrets).toEqual(['sk-test-key-123456', 'discord-token-abc']);
  });

  it('reads IMAGINE_STATE_MAX_BYTES in bytes; unset, it is left to the store (none on Redis, 4 MiB on SQLite)', () => {
    const slack = { ...base, SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's' };
    expect(loadConfig(slack).limits.imagineStateMaxBytes).toBeUndefined();
    expect(IMAGINE_STATE_MAX_BYTES_DEFAULT).toEqual({ sqlite: 4 * 1024 * 1024, redis: 0 });
    expect(loadConfig({ ...slack, IMAGINE_STATE_MAX_BYTES: '0' }).limits.imagineStateMaxBytes).toBe(0);
    expect(loadConfig({ ...slack, IMAGINE_STATE_MAX_BYTES: '1048576' }).limits.imagineStateMaxBytes).toBe(1048576);
    expect(problemsOf({ ...slack, IMAGINE_STATE_MAX_BYTES: '-1' })).toEqual([
      'IMAGINE_STATE_MAX_BYTES must be 0 or more',
    ]);
    expect(problemsOf({ ...slack, IMAGINE_STATE_MAX_BYTES: 'lots' })).toEqual([
      'IMAGINE_STATE_MAX_BYTES must be a number of bytes',
    ]);
  });

  it("adds the trailing slash Slack's Web API base needs", () => {
    const config = loadConfig({
      ...base,
      SLACK_BOT_TOKEN: 'xoxb-1',
      SLACK_SIGNING_SECRET: 's',
      SLACK_API_URL: 'http://127.0.0.1:9/api',
    });
    expect(config.slack?.apiUrl).toBe('http://127.0.0.1:9/api/');
    expect(config.slack?.port).toBe(3000);
  });

  it("reads ASSISTANT_PROMPTS (the agent view's suggested prompts): the defaults unset, a JSON array of at most 4, [] for none", () => {
    const slack = { ...base, SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's' };
    expect(loadConfig(slack).slack?.assistantPrompts).toEqual(DEFAULT_ASSISTANT_PROMPTS);
    expect(DEFAULT_ASSISTANT_PROMPTS.map((p) => p.title)).toEqual([
      'Ask anything',
      'Imagine an image',
      'Summarize this channel',
    ]);
    const two = [
      { title: 'Plan', message: 'Plan my week' },
      { title: 'Draw', message: 'imagine a cat' },
    ];
    expect(loadConfig({ ...slack, ASSISTANT_PROMPTS: JSON.stringify(two) }).slack?.assistantPrompts).toEqual(two);
    expect(loadConfig({ ...slack, ASSISTANT_PROMPTS: '[]' }).slack?.assistantPrompts).toEqual([]);
    const five = JSON.stringify(Array.from({ length: 5 }, (_, i) => ({ title: `t${i}`, message: `m${i}` })));
    expect(problemsOf({ ...slack, ASSISTANT_PROMPTS: five })).toEqual(['ASSISTANT_PROMPTS takes at most 4 prompts']);
    expect(problemsOf({ ...slack, ASSISTANT_PROMPTS: 'Ask|What?' })).toEqual([
      'ASSISTANT_PROMPTS must be a JSON array of {"title": "…", "message": "…"}',
    ]);
    expect(problemsOf({ ...slack, ASSISTANT_PROMPTS: '[{"title":"","message":"x"}]' })).toHaveLength(1);
  });

  it('says what ASSISTANT_PROMPTS must be in its own words whatever is wrong inside the array, never zod\'s "expected object, received string"', () => {
    const slack = { ...base, SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's' };
    const shape = 'ASSISTANT_PROMPTS must be a JSON array of {"title": "…", "message": "…"}';
    const said = (value: string) => {
      try {
        loadConfig({ ...slack, ASSISTANT_PROMPTS: value });
      } catch (error) {
        // What the operator reads when the bot stops at start.
        return (error as ConfigError).message;
      }
      throw new Error(`${value} was taken`);
    };
    for (const value of ['["Ask anything","Summarize"]', '[1]', '[null]', '[[]]', '{"title":"a","message":"b"}'])
      expect(said(value), value).toBe(`Invalid configuration:\n  - ${shape}`);
    expect(said('[{"title":"","message":"x"}]')).toBe(
      'Invalid configuration:\n  - ASSISTANT_PROMPTS needs a title of 1 to 75 characters in each prompt',
    );
    expect(said(`[{"title":"${'t'.repeat(76)}","message":"x"}]`)).toContain('needs a title of 1 to 75 characters');
    expect(said('[{"title":"Ask"}]')).toBe(
      'Invalid configuration:\n  - ASSISTANT_PROMPTS needs a message of 1 to 2,000 characters in each prompt',
    );
    expect(said(`[{"title":"Ask","message":7}]`)).toContain('needs a message of 1 to 2,000 characters');
  });
});

describe('FALLBACK_CHAT_MODELS and FALLBACK_IMAGE_MODELS', () => {
  const base = {
    SERVICE_BASE_URL: 'http://127.0.0.1:1/v1',
    SERVICE_API_KEY: 'sk-test-key-123456',
    SLACK_BOT_TOKEN: 'xoxb-1',
    SLACK_SIGNING_SECRET: 's',
  };
  const shape = /must be a comma-separated list of at most 5 model ids, each 1 to 200 characters/;

  it('reads comma-separated ids (trimmed, spaces inside kept for image display names); none when unset', () => {
    const config = loadConfig({
      ...base,
      FALLBACK_CHAT_MODELS: ' model-b , model-c',
      FALLBACK_IMAGE_MODELS: 'Fake Image XL,Other One',
    });
    expect(config.models.fallbacks).toEqual({ chat: ['model-b', 'model-c'], image: ['Fake Image XL', 'Other One'] });
    expect(loadConfig(base).models.fallbacks).toEqual({ chat: [], image: [] });
    expect(loadConfig({ ...base, FALLBACK_CHAT_MODELS: '' }).models.fallbacks.chat).toEqual([]);
  });

  it('refuses at start, naming the variable, an empty id, an id too long or with a control character, and more than 5', () => {
    const refusals: Record<string, string> = {
      FALLBACK_CHAT_MODELS: 'a,,b',
      FALLBACK_IMAGE_MODELS: `${'x'.repeat(201)}`,
    };
    const problems = problemsOf({ ...base, ...refusals });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^FALLBACK_CHAT_MODELS /);
    expect(problems[1]).toMatch(/^FALLBACK_IMAGE_MODELS /);
    for (const p of problems) expect(p).toMatch(shape);
    for (const value of ['a,b,c,d,e,f', 'a,', 'bad\u0007id', ' , '])
      expect(problemsOf({ ...base, FALLBACK_CHAT_MODELS: value }), JSON.stringify(value)).toEqual([
        expect.stringMatching(/^FALLBACK_CHAT_MODELS must be a comma-separated list/),
      ]);
    expect(loadConfig({ ...base, FALLBACK_CHAT_MODELS: 'a,b,c,d,e' }).models.fallbacks.chat).toHaveLength(5);
  });
});

describe('.env.example', () => {
  it('lists every variable the bot and deploy-commands read, each under a comment line, and nothing else', () => {
    const lines = readFileSync(resolve(import.meta.dirname, '../../.env.example'), 'utf8').split('\n');
    const listed = new Map<string, number>();
    lines.forEach((line, i) => {
      const match = /^([A-Z][A-Z0-9_]*)=/.exec(line);
      if (match) listed.set(match[1]!, i);
    });
    const read = new Set([...ENV_VARIABLES, ...DEPLOY_ENV_VARIABLES]);
    expect([...listed.keys()].sort()).toEqual([...read].sort());
    for (const [name, i] of listed) expect(lines[i - 1], `${name} has a comment above it`).toMatch(/^# \S/);
  });

  it("reads Discord shards: auto, a count with this process's ids, and refuses ids past the count", () => {
    const discord = { ...base, DISCORD_TOKEN: 't', DISCORD_APPLICATION_ID: '123456789012345678' };
    expect(loadConfig({ ...discord, DISCORD_SHARDS: 'auto' }).discord!.shards).toEqual({
      count: 'auto',
      ids: undefined,
    });
    expect(loadConfig({ ...discord, DISCORD_SHARDS: '4', DISCORD_SHARD_IDS: '1, 3' }).discord!.shards).toEqual({
      count: 4,
      ids: [1, 3],
    });
    expect(problemsOf({ ...discord, DISCORD_SHARDS: '2', DISCORD_SHARD_IDS: '2' })).toEqual([
      'DISCORD_SHARD_IDS must be below DISCORD_SHARDS (2)',
    ]);
    expect(problemsOf({ ...discord, DISCORD_SHARD_IDS: '0' })).toEqual([
      'DISCORD_SHARD_IDS needs DISCORD_SHARDS set to the total number of shards',
    ]);
    expect(problemsOf({ ...discord, DISCORD_SHARDS: 'many' })).toEqual([
      'DISCORD_SHARDS must be auto or a number of shards',
    ]);
  });
});

describe('defaults', () => {
  it('are written once, in the schema: the sections built without an environment match a parse of an empty one', () => {
    const config = loadConfig({ ...base, DISCORD_TOKEN: 't', DISCORD_APPLICATION_ID: '123456789012345678' });
    expect(CONFIG_DEFAULTS.limits).toEqual(config.limits);
    expect(CONFIG_DEFAULTS.inputImages).toEqual(config.inputImages);
    expect(CONFIG_DEFAULTS.imageWorkers).toEqual(config.imageWorkers);
    const { baseUrl: _url, apiKey: _key, ...timeouts } = config.service;
    expect(CONFIG_DEFAULTS.service).toEqual(timeouts);
    // The image worker's own copy (it does not load the schemas) agrees with MAX_INPUT_IMAGE_BYTES's default.
    expect(DEFAULT_IMAGE_INPUT_LIMITS.maxBytes).toBe(config.inputImages.maxBytes);
  });
});
