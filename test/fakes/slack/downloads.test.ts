/**
 * Tests of users' files and file downloads: `url_private` / `url_private_download` serve the
 * bytes only to the bot token with `files:read` (otherwise Slack's redirect to its sign-in
 * page), with a true Content-Length; generated files are streamed lazily and stop when the
 * client goes away; files.info describes files as Slack does, with where they are shared.
 */
import { execFile } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_BOT_SCOPES, FakeSlack, generatedBytes } from '../slack.ts';
import { slackError, webClient } from './test-helpers.ts';

let fake: FakeSlack;
const auth = (token = fake.botToken) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  fake = await FakeSlack.start({
    channels: [
      { id: 'C0ONE', name: 'one' },
      { id: 'G0TEAM', name: 'team', isPrivate: true, members: ['U0ALICE', 'U0BOB'] },
      { id: 'G0NOBOT', name: 'nobot', isPrivate: true, members: ['U0BOB'], botIsMember: false },
    ],
  });
});
afterEach(() => {
  fake.reset();
  fake.setScopes([...DEFAULT_BOT_SCOPES]);
});
afterAll(async () => {
  await fake.close();
});

const png = Buffer.from('\x89PNG\r\n\x1a\n fake image bytes', 'latin1');

describe("users' files", () => {
  it('addUserFile describes the file as Slack does, with URLs on the fake; files.info answers it', async () => {
    const file = fake.addUserFile({ name: 'cat photo.png', mimetype: 'image/png', data: png, user: 'U0BOB' });
    expect(file.id).toMatch(/^F[0-9A-F]{10}$/);
    // Kept apart from the bot's uploads (`files`), which tests count.
    expect([fake.userFiles.get(file.id), fake.files.size]).toEqual([file, 0]);
    expect(file).toMatchObject({
      origin: 'user',
      filename: 'cat photo.png',
      length: png.length,
      size: png.length,
      filetype: 'png',
      user: 'U0BOB',
      urlPrivate: `${fake.baseUrl}/files-pri/${fake.teamId}-${file.id}/cat%20photo.png`,
      urlPrivateDownload: `${fake.baseUrl}/files-pri/${fake.teamId}-${file.id}/download/cat%20photo.png`,
      permalink: `${fake.baseUrl}/files/U0BOB/${file.id}/cat%20photo.png`,
    });
    const info = await webClient(fake).files.info({ file: file.id });
    expect(info.file).toMatchObject({
      id: file.id,
      name: 'cat photo.png',
      title: 'cat photo.png',
      mimetype: 'image/png',
      filetype: 'png',
      pretty_type: 'PNG',
      user: 'U0BOB',
      size: png.length,
      mode: 'hosted',
      url_private: file.urlPrivate,
      url_private_download: file.urlPrivateDownload,
      permalink: file.permalink,
    });
    expect(await slackError(webClient(fake).files.info({ file: 'F0000000000' }))).toBe('file_not_found');
  });

  it("files.info names the owner and where the file is shared, as far as the bot sees: a file shared nowhere is its owner's alone", async () => {
    const file = fake.addUserFile({ name: 'plan.csv', mimetype: 'text/csv', data: png, user: 'U0BOB' });
    const info = async () => (await webClient(fake).files.info({ file: file.id })).file!;
    expect(await info()).toMatchObject({ user: 'U0BOB', channels: [], groups: [], ims: [] });
    expect((await info()).shares).toBeUndefined();

    const inPublic = fake.shareUserFile(file, 'C0ONE', { text: 'the plan' });
    fake.shareUserFile(file, 'G0TEAM');
    fake.shareUserFile(file, 'G0NOBOT');
    const dm = fake.openIm('U0BOB');
    fake.shareUserFile(file, dm.id);
    const shared = await info();
    expect(shared).toMatchObject({ channels: ['C0ONE'], groups: ['G0TEAM'], ims: [dm.id] });
    expect(Object.keys(shared.shares!.public!)).toEqual(['C0ONE']);
    expect(shared.shares!.public!.C0ONE).toMatchObject([{ ts: inPublic.ts, channel_name: 'one' }]);
    // The private channel without the bot is not listed to it.
    expect(Object.keys(shared.shares!.private!)).toEqual(['G0TEAM', dm.id]);
    expect(fake.messages('C0ONE').at(-1)).toMatchObject({ user: 'U0BOB', files: [file.id], text: 'the plan' });

    const alices = fake.addUserFile({ name: 'a.png', mimetype: 'image/png', data: png, user: 'U0ALICE' });
    expect(() => fake.shareUserFile(alices, 'G0NOBOT')).toThrow(/U0ALICE is not a member of G0NOBOT/);
  });

  it('refuses a file without bytes or with both data and stream (a test mistake)', () => {
    expect(() => fake.addUserFile({ name: 'a', mimetype: 'text/plain' })).toThrow(/exactly one of data and stream/);
    expect(() => fake.addUserFile({ name: 'a', mimetype: 'text/plain', data: png, stream: { bytes: 1 } })).toThrow(
      /exactly one/,
    );
    expect(() => fake.addUserFile({ name: 'a', mimetype: 'text/plain', data: png, user: 'U0NOBODY' })).toThrow(
      /unknown user/,
    );
  });
});

