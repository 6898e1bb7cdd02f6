/**
 * Tests of the fake Slack's OAuth side and its several workspaces (oauth.ts), spoken to with the
 * real @slack/web-api WebClient: the code exchange and its refusals, token rotation, and each
 * token seeing only its own workspace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack } from '../slack.ts';
import { handClock, slackError, webClient } from './test-helpers.ts';

const clock = handClock();
let fake: FakeSlack;

beforeAll(async () => {
  fake = await FakeSlack.start({ now: clock.now, channels: [{ id: 'C0ONE', name: 'one' }] });
  fake.addTeam({ id: 'T0TWO', channels: [{ id: 'C1TWO', name: 'two' }], users: [{ id: 'U1CAROL', name: 'carol' }] });
});
afterAll(async () => {
  await fake.close();
});

const link = () =>
  `https://slack.com/oauth/v2/authorize?scope=chat:write,users:read&state=s1&client_id=${fake.oauth.clientId}`;
const exchange = (params: Record<string, string>) =>
  webClient(fake, undefined).oauth.v2.access({
    client_id: fake.oauth.clientId,
    client_secret: fake.oauth.clientSecret,
    ...params,
  } as never);

describe('oauth.v2.access', () => {
  it('exchanges a code once for a workspace bot token, refusing a wrong secret, a used code and an expired one', async () => {
    const { code, state } = fake.oauth.approve(link(), { teamId: 'T0TWO', teamName: 'Two', userId: 'U1CAROL' });
    expect(state).toBe('s1');
    expect(await slackError(exchange({ code, client_secret: 'wrong' }))).toBe('bad_client_secret');
    const access = await exchange({ code });
    expect(access).toMatchObject({
      token_type: 'bot',
      scope: 'chat:write,users:read',
      team: { id: 'T0TWO', name: 'Two' },
      is_enterprise_install: false,
      authed_user: { id: 'U1CAROL' },
    });
    expect(access.access_token).toMatch(/^xoxb-/);
    expect(access.refresh_token).toBeUndefined();
    expect(await slackError(exchange({ code }))).toBe('invalid_code');
    const late = fake.oauth.approve(link(), { teamId: 'T0TWO', userId: 'U1CAROL' });
    clock.advance(11 * 60_000);
    expect(await slackError(exchange({ code: late.code }))).toBe('invalid_code');
  });

  it('refuses a link that is not Slack’s authorize URL for this app, or has no state', () => {
    expect(() =>
      fake.oauth.approve(link().replace('client_id=', 'client_id=9'), { teamId: 'T0TWO', userId: 'U1' }),
    ).toThrow(/another client_id/);
    expect(() => fake.oauth.approve(link().replace('state=s1&', ''), { teamId: 'T0TWO', userId: 'U1' })).toThrow(
      /no state/,
    );
  });

  it('with rotation, issues expiring tokens and a refresh token that works once', async () => {
    fake.oauth.setRotation({ expiresInSec: 3600 });
    try {
      const { code } = fake.oauth.approve(link(), { teamId: 'T0TWO', userId: 'U1CAROL' });
      const first = await exchange({ code });
      expect(first.access_token).toMatch(/^xoxe\.xoxb-1-/);
      expect(first.refresh_token).toMatch(/^xoxe-1-/);
      expect(first.expires_in).toBe(3600);
      const next = await exchange({ grant_type: 'refresh_token', refresh_token: first.refresh_token! });
      expect(next.access_token).not.toBe(first.access_token);
      expect(await slackError(exchange({ grant_type: 'refresh_token', refresh_token: first.refresh_token! }))).toBe(
        'invalid_refresh_token',
      );
      // The replaced token works until it expires.
      expect((await webClient(fake, first.access_token).auth.test()).team_id).toBe('T0TWO');
      clock.advance(3601 * 1000);
      expect(await slackError(webClient(fake, first.access_token).auth.test())).toBe('token_expired');
    } finally {
      fake.oauth.setRotation(undefined);
    }
  });
});

describe('several workspaces', () => {
  it('lets each token see only its own workspace, and refuses it once the app is uninstalled', async () => {
    const { code } = fake.oauth.approve(link(), { teamId: 'T0TWO', userId: 'U1CAROL' });
    const token = (await exchange({ code })).access_token!;
    const two = webClient(fake, token);
    expect((await two.auth.test()).team_id).toBe('T0TWO');
    expect((await webClient(fake).auth.test()).team_id).toBe(fake.teamId);
    await two.chat.postMessage({ channel: 'C1TWO', text: 'hi' });
    expect(fake.callsTo('chat.postMessage').at(-1)).toMatchObject({ token, team: 'T0TWO', ok: true });
    expect(await slackError(two.chat.postMessage({ channel: 'C0ONE', text: 'hi' }))).toBe('channel_not_found');
    expect(await slackError(webClient(fake).chat.postMessage({ channel: 'C1TWO', text: 'hi' }))).toBe(
      'channel_not_found',
    );
    expect(await slackError(webClient(fake).users.info({ user: 'U1CAROL' }))).toBe('user_not_found');
    expect((await two.users.info({ user: 'U1CAROL' })).user?.id).toBe('U1CAROL');
    // The events of its channels carry its team.
    const event = fake.channelMessageEvent({ channel: 'C1TWO', user: 'U1CAROL', text: 'hello' });
    expect(event.team).toBe('T0TWO');
    fake.oauth.uninstall({ teamId: 'T0TWO' });
    expect(await slackError(two.auth.test())).toBe('invalid_auth');
  });
});
