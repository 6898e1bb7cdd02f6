/**
 * Every option of /chat, /complete and /imagine reaches the strict fake service with the
 * user's value; out-of-range values never do, and the user reads the allowed range.
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import chatCommand from '../../commands/chat.ts';
import completeCommand from '../../commands/complete.ts';
import imagineCommand from '../../commands/imagine.ts';
import { runCommand } from '../../src/core/command.ts';
import { type Core, closeCore, createCore } from '../../src/core/core.ts';
import type { Attachment } from '../../src/core/platform.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import { DEFAULT_MODELS, FakeService } from '../fakes/service.ts';
import { type Recorder, recorder } from './recorder.ts';

let fake: FakeService;
let service: ServiceClient;
let core: Core;

beforeAll(async () => {
  fake = await FakeService.start({ allowDisableSafetyChecker: true, reportSeed: true });
  service = new ServiceClient({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, backoffBaseMs: 1 });
  core = createCore({
    // A loaded machine (CI beside other work) must not time the images out: the deadline is not what these test.
    imageWorkers: { timeoutMs: 30_000 },
    service,
    store: await openStore(`sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-options-')), 'h.sqlite')}`),
    log: pino({ level: 'silent' }),
    defaults: { chat: undefined, image: undefined, vision: 'fake-vision' },
    limits: { maxTokens: 2048, allowDisableSafetyChecker: true },
  });
});
beforeEach(() => {
  fake.reset();
  fake.setModels([...DEFAULT_MODELS]);
});
afterAll(async () => {
  await closeCore(core);
  await service.close();
  await fake.close();
});

/** An image attachment served from memory. */
/**
 * The caption of the image /imagine posted: the text of the one message with a file (on a busy
 * machine a progress line, "Generating… 3 s", comes before it).
 */
const captionOf = (r: Recorder): string => {
  const posted = r.messages.filter((m) => m.files?.length);
  expect(posted).toHaveLength(1);
  return posted[0]!.content;
};

const imageFile = (name: string, data: Buffer): Attachment => ({
  name,
  mimeType: 'image/png',
  size: data.length,
  fetch: async () => data,
});

