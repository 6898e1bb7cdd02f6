/**
 * FakeDiscord: Components V2 messages (flag `1 << 15`) checked and stored as Discord does: no
 * `content` or `embeds` with the flag, the flag set by an edit only with them reset and never
 * removed, the component tree's types and limits (40 components, 4,000 characters of Text
 * Displays, 1–10 gallery items, alt text ≤ 1,024), `attachment://` names matched to the
 * message's files and resolved to their CDN URLs, and those files left out of `attachments`.
 */

import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeDiscord, type FakeInteraction, type Json, MessageFlag } from '../discord.ts';
import { api, cleanup, connectBot, deferred, json, startFake, webhookPath } from './test-helpers.ts';

afterEach(cleanup);

const V2 = MessageFlag.IsComponentsV2;
const text = (content: string) => ({ type: 10, content });
const gallery = (...urls: string[]) => ({ type: 12, items: urls.map((url) => ({ media: { url } })) });
const row = (...ids: string[]) => ({
  type: 1,
  components: ids.map((id) => ({ type: 2, style: 2, label: id, custom_id: id })),
});
const container = (...components: unknown[]) => ({ type: 17, components });

/** A fake, a bot session, and a deferred interaction whose `@original` the test writes. */
async function setup(): Promise<{ fake: FakeDiscord; ix: FakeInteraction; path: string }> {
  const fake = await startFake();
  await connectBot(fake);
  const ix = await deferred(fake);
  return { fake, ix, path: webhookPath(fake, ix, '/messages/@original') };
}

/** A multipart body: `payload` as payload_json and one PNG as files[0] named `name`. */
async function withPng(payload: Json, name = 'picture.png'): Promise<FormData> {
  const png = await sharp({ create: { width: 8, height: 6, channels: 3, background: '#3060c0' } })
    .png()
    .toBuffer();
  const form = new FormData();
  form.append('payload_json', JSON.stringify(payload));
  form.append('files[0]', new Blob([png], { type: 'image/png' }), name);
  return form;
}

/** The `errors` tree of a refused write (asserting 400, 50035). */
async function refusal(response: Response): Promise<Json> {
  expect(response.status).toBe(400);
  const body = await json(response);
  expect(body).toMatchObject({ message: 'Invalid Form Body', code: 50035 });
  return body.errors as Json;
}

