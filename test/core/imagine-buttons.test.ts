/**
 * /imagine's follow-up buttons in the core (src/core/features/imagine.ts): the result carries
 * Reroll, Upscale and Vary; each press sends the right parameters to the fake service, from
 * state kept in the store — also by a new core (a restarted bot) on the same SQLite file —
 * and only the requester or an admin may press them unless IMAGINE_BUTTONS=everyone.
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import imagineCommand from '../../commands/imagine.ts';
import { runCommand, runInvocation } from '../../src/core/command.ts';
import { type Core, type CoreLimits, closeCore, createCore } from '../../src/core/core.ts';
import { storeKeys } from '../../src/core/keys.ts';
import type { Button, ComponentContext } from '../../src/core/platform.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import { openLocalStore } from '../../src/core/state/local-state.ts';
import { FakeService } from '../fakes/service.ts';
import { type Recorder, recorder } from './recorder.ts';

let fake: FakeService;
let storeUrl: string;
const cores: Core[] = [];

/** A core on the shared SQLite file (a second one is the bot after a restart). */
function newCore(limits: Partial<CoreLimits> = {}): Core {
  const service = new ServiceClient({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, backoffBaseMs: 1 });
  const core = createCore({
    service,
    store: openLocalStore(storeUrl.replace(/^sqlite:\/\//, '')),
    log: pino({ level: 'silent' }),
    defaults: { chat: undefined, image: undefined },
    limits,
    // A cold image worker on a loaded machine can pass the product's 5 s: not what this file checks.
    imageWorkers: { timeoutMs: 30_000 },
  });
  cores.push(core);
  return core;
}

beforeAll(async () => {
  // The service lets this account send disable_safety_checker (the bot decides who may).
  fake = await FakeService.start({ allowDisableSafetyChecker: true });
  storeUrl = `sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-imagine-')), 'state.sqlite')}`;
});
beforeEach(() => fake.reset());
afterAll(async () => {
  for (const core of cores) {
    await closeCore(core);
    await core.service.close();
  }
  await fake.close();
});

/** Presses `button` of a result as `userId`; the new image goes to `into`'s reply. */
async function press(core: Core, button: Button, into: Recorder, userId = 'u1', admin = false) {
  const [, ...args] = button.id.split(':');
  const ctx: ComponentContext = {
    ...into.ctx,
    user: { id: userId, name: userId, isAdmin: async () => admin, canManageMessages: async () => admin },
    args,
    limits: into.ctx.reply.limits,
    update: async () => undefined,
    acknowledge: async () => undefined,
    sendEphemeral: into.ctx.reply.sendEphemeral,
  };
  return runInvocation('imagine:button', ctx, core, () => imagineCommand.onComponent!(ctx, core));
}

/**
 * The recorded message carrying the image (the first, unless a slow generation showed its
 * progress line first: the image then follows it, the line saying it is done).
 */
const imageMessage = (r: Recorder) => r.messages.find((m) => m.files?.length);

/** The /imagine buttons of the recorded reply, by action (the 👍 / 👎 after them left out). */
const buttonsOf = (r: Recorder) =>
  Object.fromEntries(
    (r.messages.find((m) => m.buttons?.length)?.buttons ?? [])
      .filter((b) => !b.feedback)
      .map((b) => [b.id.split(':')[1], b]),
  );

describe('/imagine follow-up buttons', () => {
  it('Reroll sends the same options with a new seed; Upscale sends style upscaled with the image as a PNG reference; Vary, the image with denoising_strength 0.6', async () => {
    const core = newCore();
    const r = recorder('t:buttons', {
      prompt: 'a lighthouse',
      aspect_ratio: 'landscape',
      style: 'natural',
      seed: 42,
      negative_prompt: 'people',
    });
    expect(await runCommand(imagineCommand, r.ctx, core)).toMatchObject({ ok: true });
    const first = fake.lastRequest('images')!.body as Record<string, unknown>;
    expect(first).toMatchObject({ prompt: 'a lighthouse', seed: 42, style: 'natural' });
    const buttons = buttonsOf(r);
    expect(Object.keys(buttons)).toEqual(['reroll', 'upscale', 'vary']);
    expect(imageMessage(r)!.content).toContain('seed 42');

    const reroll = recorder('t:buttons', {});
    expect(await press(core, buttons.reroll!, reroll)).toMatchObject({ ok: true });
    const rerolled = fake.lastRequest('images')!.body as Record<string, unknown>;
    expect(rerolled).toMatchObject({
      prompt: 'a lighthouse',
      aspect_ratio: 'landscape',
      style: 'natural',
      negative_prompt: 'people',
    });
    expect(rerolled.seed).toEqual(expect.any(Number));
    expect(rerolled.seed).not.toBe(42);
    expect(imageMessage(reroll)!.content).toContain(`seed ${rerolled.seed as number}`);
    expect(imageMessage(reroll)!.files).toHaveLength(1);
    expect(Object.keys(buttonsOf(reroll))).toEqual(['reroll', 'upscale', 'vary']);

    const upscale = recorder('t:buttons', {});
    await press(core, buttons.upscale!, upscale);
    const upscaled = fake.lastRequest('images')!.body as Record<string, unknown>;
    expect(upscaled).toMatchObject({ prompt: 'a lighthouse', style: 'upscaled', seed: 42 });
    expect(String(upscaled.reference_image)).toMatch(/^data:image\/png;base64,/);
    const reference = await sharp(Buffer.from(String(upscaled.reference_image).split(',')[1]!, 'base64')).metadata();
    expect(reference.format).toBe('png');
    expect(upscaled.denoising_strength).toBeUndefined();

    const vary = recorder('t:buttons', {});
    await press(core, buttons.vary!, vary);
    const varied = fake.lastRequest('images')!.body as Record<string, unknown>;
    expect(varied).toMatchObject({ prompt: 'a lighthouse', style: 'natural', denoising_strength: 0.6 });
    expect(String(varied.reference_image)).toMatch(/^data:image\/png;base64,/);
    expect(varied.seed).not.toBe(42);
  });

  it('the buttons still work for a new core (a restarted bot) on the same SQLite file', async () => {
    const before = newCore();
    const r = recorder('t:restart', { prompt: 'a red fox', seed: 7 });
    await runCommand(imagineCommand, r.ctx, before);
    await closeCore(before);
    const after = newCore();
    const vary = recorder('t:restart', {});
    expect(await press(after, buttonsOf(r).vary!, vary)).toMatchObject({ ok: true });
    expect(fake.lastRequest('images')!.body).toMatchObject({
      prompt: 'a red fox',
      denoising_strength: 0.6,
      reference_image: expect.stringMatching(/^data:image\/png;base64,/),
    });
  });

  it('refuses another user with a sentence and no request; an admin may; with IMAGINE_BUTTONS=everyone anyone may', async () => {
    const core = newCore();
    const r = recorder('t:rights', { prompt: 'a boat' });
    await runCommand(imagineCommand, r.ctx, core);
    const requests = () => fake.requests.filter((q) => q.route === 'images').length;
    const count = requests();
    const stranger = recorder('t:rights', {});
    expect(await press(core, buttonsOf(r).reroll!, stranger, 'u2')).toMatchObject({
      ok: false,
      errorCode: 'forbidden',
    });
    expect(stranger.ephemerals).toEqual([
      'Only the person who asked for this image, or an admin, can use its buttons.',
    ]);
    expect(requests()).toBe(count);
    expect(await press(core, buttonsOf(r).reroll!, recorder('t:rights', {}), 'u3', true)).toMatchObject({ ok: true });
    const open = newCore({ imagineButtons: 'everyone' });
    expect(await press(open, buttonsOf(r).reroll!, recorder('t:rights', {}), 'u2')).toMatchObject({ ok: true });
    expect(requests()).toBe(count + 2);
  });

  it("never replays an admin's disable_safety_checker from stored state: a non-admin's press (IMAGINE_BUTTONS=everyone) does not send it, nor any press once the operator turned it off", async () => {
    const allowed = newCore({ allowDisableSafetyChecker: true, imagineButtons: 'everyone' });
    const r = recorder(
      't:safety',
      { prompt: 'a storm', disable_safety_checker: true },
      { admin: true, userId: 'admin1' },
    );
    expect(await runCommand(imagineCommand, r.ctx, allowed)).toMatchObject({ ok: true });
    expect(fake.lastRequest('images')!.body).toMatchObject({ disable_safety_checker: true });
    const sent = () => fake.lastRequest('images')!.body as Record<string, unknown>;

    // An admin pressing now, while the operator allows it, sends it again.
    expect(await press(allowed, buttonsOf(r).reroll!, recorder('t:safety', {}), 'admin1', true)).toMatchObject({
      ok: true,
    });
    expect(sent().disable_safety_checker).toBe(true);

    // Another member, who may press (everyone), gets the checker on, and is told.
    const member = recorder('t:safety', {});
    for (const action of ['reroll', 'upscale', 'vary'] as const) {
      expect(await press(allowed, buttonsOf(r)[action]!, member, 'u2')).toMatchObject({ ok: true });
      expect(sent().disable_safety_checker).toBeUndefined();
    }
    expect(
      member.messages
        .filter((m) => m.files?.length)
        .every((m) => m.content.includes('The safety checker is on for this image')),
    ).toBe(true);

    // After a restart with ALLOW_DISABLE_SAFETY_CHECKER off, not even the admin's press sends it.
    await closeCore(allowed);
    const restarted = newCore({ allowDisableSafetyChecker: false, imagineButtons: 'everyone' });
    for (const action of ['reroll', 'upscale', 'vary'] as const) {
      expect(await press(restarted, buttonsOf(r)[action]!, recorder('t:safety', {}), 'admin1', true)).toMatchObject({
        ok: true,
      });
      expect(sent().disable_safety_checker).toBeUndefined();
    }
  });

  it('keeps no image bytes past IMAGINE_STATE_MAX_BYTES: Reroll works, and Upscale with no way to find the image again says so', async () => {
    const core = newCore({ imagineStateMaxBytes: 0 });
    const r = recorder('t:no-bytes', { prompt: 'a windmill' });
    await runCommand(imagineCommand, r.ctx, core);
    const id = buttonsOf(r).reroll!.id.split(':')[2]!;
    const state = (await core.store.keyv.get(storeKeys.imagineState(id))) as Record<string, unknown>;
    expect(state.image).toEqual({});
    expect(JSON.stringify(state).length).toBeLessThan(300);
    expect(await press(core, buttonsOf(r).reroll!, recorder('t:no-bytes', {}))).toMatchObject({ ok: true });
    const upscale = recorder('t:no-bytes', {});
    expect(await press(core, buttonsOf(r).upscale!, upscale)).toMatchObject({ ok: false, errorCode: 'invalid_input' });
    expect(upscale.ephemerals).toEqual([
      'The image could not be found again (was its message or file deleted?). Reroll still works, or run /imagine again.',
    ]);
  });

  it('a Reroll of an image made from a reference_image the state did not keep says so, instead of dropping the reference', async () => {
    const core = newCore({ imagineStateMaxBytes: 0 });
    const png = await sharp({ create: { width: 48, height: 32, channels: 3, background: '#cc6633' } })
      .png()
      .toBuffer();
    const referenceImage = {
      name: 'sketch.png',
      mimeType: 'image/png',
      size: png.length,
      fetch: async () => new Uint8Array(png),
    };
    const r = recorder(
      't:reference',
      { prompt: 'a fox from a sketch' },
      { files: { reference_image: referenceImage } },
    );
    expect(await runCommand(imagineCommand, r.ctx, core)).toMatchObject({ ok: true });
    const count = fake.requests.filter((q) => q.route === 'images').length;
    const reroll = recorder('t:reference', {});
    expect(await press(core, buttonsOf(r).reroll!, reroll)).toMatchObject({ ok: false, errorCode: 'invalid_input' });
    expect(reroll.ephemerals).toEqual([
      'The reference image of this result was not kept: run /imagine again with it. Upscale and Vary still work.',
    ]);
    expect(fake.requests.filter((q) => q.route === 'images')).toHaveLength(count);
  });

  it('reads a state written before references were kept (the image as base64 in `image`)', async () => {
    const core = newCore();
    const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: '#3366cc' } })
      .png()
      .toBuffer();
    await core.store.keyv.set(storeKeys.imagineState('0ld5tate'), {
      requesterId: 'u1',
      job: { prompt: 'an old painting', aspectRatio: 'square', seed: 3 },
      image: png.toString('base64'),
    });
    const vary = recorder('t:legacy', {});
    expect(await press(core, { id: 'imagine:vary:0ld5tate', label: 'Vary' }, vary)).toMatchObject({ ok: true });
    const body = fake.lastRequest('images')!.body as Record<string, unknown>;
    expect(body).toMatchObject({ prompt: 'an old painting', denoising_strength: 0.6 });
    const reference = await sharp(Buffer.from(String(body.reference_image).split(',')[1]!, 'base64')).metadata();
    expect(reference).toMatchObject({ format: 'png', width: 32, height: 32 });
  });

  it('says the buttons have expired when their state is gone', async () => {
    const core = newCore();
    const gone = recorder('t:gone', {});
    const outcome = await press(core, { id: 'imagine:reroll:0000', label: 'Reroll' }, gone);
    expect(outcome).toMatchObject({ ok: false, errorCode: 'invalid_input' });
    expect(gone.ephemerals).toEqual(["This image's buttons have expired. Run /imagine again."]);
  });

  it('a slow generation posts a progress line (from 3 s on) before the image, and that line then points at the image with the buttons', async () => {
    const core = newCore();
    fake.enqueue('images', { delayHeadersMs: 3_500 });
    const r = recorder('t:progress', { prompt: 'a slow painting' });
    expect(await runCommand(imagineCommand, r.ctx, core)).toMatchObject({ ok: true });
    // The progress line came first; it became the buttons line, and the image followed it.
    const [line, image] = r.messages;
    expect(line!.content).toBe('🎨 Done: the image is below. Reroll, upscale or vary it:');
    expect(line!.buttons?.map((b) => b.label)).toEqual(['🎲 Reroll', '🔍 Upscale', '🌀 Vary', '👍', '👎']);
    expect(image!.files).toHaveLength(1);
    expect(image!.content).toContain('a slow painting');
  }, 15_000);

  it('a slow generation that fails turns its progress line into the sentence, said once', async () => {
    const core = newCore();
    for (let i = 0; i < 3; i++) fake.enqueue('images', { status: 500, delayHeadersMs: 1_300 });
    const r = recorder('t:progress-failed', { prompt: 'a doomed painting' });
    expect(await runCommand(imagineCommand, r.ctx, core)).toMatchObject({ ok: false });
    expect(r.messages).toHaveLength(1);
    expect(r.messages[0]!.content).toMatch(/^⚠️ .*\(ref TESTREF\)$/);
    expect(r.ephemerals).toEqual([]);
  }, 15_000);
});
