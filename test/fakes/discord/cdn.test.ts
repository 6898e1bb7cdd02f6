/**
 * FakeDiscord: the CDN. Attachments of user messages carry signed URLs on the fake's origin,
 * as discord.js sees them; only the exact signature is served; bytes stream with
 * backpressure, generated ones never held in memory; every download is recorded.
 */
import { get } from 'node:http';
import { GatewayIntentBits as I } from 'discord.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FakeDiscord, UserAttachmentOptions } from '../discord.ts';
import {
  api,
  cleanup,
  connectBot,
  deferred,
  json,
  MESSAGE_CONTENT,
  nextMessage,
  startClient,
  startFake,
  webhookPath,
} from './test-helpers.ts';

afterEach(async () => {
  vi.useRealTimers();
  await cleanup();
});

const MiB = 1024 * 1024;

/** Posts a message with one attachment and returns the stored attachment. */
function attach(fake: FakeDiscord, files: UserAttachmentOptions[]) {
  return fake.postUserMessage({ channelId: fake.channelList[0]!.id, content: 'file', attachments: files }).attachments;
}

/** Status, headers and body of a GET with node:http (sees transfer-encoding as sent). */
function rawGet(
  url: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

describe('FakeDiscord CDN URLs', () => {
  it("gives user attachments signed url and proxy_url on the fake's origin, which discord.js exposes and which serve the bytes without Authorization", async () => {
    const fake = await startFake({ privilegedIntents: MESSAGE_CONTENT });
    const client = await startClient(fake, [I.Guilds, I.GuildMessages, I.MessageContent]);
    const data = Buffer.from('plain text attachment\n'.repeat(100));
    const seen = nextMessage(client);
    const [stored] = attach(fake, [{ filename: 'notes one.txt', data }]);
    const attachment = (await seen).attachments.first()!;
    const channelId = fake.channelList[0]!.id;
    const signed = '\\?ex=[0-9a-f]{8}&is=[0-9a-f]{8}&hm=[0-9a-f]{64}&$';
    expect(attachment.url).toMatch(
      new RegExp(
        `^${fake.apiUrl.replace('/api', '')}/attachments/${channelId}/${stored!.id}/notes%20one\\.txt${signed}`,
      ),
    );
    expect(attachment.proxyURL).toMatch(
      new RegExp(
        `^${fake.apiUrl.replace('/api', '')}/media/attachments/${channelId}/${stored!.id}/notes%20one\\.txt${signed}`,
      ),
    );
    expect([attachment.size, attachment.contentType]).toEqual([data.length, 'text/plain; charset=utf-8']);

    for (const url of [attachment.url, attachment.proxyURL]) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-length')).toBe(String(data.length));
      expect(Buffer.compare(Buffer.from(await res.arrayBuffer()), data)).toBe(0);
    }
    await vi.waitFor(() => expect(fake.downloads.filter((d) => d.completed)).toHaveLength(2));
    expect(fake.downloads.map((d) => [d.via, d.attachmentId, d.bytesSent, d.completed, d.aborted])).toEqual([
      ['cdn', stored!.id, data.length, true, false],
      ['media', stored!.id, data.length, true, false],
    ]);
  });

  it('answers anything but the exact, unexpired signature with 404 "This content is no longer available.", for user and bot uploads alike', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const [stored] = attach(fake, [{ filename: 'a.png', data: Buffer.from('png bytes'), contentType: 'image/png' }]);
    const url = new URL(stored!.url);
    const gone = async (href: string) => {
      const res = await fetch(href);
      expect([res.status, await res.text()]).toEqual([404, 'This content is no longer available.']);
    };
    await gone(`${url.origin}${url.pathname}`);
    await gone(stored!.url.replace(/hm=[0-9a-f]/, (m) => (m.endsWith('0') ? 'hm=1' : 'hm=0')));
    await gone(stored!.url.replace('/a.png?', '/b.png?'));
    const [sibling] = attach(fake, [{ filename: 'a.png', data: Buffer.from('other') }]);
    await gone(stored!.url.replace(stored!.id, sibling!.id));

    const ix = await deferred(fake);
    const form = new FormData();
    form.append('payload_json', JSON.stringify({ content: 'upload', attachments: [{ id: 0 }] }));
    form.append('files[0]', new Blob([Buffer.from('bot bytes')]), 'bot.txt');
    const uploaded = (
      (await json(await api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'PATCH', body: form })))
        .attachments as Array<{ url: string }>
    )[0]!;
    expect(await (await fetch(uploaded.url)).text()).toBe('bot bytes');
    await gone(uploaded.url.split('?')[0]!);

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 25 * 60 * 60 * 1000);
    await gone(stored!.url);
    vi.useRealTimers();
    expect((await fetch(stored!.url)).status).toBe(200);
    fake.message(fake.messagesIn(fake.channelList[0]!.id)[0]!.id)!.deleted = true;
    await gone(stored!.url);
    expect(fake.downloads.map((d) => d.filename)).toEqual(['bot.txt', 'a.png']);
  });

  it('tells the real length in Content-Length when declaredSize lies, omits it for a chunked attachment, and answers HEAD without a download', async () => {
    const fake = await startFake();
    const [lying, chunked] = attach(fake, [
      { filename: 'small.bin', data: Buffer.alloc(1000, 7), declaredSize: 10 },
      { filename: 'chunked.bin', stream: { bytes: 200_000 }, chunked: true },
    ]);
    expect(lying!.size).toBe(10);
    const small = await rawGet(lying!.url);
    expect([small.headers['content-length'], small.body.length]).toEqual(['1000', 1000]);
    const streamed = await rawGet(chunked!.url);
    expect(streamed.headers['content-length']).toBeUndefined();
    expect(streamed.headers['transfer-encoding']).toBe('chunked');
    expect(streamed.body.length).toBe(200_000);
    const head = await fetch(lying!.url, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-length')]).toEqual([200, '1000']);
    expect(fake.downloads.map((d) => d.filename)).toEqual(['small.bin', 'chunked.bin']);
  });
});

