/**
 * End-to-end tests of Slack's OAuth mode (issue 40, items 1-3): the bot started with
 * SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SLACK_STATE_SECRET and SLACK_INSTALLATION_KEY instead of
 * SLACK_BOT_TOKEN, workspaces installed the way a browser does it — the bot's /slack/install
 * page, its "Add to Slack" link approved on (fake) Slack, the redirect to /slack/oauth_redirect
 * with the code, the state and the state cookie — then each workspace's requests answered with
 * its own token. One FakeSlack serves every workspace (test/fakes/slack/oauth.ts).
 */

import { createHmac, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { storeKeys } from '../../src/core/keys.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import { KeyRing, SealError } from '../../src/core/state/sealed.ts';
import type { FakeService } from '../fakes/service.ts';
import type { FakeSlack, SlackApiCall } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import { startTestBot, type TestBot } from './harness.ts';

const FIRST = 'T0FAKETEAM';
const SECOND = 'T0SECOND';
const UNINSTALLED = 'T0NEVER';
const CHANNELS = {
  first: 'C0OAUTHONE',
  second: 'C1OAUTHTWO',
  never: 'C2OAUTHNEVER',
  replay: 'C3OAUTHREPLAY',
  rotate: 'C4OAUTHROTATE',
  socket: 'C5OAUTHSOCKET',
  grid: 'C6OAUTHGRID',
  gone: 'C7OAUTHGONE',
  stay: 'C8OAUTHSTAY',
  french: 'C9OAUTHFRENCH',
} as const;
const CLIENT = { clientId: '1111111111.2222222222', clientSecret: randomBytes(16).toString('hex') };
const STATE_SECRET = randomBytes(16).toString('hex');
const KEY = randomBytes(32);
const NEXT_KEY = randomBytes(32);

/** What an operator sets for the OAuth mode (SLACK_BOT_TOKEN '' = unset, over slackEnv's). */
function oauthEnv(key: Buffer, previous?: Buffer): Record<string, string> {
  return {
    SLACK_BOT_TOKEN: '',
    SLACK_CLIENT_ID: CLIENT.clientId,
    SLACK_CLIENT_SECRET: CLIENT.clientSecret,
    SLACK_STATE_SECRET: STATE_SECRET,
    SLACK_INSTALLATION_KEY: key.toString('base64'),
    ...(previous ? { SLACK_INSTALLATION_KEY_PREVIOUS: previous.toString('hex') } : {}),
    QUOTA_CHAT_PER_MINUTE: '1',
  };
}

/** The install page: its "Add to Slack" link and the state cookie it set. */
async function installPage(origin: string): Promise<{ link: string; cookie: string }> {
  const page = await fetch(`${origin}/slack/install`);
  expect(page.status).toBe(200);
  const html = await page.text();
  const href = /href="(https:\/\/slack\.com\/oauth\/v2\/authorize\?[^"]+)"/.exec(html)?.[1];
  expect(href).toBeDefined();
  const cookie = page.headers.get('set-cookie')?.split(';')[0];
  expect(cookie).toMatch(/^slack-app-oauth-state=/);
  return { link: href!.replaceAll('&amp;', '&'), cookie: cookie! };
}

/** The browser's redirect back to the bot with the code and state (and the cookie, as a browser sends it). */
function redirect(origin: string, code: string, state: string, cookie: string): Promise<Response> {
  const query = new URLSearchParams({ code, state });
  return fetch(`${origin}/slack/oauth_redirect?${query}`, { headers: { cookie }, redirect: 'manual' });
}

/** Installs the app in a workspace as its user would; @returns the redirect's answer. */
async function install(slack: FakeSlack, origin: string, who: { teamId: string; userId: string }): Promise<Response> {
  const { link, cookie } = await installPage(origin);
  const { code, state } = slack.oauth.approve(link, who);
  return redirect(origin, code, state, cookie);
}

/** Every text the store's SQLite files hold (the WAL too). */
function storeFiles(storePath: string): string {
  const folder = dirname(storePath);
  return readdirSync(folder)
    .map((name) => readFileSync(join(folder, name)).toString('latin1'))
    .join('\n');
}

/** The Web API calls that wrote to `channel` (posts, streams, updates). */
const writesTo = (slack: FakeSlack, channel: string): SlackApiCall[] =>
  slack.calls.filter((c) => c.params.channel === channel && /^chat\./.test(c.method) && c.ok);

