/**
 * The generated configuration docs (scripts/config-docs.ts, `npm run docs:config`):
 * docs/configuration.md and .env.example are what the schema renders today, every variable the
 * code reads is in them, the defaults they show are the schema's, and the secrets they mark are
 * the ones config.ts keeps out of logs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { OUTPUTS, renderConfigurationDoc, renderEnvExample } from '../../scripts/config-docs.ts';
import { envText, factsOf, schemaOf, sectionFacts } from '../../scripts/config-facts.ts';
import { ENV_VARIABLES, loadConfig } from '../../src/config.ts';
import { CONFIG_SECTIONS, OTHER_VARIABLES, SECRET_VARIABLES, VARIABLE_DOCS } from '../../src/config-docs.ts';
import { ENV_DEFAULTS, envSchema } from '../../src/config-env.ts';
import type { EnvName } from '../../src/config-reload.ts';
import { DEPLOY_ENV_VARIABLES } from '../../src/platforms/discord/deploy.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const onDisk = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');
const DOCUMENTED = [...new Set([...ENV_VARIABLES, ...DEPLOY_ENV_VARIABLES])];

/**
 * The names of the environment variables a source text reads: `process.env.X`, `process.env['X']`,
 * `env.X` / `env?.X` / `env['X']` (an environment passed on), and `const { X } = process.env`.
 */
function envReads(source: string): string[] {
  const names = new Set<string>();
  for (const match of source.matchAll(/\b(?:process\.env|env)\??\.([A-Z][A-Z0-9_]*)\b/g)) names.add(match[1]!);
  for (const match of source.matchAll(/\b(?:process\.env|env)\[\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\]/g))
    names.add(match[1]!);
  for (const match of source.matchAll(/\{([^}]*)\}\s*=\s*process\.env\b/g))
    for (const name of match[1]!.split(','))
      if (/^\s*[A-Z][A-Z0-9_]*/.test(name)) names.add(name.trim().split(/\W/)[0]!);
  return [...names];
}

/** Every TypeScript file under the folders the bot and its scripts are built from. */
function sources(): { path: string; text: string }[] {
  return ['src', 'commands', 'scripts'].flatMap((folder) =>
    (readdirSync(resolve(ROOT, folder), { recursive: true }) as string[])
      .filter((path) => path.endsWith('.ts'))
      .map((path) => ({ path: join(folder, path), text: onDisk(join(folder, path)) })),
  );
}

