/**
 * Capped downloads of users' files against a local HTTP server that counts what it sent:
 * the cap holds whether the size is declared or not, and what is refused is not read. The
 * public-address guard (every non-public range of the IANA special-purpose registries, in every
 * spelling) refuses before connecting, and guards the links the bot passes on.
 */

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { english } from '../../src/core/i18n/words.ts';
import { isPublicAddress } from '../../src/core/media/addresses.ts';
import { checkForwardableUrl, DownloadError, Downloader, type LookupAll } from '../../src/core/media/download.ts';
import { reasonLine } from '../../src/core/media/reasons.ts';

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
      res
        .writeHead(200, { 'content-type': 'image/png; charset=binary', 'content-length': '3' })
        .end(Buffer.from([1, 2, 3]));
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
    } else if (path === '/ranged-50mb') {
      // Answers a range as Discord's CDN does; the bytes are 0, 1, 2 … 250, 0, 1 …
      const total = 50 * MiB;
      const match = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
      const [start, end] = match ? [Number(match[1]), Math.min(Number(match[2]), total - 1)] : [0, total - 1];
      if (start >= total) return void res.writeHead(416, { 'content-range': `bytes */${total}` }).end();
      res.writeHead(match ? 206 : 200, {
        'content-type': 'text/plain',
        'content-length': String(end - start + 1),
        ...(match ? { 'content-range': `bytes ${start}-${end}/${total}` } : {}),
      });
      sent.set(path, { bytes: end - start + 1, closedEarly: false });
      res.end(Buffer.from(Array.from({ length: end - start + 1 }, (_, i) => (start + i) % 251)));
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
    const got = await downloader.download(`${base}/small.png`, {
      maxBytes: 10,
      name: 'small.png',
      signal: signal(),
      headers: { authorization: 'Bearer xoxb-1' },
    });
    expect([...got.data]).toEqual([1, 2, 3]);
    expect(got.contentType).toBe('image/png');
    expect(lastHeaders.authorization).toBe('Bearer xoxb-1');
  });

  it('refuses a declared 50 MB body before reading it: the server is cut off after a few chunks', async () => {
    const before = process.memoryUsage().arrayBuffers;
    const error = await downloader
      .download(`${base}/declared-50mb`, { maxBytes: 5 * MiB, name: 'big.png', signal: signal() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownloadError);
    expect((error as DownloadError).code).toBe('too_large');
    expect((error as DownloadError).message).toBe('big.png is too large (50.0 MB; files up to 5.0 MB are read).');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sent.get('/declared-50mb')!.closedEarly).toBe(true);
    expect(sent.get('/declared-50mb')!.bytes).toBeLessThan(10 * MiB);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(20 * MiB);
  });

  it('stops an undeclared (chunked) body as soon as it passes the cap', async () => {
    const error = await downloader
      .download(`${base}/chunked-50mb`, { maxBytes: 2 * MiB, name: 'big.gif', signal: signal() })
      .catch((e: unknown) => e);
    expect((error as DownloadError).code).toBe('too_large');
    expect(english.say(reasonLine((error as DownloadError).reason))).toBe(
      'too large (over 2.0 MB; files up to 2.0 MB are read)',
    );
    expect((error as DownloadError).message).toBe('big.gif is too large (over 2.0 MB; files up to 2.0 MB are read).');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sent.get('/chunked-50mb')!.closedEarly).toBe(true);
    expect(sent.get('/chunked-50mb')!.bytes).toBeLessThan(10 * MiB);
  });

  it('a range: asks for those bytes only (206), or cuts them from a whole file (200) and reads no further', async () => {
    const ranged = await downloader.download(`${base}/ranged-50mb`, {
      maxBytes: 20 * MiB,
      name: 'log.txt',
      signal: signal(),
      range: { start: 1_000, length: 300 },
    });
    expect(lastHeaders.range).toBe('bytes=1000-1299');
    expect([...ranged.data]).toEqual(Array.from({ length: 300 }, (_, i) => (1_000 + i) % 251));
    expect(ranged.total).toBe(50 * MiB);
    expect(sent.get('/ranged-50mb')!.bytes).toBe(300);

    // A server that ignores Range: the first bytes are passed over, and the 50 MB body is left unread.
    const whole = await downloader.download(`${base}/chunked-50mb`, {
      maxBytes: 20 * MiB,
      name: 'log.txt',
      signal: signal(),
      range: { start: 70_000, length: 100_000 },
    });
    expect(whole.data.length).toBe(100_000);
    expect(whole.data.every((b) => b === 7)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sent.get('/chunked-50mb')!.closedEarly).toBe(true);
    expect(sent.get('/chunked-50mb')!.bytes).toBeLessThan(10 * MiB);

    // Past the end: no bytes, no error.
    const past = await downloader.download(`${base}/ranged-50mb`, {
      maxBytes: MiB,
      name: 'log.txt',
      signal: signal(),
      range: { start: 50 * MiB, length: 10 },
    });
    expect(past.data.length).toBe(0);
  });

  it('tells a web page (a login page) from a file, and does not follow redirects', async () => {
    await expect(
      downloader.download(`${base}/login`, { maxBytes: MiB, name: 'cat.png', signal: signal() }),
    ).rejects.toMatchObject({ code: 'html' });
    await expect(
      downloader.download(`${base}/moved`, { maxBytes: MiB, name: 'cat.png', signal: signal() }),
    ).rejects.toMatchObject({ code: 'http_status', status: 302 });
    await expect(
      downloader.download(`${base}/missing`, { maxBytes: MiB, name: 'cat.png', signal: signal() }),
    ).rejects.toMatchObject({
      code: 'http_status',
      status: 404,
      message: 'cat.png could not be downloaded (HTTP 404).',
    });
  });

  it("gives up on a download that stalls, and rejects with the caller's reason when the caller aborts", async () => {
    await expect(
      downloader.download(`${base}/slow`, { maxBytes: MiB, name: 'slow.png', signal: signal() }),
    ).rejects.toMatchObject({ code: 'timeout' });
    const controller = new AbortController();
    const pending = downloader.download(`${base}/slow`, { maxBytes: MiB, name: 'slow.png', signal: controller.signal });
    controller.abort(new Error('stopped by the user'));
    await expect(pending).rejects.toThrow('stopped by the user');
  });
});

