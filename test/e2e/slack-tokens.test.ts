/**
 * End-to-end tests of issue 16 (part 5), tokens only where they belong: the whole bot
 * (startTestBot, real @slack/bolt and undici) against the fake Slack and the fake service.
 *
 * The Slack bot token goes only over https on port 443 to Slack's file hosts (or to the fake
 * Slack, SLACK_API_URL's origin). To see where it goes, the bot's downloads are given a
 * dispatcher (the Downloader's `dispatcher` option) whose every connection is recorded, host
 * and port, and — unless it is for the fake Slack — sent to a recording HTTP server standing in
 * for every other host on every port (`files.slack.com`, `files.slack.com:8443`,
 * `evil.example`, `x.slack.com:8080`…), which records every request with its Authorization
 * header and answers a PNG. The bot cannot resolve names here, so this is also how those names
 * reach it. A typed `reference_image_url` (/imagine) is held to public addresses before it is
 * passed on to the service.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { connect } from 'node:net';
import sharp from 'sharp';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import type { CommandOutcome } from '../../src/core/command.ts';
import { Downloader, type LookupAll } from '../../src/core/media/download.ts';
import { listenOnLoopback } from '../fakes/listen.ts';
import type { FakeService } from '../fakes/service.ts';
import { type FakeSlack, unescapeSlack } from '../fakes/slack.ts';
import { slackChannels, useE2E } from '../helpers/e2e.ts';
import type { TestBot } from './harness.ts';

const CHANNELS = { typed: 'C0TYPEDLINKS', event: 'C0EVENTFILES', imagine: 'C0IMAGINEREF' } as const;

let service: FakeService;
let slack: FakeSlack;
let testBot: TestBot;
let botUrl: string;
let recorder: Server;
let recorderPort: number;
let png: Buffer;

/** Every request the recording server received (any host, any port). */
const received: Array<{ host: string; path: string; authorization: string | undefined }> = [];
/** Every connection the bot's downloads opened, as `protocol//host:port`, the fake Slack's too. */
const connections: string[] = [];
/** The fake service's /v1/images/generations requests. */
const imageRequests = () => service.requests.filter((r) => r.route === 'images' && r.method === 'POST');

/** Names this test's resolver knows (the bot's `lookup`, used to check links it passes on). */
const NAMES: Record<string, string> = { 'metadata.example': '169.254.169.254', 'rebind.example': 'fd00::1' };
const lookup: LookupAll = (hostname, _options, callback) => {
  const address = NAMES[hostname];
  if (address) return callback(null, [{ address, family: address.includes(':') ? 6 : 4 }]);
  return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
};

/** Starts the recording server (any host the bot's downloads reach but the fake Slack); resolves with its cleanup. */
async function startRecorder(): Promise<() => Promise<unknown>> {
  png = await sharp({ create: { width: 16, height: 16, channels: 3, background: { r: 0, g: 0, b: 255 } } })
    .png()
    .toBuffer();
  const listening = await listenOnLoopback();
  recorder = listening.server;
  recorderPort = listening.port;
  recorder.on(
    'request',
    (req: { headers: IncomingHttpHeaders; url?: string }, res: import('node:http').ServerResponse) => {
      received.push({ host: req.headers.host ?? '', path: req.url ?? '', authorization: req.headers.authorization });
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(png.length) }).end(png);
    },
  );
  return async () => {
    recorder.closeAllConnections();
    await new Promise((resolve) => recorder.close(resolve));
  };
}

