/**
 * The mention feature in the core, against the strict fake service: images reach the service
 * as data URLs of at most 1024 px, the vision model is used, files not used are named under
 * the answer, and the history notes the images without storing them.
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runInvocation } from '../../src/core/command.ts';
import { type Core, closeCore, createCore } from '../../src/core/core.ts';
import { answerMention } from '../../src/core/features/mention.ts';
import { english, sentence } from '../../src/core/i18n/words.ts';
import { type Attachment, AttachmentAccessError } from '../../src/core/platform.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import type { ContentPart } from '../../src/core/service/schemas.ts';
import { openLocalStore } from '../../src/core/state/local-state.ts';
import { DEFAULT_MODELS, FakeService } from '../fakes/service.ts';
import { recorder } from './recorder.ts';

let fake: FakeService;
let service: ServiceClient;
const cores: Core[] = [];

beforeAll(async () => {
  fake = await FakeService.start();
  service = new ServiceClient({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, backoffBaseMs: 1 });
});
beforeEach(() => {
  fake.reset();
  fake.setModels([...DEFAULT_MODELS]);
});
afterAll(async () => {
  await Promise.all(cores.map((c) => closeCore(c)));
  await service.close();
  await fake.close();
});

/** A core with its own SQLite store; `vision` is DEFAULT_VISION_MODEL. */
function makeCore(options: { vision?: string; maxCount?: number } = {}): Core {
  const store = openLocalStore(join(mkdtempSync(join(tmpdir(), 'genbot-mention-')), 'h.sqlite'));
  const core = createCore({
    // A loaded machine (CI beside other work) must not time the images out: the deadline is not what these test.
    imageWorkers: { timeoutMs: 30_000 },
    service,
    store,
    log: pino({ level: 'silent' }),
    defaults: { chat: 'fake-chat', image: undefined, vision: options.vision },
    inputImages: { maxCount: options.maxCount ?? 4 },
  });
  cores.push(core);
  return core;
}

/** An attachment served from memory; `fetches` counts downloads. */
function file(
  name: string,
  data: Buffer,
  mimeType: string | undefined,
  size = data.length,
): Attachment & { fetches: number } {
  const attachment = {
    name,
    mimeType,
    size,
    fetches: 0,
    async fetch({ maxBytes }: { maxBytes: number }) {
      attachment.fetches += 1;
      if (data.length > maxBytes) throw new Error('cap not applied by the caller');
      return data;
    },
  };
  return attachment;
}

const solid = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: '#3a7' } });
let webp: Buffer;
let gif: Buffer;
let huge: Buffer;
beforeAll(async () => {
  webp = await solid(2048, 1536).webp().toBuffer();
  // An animated GIF: two frames stacked as pages.
  gif = await sharp({ create: { width: 300, height: 400, channels: 4, background: '#f00' } })
    .gif()
    .toBuffer();
  gif = await sharp([gif, gif], { join: { animated: true } })
    .gif()
    .toBuffer();
  huge = await solid(12_000, 12_000).png({ compressionLevel: 9 }).toBuffer();
});

/** The last user message of the last chat request. */
function lastUserContent(): string | ContentPart[] {
  const request = fake.chatRequests().at(-1)!;
  return request.messages.at(-1)!.content as string | ContentPart[];
}

