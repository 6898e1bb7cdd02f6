/** FakeDiscord: Message limits and the per-channel budget: content, embeds, empty messages, uploads, allowed_mentions, 429s (also as discord.js's REST client waits them out). */

import { REST, Routes } from 'discord.js';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import type { Json } from '../discord.ts';
import { api, cleanup, connectBot, deferred, json, startFake, webhookPath } from './test-helpers.ts';

afterEach(cleanup);

describe('FakeDiscord message limits', () => {
  it('refuses content over 2000 code points with 400 code 50035 (BASE_TYPE_MAX_LENGTH) and keeps the message as it was; 2000 emoji pass', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = await deferred(fake);
    const path = webhookPath(fake, ix, '/messages/@original');
    expect((await api(fake, path, { method: 'PATCH', body: { content: 'x'.repeat(2000) } })).status).toBe(200);
    const tooLong = await api(fake, path, { method: 'PATCH', body: { content: 'x'.repeat(2001) } });
    expect(tooLong.status).toBe(400);
    expect(await json(tooLong)).toEqual({
      message: 'Invalid Form Body',
      code: 50035,
      errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] } },
    });
    expect(ix.original!.content).toBe('x'.repeat(2000));
    // Discord counts code points: 2000 emoji are 4000 UTF-16 units and still fit.
    expect((await api(fake, path, { method: 'PATCH', body: { content: '😀'.repeat(2000) } })).status).toBe(200);
  });

  it('refuses more than 10 embeds, a description over 4096, embeds over 6000 characters in all, and a bad image URL', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = await deferred(fake);
    const path = webhookPath(fake, ix, '/messages/@original');
    const errorsOf = async (embeds: unknown) => {
      const res = await api(fake, path, { method: 'PATCH', body: { content: 'x', embeds } });
      expect(res.status).toBe(400);
      return (await json(res)).errors as Json;
    };
    expect(await errorsOf(Array.from({ length: 11 }, () => ({ title: 't' })))).toMatchObject({
      embeds: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] },
    });
    expect(await errorsOf([{ description: 'd'.repeat(4097) }])).toMatchObject({
      embeds: { 0: { description: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } },
    });
    expect(await errorsOf([{ description: 'd'.repeat(4000) }, { description: 'd'.repeat(2001) }])).toMatchObject({
      embeds: { _errors: [{ code: 'MAX_EMBED_SIZE_EXCEEDED' }] },
    });
    expect(await errorsOf([{ image: { url: 'not a url' } }])).toMatchObject({
      embeds: { 0: { image: { url: { _errors: [{ code: 'URL_TYPE_INVALID_URL' }] } } } },
    });
    const ok = await api(fake, path, {
      method: 'PATCH',
      body: { content: '', embeds: [{ title: 'A picture', image: { url: 'https://example.com/a.png' } }] },
    });
    expect(ok.status).toBe(200);
    expect((await json(ok)).embeds).toEqual([
      {
        type: 'rich',
        title: 'A picture',
        image: { url: 'https://example.com/a.png', proxy_url: 'https://example.com/a.png' },
      },
    ]);
  });

  it('refuses an empty message with 400 code 50006', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = await deferred(fake);
    const res = await api(fake, webhookPath(fake, ix, '?wait=true'), { method: 'POST', body: { content: '' } });
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ message: 'Cannot send an empty message', code: 50006 });
  });

  it('stores multipart uploads byte for byte with image sizes, serves them at their URL, and refuses 11 files (50035) or a file over the size limit (413, 40005)', async () => {
    const fake = await startFake({ maxFileBytes: 64 * 1024 });
    await connectBot(fake);
    const ix = await deferred(fake);
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 200, g: 10, b: 10 } } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.append(
      'payload_json',
      JSON.stringify({
        content: 'a picture',
        attachments: [{ id: 0, description: 'red' }],
        allowed_mentions: { parse: [] },
      }),
    );
    form.append('files[0]', new Blob([png], { type: 'image/png' }), 'red.png');
    const res = await api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'PATCH', body: form });
    expect(res.status).toBe(200);
    const attachment = ((await json(res)).attachments as Json[])[0]!;
    expect(attachment).toMatchObject({
      filename: 'red.png',
      size: png.length,
      content_type: 'image/png',
      width: 40,
      height: 30,
      description: 'red',
    });
    expect(Buffer.compare(ix.original!.attachments[0]!.data, png)).toBe(0);
    const served = await fetch(attachment.url as string);
    expect(Buffer.compare(Buffer.from(await served.arrayBuffer()), png)).toBe(0);

    const eleven = new FormData();
    eleven.append('payload_json', JSON.stringify({ content: 'many' }));
    for (let i = 0; i < 11; i++) eleven.append(`files[${i}]`, new Blob(['x']), `f${i}.txt`);
    const many = await api(fake, webhookPath(fake, ix, '?wait=true'), { method: 'POST', body: eleven });
    expect(many.status).toBe(400);
    expect(await json(many)).toMatchObject({
      code: 50035,
      errors: { files: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } },
    });

    const big = new FormData();
    big.append('payload_json', JSON.stringify({ content: 'big' }));
    big.append('files[0]', new Blob([Buffer.alloc(64 * 1024 + 1)]), 'big.bin');
    const tooBig = await api(fake, webhookPath(fake, ix, '?wait=true'), { method: 'POST', body: big });
    expect(tooBig.status).toBe(413);
    expect(await json(tooBig)).toEqual({ message: 'Request entity too large', code: 40005 });
  });

  it('records allowed_mentions of every write and whom it pings: an edit without them pings @everyone, as Discord re-parses it', async () => {
    const fake = await startFake();
    await connectBot(fake);
    const ix = await deferred(fake);
    const path = webhookPath(fake, ix, '/messages/@original');
    const content = 'hey @everyone and <@123456789012345678>';
    await api(fake, path, { method: 'PATCH', body: { content, allowed_mentions: { parse: [] } } });
    await api(fake, path, { method: 'PATCH', body: { content } });
    expect(fake.writes.map((w) => [w.allowedMentions, w.pinged])).toEqual([
      [{ parse: [] }, { everyone: false, users: [], roles: [] }],
      [undefined, { everyone: true, users: ['123456789012345678'], roles: [] }],
    ]);
    const exclusive = await api(fake, path, {
      method: 'PATCH',
      body: { content, allowed_mentions: { parse: ['users'], users: ['123456789012345678'] } },
    });
    expect(exclusive.status).toBe(400);
    expect(await json(exclusive)).toMatchObject({
      errors: { allowed_mentions: { _errors: [{ code: 'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE' }] } },
    });
  });
});

