/**
 * The fake Slack's uninstall (uninstall.ts): the two events Slack sends, in the Events API
 * envelope, over HTTP; the bot token refused `token_revoked` afterwards; no new event of the
 * workspace, but one already on its way.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack } from '../slack.ts';

let slack: FakeSlack;
let received: Array<Record<string, unknown>> = [];
const server = createServer((req: IncomingMessage, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    received.push(JSON.parse(body) as Record<string, unknown>);
    res.writeHead(200).end();
  });
});
let botUrl: string;

beforeAll(async () => {
  slack = await FakeSlack.start({ channels: [{ id: 'C0GONE', name: 'gone' }] });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  botUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await slack.close();
  server.close();
});

describe('FakeSlack uninstall', () => {
  it('sends app_uninstalled and tokens_revoked as Slack does, refuses the bot token token_revoked, and sends no new event of the workspace', async () => {
    const callAuthTest = async () =>
      (await fetch(`${slack.apiUrl}auth.test`, {
        method: 'POST',
        headers: { authorization: `Bearer ${slack.botToken}` },
      }).then((r) => r.json())) as { ok: boolean; error?: string };
    expect((await callAuthTest()).ok).toBe(true);
    const onItsWay = slack.mentionEvent({ channel: 'C0GONE', user: 'U0BOB', text: 'hello' });
    const { appUninstalled, tokensRevoked } = slack.uninstallApp();
    expect(slack.uninstalled).toBe(true);
    expect(await callAuthTest()).toEqual({ ok: false, error: 'token_revoked' });

    received = [];
    for (const event of [tokensRevoked, appUninstalled])
      expect(await slack.sendEvent(botUrl, event)).toMatchObject({ status: 200, ackedInTime: true });
    expect(received).toEqual([
      expect.objectContaining({
        type: 'event_callback',
        team_id: slack.teamId,
        api_app_id: slack.appId,
        event_id: expect.stringMatching(/^Ev/),
        event: { type: 'tokens_revoked', tokens: { oauth: [], bot: [slack.botUserId] } },
      }),
      expect.objectContaining({ team_id: slack.teamId, event: { type: 'app_uninstalled' } }),
    ]);
    // The mention sent before the uninstall may still arrive; a new one is never sent.
    await slack.sendEvent(botUrl, onItsWay);
    const fresh = slack.mentionEvent({ channel: 'C0GONE', user: 'U0BOB', text: 'again' });
    await expect(slack.sendEvent(botUrl, fresh)).rejects.toThrow(/uninstalled the app/);
  });
});
