/**
 * The chat feature against the fake service, through a recording ReplyChannel (the platform
 * adapters are covered by the end-to-end tests).
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import chatCommand from '../../commands/chat.ts';
import completeCommand from '../../commands/complete.ts';
import imagineCommand from '../../commands/imagine.ts';
import { runCommand } from '../../src/core/command.ts';
import { type Core, closeCore, createCore } from '../../src/core/core.ts';
import { StopRequest } from '../../src/core/running.ts';
import { ServiceClient } from '../../src/core/service/client.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import { FakeService } from '../fakes/service.ts';
import { recorder } from './recorder.ts';

let fake: FakeService;
let core: Core;

beforeAll(async () => {
  fake = await FakeService.start();
  const service = new ServiceClient({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, backoffBaseMs: 1 });
  const store = await openStore(`sqlite://${join(mkdtempSync(join(tmpdir(), 'genbot-chat-')), 'h.sqlite')}`);
  core = createCore({
    service,
    store,
    log: pino({ level: 'silent' }),
    defaults: { chat: undefined, image: undefined },
  });
});
beforeEach(() => fake.reset());
afterAll(async () => {
  await closeCore(core);
  await core.service.close();
  await fake.close();
});

describe('/chat in the core', () => {
  it('uses the first chat model the service lists when none is configured, and records both turns', async () => {
    fake.setChatReply('Paris.');
    const r = recorder('t:1', { prompt: 'Capital of France?' });
    expect(await runCommand(chatCommand, r.ctx, core)).toMatchObject({ ok: true });
    expect(r.deferred()).toBe(1);
    expect(r.messages.map((m) => m.content)).toEqual(['Paris.']);
    expect(fake.chatRequests()[0]!.model).toBe('fake-chat');
    expect(await core.history.asChatMessages('t:1')).toEqual([
      { role: 'user', content: 'Capital of France?' },
      { role: 'assistant', content: 'Paris.' },
    ]);
  });

  it('JSON mode shows the joined answer pretty-printed in a json fence', async () => {
    fake.setChatReply('{"a":1,"b":[true,null]}');
    const r = recorder('t:json', { prompt: 'give JSON', json: true });
    await runCommand(chatCommand, r.ctx, core);
    expect(fake.chatRequests()[0]!.response_format).toBe('json');
    expect(r.messages[0]!.content).toBe('```json\n{\n  "a": 1,\n  "b": [\n    true,\n    null\n  ]\n}\n```');
  });

  it('JSON mode with invalid JSON shows the raw text and says so', async () => {
    fake.setChatReply('{"a":');
    const r = recorder('t:badjson', { prompt: 'give JSON', json: true });
    await runCommand(chatCommand, r.ctx, core);
    expect(r.messages[0]!.content).toMatch(
      /^\{"a":\n\n⚠️ The model was asked for JSON but its answer is not valid JSON/,
    );
  });

  it('web_search images mode passes the mode and shows the image results as image links', async () => {
    fake.setChatReply('Here: ![fox](https://img.example/fox.png) and https://img.example/owl.jpg');
    const r = recorder('t:img', { prompt: 'foxes', web_search: 'images' });
    await runCommand(chatCommand, r.ctx, core);
    expect(fake.chatRequests()[0]!.web_search).toBe('images');
    expect(r.messages[1]!.imageLinks).toEqual([
      { url: 'https://img.example/fox.png', alt: 'fox' },
      { url: 'https://img.example/owl.jpg', alt: '' },
    ]);
  });

  it('web_search off sends nothing (the server default)', async () => {
    const r = recorder('t:off', { prompt: 'x', web_search: 'off' });
    await runCommand(chatCommand, r.ctx, core);
    expect('web_search' in fake.chatRequests()[0]!).toBe(false);
  });

  it('a stream cut off after some text keeps the text, appends the reason, and leaves the history unchanged', async () => {
    fake.setChatReply('This answer will be cut off somewhere in the middle of it.');
    fake.enqueue('chat', { stream: { dropAfterChunks: 4 } });
    const r = recorder('t:cut', { prompt: 'go' });
    const outcome = await runCommand(chatCommand, r.ctx, core);
    expect(outcome).toMatchObject({ ok: false, errorCode: 'stream_interrupted' });
    expect(r.messages[0]!.content).toMatch(/^This.*\n\n⚠️ The answer was cut off/s);
    expect(r.ephemerals).toEqual([]);
    expect(await core.history.get('t:cut')).toEqual([]);
  });

  it('an answer stopped for a shutdown keeps its partial text with the reason, and joins the history marked as stopped', async () => {
    fake.enqueue('chat', { stream: { pieces: ['One, ', 'two, ', 'three, ', 'four, ', 'five.'], chunkDelayMs: 150 } });
    const r = recorder('t:stopped', { prompt: 'count' });
    const controller = new AbortController();
    r.ctx.signal = controller.signal;
    const running = runCommand(chatCommand, r.ctx, core);
    await vi.waitFor(() => expect(r.messages[0]?.content).toMatch(/^One, two, /), { timeout: 5000, interval: 20 });
    controller.abort(new StopRequest('shutdown'));
    expect(await running).toMatchObject({ ok: false, errorCode: 'aborted' });
    expect(r.messages[0]!.content).toMatch(
      /^One, two, .*\n\n⚠️ Stopped: the bot is restarting\. Ask again in a moment\.$/s,
    );
    expect(r.ephemerals).toEqual([]);
    const stored = await core.history.get('t:stopped');
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(stored[1]!.content).toMatch(/^One, two, .*\n\[stopped\]$/s);
  });

  it('a service error before any text is told to the user ephemerally; history untouched', async () => {
    fake.enqueue('chat', { status: 401 });
    const r = recorder('t:401', { prompt: 'go' });
    await runCommand(chatCommand, r.ctx, core);
    expect(r.messages).toEqual([]);
    expect(r.ephemerals).toEqual([
      "The generation service refused the bot's API key. An admin needs to check SERVICE_API_KEY. (ref TESTREF)",
    ]);
    expect(await core.history.get('t:401')).toEqual([]);
  });
});

describe('the deferral goes on while the history is read and the service asked', () => {
  /** A recorder whose defer() takes `ms` and then resolves (or rejects with `error`); the times of its settling and of each send. */
  function slowDeferral(id: string, options: Record<string, string>, ms: number, error?: Error) {
    const r = recorder(id, options);
    const times = { deferred: NaN, sends: [] as number[] };
    r.ctx.reply.defer = () =>
      new Promise<void>((resolve, reject) =>
        setTimeout(() => {
          times.deferred = Date.now();
          if (error) reject(error);
          else resolve();
        }, ms),
      );
    const send = r.ctx.reply.send.bind(r.ctx.reply);
    r.ctx.reply.send = async (m) => {
      times.sends.push(Date.now());
      return send(m);
    };
    return { r, times };
  }

  it('/chat asks the service before the deferral is done, and shows text only after it', async () => {
    fake.setChatReply('Paris.');
    const { r, times } = slowDeferral('t:defer', { prompt: 'Capital of France?' }, 300);
    expect(await runCommand(chatCommand, r.ctx, core)).toMatchObject({ ok: true });
    expect(fake.chatRequests()).toHaveLength(1);
    expect(fake.lastRequest('chat')!.receivedAt).toBeLessThan(times.deferred);
    expect(times.sends.length).toBeGreaterThan(0);
    expect(Math.min(...times.sends)).toBeGreaterThanOrEqual(times.deferred);
    expect(r.messages.map((m) => m.content)).toEqual(['Paris.']);
  });

  it('/complete asks the service before the deferral is done', async () => {
    fake.setCompletionReply(' a fox.');
    const { r, times } = slowDeferral('t:defer-c', { prompt: 'Once' }, 300);
    expect(await runCommand(completeCommand, r.ctx, core)).toMatchObject({ ok: true });
    expect(fake.lastRequest('completions')!.receivedAt).toBeLessThan(times.deferred);
    expect(r.messages.map((m) => m.content)).toEqual(['Once a fox.']);
  });

  it('a refused deferral cancels the service request, shows nothing and leaves the history as it was', async () => {
    fake.enqueue('chat', {
      stream: { text: 'A long answer that is still streaming when the deferral fails.', chunkDelayMs: 100 },
    });
    const closed = new Promise<{ finished: boolean }>((resolve) => fake.events.once('streamClosed', resolve));
    const { r } = slowDeferral('t:defer-fail', { prompt: 'hello' }, 150, new Error('Unknown interaction'));
    expect(await runCommand(chatCommand, r.ctx, core)).toMatchObject({ ok: false });
    expect((await closed).finished).toBe(false);
    expect(r.messages).toEqual([]);
    expect(await core.history.get('t:defer-fail')).toEqual([]);
  });
});