describe('FakeDiscord CDN streaming', () => {
  it('holds no bytes of a 50 MB stream attachment: posting it does not grow the process by anything like 50 MB', async () => {
    const fake = await startFake();
    const before = process.memoryUsage();
    const [big] = attach(fake, [{ filename: 'big.bin', stream: { bytes: 50 * MiB } }]);
    const after = process.memoryUsage();
    expect(big!.size).toBe(50 * MiB);
    expect(after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers)).toBeLessThan(5 * MiB);
  });

  it('serves a generated attachment in full as the same deterministic bytes every time, and records a completed download', async () => {
    const fake = await startFake();
    const [file] = attach(fake, [{ filename: 'three.bin', stream: { bytes: 3 * MiB + 123 } }]);
    const first = Buffer.from(await (await fetch(file!.url)).arrayBuffer());
    const second = Buffer.from(await (await fetch(file!.proxyUrl)).arrayBuffer());
    expect(first.length).toBe(3 * MiB + 123);
    expect(Buffer.compare(first, second)).toBe(0);
    expect(Buffer.compare(first, file!.data)).toBe(0);
    expect(first.subarray(0, 64).toString('ascii')).toMatch(/^genbot fake-discord CDN stream/);
    await vi.waitFor(() => expect(fake.downloads.every((d) => d.completed)).toBe(true));
    expect(fake.downloads.map((d) => [d.bytesSent, d.aborted])).toEqual([
      [3 * MiB + 123, false],
      [3 * MiB + 123, false],
    ]);
  });

  it('sends only what a slow client reads (backpressure) and stops when it aborts: the download is recorded as aborted, cut short', async () => {
    const fake = await startFake();
    const [big] = attach(fake, [{ filename: 'big.bin', stream: { bytes: 50 * MiB } }]);
    const controller = new AbortController();
    const res = await fetch(big!.url, { signal: controller.signal });
    expect(res.headers.get('content-length')).toBe(String(50 * MiB));
    const reader = res.body!.getReader();
    let read = 0;
    while (read < 256 * 1024) read += (await reader.read()).value!.length;
    await new Promise((r) => setTimeout(r, 300));
    const download = fake.downloads[0]!;
    expect(download.bytesSent).toBeLessThan(20 * MiB);
    const ended = fake.waitFor('download');
    controller.abort();
    const [recorded] = await ended;
    expect(recorded).toBe(download);
    expect([download.aborted, download.completed]).toEqual([true, false]);
    const sent = download.bytesSent;
    await new Promise((r) => setTimeout(r, 100));
    expect(download.bytesSent).toBe(sent);
    expect(sent).toBeLessThan(50 * MiB);
  });
});
