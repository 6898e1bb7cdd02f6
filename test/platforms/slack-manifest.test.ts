import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import imagine from '../../commands/imagine.ts';
import { commands, messageActions } from '../../commands/index.ts';
import { DEFAULT_ASSISTANT_PROMPTS } from '../../src/config-env.ts';
import { checkOptions } from '../../src/core/command.ts';
import {
  AGENT_DESCRIPTION,
  SLACK_BUILT_IN_COMMANDS,
  type SlackManifest,
  slackManifest,
  usageHint,
} from '../../src/platforms/slack/manifest.ts';
import { slackShortcutsOf } from '../../src/platforms/slack/message-actions.ts';
import { parseSlashText } from '../../src/platforms/slack/options.ts';
import { METHOD_SCOPES, SUBSCRIPTION_SCOPES } from '../fakes/slack/scopes.ts';

/** The Slack adapter's source files, comments removed (what the code does, not what it says). */
const SLACK_SOURCES = (() => {
  const dir = join(import.meta.dirname, '../../src/platforms/slack');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.ts'))
    .map((name) => ({
      name,
      code: readFileSync(join(dir, name), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, ''),
    }));
})();

/** @slack/web-api helpers that call Web API methods themselves. */
const CLIENT_HELPERS: Record<string, readonly string[]> = {
  filesUploadV2: ['files.getUploadURLExternal', 'files.completeUploadExternal'],
};

/** WebClient members that are no Web API call (its EventEmitter side). */
const CLIENT_NON_CALLS: ReadonlySet<string> = new Set([
  'on',
  'once',
  'off',
  'addListener',
  'removeListener',
  'removeAllListeners',
  'emit',
]);

/** What a `message` listener that checks `channel_type` against this value is subscribed to. */
const MESSAGE_SUBSCRIPTIONS: Record<string, string> = {
  im: 'message.im',
  channel: 'message.channels',
  group: 'message.groups',
  mpim: 'message.mpim',
};

/** The channel types the bot answers in: a `conversations.*` call needs the scope of each. */
const CHANNEL_SCOPE_PREFIXES = ['channels', 'groups', 'im'] as const;

/**
 * What Bolt's `Assistant` class listens to (bolt-js src/Assistant.ts, ASSISTANT_PAYLOAD_TYPES):
 * the assistant view's two events, and `message` events of its threads in the app's DMs.
 */
const ASSISTANT_EVENTS = ['assistant_thread_started', 'assistant_thread_context_changed'] as const;

/**
 * What the adapter's code uses, read from its source text: Web API methods (`client.<family>.<method>(`,
 * `client.apiCall('<method>'`, helpers such as `filesUploadV2`), events (`app.event('…')`,
 * `app.message(`, `new Assistant(`), and whether it downloads users' files (`url_private`), has
 * slash commands (`app.command(`) and buttons (`app.action(`).
 */