describe('HTTP mode', () => {
  let service: FakeService;
  let slack: FakeSlack;
  let testBot: TestBot;
  let origin: string;

  useE2E(
    {
      slack: {
        channels: [{ id: CHANNELS.first, name: 'oauth-one' }],
        users: [
          // An Enterprise Grid user in both workspaces: an admin of the first only.
          { id: 'U0ALICE', name: 'alice', isAdmin: [FIRST], alsoIn: [SECOND] },
          { id: 'U0BOB', name: 'bob' },
          { id: 'U0CAROL', name: 'carol' },
          { id: 'U0DAN', name: 'dan' },
        ],
        oauth: CLIENT,
      },
      beforeBot: (e2e) => {
        e2e.slack.addTeam({ id: SECOND, channels: [{ id: CHANNELS.second, name: 'oauth-two' }] });
        e2e.slack.addTeam({ id: UNINSTALLED, channels: [{ id: CHANNELS.never, name: 'oauth-never' }] });
        e2e.slack.addTeam({ id: 'T0REPLAY', channels: [{ id: CHANNELS.replay, name: 'oauth-replay' }] });
        e2e.slack.addTeam({ id: 'T0ROTATE', channels: [{ id: CHANNELS.rotate, name: 'oauth-rotate' }] });
        e2e.slack.addTeam({ id: 'T0GONE', channels: [{ id: CHANNELS.gone, name: 'oauth-gone' }] });
        e2e.slack.addTeam({ id: 'T0STAY', channels: [{ id: CHANNELS.stay, name: 'oauth-stay' }] });
        e2e.slack.addTeam({ id: 'T0FRENCH', channels: [{ id: CHANNELS.french, name: 'oauth-french' }] });
        e2e.slack.addTeam({
          id: 'T0GRID',
          enterpriseId: 'E0GRID',
          channels: [{ id: CHANNELS.grid, name: 'oauth-grid' }],
        });
        return undefined;
      },
      bot: { env: { ...oauthEnv(KEY), HTTP_PORT: '0' }, current: () => testBot },
    },
    (e2e) => {
      ({ service, slack, bot: testBot, botUrl: origin } = e2e);
      return undefined;
    },
  );

  const mention = (channel: string, user: string, text: string) =>
    slack.sendEvent(origin, slack.mentionEvent({ channel, user, text }));
  const outcome = (channel: string): Promise<CommandOutcome> =>
    testBot.outcomes((o) => o.command === 'mention' && o.conversationId.includes(`:${channel}:`)).then(([o]) => o!);

  it('installs two workspaces through /slack/install and /slack/oauth_redirect; their tokens are stored sealed', async () => {
    for (const who of [
      { teamId: FIRST, userId: 'U0ALICE' },
      { teamId: SECOND, userId: 'U0ALICE' },
    ]) {
      const done = await install(slack, origin, who);
      expect(done.status).toBe(200);
    }
    expect([...slack.oauth.installations.keys()]).toEqual([`team:${FIRST}`, `team:${SECOND}`]);
    expect(await testBot.bot.slack!.installations!.ids()).toEqual([`team:${FIRST}`, `team:${SECOND}`]);
    // The scopes asked for are the manifest's.
    expect(slack.oauth.installations.get(`team:${FIRST}`)!.scopes).toContain('chat:write');
    const files = storeFiles(testBot.storePath);
    for (const installation of slack.oauth.installations.values()) expect(files).not.toContain(installation.botToken);
    expect(files).not.toMatch(/xox[bpe]-/);
  });

  it('answers a mention in each workspace with that workspace’s own token, never another’s', async () => {
    const first = slack.oauth.installations.get(`team:${FIRST}`)!.botToken;
    const second = slack.oauth.installations.get(`team:${SECOND}`)!.botToken;
    const answered = Promise.all([outcome(CHANNELS.first), outcome(CHANNELS.second)]);
    expect((await mention(CHANNELS.first, 'U0BOB', 'hello from one')).status).toBe(200);
    expect((await mention(CHANNELS.second, 'U0ALICE', 'hello from two')).status).toBe(200);
    for (const o of await answered) expect(o.ok).toBe(true);
    const one = writesTo(slack, CHANNELS.first);
    const two = writesTo(slack, CHANNELS.second);
    expect(one.length).toBeGreaterThan(0);
    expect(two.length).toBeGreaterThan(0);
    expect(new Set(one.map((c) => c.token))).toEqual(new Set([first]));
    expect(new Set(two.map((c) => c.token))).toEqual(new Set([second]));
    // The fake's own single-workspace token is never used.
    expect(slack.calls.filter((c) => c.token === slack.botToken)).toEqual([]);
  });

  it('counts quotas apart per workspace: one user’s request a minute in each', async () => {
    // U0ALICE spent the second workspace's one request a minute above; the first's is untouched.
    const inFirst = outcome(CHANNELS.first);
    await mention(CHANNELS.first, 'U0ALICE', 'my one question here');
    expect((await inFirst).ok).toBe(true);
    const again = outcome(CHANNELS.second);
    await mention(CHANNELS.second, 'U0ALICE', 'a second question there');
    expect(await again).toMatchObject({ ok: false, errorCode: 'quota_exceeded' });
  });

  it('an admin of one workspace is not an admin of the other (rights asked with each workspace’s token)', async () => {
    const asked = (channel: string) =>
      slack.sendSlashCommand(origin, { command: '/settings', text: '', channel_id: channel, user_id: 'U0ALICE' });
    const admin = testBot.outcomes((o) => o.command === 'settings');
    await asked(CHANNELS.first);
    expect((await admin)[0]!.ok).toBe(true);
    const refused = testBot.outcomes((o) => o.command === 'settings');
    await asked(CHANNELS.second);
    expect((await refused)[0]).toMatchObject({ ok: false, errorCode: 'forbidden' });
    const second = slack.oauth.installations.get(`team:${SECOND}`)!.botToken;
    expect(slack.callsTo('users.info').some((c) => c.token === second && c.params.user === 'U0ALICE')).toBe(true);
  });

  it('acknowledges an event of a workspace with no installation with 200, answers nothing, and logs it once', async () => {
    const before = slack.calls.length;
    for (const text of ['anyone there?', 'still nobody?']) {
      const ack = await mention(CHANNELS.never, 'U0BOB', text);
      expect(ack.status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(slack.calls.slice(before).filter((c) => c.params.channel === CHANNELS.never)).toEqual([]);
    expect(slack.platformFailures).toEqual([]);
    const logged = testBot.logs.filter((l) => /no installation/.test(String(l.msg)));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ installation: `team:${UNINSTALLED}` });
  });

  it('app_uninstalled of one workspace: its installation and keys gone at once (its counters kept), its next event acknowledged and dropped, the other workspace untouched; a reinstall starts clean', async () => {
    for (const teamId of ['T0GONE', 'T0STAY'])
      expect((await install(slack, origin, { teamId, userId: 'U0BOB' })).status).toBe(200);
    for (const [channel, text] of [
      [CHANNELS.gone, 'remember the word heron'],
      [CHANNELS.stay, 'remember the word otter'],
    ] as const) {
      const answered = outcome(channel);
      await mention(channel, 'U0CAROL', text);
      expect((await answered).ok).toBe(true);
    }
    const store = testBot.bot.core.store;
    const keysNaming = async (team: string) => {
      const keys: string[] = [];
      for await (const batch of store.scanKeys('')) keys.push(...batch);
      return keys.filter((k) => k.includes(`slack:${team}:`));
    };
    const isCounter = (key: string) => /^(quota|usage):/.test(key);
    const goneData = (await keysNaming('T0GONE')).filter((k) => !isCounter(k));
    expect(goneData.some((k) => k.startsWith('history:'))).toBe(true);
    const stayKeys = await keysNaming('T0STAY');
    const goneCounters = (await keysNaming('T0GONE')).filter(isCounter);
    expect(goneCounters.length).toBeGreaterThan(0);

    slack.oauth.uninstall({ teamId: 'T0GONE' });
    const ack = await slack.sendEvent(origin, { type: 'app_uninstalled' }, { teamId: 'T0GONE' });
    expect(ack.status).toBe(200);
    await vi.waitFor(
      () =>
        expect(
          testBot.logs.some(
            (l) => l.msg === 'workspace data purged (usage and quota counters kept)' && l.team === 'T0GONE',
          ),
        ).toBe(true),
      { timeout: 20_000, interval: 50 },
    );
    expect(await testBot.bot.slack!.installations!.ids()).not.toContain('team:T0GONE');
    expect(await testBot.bot.slack!.installations!.ofTeam('T0GONE')).toBeUndefined();
    // Its data is gone, its usage and quota counters stay (an uninstall lifts no quota); the other's is all there.
    expect((await keysNaming('T0GONE')).sort()).toEqual(goneCounters.sort());
    expect(await keysNaming('T0STAY')).toEqual(expect.arrayContaining(stayKeys));

    // A late event of the removed workspace: 200, and nothing done with it.
    const chats = service.chatRequests().length;
    const writes = writesTo(slack, CHANNELS.gone).length;
    expect((await mention(CHANNELS.gone, 'U0DAN', 'are you still there?')).status).toBe(200);
    const stayed = outcome(CHANNELS.stay);
    await mention(CHANNELS.stay, 'U0DAN', 'and the word?');
    expect((await stayed).ok).toBe(true);
    expect(service.chatRequests()).toHaveLength(chats + 1);
    expect(JSON.stringify(service.chatRequests().at(-1))).toContain('and the word?');
    expect(writesTo(slack, CHANNELS.gone)).toHaveLength(writes);

    // Installed again: served again, and nothing of before is remembered.
    expect((await install(slack, origin, { teamId: 'T0GONE', userId: 'U0BOB' })).status).toBe(200);
    const again = outcome(CHANNELS.gone);
    await mention(CHANNELS.gone, 'U0DAN', 'which word?');
    expect((await again).ok).toBe(true);
    expect(JSON.stringify(service.chatRequests().at(-1))).toContain('which word?');
    const now = await keysNaming('T0GONE');
    expect(now.some((k) => k.startsWith('history:'))).toBe(true);
    expect(now.filter((k) => goneData.includes(k))).toEqual([]);
  });

  it('refuses a forged state and a replayed one, and stores no installation for either', async () => {
    const exchanges = () => slack.callsTo('oauth.v2.access').length;
    // Forged: a state signed with another secret, its cookie to match.
    const { link } = await installPage(origin);
    const { code } = slack.oauth.approve(link, { teamId: 'T0REPLAY', userId: 'U0BOB' });
    const forged = forgedState();
    const before = exchanges();
    const refused = await redirect(origin, code, forged, `slack-app-oauth-state=${forged}`);
    expect(refused.status).toBe(400);
    expect(exchanges()).toBe(before);
    // Replayed: a state used once already (its cookie too), with a fresh code.
    const page = await installPage(origin);
    const first = slack.oauth.approve(page.link, { teamId: 'T0REPLAY', userId: 'U0BOB' });
    expect((await redirect(origin, first.code, first.state, page.cookie)).status).toBe(200);
    slack.oauth.uninstall({ teamId: 'T0REPLAY' });
    await testBot.bot.slack!.installations!.deleteInstallation({
      teamId: 'T0REPLAY',
      isEnterpriseInstall: false,
      enterpriseId: undefined,
    });
    const again = slack.oauth.approve(page.link, { teamId: 'T0REPLAY', userId: 'U0BOB' });
    const replayed = await redirect(origin, again.code, again.state, page.cookie);
    expect(replayed.status).toBe(400);
    expect(slack.callsTo('oauth.v2.access').filter((c) => c.params.code === again.code)).toEqual([]);
    expect(await testBot.bot.slack!.installations!.ids()).not.toContain('team:T0REPLAY');
  });

  it('speaks the browser’s language on the install page and the redirect’s pages (Accept-Language, best q first), English without the header', async () => {
    const french = { 'accept-language': 'fr-CA,fr;q=0.9,en;q=0.5' };
    const fr = await fetch(`${origin}/slack/install`, { headers: french });
    expect(fr.status).toBe(200);
    expect(fr.headers.get('content-language')).toBe('fr');
    const frHtml = await fr.text();
    expect(frHtml).toContain('<html lang="fr">');
    expect(frHtml).toContain('<h2>Installer l&#x27;app dans Slack</h2>');
    expect(frHtml).toContain('alt="Ajouter à Slack"');
    expect(frHtml).not.toContain('Add to Slack');
    // The French page's link and state cookie install the app as the English page's do.
    const link = /href="(https:\/\/slack\.com\/oauth\/v2\/authorize\?[^"]+)"/
      .exec(frHtml)?.[1]
      ?.replaceAll('&amp;', '&');
    const cookie = fr.headers.get('set-cookie')?.split(';')[0];
    expect(link).toBeDefined();
    expect(cookie).toMatch(/^slack-app-oauth-state=/);
    const { code, state } = slack.oauth.approve(link!, { teamId: 'T0FRENCH', userId: 'U0DAN' });
    const query = new URLSearchParams({ code, state });
    const done = await fetch(`${origin}/slack/oauth_redirect?${query}`, {
      headers: { cookie: cookie!, ...french },
      redirect: 'manual',
    });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('<h2>Merci !</h2>');
    expect(await testBot.bot.slack!.installations!.ids()).toContain('team:T0FRENCH');
    // A refused redirect (no state cookie) says why in French, with Bolt's 400.
    const refused = await fetch(`${origin}/slack/oauth_redirect?${new URLSearchParams({ code: 'x', state: 'y' })}`, {
      headers: { 'accept-language': 'de;q=0.2, fr-CA;q=0.8, *;q=0.9' },
      redirect: 'manual',
    });
    expect(refused.status).toBe(400);
    const refusal = await refused.text();
    expect(refusal).toContain('<html lang="fr">');
    expect(refusal).toContain('Un problème est survenu');
    // Without the header (or with no shipped language in it): DEFAULT_LOCALE, English here.
    for (const headers of [{}, { 'accept-language': 'ko-KR, zh;q=0.8' }] as Record<string, string>[]) {
      const en = await fetch(`${origin}/slack/install`, { headers });
      const enHtml = await en.text();
      expect(enHtml).toContain('<html lang="en">');
      expect(enHtml).toContain('<h2>Install the app in Slack</h2>');
      expect(enHtml).toContain('alt="Add to Slack"');
    }
  });

  it('with token rotation, refreshes a bot token that expires within two hours (oauth.v2.access refresh_token) and stores the new one sealed', async () => {
    slack.oauth.setRotation({ expiresInSec: 3600 });
    try {
      expect((await install(slack, origin, { teamId: 'T0ROTATE', userId: 'U0BOB' })).status).toBe(200);
    } finally {
      slack.oauth.setRotation(undefined);
    }
    const installed = slack.oauth.installations.get('team:T0ROTATE')!;
    const [firstToken, firstRefresh] = [installed.botToken, installed.refreshToken!];
    expect(firstToken).toMatch(/^xoxe\.xoxb-/);
    const answered = outcome(CHANNELS.rotate);
    await mention(CHANNELS.rotate, 'U0BOB', 'a question after the install');
    expect((await answered).ok).toBe(true);
    const refreshed = slack.callsTo('oauth.v2.access').filter((c) => c.params.grant_type === 'refresh_token');
    expect(refreshed.map((c) => c.params.refresh_token)).toEqual([firstRefresh]);
    const now = slack.oauth.installations.get('team:T0ROTATE')!;
    expect(now.botToken).not.toBe(firstToken);
    expect(new Set(writesTo(slack, CHANNELS.rotate).map((c) => c.token))).toEqual(new Set([now.botToken]));
    // The rotated tokens were stored (sealed): the bot reads them back, and the file holds neither.
    const stored = await testBot.bot.slack!.installations!.ofTeam('T0ROTATE');
    expect([stored?.bot?.token, stored?.bot?.refreshToken]).toEqual([now.botToken, now.refreshToken]);
    const files = storeFiles(testBot.storePath);
    for (const token of [firstToken, firstRefresh, now.botToken, now.refreshToken!]) expect(files).not.toContain(token);
  });

  it('an Enterprise Grid org-wide install is one installation for the enterprise, serving its workspaces', async () => {
    const { link, cookie } = await installPage(origin);
    const { code, state } = slack.oauth.approve(link, {
      teamId: 'T0GRID',
      enterpriseId: 'E0GRID',
      userId: 'U0BOB',
      orgWide: true,
    });
    expect((await redirect(origin, code, state, cookie)).status).toBe(200);
    expect(await testBot.bot.slack!.installations!.ids()).toContain('enterprise:E0GRID');
    const token = slack.oauth.installations.get('enterprise:E0GRID')!.botToken;
    const answered = outcome(CHANNELS.grid);
    await mention(CHANNELS.grid, 'U0BOB', 'a question from the grid');
    expect((await answered).ok).toBe(true);
    expect(new Set(writesTo(slack, CHANNELS.grid).map((c) => c.token))).toEqual(new Set([token]));
  });

  it('never writes a Slack token to the logs or /metrics', async () => {
    expect(testBot.rawLog()).not.toMatch(/xox[bpe]-/);
    for (const installation of slack.oauth.installations.values())
      expect(testBot.rawLog()).not.toContain(installation.botToken);
    const metrics = await (await fetch(`http://127.0.0.1:${testBot.bot.ops!.port}/metrics`)).text();
    expect(metrics).toContain('# HELP');
    expect(metrics).not.toMatch(/xox[bpe]-/);
  });

  it('rotates SLACK_INSTALLATION_KEY: with the old key as SLACK_INSTALLATION_KEY_PREVIOUS, rows are read and sealed again with the new one', async () => {
    const { storePath } = testBot;
    await testBot.stop();
    testBot = await startTestBot({ ...envOf(service, slack), ...oauthEnv(NEXT_KEY, KEY) }, storePath);
    origin = `http://127.0.0.1:${testBot.bot.slack!.port}`;
    const answered = outcome(CHANNELS.first);
    await mention(CHANNELS.first, 'U0CAROL', 'after the rotation');
    expect((await answered).ok).toBe(true);
    await testBot.stop();
    // The row the mention read is now sealed with the new key only.
    const store = await openStore(`sqlite://${storePath}`);
    try {
      const row = await store.keyv.get(storeKeys.slackInstallation(`team:${FIRST}`));
      expect(() => new KeyRing(NEXT_KEY).open(row, `team:${FIRST}`)).not.toThrow();
      expect(() => new KeyRing(KEY).open(row, `team:${FIRST}`)).toThrow(SealError);
    } finally {
      await store.close();
    }
    testBot = await startTestBot({ ...envOf(service, slack), ...oauthEnv(NEXT_KEY) }, storePath);
    origin = `http://127.0.0.1:${testBot.bot.slack!.port}`;
    const later = outcome(CHANNELS.first);
    await mention(CHANNELS.first, 'U0DAN', 'with the new key alone');
    expect((await later).ok).toBe(true);
  });
});