describe('/chat options', () => {
  it("sends every sampling parameter, the model, web_search and JSON mode with the user's values", async () => {
    fake.setChatReply('{"ok":true}');
    const r = recorder('o:chat', {
      prompt: 'hi',
      model: 'fake-vision',
      temperature: 1.3,
      max_tokens: 300,
      top_p: 0.9,
      frequency_penalty: -0.5,
      presence_penalty: 1.5,
      web_search: 'force',
      json: true,
    });
    expect(await runCommand(chatCommand, r.ctx, core)).toMatchObject({ ok: true });
    expect(fake.chatRequests()[0]).toMatchObject({
      model: 'fake-vision',
      temperature: 1.3,
      max_tokens: 300,
      top_p: 0.9,
      frequency_penalty: -0.5,
      presence_penalty: 1.5,
      web_search: 'force',
      response_format: 'json',
      stream: true,
    });
  });

  it.each([
    [{ temperature: 2.5 }, '`temperature` must be from 0 to 2.'],
    [{ top_p: -0.1 }, '`top_p` must be from 0 to 1.'],
    [{ frequency_penalty: 3 }, '`frequency_penalty` must be from -2 to 2.'],
    [{ presence_penalty: -2.01 }, '`presence_penalty` must be from -2 to 2.'],
    [{ max_tokens: 0 }, '`max_tokens` must be at least 1.'],
    [{ max_tokens: 2049 }, '`max_tokens` must be from 1 to 2048.'],
    [{ max_tokens: 1.5 }, '`max_tokens` must be a whole number.'],
  ])('refuses %o before calling the service, saying the range', async (option, sentence) => {
    const r = recorder('o:range', { prompt: 'hi', ...option });
    expect(await runCommand(chatCommand, r.ctx, core)).toMatchObject({ ok: false, errorCode: 'invalid_option' });
    expect(r.ephemerals).toEqual([sentence]);
    expect(fake.requests).toEqual([]);
  });

  it('sends the image option as an image_url part to the vision model', async () => {
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#123456' } })
      .png()
      .toBuffer();
    const r = recorder(
      'o:image',
      { prompt: 'what colour?', image: 'swatch.png' },
      { files: { image: imageFile('swatch.png', png) } },
    );
    expect(await runCommand(chatCommand, r.ctx, core)).toMatchObject({ ok: true });
    const request = fake.chatRequests()[0]!;
    expect(request.model).toBe('fake-vision');
    const content = request.messages.at(-1)!.content as Array<{ type: string; image_url?: { url: string } }>;
    expect(content.map((p) => p.type)).toEqual(['text', 'image_url']);
    expect(content[1]!.image_url!.url).toMatch(/^data:image\/jpeg;base64,/);
    expect((await core.history.get('o:image'))[0]!.content).toBe('what colour?\n[1 image: swatch.png]');
  });

  it('a text file given to the image option is read as context (files as context): a text part after the prompt, noted in the history', async () => {
    fake.setChatReply('It says hello.');
    const r = recorder(
      'o:textfile',
      { prompt: 'what does it say?', image: 'notes.txt' },
      {
        files: {
          image: { name: 'notes.txt', mimeType: 'text/plain', size: 5, fetch: async () => Buffer.from('hello') },
        },
      },
    );
    await runCommand(chatCommand, r.ctx, core);
    const request = fake.chatRequests().at(-1)!;
    expect(request.messages.at(-1)!.content).toEqual([
      { type: 'text', text: 'what does it say?' },
      { type: 'text', text: 'File notes.txt:\n```\nhello\n```' },
    ]);
    expect((await core.history.get('o:textfile'))[0]!.content).toBe('what does it say?\n[1 file: notes.txt]');
  });

  it('a file the image option cannot use (neither image nor text nor PDF) is refused, naming the option, before any service call', async () => {
    const r = recorder(
      'o:badimage',
      { prompt: 'x', image: 'blob.bin' },
      {
        files: {
          image: {
            name: 'blob.bin',
            mimeType: 'application/octet-stream',
            size: 4,
            fetch: async () => Buffer.from([0, 1, 2, 3]),
          },
        },
      },
    );
    await runCommand(chatCommand, r.ctx, core);
    expect(r.ephemerals).toEqual([
      '`image`: blob.bin is not a text file (binary data); text files, PDFs and images are read.',
    ]);
    expect(fake.requests.filter((q) => q.route === 'chat')).toEqual([]);
  });
});

describe('/complete options', () => {
  it('sends model, temperature and max_tokens', async () => {
    const r = recorder('o:complete', { prompt: 'Once', model: 'fake-chat', temperature: 0.1, max_tokens: 20 });
    expect(await runCommand(completeCommand, r.ctx, core)).toMatchObject({ ok: true });
    expect(fake.lastRequest('completions')!.body).toMatchObject({
      model: 'fake-chat',
      prompt: 'Once',
      temperature: 0.1,
      max_tokens: 20,
      stream: true,
    });
  });
});

