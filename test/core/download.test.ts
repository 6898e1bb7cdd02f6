/**
 * Capped downloads of users' files against a local HTTP server that counts what it sent:
 * the cap holds whether the size is declared or not, and what is refused is not read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Downloader, DownloadError, isPublicAddress } from '../../src/core/media/download.ts';

const MiB = 1024 * 1024;
let server: Server;
let base: string;
let downloader: Downloader;
/** Per path: bytes written before the response ended or the client went away. */
const sent = new Map<string, { bytes: number; closedEarly: boolean }>();
let lastHeaders: IncomingHttpHeaders = {};

/** Writes `total` bytes in 64 KiB chunks, honouring back-pressure, stopping when the client leaves. */
function stream(path: string, res: import('node:http').ServerResponse, total: number): void {
  const record = { bytes: 0, closedEarly: false };
  sent.set(path, record);
  const chunk = Buffer.alloc(64 * 1024, 7);
  res.on('close', () => {
    if (record.bytes < total) record.closedEarly = true;
  });
  const write = () => {
    while (record.bytes < total && !res.destroyed) {
      const piece = chunk.subarray(0, Math.min(chunk.length, total - record.bytes));
      record.bytes += piece.length;
      if (!res.write(piece)) return void res.once('drain', write);
    }
    if (!res.destroyed) res.end();
  };
  write();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    lastHeaders = req.headers;
    const path = req.url ?? '/';
    if (path === '/small.png') {
      res.writeHead(200, { 'content-type': 'image/png; charset=binary', 'content-length': '3' }).end(Buffer.from([1, 2, 3]));
    } else if (path === '/declared-50mb') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(50 * MiB) });
      stream(path, res, 50 * MiB);
    } else if (path === '/chunked-50mb') {
      res.writeHead(200, { 'content-type': 'image/png' });
      stream(path, res, 50 * MiB);
    } else if (path === '/login') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html><title>Sign in</title>');
    } else if (path === '/moved') {
      res.writeHead(302, { location: '/login' }).end();
    } else if (path === '/slow') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write('x'); // then nothing
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  downloader = new Downloader({ timeoutMs: 1_500 });
});

afterAll(async () => {
  await downloader.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const signal = () => new AbortController().signal;

describe('Downloader', () => {
  it('returns the bytes and the content type without its parameters, sending the given headers', async () => {
    const got = await downloader.download(`${base}/small.png`, { maxBytes: 10, name: 'small.png', signal: signal(), headers: { authorization: 'Bearer xoxb-1' } });
    expect([...got.data]).toEqual([1, 2, 3]);
    expect(got.contentType).toBe('image/png');
    expect(lastHeaders.authorization).toBe('Bearer xoxb-1');
  });

  it('refuses a declared 50 MB body before reading it: the server is cut off after a few chunks', async () => {
    const before = process.memoryUsage().arrayBuffers;
    const error = await downloader.download(`${base}/declared-50mb`, { maxBytes: 5 * MiB, name: 'big.png', signal: signal() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownloadError);
    expect((error as DownloadError).code).toBe('too_large');
    expect((error as DownloadError).message).toBe('big.png is too large (50.0 MB; files up to 5.0 MB are read).');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sent.get('/declared-50mb')!.closedEarly).toBe(true);
    expect(sent.get('/declared-50mb')!.bytes).toBeLessThan(10 * MiB);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(20 * MiB);
  });

  it('stops an undeclared (chunked) body as soon as it passes the cap', async () => {
    const error = await downloader.download(`${base}/chunked-50mb`, { maxBytes: 2 * MiB, name: 'big.gif', signal: signal() }).catch((e: unknown) => e);
    expect((error as DownloadError).code).toBe('too_large');
    expect((error as DownloadError).reason).toBe('is too large (over 2.0 MB; files up to 2.0 MB are read)');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sent.get('/chunked-50mb')!.closedEarly).toBe(true);
    expect(sent.get('/chunked-50mb')!.bytes).toBeLessThan(10 * MiB);
  });

  it('tells a web page (a login page) from a file, and does not follow redirects', async () => {
    await expect(downloader.download(`${base}/login`, { maxBytes: MiB, name: 'cat.png', signal: signal() })).rejects.toMatchObject({ code: 'html' });
    await expect(downloader.download(`${base}/moved`, { maxBytes: MiB, name: 'cat.png', signal: signal() })).rejects.toMatchObject({ code: 'http_status', status: 302 });
    await expect(downloader.download(`${base}/missing`, { maxBytes: MiB, name: 'cat.png', signal: signal() })).rejects.toMatchObject({
      code: 'http_status',
      status: 404,
      message: 'cat.png could not be downloaded (HTTP 404).',
    });
  });

  it('gives up on a download that stalls, and rejects with the caller\'s reason when the caller aborts', async () => {
    await expect(downloader.download(`${base}/slow`, { maxBytes: MiB, name: 'slow.png', signal: signal() })).rejects.toMatchObject({ code: 'timeout' });
    const controller = new AbortController();
    const pending = downloader.download(`${base}/slow`, { maxBytes: MiB, name: 'slow.png', signal: controller.signal });
    controller.abort(new Error('stopped by the user'));
    await expect(pending).rejects.toThrow('stopped by the user');
  });
});

describe('Downloader with publicOnly (URLs users type)', () => {
  const refused = (url: string) => downloader.download(url, { maxBytes: MiB, name: 'x.png', signal: signal(), publicOnly: true });

  it('refuses http, localhost, loopback, private, link-local (metadata) and mapped addresses before connecting', async () => {
    await expect(refused(`${base}/small.png`)).rejects.toMatchObject({ code: 'not_public', message: 'x.png is not an https address.' });
    for (const url of ['https://localhost/a.png', 'https://127.0.0.1/a.png', 'https://10.1.2.3/a.png', 'https://169.254.169.254/latest/meta-data', 'https://[::1]/a.png', 'https://[::ffff:192.168.0.1]/a.png']) {
      await expect(refused(url), url).rejects.toMatchObject({ code: 'not_public', message: 'x.png points to a private or local address, which the bot does not fetch.' });
    }
  });

  it('refuses a host name that resolves to a loopback address (checked when connecting, on the address used)', async () => {
    const resolved: string[] = [];
    const rebinding = new Downloader({
      lookup: (hostname, _options, callback) => {
        resolved.push(hostname);
        callback(null, [{ address: '127.0.0.1', family: 4 }]);
      },
    });
    try {
      const port = new URL(base).port;
      await expect(rebinding.download(`https://images.example:${port}/a.png`, { maxBytes: MiB, name: 'x.png', signal: signal(), publicOnly: true })).rejects.toMatchObject({ code: 'not_public' });
      expect(resolved).toEqual(['images.example']);
    } finally {
      await rebinding.close();
    }
  });

  it('tells public from non-public addresses', () => {
    expect(isPublicAddress('93.184.216.34')).toBe(true);
    expect(isPublicAddress('2606:4700::1111')).toBe(true);
    for (const address of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', 'not an ip']) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });
});