describe('answerMention', () => {
  it('sends two images (WebP, animated GIF) as JPEG/PNG data URLs of at most 1024 px with the vision model, and notes them in the history', async () => {
    const core = makeCore({ vision: 'fake-vision' });
    fake.setChatReply('A cat and a dog.');
    const r = recorder('m:two', {});
    const outcome = await runInvocation('mention', r.ctx, core, () =>
      answerMention(r.ctx, core, {
        text: 'What are these?',
        attachments: [file('cat.webp', webp, 'image/webp'), file('dog.gif', gif, 'image/gif')],
      }),
    );
    expect(outcome).toMatchObject({ ok: true, command: 'mention' });
    expect(fake.chatRequests()).toHaveLength(1);
    expect(fake.chatRequests()[0]!.model).toBe('fake-vision');
    const content = lastUserContent() as ContentPart[];
    expect(content[0]).toEqual({ type: 'text', text: 'What are these?' });
    const urls = content.slice(1).map((p) => (p as Extract<ContentPart, { type: 'image_url' }>).image_url.url);
    expect(urls).toHaveLength(2);
    for (const url of urls) {
      expect(url).toMatch(/^data:image\/(jpeg|png);base64,/);
      const meta = await sharp(Buffer.from(url.split(',')[1]!, 'base64')).metadata();
      expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(1024);
    }
    expect(r.messages.map((m) => m.content)).toEqual(['A cat and a dog.']);
    expect(await core.history.get('m:two')).toMatchObject([
      { role: 'user', content: 'What are these?\n[2 images: cat.webp, dog.gif]' },
      { role: 'assistant', content: 'A cat and a dog.' },
    ]);
  });

  it('an image without text is sent with "Describe this image."; without a vision model the chat model is used', async () => {
    const core = makeCore();
    fake.setModels([{ id: 'fake-chat', vision: true }]);
    const r = recorder('m:only', {});
    await runInvocation('mention', r.ctx, core, () =>
      answerMention(r.ctx, core, { text: '  ', attachments: [file('cat.webp', webp, 'image/webp')] }),
    );
    expect(fake.chatRequests()[0]!.model).toBe('fake-chat');
    expect((lastUserContent() as ContentPart[])[0]).toEqual({ type: 'text', text: 'Describe this image.' });
  });

  it('names a Word document, a 12,000 × 12,000 PNG and the images past the limit in one line under the answer, still answering with the rest', async () => {
    const core = makeCore({ vision: 'fake-vision', maxCount: 2 });
    fake.setChatReply('Green.');
    const r = recorder('m:skip', {});
    const docx = file(
      'cv.docx',
      Buffer.from('PK\u0003\u0004'),
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    );
    await runInvocation('mention', r.ctx, core, () =>
      answerMention(r.ctx, core, {
        text: 'Colour?',
        attachments: [
          docx,
          file('huge.png', huge, 'image/png'),
          file('a.webp', webp, 'image/webp'),
          file('b.webp', webp, 'image/webp'),
        ],
      }),
    );
    expect((lastUserContent() as ContentPart[]).filter((p) => p.type === 'image_url')).toHaveLength(1);
    // Named from its declared type, never downloaded.
    expect(docx.fetches).toBe(0);
    expect(r.messages[0]!.content).toBe(
      'Green.\n\n_⚠️ Not used: b.webp (over the limit of 2 images a message), huge.png (too large to process (12000×12000 px; at most 40 megapixels)), cv.docx (a Word document, which the bot does not read; text files, PDFs and images are read)._',
    );
    // The history keeps the model's answer, not the notes.
    expect((await core.history.get('m:skip'))[1]!.content).toBe('Green.');
  });

  it('does not download a file whose declared size is over the cap', async () => {
    const core = makeCore({ vision: 'fake-vision' });
    const big = file('big.png', Buffer.alloc(10), 'image/png', 50 * 1024 * 1024);
    const r = recorder('m:big', {});
    await runInvocation('mention', r.ctx, core, () => answerMention(r.ctx, core, { text: 'hi', attachments: [big] }));
    expect(big.fetches).toBe(0);
    expect(r.messages[0]!.content).toMatch(
      /Not used: big\.png \(too large \(50\.0 MB; images up to 20\.0 MB are read\)\)/,
    );
  });

  it('says a platform refusal (a missing scope) once, however many files it concerns', async () => {
    const core = makeCore({ vision: 'fake-vision' });
    const refused = (name: string): Attachment => ({
      name,
      mimeType: 'image/png',
      size: 10,
      fetch: async () => Promise.reject(new AttachmentAccessError(sentence('slack.files.read_missing'))),
    });
    const r = recorder('m:scope', {});
    await runInvocation('mention', r.ctx, core, () =>
      answerMention(r.ctx, core, { text: 'look', attachments: [refused('a.png'), refused('b.png')] }),
    );
    expect(lastUserContent()).toBe('look');
    expect(r.messages[0]!.content.split(english.t('slack.files.read_missing'))).toHaveLength(2);
  });

  it('with no text and nothing usable, says why without calling the service, and stores nothing', async () => {
    const core = makeCore({ vision: 'fake-vision' });
    const r = recorder('m:none', {});
    const outcome = await runInvocation('mention', r.ctx, core, () =>
      answerMention(r.ctx, core, {
        text: '',
        attachments: [file('blob.bin', Buffer.from([0, 1, 2, 3]), 'application/octet-stream')],
      }),
    );
    expect(outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
    expect(r.ephemerals).toEqual([
      'Not used: blob.bin (not a text file (binary data); text files, PDFs and images are read).',
    ]);
    expect(fake.requests.filter((q) => q.route === 'chat')).toEqual([]);
    expect(await core.history.get('m:none')).toEqual([]);
  });

  it('when the model refuses images, the sentence names DEFAULT_VISION_MODEL, and the history is untouched', async () => {
    const core = makeCore();
    const r = recorder('m:refused', {});
    const outcome = await runInvocation('mention', r.ctx, core, () =>
      answerMention(r.ctx, core, { text: 'see', attachments: [file('cat.webp', webp, 'image/webp')] }),
    );
    expect(fake.chatRequests()).toHaveLength(1);
    expect(outcome).toMatchObject({ ok: false, errorCode: 'bad_request' });
    expect(r.ephemerals).toEqual([
      'The model `fake-chat` does not accept images. An admin can set DEFAULT_VISION_MODEL to a model that does. (ref TESTREF)',
    ]);
    expect(await core.history.get('m:refused')).toEqual([]);
  });
});