describe('downloads with the bot token and files:read', () => {
  it('url_private and url_private_download answer the bytes with the file type and the real Content-Length', async () => {
    const file = fake.addUserFile({ name: 'cat.png', mimetype: 'image/png', data: png });
    for (const url of [file.urlPrivate, file.urlPrivateDownload]) {
      const res = await fetch(url, { headers: auth() });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(res.headers.get('content-length')).toBe(String(png.length));
      expect(Buffer.from(await res.arrayBuffer()).equals(png)).toBe(true);
    }
    expect((await fetch(file.urlPrivateDownload, { headers: auth() })).headers.get('content-disposition')).toBe(
      'attachment; filename="cat.png"',
    );
    await vi.waitFor(() =>
      expect(
        fake.downloads.map((d) => [d.fileId, d.authorized, d.status, d.bytesSent, d.completed, d.aborted]),
      ).toEqual(Array(3).fill([file.id, true, 200, png.length, true, false])),
    );
  });

  it("a file whose size lies: files.info says the claimed size, the download's Content-Length the real one", async () => {
    const file = fake.addUserFile({ name: 'small.png', mimetype: 'image/png', data: png, size: 50_000_000 });
    expect((await webClient(fake).files.info({ file: file.id })).file?.size).toBe(50_000_000);
    const res = await fetch(file.urlPrivateDownload, { headers: auth() });
    expect(res.headers.get('content-length')).toBe(String(png.length));
    expect((await res.arrayBuffer()).byteLength).toBe(png.length);
  });

  it('HEAD answers the headers only; an unknown file is 404; a permalink is a web page, never the bytes', async () => {
    const file = fake.addUserFile({ name: 'cat.png', mimetype: 'image/png', data: png });
    const head = await fetch(file.urlPrivateDownload, { method: 'HEAD', headers: auth() });
    expect([head.status, head.headers.get('content-length'), (await head.arrayBuffer()).byteLength]).toEqual([
      200,
      String(png.length),
      0,
    ]);
    const unknown = await fetch(`${fake.baseUrl}/files-pri/${fake.teamId}-F0000000000/download/x.png`, {
      headers: auth(),
    });
    expect([unknown.status, unknown.headers.get('content-type')]).toEqual([404, 'text/html; charset=utf-8']);
    const page = await fetch(file.permalink, { headers: auth() });
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
  });

  it("the bot's own uploads are served the same way", async () => {
    await webClient(fake).filesUploadV2({ channel_id: 'C0ONE', file_uploads: [{ file: png, filename: 'fox.png' }] });
    const [file] = [...fake.files.values()];
    const res = await fetch(file!.urlPrivateDownload, { headers: auth() });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(png)).toBe(true);
  });
});