describe('the generated configuration docs', () => {
  it('are what npm run docs:config writes from the schema today', () => {
    expect(onDisk(OUTPUTS.doc), `${OUTPUTS.doc} is out of date: run npm run docs:config`).toBe(
      renderConfigurationDoc(),
    );
    expect(onDisk(OUTPUTS.envExample), `${OUTPUTS.envExample} is out of date: run npm run docs:config`).toBe(
      renderEnvExample(),
    );
  });

  it("list every variable of the schema, and deploy-commands' own, once: a row in the docs and a line in .env.example", () => {
    const doc = renderConfigurationDoc();
    const example = renderEnvExample().split('\n');
    for (const name of DOCUMENTED) {
      expect(
        doc.split('\n').filter((line) => line.startsWith(`| \`${name}\``)),
        name,
      ).toHaveLength(1);
      expect(
        example.filter((line) => line.startsWith(`${name}=`)),
        name,
      ).toHaveLength(1);
    }
    // The sections hold the schema's keys once each, in the schema's order.
    const listed = CONFIG_SECTIONS.flatMap((section) => Object.keys(section.schema.shape));
    expect(listed).toEqual(Object.keys(envSchema.shape));
    expect(
      sectionFacts()
        .flatMap((s) => s.variables.map((v) => v.name))
        .sort(),
    ).toEqual([...DOCUMENTED].sort());
  });

  it('document every environment variable the code reads in src/, commands/ and scripts/', () => {
    const documented = new Set<string>([...DOCUMENTED, ...OTHER_VARIABLES.map((v) => v.name)]);
    const read = new Map<string, string[]>();
    for (const { path, text } of sources())
      for (const name of envReads(text)) read.set(name, [...(read.get(name) ?? []), path]);
    // The scan finds the reads it must (so an empty scan cannot pass for a clean one).
    expect(read.get('INIT_CWD')).toContain(join('src', 'main.ts'));
    expect(read.get('DISCORD_GUILD_ID')).toContain(join('src', 'platforms', 'discord', 'deploy.ts'));
    expect(read.get('CHROMIUM')).toContain(join('scripts', 'screenshots.ts'));
    expect(envReads("const { FOO_BAR, BAZ } = process.env; env['QUX']; process.env?.QUUX")).toEqual([
      'QUUX',
      'QUX',
      'FOO_BAR',
      'BAZ',
    ]);
    const undocumented = [...read]
      .filter(([name]) => !documented.has(name))
      .map(([name, paths]) => `${name} (${paths.join(', ')})`);
    expect(undocumented, 'read but not in the schema nor in OTHER_VARIABLES (src/config-docs.ts)').toEqual([]);
  });

  it("show as each default what the schema makes of an unset variable (CONFIG_DEFAULTS' source)", () => {
    let shown = 0;
    for (const name of DOCUMENTED) {
      const facts = factsOf(name as EnvName);
      const schema = schemaOf(name as EnvName);
      if (facts.defaultText === undefined) continue;
      shown++;
      expect(schema.parse(facts.defaultText), name).toEqual(schema.parse(undefined));
    }
    expect(shown).toBeGreaterThan(40);
    // The sections built without an environment (config.ts CONFIG_DEFAULTS) are those defaults.
    for (const section of Object.values(ENV_DEFAULTS))
      for (const [name, value] of Object.entries(section))
        expect(factsOf(name as EnvName).defaultText, name).toBe(envText(value));
    expect(factsOf('SERVICE_API_KEY').required).toBe(true);
  });

  it('make an .env copied from .env.example configure exactly what its required variables alone do', () => {
    const platform = { DISCORD_TOKEN: 'discord-token', DISCORD_APPLICATION_ID: '123456789012345678' };
    const copied = parseEnv(renderEnvExample()) as Record<string, string>;
    const required = { SERVICE_BASE_URL: copied.SERVICE_BASE_URL, SERVICE_API_KEY: 'sk-test-key-123456' };
    expect(loadConfig({ ...copied, ...required, ...platform })).toEqual(loadConfig({ ...required, ...platform }));
  });

  it('mark as secret exactly the variables whose values config.ts keeps out of logs', () => {
    const base = { SERVICE_BASE_URL: 'http://127.0.0.1:1/v1', SERVICE_API_KEY: 'sk-service-key' };
    const token: Record<string, string> = {
      ...base,
      DISCORD_TOKEN: 'discord-token',
      DISCORD_APPLICATION_ID: '123456789012345678',
      SLACK_BOT_TOKEN: 'xoxb-bot-token',
      SLACK_SIGNING_SECRET: 'signing-secret',
      SLACK_APP_TOKEN: 'xapp-app-token',
      SLACK_API_URL: 'http://127.0.0.1:2/api/',
      DEFAULT_CHAT_MODEL: 'chat-model',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=collector-key',
      OTEL_SERVICE_NAME: 'service-name',
      STORE_URL: 'sqlite://data/x.sqlite',
    };
    const oauth: Record<string, string> = {
      ...base,
      SLACK_CLIENT_ID: 'client-id',
      SLACK_CLIENT_SECRET: 'client-secret',
      SLACK_STATE_SECRET: 'state-secret',
      SLACK_INSTALLATION_KEY: 'a'.repeat(64),
      SLACK_INSTALLATION_KEY_PREVIOUS: 'b'.repeat(64),
      SLACK_SIGNING_SECRET: 'signing-secret',
    };
    const marked = new Set<string>();
    for (const env of [token, oauth]) {
      const { secrets } = loadConfig(env);
      for (const [name, value] of Object.entries(env)) if (secrets.includes(value)) marked.add(name);
    }
    expect([...marked].sort()).toEqual([...SECRET_VARIABLES].sort());
  });

  it('say no default in the words: the schema says it', () => {
    for (const [name, words] of Object.entries(VARIABLE_DOCS)) expect(words, name).not.toMatch(/\(default\b/i);
  });
});