describe('/imagine options', () => {
  it("sends every parameter with the user's values, the reference image as a PNG data URL, and captions the seed", async () => {
    const jpeg = await sharp({ create: { width: 1600, height: 900, channels: 3, background: '#884422' } })
      .jpeg()
      .toBuffer();
    const r = recorder(
      'o:imagine',
      {
        prompt: 'a fox',
        aspect_ratio: 'landscape',
        style: 'natural',
        model: 'Fake Image XL',
        negative_prompt: 'people',
        seed: 4_294_967_295,
        reference_image: 'start.jpg',
        denoising_strength: 0.3,
        enhance: true,
        disable_safety_checker: true,
      },
      { files: { reference_image: imageFile('start.jpg', jpeg) }, admin: true },
    );
    expect(await runCommand(imagineCommand, r.ctx, core)).toMatchObject({ ok: true });
    const body = fake.lastRequest('images')!.body as Record<string, unknown>;
    expect(body).toMatchObject({
      prompt: 'a fox',
      aspect_ratio: 'landscape',
      style: 'natural',
      user_selected_model: 'Fake Image XL',
      negative_prompt: 'people',
      seed: 4_294_967_295,
      denoising_strength: 0.3,
      force_prompt_enhancement: true,
      disable_safety_checker: true,
    });
    expect(body.reference_image).toMatch(/^data:image\/png;base64,/);
    const meta = await sharp(Buffer.from(String(body.reference_image).split(',')[1]!, 'base64')).metadata();
    expect([meta.format, Math.max(meta.width!, meta.height!)]).toEqual(['png', 1216]);
    expect(captionOf(r)).toBe(
      '🎨 a fox\n_Fake Image XL · natural · 1216×832 · seed 4294967295 · reference, denoising 0.3_',
    );
  });

  it('captions the seed the service reports when none was asked for; passes reference_image_url as is', async () => {
    const r = recorder('o:seed', { prompt: 'a tower', reference_image_url: 'https://img.example/t.png' });
    await runCommand(imagineCommand, r.ctx, core);
    const body = fake.lastRequest('images')!.body as Record<string, unknown>;
    expect(body.reference_image_url).toBe('https://img.example/t.png');
    expect('seed' in body).toBe(false);
    expect(captionOf(r)).toMatch(/^🎨 a tower\n_default model · vivid · 1024×1024 · seed \d+ · reference_$/);
  });

  it('says denoising_strength does nothing without a reference, and does not send it', async () => {
    const r = recorder('o:denoise', { prompt: 'a tower', denoising_strength: 0.5 });
    await runCommand(imagineCommand, r.ctx, core);
    expect('denoising_strength' in (fake.lastRequest('images')!.body as object)).toBe(false);
    expect(captionOf(r)).toContain(
      '⚠️ `denoising_strength` was not used: it only applies with `reference_image` or `reference_image_url`.',
    );
  });

  it.each([
    [{ seed: -1 }, '`seed` must be from 0 to 4294967295.'],
    [{ seed: 4_294_967_296 }, '`seed` must be from 0 to 4294967295.'],
    [{ denoising_strength: 1.5 }, '`denoising_strength` must be from 0 to 1.'],
    [
      { reference_image_url: 'ftp://x/y.png' },
      '`reference_image_url` must be an http(s) address of an image, e.g. https://example.com/photo.png.',
    ],
  ])('refuses %o without calling the service', async (option, sentence) => {
    const r = recorder('o:imagine-range', { prompt: 'x', ...option });
    await runCommand(imagineCommand, r.ctx, core);
    expect(r.ephemerals).toEqual([sentence]);
    expect(fake.requests).toEqual([]);
  });

  it('refuses disable_safety_checker to a non-admin, and to everyone when the operator has not allowed it', async () => {
    const member = recorder('o:safety', { prompt: 'x', disable_safety_checker: true });
    expect(await runCommand(imagineCommand, member.ctx, core)).toMatchObject({ ok: false, errorCode: 'forbidden' });
    expect(member.ephemerals).toEqual(['`disable_safety_checker` is for admins only.']);
    const strict = createCore({
      // A loaded machine (CI beside other work) must not time the images out: the deadline is not what these test.
      imageWorkers: { timeoutMs: 30_000 },
      service,
      store: core.store,
      log: pino({ level: 'silent' }),
      defaults: { chat: undefined, image: undefined },
    });
    const admin = recorder('o:safety', { prompt: 'x', disable_safety_checker: true }, { admin: true });
    await runCommand(imagineCommand, admin.ctx, strict);
    expect(admin.ephemerals).toEqual([
      '`disable_safety_checker` is turned off for this bot (the operator has not set ALLOW_DISABLE_SAFETY_CHECKER=true).',
    ]);
    expect(fake.requests).toEqual([]);
  });
});