/** Gives the bot a downloader whose connections go to the fake Slack or else to the recorder, resolved by `lookup`. */
async function routeDownloads(): Promise<void> {
  const slackOrigin = new URL(slack.baseUrl);
  const dispatcher = new Agent({
    connect: (options, callback) => {
      connections.push(`${options.protocol}//${options.hostname}:${options.port}`);
      const toFakeSlack = options.hostname === slackOrigin.hostname && String(options.port) === slackOrigin.port;
      // Plain TCP whatever the scheme: the recorder reads what would have been sent inside TLS.
      const socket = connect({ host: '127.0.0.1', port: toFakeSlack ? Number(slackOrigin.port) : recorderPort });
      socket.once('connect', () => callback(null, socket));
      socket.once('error', (error) => callback(error, null));
    },
  });
  await testBot.bot.core.downloader.close();
  testBot.bot.core.downloader = new Downloader({ dispatcher, lookup, timeoutMs: 5_000 });
}

useE2E(
  {
    service: { apiKey: `sk-fake-${randomBytes(16).toString('hex')}` },
    slack: { channels: slackChannels(CHANNELS) },
    beforeBot: startRecorder,
    bot: { env: { DEFAULT_VISION_MODEL: 'fake-vision' } },
  },
  async (e2e) => {
    ({ service, slack, bot: testBot, botUrl } = e2e);
    await routeDownloads();
  },
);

/** Sends a signed slash command as U0ALICE and waits until the bot finished it. */
async function run(command: string, text: string, channel: string): Promise<CommandOutcome> {
  const done = testBot.outcomes((o) => o.conversationId.endsWith(`:${channel}`)).then(([outcome]) => outcome!);
  const ack = await slack.sendSlashCommand(botUrl, { command, text, channel_id: channel, user_id: 'U0ALICE' });
  expect(ack.ackedInTime).toBe(true);
  return done;
}

/** What the user read last in `channel` (the ephemeral answer of a refused command). */
function lastAnswer(channel: string): string {
  const post = slack
    .responsePosts()
    .filter((p) => p.channel === channel)
    .at(-1)!;
  return unescapeSlack(post.text);
}