describe('FakeDiscord Components V2', () => {
  it('takes a gallery message: media resolved to the upload (CDN URL, attachment_id), ids given, the upload out of `attachments`, buttons pressable', async () => {
    const { fake, ix, path } = await setup();
    const payload = {
      flags: V2,
      components: [container(text('🎨 a fox'), gallery('attachment://picture.png'), row('again'))],
      attachments: [{ id: 0, description: 'a fox' }],
      allowed_mentions: { parse: [] },
    };
    const res = await api(fake, path, { method: 'PATCH', body: await withPng(payload) });
    expect(res.status).toBe(200);
    const message = await json(res);
    const upload = ix.original!.attachments[0]!;
    expect(message.attachments).toEqual([]);
    expect(message.content).toBe('');
    expect(message.flags).toBe(V2);
    const [box] = message.components as Json[];
    expect(box).toMatchObject({ type: 17, id: 1, components: [{ type: 10, id: 2 }, { type: 12, id: 3 }, { id: 4 }] });
    const media = ((box!.components as Json[])[1]!.items as Json[])[0]!.media as Json;
    expect(media).toMatchObject({ url: upload.url, attachment_id: upload.id, content_type: 'image/png', width: 8 });
    expect((await fetch(String(media.url))).status).toBe(200);
    expect(ix.original!.text).toBe('🎨 a fox');
    expect(ix.original!.buttons.map((b) => b.custom_id)).toEqual(['again']);
    const press = fake.pressButton({ messageId: ix.original!.id, customId: 'again' });
    expect((press.payload.message as Json).components).toEqual(message.components);
  });

  it('refuses `content` or `embeds` with the flag: 50035 MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2 at the field', async () => {
    const { fake, path } = await setup();
    const errors = await refusal(
      await api(fake, path, {
        method: 'PATCH',
        body: { flags: V2, content: 'caption', embeds: [{ title: 't' }], components: [text('x')] },
      }),
    );
    expect(errors).toEqual({
      content: {
        _errors: [
          {
            code: 'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
            message: "The 'content' field cannot be used when using MessageFlags.IS_COMPONENTS_V2",
          },
        ],
      },
      embeds: {
        _errors: [
          {
            code: 'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
            message: "The 'embeds' field cannot be used when using MessageFlags.IS_COMPONENTS_V2",
          },
        ],
      },
    });
  });

  it('lets an edit set the flag on a message with text only when it resets `content` (null or empty), and never takes the flag away', async () => {
    const { fake, ix, path } = await setup();
    const patch = (body: Json) => api(fake, path, { method: 'PATCH', body });
    expect((await patch({ content: '⏳ Queued: 1 ahead of you.' })).status).toBe(200);
    // Setting the flag while the message keeps its text is refused; resetting it is not.
    expect(await refusal(await patch({ flags: V2, components: [text('done')] }))).toMatchObject({
      content: { _errors: [{ code: 'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2' }] },
    });
    expect((await patch({ content: null, embeds: [], flags: V2, components: [text('done')] })).status).toBe(200);
    expect(ix.original!).toMatchObject({ content: '', flags: V2 });
    // A flag list without it leaves it set, so a text edit is refused from now on.
    expect((await patch({ flags: 0, components: [text('still')] })).status).toBe(200);
    expect(ix.original!.flags).toBe(V2);
    await refusal(await patch({ content: 'plain again' }));
    expect(ix.original!.text).toBe('still');
  });

  it('refuses an `attachment://` name no file of the message has, a gallery of 0 or 11 items, alt text over 1,024 and a media URL that is not http(s)', async () => {
    const { fake, path } = await setup();
    const patch = async (components: unknown[], name?: string) =>
      api(fake, path, {
        method: 'PATCH',
        body: name ? await withPng({ flags: V2, components }, name) : { flags: V2, components },
      });
    const at = (errors: Json) => ((errors.components as Json)[0] as Json).components as Json;
    const missing = await refusal(await patch([container(gallery('attachment://picture.png'))], 'other.png'));
    expect(at(missing)).toEqual({
      0: {
        items: {
          0: {
            media: {
              url: {
                _errors: [
                  {
                    code: 'ATTACHMENT_NOT_FOUND',
                    message: 'Attachment "picture.png" was not found in the request or the message.',
                  },
                ],
              },
            },
          },
        },
      },
    });
    expect(at(await refusal(await patch([container(gallery())])))).toMatchObject({
      0: { items: { _errors: [{ code: 'BASE_TYPE_MIN_LENGTH' }] } },
    });
    const eleven = Array.from({ length: 11 }, (_, i) => `https://img.example/${i}.png`);
    expect(at(await refusal(await patch([container(gallery(...eleven))])))).toMatchObject({
      0: { items: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } },
    });
    const long = { type: 12, items: [{ media: { url: 'https://img.example/a.png' }, description: 'd'.repeat(1025) }] };
    expect(at(await refusal(await patch([container(long)])))).toMatchObject({
      0: { items: { 0: { description: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } } },
    });
    expect(at(await refusal(await patch([container(gallery('ftp://img.example/a.png'))])))).toMatchObject({
      0: { items: { 0: { media: { url: { _errors: [{ code: 'URL_TYPE_INVALID_URL' }] } } } } },
    });
    // Ten linked images, each with 1,024 characters of alt text, pass.
    const ten = { type: 12, items: eleven.slice(1).map((url) => ({ media: { url }, description: 'd'.repeat(1024) })) };
    expect((await patch([container(ten)])).status).toBe(200);
  });

  it('refuses 41 components in all (40 pass), Text Displays over 4,000 characters together, a Container in a Container, and V2 types without the flag', async () => {
    const { fake, ix, path } = await setup();
    const patch = (body: Json) => api(fake, path, { method: 'PATCH', body });
    // A Container, 7 rows of 5 buttons (42 with the rows): over; 6 rows and 3 Text Displays: 1 + 36 + 3 = 40.
    const rows = (n: number, from = 0) =>
      Array.from({ length: n }, (_, r) => row(...[0, 1, 2, 3, 4].map((b) => `b${from + r}-${b}`)));
    expect(await refusal(await patch({ flags: V2, components: [container(...rows(7))] }))).toEqual({
      components: {
        _errors: [
          {
            code: 'COMPONENT_MAX_TOTAL_COMPONENTS_EXCEEDED',
            message: 'A message can have at most 40 components in all.',
          },
        ],
      },
    });
    const forty = [container(text('a'), text('b'), text('c'), ...rows(6))];
    expect((await patch({ flags: V2, components: forty })).status).toBe(200);
    expect(
      await refusal(await patch({ flags: V2, components: [text('x'.repeat(3000)), text('y'.repeat(1001))] })),
    ).toMatchObject({
      components: {
        1: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 4000 or fewer in length.' }] } },
      },
    });
    expect((await patch({ flags: V2, components: [text('x'.repeat(3000)), text('y'.repeat(1000))] })).status).toBe(200);
    expect(await refusal(await patch({ flags: V2, components: [container(container(text('nested')))] }))).toMatchObject(
      { components: { 0: { components: { 0: { type: { _errors: [{ code: 'UNION_TYPE_CHOICES' }] } } } } } },
    );
    // Without the flag (a new follow-up), only action rows may be top-level components.
    const followUp = await api(fake, webhookPath(fake, ix, '?wait=true'), {
      method: 'POST',
      body: { content: 'x', components: [container(text('x'))] },
    });
    expect(await refusal(followUp)).toMatchObject({
      components: { 0: { type: { _errors: [{ code: 'UNION_TYPE_CHOICES' }] } } },
    });
  });
});