describe('Downloader with publicOnly (URLs users type)', () => {
  const refused = (url: string) =>
    downloader.download(url, { maxBytes: MiB, name: 'x.png', signal: signal(), publicOnly: true });

  it('refuses http, localhost, loopback, private, link-local (metadata) and mapped addresses before connecting', async () => {
    await expect(refused(`${base}/small.png`)).rejects.toMatchObject({
      code: 'not_public',
      message: 'x.png is not an https address.',
    });
    for (const url of [
      'https://localhost/a.png',
      'https://127.0.0.1/a.png',
      'https://10.1.2.3/a.png',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/a.png',
      'https://[::ffff:192.168.0.1]/a.png',
    ]) {
      await expect(refused(url), url).rejects.toMatchObject({
        code: 'not_public',
        message: 'x.png points to a private or local address, which the bot does not fetch.',
      });
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
      await expect(
        rebinding.download(`https://images.example:${port}/a.png`, {
          maxBytes: MiB,
          name: 'x.png',
          signal: signal(),
          publicOnly: true,
        }),
      ).rejects.toMatchObject({ code: 'not_public' });
      expect(resolved).toEqual(['images.example']);
    } finally {
      await rebinding.close();
    }
  });

  it('tells public from non-public addresses', () => {
    expect(isPublicAddress('93.184.216.34')).toBe(true);
    expect(isPublicAddress('2606:4700::1111')).toBe(true);
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      'not an ip',
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });
});