describe('FakeDiscord rate limits', () => {
  it('answers writes over the channel budget with 429, retry-after and x-ratelimit headers, and accepts them again after the reset', async () => {
    const fake = await startFake({ messageBudget: { limit: 2, windowMs: 300 } });
    await connectBot(fake);
    const ix = await deferred(fake);
    const path = webhookPath(fake, ix, '/messages/@original');
    const first = await api(fake, path, { method: 'PATCH', body: { content: '1' } });
    expect(first.headers.get('x-ratelimit-limit')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(Number(first.headers.get('x-ratelimit-reset-after'))).toBeGreaterThan(0);
    expect(first.headers.get('x-ratelimit-bucket')).toMatch(/^[0-9a-f]+$/);
    await api(fake, path, { method: 'PATCH', body: { content: '2' } });
    const limited = await api(fake, path, { method: 'PATCH', body: { content: '3' } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-scope')).toBe('user');
    expect(Number(limited.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
    const body = await json(limited);
    expect(body).toMatchObject({ message: 'You are being rate limited.', global: false });
    expect(body.retry_after as number).toBeLessThanOrEqual(0.3);
    expect(ix.original!.content).toBe('2');

    await new Promise((r) => setTimeout(r, Number(limited.headers.get('x-ratelimit-reset-after')) * 1000 + 20));
    expect((await api(fake, path, { method: 'PATCH', body: { content: '3' } })).status).toBe(200);
  });

  it('lets discord.js REST wait out a 429 and retry: the write lands after the window reset', async () => {
    const fake = await startFake({ messageBudget: { limit: 1, windowMs: 400 } });
    await connectBot(fake);
    const ix = await deferred(fake);
    // Someone spends the budget behind discord.js's back.
    await api(fake, webhookPath(fake, ix, '/messages/@original'), { method: 'PATCH', body: { content: 'first' } });
    const rest = new REST({ api: fake.apiUrl });
    await rest.patch(Routes.webhookMessage(fake.applicationId, ix.token, '@original'), {
      auth: false,
      body: { content: 'second' },
    });
    expect(fake.rateLimits).toHaveLength(1);
    const limited = fake.rateLimits[0]!;
    const landed = fake.writes.find((w) => w.content === 'second')!;
    expect(landed.at).toBeGreaterThanOrEqual(limited.at + limited.retryAfterMs);
    expect(ix.original!.content).toBe('second');
  });
});