function usedBySource() {
  const methods = new Map<string, string>();
  const helpers = new Map<string, string>();
  const events = new Map<string, string>();
  const messageChannelTypes = new Set<string>();
  let downloadsFiles = false;
  let commands = false;
  let actions = false;
  for (const { name, code } of SLACK_SOURCES) {
    for (const m of code.matchAll(/\bclient((?:\.[a-z][A-Za-z0-9]*){2,3})\s*\(/g)) methods.set(m[1]!.slice(1), name);
    for (const m of code.matchAll(/\bclient\.apiCall\(\s*['"`]([\w.]+)['"`]/g)) methods.set(m[1]!, name);
    for (const m of code.matchAll(/\bclient\.([a-z][A-Za-z0-9]*)\s*\(/g))
      if (m[1] !== 'apiCall' && !CLIENT_NON_CALLS.has(m[1]!)) helpers.set(m[1]!, name);
    for (const m of code.matchAll(/\.event\(\s*['"`]([\w.]+)['"`]/g)) events.set(m[1]!, name);
    if (/\bapp\.message\(/.test(code)) events.set('message', name);
    if (/\bnew Assistant\(/.test(code)) {
      for (const event of ASSISTANT_EVENTS) events.set(event, name);
      events.set('message', name);
      messageChannelTypes.add('im');
    }
    if (/\.event\(\s*['"`]message['"`]|\bapp\.message\(/.test(code)) {
      for (const m of code.matchAll(/channel_type\s*[!=]==?\s*['"`](\w+)['"`]/g)) messageChannelTypes.add(m[1]!);
    }
    downloadsFiles ||= /\burl_private(?:_download)?\b/.test(code);
    commands ||= /\.command\(/.test(code);
    actions ||= /\.action\(/.test(code);
  }
  return { methods, helpers, events, messageChannelTypes, downloadsFiles, commands, actions };
}

describe('Slack app manifest', () => {
  it("declares every command within Slack's limits, with request URLs in HTTP mode", () => {
    const manifest = slackManifest(commands, { requestUrl: 'https://bot.example.com/' });
    const slash = manifest.features!.slash_commands!;
    expect(slash.map((c) => c.command)).toEqual(commands.map((c) => `/${c.name}`));
    for (const entry of slash) {
      expect(entry.command.length).toBeLessThanOrEqual(32);
      expect(entry.description.length).toBeGreaterThan(0);
      expect(entry.description.length).toBeLessThanOrEqual(2000);
      expect(entry.usage_hint!.length).toBeLessThanOrEqual(1000);
      expect(entry.url).toBe('https://bot.example.com/slack/events');
    }
    expect(manifest.settings!.socket_mode_enabled).toBe(false);
    expect(manifest.oauth_config!.scopes!.bot).toEqual(
      expect.arrayContaining(['commands', 'chat:write', 'files:write']),
    );
  });

  it('declares /help (not a Slack built-in) and no name of a Slack built-in command, which Slack would refuse', () => {
    const declared = slackManifest(commands).features!.slash_commands!.map((c) => c.command);
    expect(declared).toContain('/help');
    expect(SLACK_BUILT_IN_COMMANDS.has('help')).toBe(false);
    expect(declared.filter((c) => SLACK_BUILT_IN_COMMANDS.has(c.slice(1)))).toEqual([]);
  });

  it('refuses to build a manifest with a command named like a Slack built-in (/status), naming it', () => {
    const status = { ...commands.find((c) => c.name === 'usage')!, name: 'status' };
    expect(() => slackManifest([...commands, status])).toThrow(
      '/status is a built-in Slack command: an app cannot declare it',
    );
  });

  it('has no request URLs and enables Socket Mode when no URL is given', () => {
    const manifest = slackManifest(commands);
    expect(manifest.features!.slash_commands!.every((c) => c.url === undefined)).toBe(true);
    expect(manifest.settings!.socket_mode_enabled).toBe(true);
  });

  it('writes the usage hint the way the adapter parses it: the prompt, then --flags with their choices', () => {
    expect(usageHint(imagine)).toBe(
      '<prompt> [--aspect_ratio square|portrait|landscape] [--style vivid|natural|preview|upscaled] [--model <text>] [--negative_prompt <text>] ' +
        '[--seed <integer>] [--reference_image <https URL or Slack file link>] [--reference_image_url <text>] [--denoising_strength <number>] [--enhance] [--disable_safety_checker]',
    );
    // An invocation written after the hint is understood.
    expect(
      checkOptions(
        imagine,
        parseSlashText(imagine, 'a fox --aspect_ratio portrait --style natural --seed 7 --enhance'),
      ),
    ).toEqual({
      prompt: 'a fox',
      aspect_ratio: 'portrait',
      style: 'natural',
      seed: 7,
      enhance: true,
    });
  });

  it("declares the message shortcuts the code listens to (app.shortcut), within Slack's limits, with interactivity on", () => {
    const manifest = slackManifest(commands, { requestUrl: 'https://bot.example.com' });
    const declared = manifest.features!.shortcuts ?? [];
    expect(declared.map((s) => s.callback_id)).toEqual(slackShortcutsOf(messageActions).map((s) => s.callbackId));
    expect(declared).toContainEqual({
      name: 'Forget this thread',
      type: 'message',
      callback_id: 'forget_thread',
      description: expect.any(String),
    });
    // The message actions, derived from the same definitions as Discord's message commands.
    expect(messageActions.map((a) => a.name)).toEqual(['Ask about this message', 'Summarize']);
    for (const action of messageActions)
      expect(declared).toContainEqual({
        name: action.name,
        type: 'message',
        callback_id: action.id,
        description: action.description,
      });
    for (const shortcut of declared) {
      expect(shortcut.type).toBe('message');
      expect(shortcut.name.length).toBeGreaterThan(0);
      expect(shortcut.name.length).toBeLessThanOrEqual(24);
      expect(shortcut.callback_id.length).toBeLessThanOrEqual(255);
      expect(shortcut.description.length).toBeGreaterThan(0);
      expect(shortcut.description.length).toBeLessThanOrEqual(150);
    }
    // Every shortcut listener in the code is declared: Slack sends no other (read from the source).
    const listened = SLACK_SOURCES.flatMap(({ code }) => [...code.matchAll(/\.shortcut(?:<[^>]*>)?\(/g)]).length;
    expect(listened).toBeGreaterThan(0);
    expect(
      SLACK_SOURCES.some(({ code }) =>
        /\.shortcut(?:<[^>]*>)?\(\s*\{\s*callback_id:\s*shortcut\.callbackId/.test(code),
      ),
    ).toBe(true);
    // The forms of the actions that ask a question come back as view_submission (app.view), by their callback_id.
    expect(
      SLACK_SOURCES.some(({ code }) =>
        /\.view\(\s*\{\s*callback_id:\s*action\.id,\s*type:\s*'view_submission'/.test(code),
      ),
    ).toBe(true);
    // Shortcuts arrive as interactivity payloads, at the same request URL.
    expect(manifest.settings!.interactivity).toMatchObject({
      is_enabled: true,
      request_url: 'https://bot.example.com/slack/events',
    });
  });

  it('declares the agent view (its description, the suggested prompts of ASSISTANT_PROMPTS), the Home tab, assistant:write and the events of both AI-app views', () => {
    const prompts = [
      { title: 'One', message: 'first' },
      { title: 'Two', message: 'second' },
    ];
    const manifest = slackManifest(commands, { prompts });
    expect(manifest.features!.agent_view).toEqual({ agent_description: AGENT_DESCRIPTION, suggested_prompts: prompts });
    expect(AGENT_DESCRIPTION.length).toBeLessThanOrEqual(300);
    expect(manifest.features!.assistant_view).toBeUndefined();
    expect(slackManifest(commands).features!.agent_view!.suggested_prompts).toEqual(DEFAULT_ASSISTANT_PROMPTS);
    expect(manifest.features!.app_home).toEqual({
      home_tab_enabled: true,
      messages_tab_enabled: true,
      messages_tab_read_only_enabled: false,
    });
    expect(manifest.oauth_config!.scopes!.bot).toEqual(
      expect.arrayContaining(['assistant:write', 'channels:history', 'groups:history', 'im:history']),
    );
    expect(manifest.settings!.event_subscriptions!.bot_events).toEqual(
      expect.arrayContaining([
        'app_home_opened',
        'app_context_changed',
        'message.im',
        'assistant_thread_started',
        'assistant_thread_context_changed',
      ]),
    );
  });

  it('npm run slack-manifest reads ASSISTANT_PROMPTS, and refuses a malformed one with exit code 2', () => {
    const script = join(import.meta.dirname, '../../src/platforms/slack/manifest.ts');
    const tsx = join(import.meta.dirname, '../../node_modules/.bin/tsx');
    const prompts = [{ title: 'Only', message: 'the one prompt' }];
    const env = { ...process.env, INIT_CWD: import.meta.dirname, ASSISTANT_PROMPTS: JSON.stringify(prompts) };
    const printed = JSON.parse(execFileSync(tsx, [script], { env, encoding: 'utf8' })) as SlackManifest;
    expect(printed.features!.agent_view!.suggested_prompts).toEqual(prompts);
    let status: number | undefined;
    try {
      execFileSync(tsx, [script], { env: { ...env, ASSISTANT_PROMPTS: 'not json' }, stdio: 'pipe' });
    } catch (error) {
      status = (error as { status?: number }).status;
    }
    expect(status).toBe(2);
  });

  it('npm run slack-manifest with SLACK_CLIENT_ID (the OAuth mode) names the redirect URL with the scopes, in HTTP mode and in Socket Mode, and wants the URL', () => {
    const script = join(import.meta.dirname, '../../src/platforms/slack/manifest.ts');
    const tsx = join(import.meta.dirname, '../../node_modules/.bin/tsx');
    const env = { ...process.env, INIT_CWD: import.meta.dirname, SLACK_CLIENT_ID: '1.2', SLACK_APP_TOKEN: '' };
    const run = (extra: Record<string, string>) =>
      JSON.parse(
        execFileSync(tsx, [script, 'https://bot.example.com'], { env: { ...env, ...extra }, encoding: 'utf8' }),
      ) as SlackManifest;
    const http = run({});
    expect(http.oauth_config!.redirect_urls).toEqual(['https://bot.example.com/slack/oauth_redirect']);
    expect(http.oauth_config!.scopes!.bot).toEqual(expect.arrayContaining(['chat:write', 'app_mentions:read']));
    expect(http.settings!.event_subscriptions!.request_url).toBe('https://bot.example.com/slack/events');
    const socket = run({ SLACK_APP_TOKEN: 'xapp-1-A1-1-x' });
    expect(socket.oauth_config!.redirect_urls).toEqual(['https://bot.example.com/slack/oauth_redirect']);
    expect(socket.settings!.event_subscriptions!.request_url).toBeUndefined();
    expect(socket.settings!.socket_mode_enabled).toBe(true);
    // Without SLACK_CLIENT_ID: no redirect URL, as before.
    expect(run({ SLACK_CLIENT_ID: '' }).oauth_config!.redirect_urls).toBeUndefined();
    let status: number | undefined;
    try {
      execFileSync(tsx, [script], { env, stdio: 'pipe' });
    } catch (error) {
      status = (error as { status?: number }).status;
    }
    expect(status).toBe(2);
  });

  describe('covers what the code uses (read from src/platforms/slack/*.ts): a new call or listener without a manifest change fails here', () => {
    const manifest = slackManifest(commands, { requestUrl: 'https://bot.example.com' });
    const botScopes = new Set<string>(manifest.oauth_config!.scopes!.bot ?? []);
    const botEvents = new Set<string>(manifest.settings!.event_subscriptions!.bot_events ?? []);
    const used = usedBySource();

    it('finds the calls and listeners it checks (the source reading works)', () => {
      expect([...used.methods.keys()]).toEqual(
        expect.arrayContaining(['chat.postMessage', 'chat.update', 'chat.postEphemeral', 'users.info']),
      );
      expect([...used.events.keys()]).toEqual(expect.arrayContaining(['app_mention', 'message']));
      expect(used.helpers.has('filesUploadV2')).toBe(true);
    });

    it("has the bot scope of every Web API method the code calls (the fake Slack's method → scope table)", () => {
      const methods = new Map(used.methods);
      for (const [helper, file] of used.helpers) {
        // An unknown helper of @slack/web-api: name the methods it calls in CLIENT_HELPERS.
        expect(
          CLIENT_HELPERS[helper],
          `${file} calls client.${helper}(), which CLIENT_HELPERS does not know`,
        ).toBeDefined();
        for (const method of CLIENT_HELPERS[helper]!) methods.set(method, file);
      }
      const missing: string[] = [];
      for (const [method, file] of methods) {
        expect(
          method in METHOD_SCOPES,
          `${file} calls ${method}, which the fake's scope table (test/fakes/slack/scopes.ts) does not know: add it with its scope from docs.slack.dev`,
        ).toBe(true);
        const rule = METHOD_SCOPES[method];
        const needed =
          rule === null || rule === undefined
            ? []
            : typeof rule === 'string'
              ? [rule]
              : CHANNEL_SCOPE_PREFIXES.map((prefix) => `${prefix}:${rule.family}`);
        for (const scope of needed) if (!botScopes.has(scope)) missing.push(`${scope} (${method}, ${file})`);
      }
      if (used.downloadsFiles && !botScopes.has('files:read')) missing.push('files:read (downloading url_private)');
      if (used.commands && !botScopes.has('commands')) missing.push('commands (slash commands)');
      expect(missing).toEqual([]);
    });

    it("subscribes to every event the code listens to, with each subscription's scope, and to nothing it ignores", () => {
      const needed = new Map<string, string>();
      for (const [event, file] of used.events) {
        if (event !== 'message') needed.set(event, file);
        else {
          // A message listener that checks channel_type wants those channel types; one that does not, all of them.
          const types = used.messageChannelTypes.size
            ? [...used.messageChannelTypes]
            : Object.keys(MESSAGE_SUBSCRIPTIONS);
          for (const type of types) {
            expect(MESSAGE_SUBSCRIPTIONS[type], `${file}: unknown channel_type ${type}`).toBeDefined();
            needed.set(MESSAGE_SUBSCRIPTIONS[type]!, file);
          }
        }
      }
      expect([...needed.keys()].filter((event) => !botEvents.has(event))).toEqual([]);
      // Every subscription is listened to (a message.* one by a `message` listener).
      const listened = (event: string) => used.events.has(event.startsWith('message.') ? 'message' : event);
      expect([...botEvents].filter((event) => !listened(event))).toEqual([]);
      for (const event of botEvents) {
        expect(SUBSCRIPTION_SCOPES[event], `the fake's SUBSCRIPTION_SCOPES does not know ${event}`).toBeDefined();
        const scope = SUBSCRIPTION_SCOPES[event];
        if (scope !== null) expect(botScopes.has(scope!), `${event} needs ${scope}`).toBe(true);
      }
      // DMs reach the bot only through its Messages tab.
      if (botEvents.has('message.im')) {
        expect(manifest.features!.app_home).toMatchObject({
          messages_tab_enabled: true,
          messages_tab_read_only_enabled: false,
        });
      }
      if (used.actions)
        expect(manifest.settings!.interactivity).toMatchObject({
          is_enabled: true,
          request_url: 'https://bot.example.com/slack/events',
        });
      expect(manifest.settings!.event_subscriptions!.request_url).toBe('https://bot.example.com/slack/events');
    });
  });
});