/**
 * One address in each range the guard refuses (IANA IPv4 and IPv6 Special-Purpose Address
 * Registries, not globally reachable, plus NAT64, 6to4, Teredo, IPv4-compatible, site-local,
 * multicast), with IPv6 in several spellings.
 */
const REFUSED: Array<[string, string[]]> = [
  ['0.0.0.0/8 this network', ['0.0.0.0', '0.1.2.3']],
  ['10.0.0.0/8 private', ['10.1.2.3']],
  ['100.64.0.0/10 shared', ['100.64.0.1', '100.127.255.254']],
  ['127.0.0.0/8 loopback', ['127.0.0.1', '127.255.0.9']],
  ['169.254.0.0/16 link local', ['169.254.169.254']],
  ['172.16.0.0/12 private', ['172.16.5.4', '172.31.255.1']],
  ['192.0.0.0/24 IETF protocol assignments', ['192.0.0.8', '192.0.0.170']],
  ['192.0.2.0/24 TEST-NET-1', ['192.0.2.1']],
  ['192.88.99.0/24 6to4 relay anycast', ['192.88.99.1']],
  ['192.168.0.0/16 private', ['192.168.1.1']],
  ['198.18.0.0/15 benchmarking', ['198.18.0.1', '198.19.255.1']],
  ['198.51.100.0/24 TEST-NET-2', ['198.51.100.7']],
  ['203.0.113.0/24 TEST-NET-3', ['203.0.113.9']],
  ['224.0.0.0/4 multicast', ['224.0.0.1', '239.255.255.250']],
  ['240.0.0.0/4 reserved', ['240.0.0.1', '254.1.2.3']],
  ['255.255.255.255 broadcast', ['255.255.255.255']],
  ['::/128 unspecified', ['::', '0:0:0:0:0:0:0:0']],
  ['::1/128 loopback', ['::1', '0000:0000:0000:0000:0000:0000:0000:0001']],
  ['::/96 IPv4-compatible', ['::a9fe:a9fe', '::169.254.169.254', '::8.8.8.8', '0:0:0:0:0:0:808:808']],
  [
    '::ffff:0:0/96 mapped, judged as IPv4',
    ['::ffff:127.0.0.1', '::FFFF:7F00:1', '0:0:0:0:0:ffff:a9fe:a9fe', '::ffff:192.168.0.1'],
  ],
  [
    '64:ff9b::/96 NAT64',
    ['64:ff9b::a9fe:a9fe', '64:ff9b::169.254.169.254', '0064:FF9B:0000:0000:0000:0000:A9FE:A9FE', '64:ff9b::8.8.8.8'],
  ],
  ['64:ff9b:1::/48 local-use NAT64', ['64:ff9b:1::a9fe:a9fe', '64:ff9b:1:ffff::1']],
  ['100::/64 discard-only', ['100::1', '0100:0000:0000:0000:ffff:ffff:ffff:ffff']],
  ['2001::/32 Teredo', ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::1']],
  ['2001::/23 IETF protocol assignments', ['2001:2::1', '2001:10::1', '2001:1ff:ffff::1']],
  ['2001:db8::/32 documentation', ['2001:db8::1', '2001:DB8:0:0:0:0:0:1']],
  ['2002::/16 6to4', ['2002:a9fe:a9fe::1', '2002:0808:0808::1']],
  ['3fff::/20 documentation', ['3fff::1', '3fff:0fff:ffff::1']],
  ['5f00::/16 SRv6 SIDs', ['5f00::1']],
  ['fc00::/7 unique local', ['fd00::1', 'FC00::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['fe80::/10 link-local', ['fe80::1', 'fe80::1%eth0', 'FE80::A9FE:A9FE%25en0', 'febf::1']],
  ['fec0::/10 site-local', ['fec0::1', 'feff::1']],
  ['ff00::/8 multicast', ['ff02::1', 'FF0E::1']],
  ['outside 2000::/3 global unicast', ['4000::1', 'e000::1', '::ffff:0:7f00:1']],
];

/** Ordinary public addresses: on the edges of the refused ranges, and well-known ones. */
const PUBLIC = [
  '93.184.216.34',
  '8.8.8.8',
  '1.1.1.1',
  '9.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '169.253.255.255',
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.255',
  '192.0.3.0',
  '192.88.98.255',
  '192.31.196.1',
  '192.175.48.1',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2606:4700::1111',
  '2606:4700:0000:0000:0000:0000:0000:1111',
  '2A00:1450:4001:81B::200E',
  '2001:200::1',
  '2003::1',
  '2620:4f:8000::1',
  '::ffff:8.8.8.8',
  '::FFFF:808:808',
  '0:0:0:0:0:ffff:5db8:d822',
];

describe('isPublicAddress: the IANA special-purpose registries', () => {
  it('refuses every range of the registries (and NAT64, 6to4, Teredo, IPv4-compatible, site-local, multicast) in every spelling, and lets ordinary public addresses through', () => {
    for (const [range, addresses] of REFUSED) {
      for (const address of addresses) {
        expect(isPublicAddress(address), `${range}: ${address}`).toBe(false);
        expect(isPublicAddress(`[${address.replace(/%.*$/, '')}]`), `${range}: [${address}]`).toBe(false);
      }
    }
    for (const address of PUBLIC) expect(isPublicAddress(address), address).toBe(true);
    for (const text of ['not an ip', '', '1.2.3', '256.1.1.1', '::g', '1::2::3', 'example.com'])
      expect(isPublicAddress(text), text).toBe(false);
  });
});

/** A dispatcher that records every request asked of it and connects nowhere. */
function spyDispatcher(): { dispatcher: Dispatcher; asked: string[] } {
  const asked: string[] = [];
  const dispatcher = {
    request: async (options: { origin: string; path: string }) => {
      asked.push(`${options.origin}${options.path}`);
      throw new Error('the spy connects nowhere');
    },
    close: async () => undefined,
  } as unknown as Dispatcher;
  return { dispatcher, asked };
}

describe('the guard refuses before connecting', () => {
  it('a typed https link to an IP literal of every refused range: the dispatcher is never asked', async () => {
    const { dispatcher, asked } = spyDispatcher();
    const guarded = new Downloader({ dispatcher });
    for (const [range, addresses] of REFUSED) {
      for (const address of addresses.filter((a) => !a.includes('%'))) {
        const host = address.includes(':') ? `[${address}]` : address;
        await expect(
          guarded.download(`https://${host}/a.png`, {
            maxBytes: MiB,
            name: 'x.png',
            signal: signal(),
            publicOnly: true,
          }),
          `${range}: ${address}`,
        ).rejects.toMatchObject({
          code: 'not_public',
          message: 'x.png points to a private or local address, which the bot does not fetch.',
        });
      }
    }
    expect(asked).toEqual([]);
    // The spy does answer for a public address: it was not skipped by accident.
    await expect(
      guarded.download('https://93.184.216.34/a.png', {
        maxBytes: MiB,
        name: 'x.png',
        signal: signal(),
        publicOnly: true,
      }),
    ).rejects.toMatchObject({ code: 'network' });
    expect(asked).toEqual(['https://93.184.216.34/a.png']);
  });

  it('a name resolving to an address of every refused range (alone, or among public ones): refused when connecting, on the resolved addresses, before any socket', async () => {
    const resolved: string[] = [];
    let answer: Array<{ address: string; family: number }> = [];
    const lookup: LookupAll = (hostname, _options, callback) => {
      resolved.push(hostname);
      callback(null, answer);
    };
    const guarded = new Downloader({ lookup, timeoutMs: 5_000 });
    try {
      for (const [range, addresses] of REFUSED) {
        for (const address of addresses) {
          const family = address.includes(':') ? 6 : 4;
          for (const list of [
            [{ address, family }],
            [
              { address: '93.184.216.34', family: 4 },
              { address, family },
            ],
          ]) {
            answer = list;
            const error = await guarded
              .download('https://images.example/a.png', {
                maxBytes: MiB,
                name: 'x.png',
                signal: signal(),
                publicOnly: true,
              })
              .catch((e: unknown) => e);
            expect(error, `${range}: ${address}`).toMatchObject({ code: 'not_public' });
          }
        }
      }
      expect(new Set(resolved)).toEqual(new Set(['images.example']));
    } finally {
      await guarded.close();
    }
  });
});

describe('checkForwardableUrl (a link the service fetches, e.g. reference_image_url)', () => {
  const unresolvable: LookupAll = (_hostname, _options, callback) =>
    callback(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }), []);
  const resolvingTo =
    (...addresses: string[]): LookupAll =>
    (_hostname, _options, callback) =>
      callback(
        null,
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
  const check = (url: string, lookup: LookupAll = unresolvable, timeoutMs?: number) =>
    checkForwardableUrl(url, { name: '`reference_image_url`', lookup, ...(timeoutMs ? { timeoutMs } : {}) });
  const PRIVATE =
    '`reference_image_url` points to a private or local address, which the bot does not pass on to the service.';

  it('refuses metadata, unique-local, localhost, NAT64 and mapped addresses, in any spelling, with a sentence', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00::1]/a.png',
      'http://localhost/a.png',
      'https://LOCALHOST./a.png',
      'http://api.localhost:8080/a.png',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[0064:FF9B:0000:0000:0000:0000:A9FE:A9FE]/',
      'http://[::ffff:169.254.169.254]/',
      'http://[2002:a9fe:a9fe::1]/',
      'http://[2001::1]/',
      'http://[::a9fe:a9fe]/',
      'http://0x7f.1/a.png',
      'http://2130706433/a.png',
      'http://10.0.0.1:8080/a.png',
    ]) {
      await expect(check(url), url).rejects.toMatchObject({ code: 'not_public', message: PRIVATE });
    }
  });

  it('refuses a name resolving here to any address that is not public', async () => {
    await expect(check('https://metadata.example/latest', resolvingTo('169.254.169.254'))).rejects.toMatchObject({
      message: PRIVATE,
    });
    await expect(check('https://mixed.example/a.png', resolvingTo('93.184.216.34', 'fd00::1'))).rejects.toMatchObject({
      message: PRIVATE,
    });
    await expect(check('https://nat64.example/a.png', resolvingTo('64:ff9b::a9fe:a9fe'))).rejects.toMatchObject({
      message: PRIVATE,
    });
  });

  it('refuses what is not an http(s) address', async () => {
    for (const url of ['ftp://example.com/a.png', 'file:///etc/passwd', 'not a url', 'gopher://example.com/']) {
      await expect(check(url), url).rejects.toMatchObject({
        code: 'not_public',
        message: '`reference_image_url` is not an http(s) address.',
      });
    }
  });

  it('passes on public addresses and names that resolve to public addresses, or that do not resolve here (or not in time), as parsed', async () => {
    await expect(check('https://example.com/photos/ref.png')).resolves.toBe('https://example.com/photos/ref.png');
    await expect(check('https://images.example/a.png', resolvingTo('93.184.216.34', '2606:4700::1111'))).resolves.toBe(
      'https://images.example/a.png',
    );
    await expect(check('http://93.184.216.34/a.png')).resolves.toBe('http://93.184.216.34/a.png');
    await expect(check('https://[2606:4700::1111]/a.png')).resolves.toBe('https://[2606:4700::1111]/a.png');
    await expect(check('https://Example.COM/a.png')).resolves.toBe('https://example.com/a.png');
    const silent: LookupAll = () => undefined;
    const started = Date.now();
    await expect(check('https://slow.example/a.png', silent, 100)).resolves.toBe('https://slow.example/a.png');
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