/** The variables pointing a bot at the fakes in the OAuth mode (as useE2E sets them). */
function envOf(service: FakeService, slack: FakeSlack): Record<string, string> {
  return {
    SERVICE_BASE_URL: `${service.baseUrl}/v1`,
    SERVICE_API_KEY: service.apiKey,
    SLACK_SIGNING_SECRET: slack.signingSecret,
    SLACK_API_URL: slack.apiUrl,
    SLACK_PORT: '0',
  };
}

/** A state as Bolt writes one (a JWT) but signed with a secret that is not SLACK_STATE_SECRET. */
function forgedState(): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ installOptions: { scopes: ['chat:write'] }, now: new Date().toJSON(), random: 1 })}`;
  return `${body}.${createHmac('sha256', 'not-the-state-secret').update(body).digest('base64url')}`;
}

describe('Socket Mode', () => {
  let slack: FakeSlack;
  let testBot: TestBot;

  useE2E(
    {
      slack: { channels: [{ id: CHANNELS.socket, name: 'oauth-socket' }], oauth: CLIENT },
      bot: { socketMode: true, env: { ...oauthEnv(KEY), SLACK_PORT: '0' } },
    },
    (e2e) => {
      ({ slack, bot: testBot } = e2e);
      return undefined;
    },
  );

  it('serves the installer on SLACK_PORT and answers a mention over the socket with the installed token', async () => {
    const port = testBot.bot.slack!.installerPort;
    expect(port).toBeGreaterThan(0);
    const done = await install(slack, `http://127.0.0.1:${port}`, { teamId: FIRST, userId: 'U0ALICE' });
    expect(done.status).toBe(200);
    const token = slack.oauth.installations.get(`team:${FIRST}`)!.botToken;
    const answered = testBot.outcomes((o) => o.command === 'mention');
    const ack = await slack.sendSocketEvent(
      slack.mentionEvent({ channel: CHANNELS.socket, user: 'U0BOB', text: 'over the socket' }),
    );
    expect(ack.ackedInTime).toBe(true);
    expect((await answered)[0]!.ok).toBe(true);
    const writes = writesTo(slack, CHANNELS.socket);
    expect(writes.length).toBeGreaterThan(0);
    expect(new Set(writes.map((c) => c.token))).toEqual(new Set([token]));
  });
});