describe('downloads Slack refuses: a redirect to the sign-in page instead of the file', () => {
  it('without a token, with another token, with the app token, or without files:read: HTTP 302 to /?redir=…; followed, a 200 text/html page', async () => {
    const file = fake.addUserFile({ name: 'cat.png', mimetype: 'image/png', data: png });
    const attempts: Array<Record<string, string>> = [{}, auth('xoxb-someone-else'), auth(fake.appToken)];
    for (const headers of attempts) {
      const res = await fetch(file.urlPrivateDownload, { headers, redirect: 'manual' });
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(
        `${fake.baseUrl}/?redir=${encodeURIComponent(new URL(file.urlPrivateDownload).pathname)}`,
      );
      expect(await res.text()).toMatch(/^<a href=".*">Found<\/a>\.$/);
    }
    fake.setScopes(DEFAULT_BOT_SCOPES.filter((s) => s !== 'files:read'));
    const noScope = await fetch(file.urlPrivate, { headers: auth(), redirect: 'manual' });
    expect(noScope.status).toBe(302);
    // What a client that follows redirects (fetch's default) sees: a sign-in page, not an image.
    const followed = await fetch(file.urlPrivateDownload, { headers: auth() });
    expect([followed.status, followed.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect(await followed.text()).toContain(`Sign in to ${fake.teamDomain}`);
    expect(fake.downloads.map((d) => [d.authorized, d.status, d.bytesSent])).toEqual(Array(5).fill([false, 302, 0]));
    // files.info says so in the Web API's own way.
    expect(await slackError(webClient(fake).files.info({ file: file.id }))).toBe('missing_scope');
  });
});

describe('generated files', () => {
  const MB = 1024 * 1024;

  it('a 50 MB file downloads in full with deterministic content, and serving it does not grow this process by 50 MB', async () => {
    const file = fake.addUserFile({
      name: 'big.bin',
      mimetype: 'application/octet-stream',
      stream: { bytes: 50 * MB },
    });
    expect(file.data).toBeUndefined();
    const used = () => {
      const m = process.memoryUsage();
      return { rss: m.rss, heap: m.heapUsed, buffers: m.arrayBuffers + m.external };
    };
    const before = used();
    const peak = { ...before };
    const sampler = setInterval(() => {
      const now = used();
      for (const k of ['rss', 'heap', 'buffers'] as const) peak[k] = Math.max(peak[k], now[k]);
    }, 5);
    // The client runs in another process, so that only the fake's memory is measured here.
    const script = `fetch(process.argv[1], { headers: { authorization: 'Bearer ' + process.argv[2] } }).then(async (r) => {
      const parts = []; let n = 0;
      for await (const c of r.body) { if (n < 1000) parts.push(Buffer.from(c)); n += c.length; }
      console.log(JSON.stringify({ n, length: r.headers.get('content-length'), head: Buffer.concat(parts).subarray(0, 1000).toString('hex') }));
    })`;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['-e', script, file.urlPrivateDownload, fake.botToken], (error, stdout) =>
        error ? reject(error) : resolve(stdout),
      ),
    );
    clearInterval(sampler);
    const result = JSON.parse(out) as { n: number; length: string; head: string };
    expect(result).toEqual({ n: 50 * MB, length: String(50 * MB), head: generatedBytes(0, 1000).toString('hex') });
    // Heap and buffers (not RSS, which moves by tens of MB with whatever else the worker does).
    expect(peak.heap + peak.buffers - before.heap - before.buffers).toBeLessThan(16 * MB);
    await vi.waitFor(() =>
      expect(fake.downloads.at(-1)).toMatchObject({
        authorized: true,
        bytesSent: 50 * MB,
        completed: true,
        aborted: false,
      }),
    );
  });

  it('stops writing as soon as the client aborts: recorded as aborted, far fewer bytes sent than the file has', async () => {
    const file = fake.addUserFile({
      name: 'huge.bin',
      mimetype: 'application/octet-stream',
      stream: { bytes: 500 * MB },
    });
    const controller = new AbortController();
    const res = await fetch(file.urlPrivateDownload, { headers: auth(), signal: controller.signal });
    expect(res.headers.get('content-length')).toBe(String(500 * MB));
    const reader = res.body!.getReader();
    let received = 0;
    while (received < MB) received += (await reader.read()).value?.length ?? 0;
    controller.abort();
    await vi.waitFor(() => expect(fake.downloads.at(-1)).toMatchObject({ aborted: true, completed: false }));
    const sent = fake.downloads.at(-1)!.bytesSent;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(fake.downloads.at(-1)!.bytesSent).toBe(sent);
    expect(sent).toBeLessThan(32 * MB);
  });
});