describe('/complete and /imagine in the core', () => {
  it('/complete streams the prompt followed by its completion', async () => {
    fake.setCompletionReply(' there was a fox.');
    const r = recorder('t:c', { prompt: 'Once upon a time' });
    await runCommand(completeCommand, r.ctx, core);
    expect(r.messages.map((m) => m.content)).toEqual(['Once upon a time there was a fox.']);
  });

  it("/imagine posts the image as a file of the aspect ratio's size", async () => {
    const r = recorder('t:i', { prompt: 'a fox', aspect_ratio: 'portrait', style: 'natural' });
    await runCommand(imagineCommand, r.ctx, core);
    // On a busy machine a progress line ("Generating… 3 s") comes first: the image is the one file posted.
    const files = r.messages.flatMap((m) => m.files ?? []);
    expect(files).toHaveLength(1);
    const file = files[0]!;
    expect(file.mimeType).toBe('image/png');
    const meta = await sharp(file.data).metadata();
    expect([meta.width, meta.height]).toEqual([832, 1216]);
    expect(fake.lastRequest('images')!.body).toEqual({
      prompt: 'a fox',
      aspect_ratio: 'portrait',
      style: 'natural',
      response_format: 'b64_json',
    });
  });

  it('/imagine with a bad aspect ratio says which values work, without calling the service', async () => {
    const r = recorder('t:i2', { prompt: 'a fox', aspect_ratio: 'wide' });
    await runCommand(imagineCommand, r.ctx, core);
    expect(r.ephemerals).toEqual(['`aspect_ratio` must be one of `square`, `portrait`, `landscape`.']);
    expect(fake.requests).toEqual([]);
  });
});