describe("the Slack bot token goes only to Slack's file hosts", () => {
  it("typed links: the token goes only with a Slack file's own download (files.info), never to http, another port, another host or a look-alike", async () => {
    const start = received.length;
    const startConnections = connections.length;
    const links = [
      'http://files.slack.com/files-pri/T0-F0HTTP/leak.png',
      'https://files.slack.com:8443/files-pri/T0-F0PORT/leak.png',
      'https://evil.example/files-pri/T0-F0EVIL/leak.png',
      'http://x.slack.com:8080/files-pri/T0-F0TEAM/leak.png',
      'https://x.slack.com/files-pri/T0-F0TEAM/leak.png',
      'https://files.slack.com.evil.example/files-pri/T0-F0LOOK/leak.png',
      'https://files.slack.com@evil.example/files-pri/T0-F0USER/leak.png',
    ];
    // The one place the token belongs (the control): a file of Alice's, named by its link on
    // files.slack.com, is looked up with files.info and downloaded from where Slack says it is.
    const real = slack.addUserFile({ name: 'real.png', mimetype: 'image/png', data: png, user: 'U0ALICE' });
    links.push(`https://files.slack.com/files-pri/${slack.teamId}-${real.id}/real.png`);
    const slackDownloads = slack.downloads.length;
    for (const link of links) {
      const outcome = await run('/chat', `What is this? --image ${link}`, CHANNELS.typed);
      expect(outcome.command, link).toBe('chat');
    }
    expect(slack.downloads.slice(slackDownloads)).toMatchObject([{ fileId: real.id, authorized: true }]);
    const requests = received.slice(start);
    // No request that reached a stand-in carried the token.
    expect(requests.filter((r) => r.authorization !== undefined)).toEqual([]);
    // The links off Slack that are public https were fetched, without any credential; http ones were refused before connecting.
    expect(requests.map((r) => r.host).sort()).toEqual(
      ['evil.example', 'evil.example', 'files.slack.com.evil.example', 'files.slack.com:8443', 'x.slack.com'].sort(),
    );
    expect(
      connections
        .slice(startConnections)
        .filter((c) => c.startsWith('http:') && c !== `http://${new URL(slack.baseUrl).host}`),
    ).toEqual([]);
  });

  it("an app_mention whose files' url_private_download point off Slack: fetched without the token (public https only), never with it; its file on Slack still with it", async () => {
    const start = received.length;
    const files = [
      slack.addUserFile({ name: 'elsewhere.png', mimetype: 'image/png', data: png, user: 'U0ALICE' }),
      slack.addUserFile({ name: 'other-port.png', mimetype: 'image/png', data: png, user: 'U0ALICE' }),
      slack.addUserFile({ name: 'plain.png', mimetype: 'image/png', data: png, user: 'U0ALICE' }),
      slack.addUserFile({ name: 'here.png', mimetype: 'image/png', data: png, user: 'U0ALICE' }),
    ];
    const event = slack.mentionEvent({ channel: CHANNELS.event, user: 'U0ALICE', text: 'What are these?', files });
    const shared = event.files as Array<Record<string, unknown>>;
    const offSlack = [
      'https://evil.example/files-pri/T0-F0EVENT/download/elsewhere.png',
      'https://files.slack.com:8443/files-pri/T0-F0EVENT/download/other-port.png',
      'http://files.slack.com/files-pri/T0-F0EVENT/download/plain.png',
    ];
    offSlack.forEach((url, i) => Object.assign(shared[i]!, { url_private_download: url, url_private: url }));
    const done = testBot.outcomes(
      (o) =>
        o.command === 'mention' && o.conversationId === `slack:${slack.teamId}:${CHANNELS.event}:${event.ts as string}`,
    );
    const ack = await slack.sendEvent(botUrl, event);
    expect(ack).toMatchObject({ status: 200, ackedInTime: true });
    await done;
    const requests = received.slice(start);
    expect(requests.map((r) => [r.host, r.path, r.authorization]).sort()).toEqual([
      ['evil.example', '/files-pri/T0-F0EVENT/download/elsewhere.png', undefined],
      ['files.slack.com:8443', '/files-pri/T0-F0EVENT/download/other-port.png', undefined],
    ]);
    // The file left on the fake Slack (SLACK_API_URL's origin) was downloaded with the token; the others never reached it.
    expect(
      slack.downloads
        .filter((d) => files.some((f) => f.id === d.fileId))
        .map((d) => [d.fileId, d.authorized, d.status]),
    ).toEqual([[files[3]!.id, true, 200]]);
  });
});

describe('a typed reference_image_url is held to public addresses before the service gets it', () => {
  it('refuses metadata, unique-local, localhost, NAT64 and names resolving to private addresses, with a sentence, sending nothing to the service; still passes on a public link', async () => {
    const before = imageRequests().length;
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00::1]/a.png',
      'http://localhost/a.png',
      'http://[64:ff9b::a9fe:a9fe]/',
      'https://metadata.example/latest',
      'https://rebind.example/a.png',
    ]) {
      const outcome = await run('/imagine', `a fox --reference_image_url ${url}`, CHANNELS.imagine);
      expect(outcome, url).toMatchObject({ ok: false, errorCode: 'invalid_option' });
      expect(lastAnswer(CHANNELS.imagine), url).toBe(
        '`reference_image_url` points to a private or local address, which the bot does not pass on to the service. Give the public address of an image, e.g. https://example.com/photo.png.',
      );
    }
    expect(imageRequests().length).toBe(before);
    expect(JSON.stringify(service.requests)).not.toMatch(
      /169\.254|fd00|localhost|64:ff9b|metadata\.example|rebind\.example/,
    );

    // A public link (one that does not resolve here, as on this machine) is still passed on.
    const outcome = await run(
      '/imagine',
      'a fox --reference_image_url https://example.com/photos/ref.png',
      CHANNELS.imagine,
    );
    expect(outcome).toMatchObject({ ok: true });
    expect((imageRequests().at(-1)!.body as { reference_image_url?: string }).reference_image_url).toBe(
      'https://example.com/photos/ref.png',
    );
  });
});
