/**
 * Conformance of the core's service client with docs/service-api.md, against the strict fake
 * service over real HTTP: one test (or table row) per parameter of §4.1–§4.5 and per rule.
 */

import { getEventListeners, once } from 'node:events';
import { createServer } from 'node:http';
import { Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonAnswer } from '../../src/core/features/json-answer.ts';
import { describeImage } from '../../src/core/media/image-ops.ts';
import { imagesFromResult } from '../../src/core/media/images.ts';
import { isImageModel, ServiceClient } from '../../src/core/service/client.ts';
import {
  AbortedError,
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  InvalidRequestError,
  InvalidResponseError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
  ServiceError,
  StreamInterruptedError,
} from '../../src/core/service/errors.ts';
import type { ChatCompletionChunk } from '../../src/core/service/schemas.ts';
import type { Stream } from '../../src/core/service/stream.ts';
import { createLogger } from '../../src/log.ts';
import { FakeService } from '../fakes/service.ts';

let fake: FakeService;
let service: ServiceClient;
const sleeps: number[] = [];

function client(overrides: Partial<ConstructorParameters<typeof ServiceClient>[0]> = {}): ServiceClient {
  return new ServiceClient({
    baseUrl: `${fake.baseUrl}/v1`,
    apiKey: fake.apiKey,
    backoffBaseMs: 1,
    sleep: async (ms) => void sleeps.push(ms),
    ...overrides,
  });
}

beforeAll(async () => {
  fake = await FakeService.start();
  service = client();
});
afterEach(() => {
  fake.reset();
  sleeps.length = 0;
});
afterAll(async () => {
  await service.close();
  await fake.close();
});

const user = (content: string) => ({ role: 'user' as const, content });
const chatBody = { model: 'fake-chat', messages: [user('hello')] };
const requestsTo = (route: string) => fake.requests.filter((r) => r.route === route).length;

async function text(stream: Stream<ChatCompletionChunk>): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += chunk.choices[0]?.delta?.content ?? '';
  return out;
}

async function caught(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    return error as ServiceError;
  }
  throw new Error('expected a ServiceError');
}

describe('base URL', () => {
  it.each(['', '/', '/v1', '/v1/', '/v1//'])('works with the base URL ending in %j', async (suffix) => {
    const c = client({ baseUrl: `${fake.baseUrl}${suffix}` });
    const models = await c.models.list();
    expect(models.length).toBeGreaterThan(0);
    expect(fake.lastRequest()?.path).toBe('/v1/models');
    await c.close();
  });
});

describe('§5 authentication', () => {
  it('sends Authorization: Bearer <key> and Content-Type: application/json', async () => {
    await service.chat.completions.create(chatBody);
    const headers = fake.lastRequest('chat')!.headers;
    expect(headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(headers['content-type']).toBe('application/json');
  });
});

describe('§4.1 chat completions: parameters', () => {
  it('model and messages: required, sent as given; the answer is a §2.2 chat completion', async () => {
    fake.setChatReply('Hi there');
    const completion = await service.chat.completions.create(chatBody);
    expect(completion.choices[0]!.message.content).toBe('Hi there');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
    expect(fake.chatRequests()[0]).toEqual(chatBody);
  });

  it('defaults are left to the server: unset parameters are not sent', async () => {
    await service.chat.completions.create(chatBody);
    expect(Object.keys(fake.chatRequests()[0]!).sort()).toEqual(['messages', 'model']);
  });

  it.each([
    ['model', { model: '' }, /model is required/],
    ['messages', { messages: [] }, /messages must hold at least one message/],
    ['messages.0.role', { messages: [{ role: 'robot', content: 'x' }] }, /must be "system", "user" or "assistant"/],
    ['temperature', { temperature: 2.01 }, /temperature must be a number from 0 to 2/],
    ['temperature', { temperature: -0.1 }, /temperature must be a number from 0 to 2/],
    ['max_tokens', { max_tokens: 0 }, /max_tokens must be a whole number of at least 1/],
    ['max_tokens', { max_tokens: 1.5 }, /max_tokens must be a whole number/],
    ['stream', { stream: 'yes' }, /stream must be true or false/],
    ['top_p', { top_p: 1.5 }, /top_p must be a number from 0 to 1/],
    ['frequency_penalty', { frequency_penalty: 2.5 }, /frequency_penalty must be a number from -2 to 2/],
    ['presence_penalty', { presence_penalty: -3 }, /presence_penalty must be a number from -2 to 2/],
    ['web_search', { web_search: true }, /web_search must be false, "auto", "force" or "images"/],
    ['web_search', { web_search: 'always' }, /web_search must be false/],
    ['response_format', { response_format: 'json_object' }, /response_format must be "json"/],
    ['request', { n: 2 }, /fields the service does not accept: n/],
  ])('%s out of range is refused before the network, naming the field', async (field, patch, message) => {
    const error = await caught(service.chat.completions.create({ ...chatBody, ...patch } as never));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).field).toBe(field);
    expect(error.message).toMatch(message);
    expect(requestsTo('chat')).toBe(0);
  });

  it.each([
    ['temperature', 0],
    ['temperature', 2],
    ['max_tokens', 1],
    ['top_p', 0],
    ['top_p', 1],
    ['frequency_penalty', -2],
    ['presence_penalty', 2],
    ['web_search', false],
    ['web_search', 'auto'],
    ['web_search', 'force'],
    ['web_search', 'images'],
    ['response_format', 'json'],
  ])('%s = %j is accepted by the strict server and sent as given', async (field, value) => {
    await service.chat.completions.create({ ...chatBody, [field]: value });
    expect(fake.chatRequests()[0]![field as 'temperature']).toEqual(value);
  });

  it('an unknown model is a NotFoundError with a sentence naming the model problem', async () => {
    const error = await caught(service.chat.completions.create({ ...chatBody, model: 'nope' }));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.userMessage).toMatch(/model is not available/);
  });
});

describe('§4.1 image input rules', () => {
  it('rule 1: only JPEG or PNG base64 data URLs pass; a GIF data URL is refused before the network', async () => {
    const gif = { type: 'image_url' as const, image_url: { url: 'data:image/gif;base64,R0lGODlh' } };
    const error = await caught(
      service.chat.completions.create({ model: 'fake-vision', messages: [{ role: 'user', content: [gif] }] } as never),
    );
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.message).toMatch(/data:image\/jpeg or data:image\/png/);
    expect(requestsTo('chat')).toBe(0);
  });

  it('rules 1–2: an image part prepared by media.ts is accepted by a vision model', async () => {
    const { prepareImageInput } = await import('../../src/core/media/image-ops.ts');
    const image = await prepareImageInput(
      await sharp({ create: { width: 2000, height: 1000, channels: 3, background: '#123456' } })
        .webp()
        .toBuffer(),
      'x.webp',
    );
    const completion = await service.chat.completions.create({
      model: 'fake-vision',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: image.url } },
          ],
        },
      ],
    });
    expect(completion.choices[0]!.message.content).toBeTruthy();
    expect(image.width).toBe(1024);
  });
});

describe('§4.1 streaming rules', () => {
  it('rule 1–2: chunks join to the answer; chunks without delta or content are skipped', async () => {
    fake.setChatReply('The quick brown fox jumps over the lazy dog.');
    fake.enqueue('chat', { stream: { emptyDeltas: true, comments: true, crlf: true } });
    const stream = await service.chat.completions.create({ ...chatBody, stream: true });
    expect(await text(stream)).toBe('The quick brown fox jumps over the lazy dog.');
  });

  it('multi-line data fields are joined before parsing', async () => {
    fake.setChatReply('multi line');
    fake.enqueue('chat', { stream: { multiLineData: true } });
    expect(await text(await service.chat.completions.create({ ...chatBody, stream: true }))).toBe('multi line');
  });

  it('a connection that closes early is an error, never a silent truncation (and is not retried)', async () => {
    fake.setChatReply('a long answer that will be cut off before its end');
    fake.enqueue('chat', { stream: { dropAfterChunks: 3 } });
    const stream = await service.chat.completions.create({ ...chatBody, stream: true });
    const error = await caught(text(stream));
    expect(error).toBeInstanceOf(StreamInterruptedError);
    expect(requestsTo('chat')).toBe(1);
  });

  it("an error object arriving mid-stream is raised with the service's message", async () => {
    fake.enqueue('chat', { stream: { errorMidStream: { message: 'model overloaded', type: 'server_error' } } });
    const error = await caught(text(await service.chat.completions.create({ ...chatBody, stream: true })));
    expect(error).toBeInstanceOf(StreamInterruptedError);
    expect(error.message).toMatch(/model overloaded/);
  });

  it('a malformed data line is an error, not skipped', async () => {
    fake.enqueue('chat', { stream: { malformedLine: 'data: {"choices":[' } });
    const error = await caught(text(await service.chat.completions.create({ ...chatBody, stream: true })));
    expect(error).toBeInstanceOf(InvalidResponseError);
  });

  it('batches() yields the chunks of each network read, which join to the same answer, and a stream reads only once', async () => {
    const answer = 'Batches carry every chunk of one read, in order.';
    fake.setChatReply(answer);
    fake.enqueue('chat', { stream: { emptyDeltas: true } });
    const stream = await service.chat.completions.create({ ...chatBody, stream: true });
    const sizes: number[] = [];
    let joined = '';
    for await (const chunks of stream.batches()) {
      sizes.push(chunks.length);
      for (const chunk of chunks) joined += chunk.choices[0]?.delta?.content ?? '';
    }
    expect(joined).toBe(answer);
    expect(sizes.every((n) => n > 0)).toBe(true);
    await expect(stream.batches().next()).rejects.toThrow(/only once/);
  });

  it('texts() yields one string per network read that carries text, which join to the answer; a chunk nobody holds outlives no read', async () => {
    const answer = 'Texts carry the pieces of one read, joined.';
    fake.setChatReply(answer);
    fake.enqueue('chat', { stream: { emptyDeltas: true } });
    const stream = await service.chat.completions.create({ ...chatBody, stream: true });
    const chunks: WeakRef<object>[] = [];
    const reader = stream.texts((chunk) => {
      chunks.push(new WeakRef(chunk));
      return chunk.choices[0]?.delta?.content;
    });
    let joined = '';
    for await (const texts of reader) {
      expect(texts).toHaveLength(1);
      expect(texts[0]!.length).toBeGreaterThan(0);
      joined += texts[0];
    }
    expect(joined).toBe(answer);
    // The role chunk and the empty deltas were parsed too (and carried no text).
    expect(chunks.length).toBeGreaterThan(answer.split(' ').length);
    expect(stream.finishReason).toBe('stop');
    await new Promise((resolve) => setImmediate(resolve));
    setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
    expect(chunks.filter((c) => c.deref() !== undefined)).toHaveLength(0);
    await expect(stream.texts(() => '').next()).rejects.toThrow(/only once/);
  });

  // Read as batches of chunks (Stream.batches) or as each read's text (Stream.texts, what textOf reads).
  const readings: Array<[string, (stream: Stream<ChatCompletionChunk>) => AsyncIterable<string>]> = [
    [
      'batches()',
      async function* (stream) {
        for await (const chunks of stream.batches()) for (const c of chunks) yield c.choices[0]?.delta?.content ?? '';
      },
    ],
    [
      'texts()',
      async function* (stream) {
        for await (const texts of stream.texts((c) => c.choices[0]?.delta?.content)) yield texts.join('');
      },
    ],
  ];
  it.each(readings)(
    'a malformed line after text (%s): the text before it is delivered, then the error',
    async (_, read) => {
      fake.setChatReply('Before the bad line.');
      fake.enqueue('chat', { stream: { malformedLine: 'data: {"choices":[', afterChunks: 3, chunkDelayMs: 0 } });
      const stream = await service.chat.completions.create({ ...chatBody, stream: true });
      let seen = '';
      const error = await caught(
        (async () => {
          for await (const text of read(stream)) seen += text;
        })(),
      );
      expect(error).toBeInstanceOf(InvalidResponseError);
      // The role chunk and two pieces precede the bad line (afterChunks: 3).
      expect(seen.length).toBeGreaterThan(0);
      expect('Before the bad line.'.startsWith(seen)).toBe(true);
    },
  );

  it('leaving the loop early cancels the HTTP request (the server sees its socket close)', async () => {
    fake.setChatReply('x'.repeat(2000));
    fake.enqueue('chat', { stream: { chunkDelayMs: 20 } });
    const stream = await service.chat.completions.create({ ...chatBody, stream: true });
    const serverSockets = [...(fake as unknown as { sockets: Set<import('node:net').Socket> }).sockets];
    const streaming = serverSockets.filter((s) => !s.destroyed);
    expect(streaming.length).toBeGreaterThan(0);
    for await (const chunk of stream) if (chunk.choices[0]?.delta?.content) break;
    await new Promise((r) => setTimeout(r, 100));
    expect(streaming.some((s) => s.destroyed)).toBe(true);
    expect(fake.pending('chat')).toBe(0);
  });

  it('a long-lived signal keeps no listener from streams that are over (read, left early, or refused)', async () => {
    const shutdown = new AbortController();
    fake.setChatReply('short answer');
    for (let i = 0; i < 3; i++)
      await text(await service.chat.completions.create({ ...chatBody, stream: true }, { signal: shutdown.signal }));
    const left = await service.chat.completions.create({ ...chatBody, stream: true }, { signal: shutdown.signal });
    for await (const _chunk of left) break;
    fake.enqueue('chat', { status: 400 });
    await caught(service.chat.completions.create({ ...chatBody, stream: true }, { signal: shutdown.signal }));
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
  });

  it('aborting the signal cancels a running stream with AbortedError', async () => {
    fake.setChatReply('y'.repeat(500));
    fake.enqueue('chat', { stream: { chunkDelayMs: 20 } });
    const controller = new AbortController();
    const stream = await service.chat.completions.create({ ...chatBody, stream: true }, { signal: controller.signal });
    const error = await caught(
      (async () => {
        for await (const chunk of stream) if (chunk.choices[0]?.delta?.content) controller.abort();
      })(),
    );
    expect(error).toBeInstanceOf(AbortedError);
  });
});

describe('§4.1 JSON mode rules', () => {
  it('rules 1–3: streamed pieces are joined, then parsed', async () => {
    fake.setChatReply('{"animal": "fox", "legs": 4}');
    const stream = await service.chat.completions.create({ ...chatBody, response_format: 'json', stream: true });
    const joined = await text(stream);
    expect(parseJsonAnswer(joined).value).toEqual({ animal: 'fox', legs: 4 });
    expect(fake.chatRequests()[0]!.response_format).toBe('json');
  });

  it('invalid JSON from the model is an InvalidJsonError that keeps the raw text', async () => {
    fake.setChatReply('{"animal": "fox",');
    const completion = await service.chat.completions.create({ ...chatBody, response_format: 'json' });
    expect(() => parseJsonAnswer(completion.choices[0]!.message.content!)).toThrow(
      expect.objectContaining({ code: 'invalid_json', raw: '{"animal": "fox",' }),
    );
  });
});

describe('§4.2 text completions', () => {
  it('model, prompt, temperature, max_tokens are sent; the answer is a §2.3 text completion', async () => {
    fake.setCompletionReply(' and they lived happily ever after.');
    const completion = await service.completions.create({
      model: 'fake-chat',
      prompt: 'Once upon a time',
      temperature: 0.2,
      max_tokens: 50,
    });
    expect(completion.choices[0]!.text).toBe(' and they lived happily ever after.');
    expect(completion.id).toMatch(/^cmpl-/);
    expect(fake.lastRequest('completions')!.body).toEqual({
      model: 'fake-chat',
      prompt: 'Once upon a time',
      temperature: 0.2,
      max_tokens: 50,
    });
  });

  it('stream: true yields text pieces that join to the completion', async () => {
    fake.setCompletionReply('streamed completion');
    const stream = await service.completions.create({ model: 'fake-chat', prompt: 'p', stream: true });
    let out = '';
    for await (const chunk of stream) out += chunk.choices[0]?.text ?? '';
    expect(out).toBe('streamed completion');
  });

  it.each([
    [{ prompt: 7 }, 'prompt'],
    [{ temperature: 3 }, 'temperature'],
    [{ max_tokens: -1 }, 'max_tokens'],
  ])('%j is refused before the network', async (patch, field) => {
    const error = await caught(service.completions.create({ model: 'fake-chat', prompt: 'p', ...patch } as never));
    expect((error as InvalidRequestError).field).toBe(field);
    expect(requestsTo('completions')).toBe(0);
  });
});

describe('§4.3 image generation', () => {
  it.each([
    ['square', 1024, 1024],
    ['portrait', 832, 1216],
    ['landscape', 1216, 832],
  ] as const)(
    'aspect_ratio %s gives %i×%i (url fetched through the view endpoint with auth)',
    async (aspect_ratio, width, height) => {
      const result = await service.images.generate({ prompt: 'a fox', aspect_ratio });
      expect(result.data[0]!.url).toMatch(/\/v1\/images\/view\//);
      const [image] = await imagesFromResult(result, service.images, {
        describe: describeImage,
        expected: aspect_ratio,
      });
      expect([image!.width, image!.height, image!.mimeType]).toEqual([width, height, 'image/png']);
      expect(fake.lastRequest('view')!.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    },
  );

  it('b64_json, hxd and a list of formats each decode to the same image', async () => {
    const result = await service.images.generate({
      prompt: 'a fox',
      aspect_ratio: 'landscape',
      response_format: ['url', 'b64_json', 'hxd'],
    });
    const images = await imagesFromResult(result, service.images, { describe: describeImage });
    expect(images.map((i) => i.source).sort()).toEqual(['b64_json', 'hxd', 'url']);
    expect(new Set(images.map((i) => i.data.toString('base64'))).size).toBe(1);
    expect(images.every((i) => i.width === 1216 && i.height === 832)).toBe(true);
  });

  it('every optional parameter of the table is accepted by the strict server when valid', async () => {
    const reference = `data:image/png;base64,${(
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
        .png()
        .toBuffer()
    ).toString('base64')}`;
    const body = {
      prompt: 'a fox',
      style: 'natural' as const,
      aspect_ratio: 'portrait' as const,
      response_format: 'b64_json' as const,
      user_selected_model: 'Fake Image',
      negative_prompt: 'blur',
      seed: 42,
      disable_safety_checker: false,
      force_prompt_enhancement: true,
      reference_image_url: 'https://example.com/ref.png',
      reference_image: reference,
      denoising_strength: 0.3,
    };
    const result = await service.images.generate(body);
    expect(fake.lastRequest('images')!.body).toEqual(body);
    expect(result.data[0]!.b64_json).toBeTruthy();
  });

  it.each([
    ['style', { style: 'cartoon' }, /style must be one of vivid, natural, preview, upscaled/],
    ['aspect_ratio', { aspect_ratio: 'wide' }, /aspect_ratio must be one of square, portrait, landscape/],
    ['response_format', { response_format: 'png' }, /response_format must be "url", "b64_json" or "hxd"/],
    ['response_format', { response_format: [] }, /at least one format/],
    ['seed', { seed: 1.5 }, /seed must be a whole number/],
    ['denoising_strength', { denoising_strength: 1.1 }, /denoising_strength must be a number from 0 to 1/],
    ['reference_image', { reference_image: 'data:image/jpeg;base64,AAAA' }, /data:image\/png;base64/],
    ['reference_image_url', { reference_image_url: 'not a url' }, /http\(s\) URL/],
    ['disable_safety_checker', { disable_safety_checker: 'yes' }, /true or false/],
    ['prompt', { prompt: '' }, /prompt is required/],
  ])('%s invalid is refused before the network, naming the field and allowed values', async (field, patch, message) => {
    const error = await caught(service.images.generate({ prompt: 'a fox', ...patch } as never));
    expect((error as InvalidRequestError).field).toBe(field);
    expect(error.message).toMatch(message);
    expect(requestsTo('images')).toBe(0);
  });

  it('§8: disable_safety_checker without the account permission is a PermissionDeniedError', async () => {
    const error = await caught(service.images.generate({ prompt: 'a fox', disable_safety_checker: true }));
    expect(error).toBeInstanceOf(PermissionDeniedError);
  });

  it('an unknown user_selected_model is refused by the service with a clear error', async () => {
    const error = await caught(service.images.generate({ prompt: 'a fox', user_selected_model: 'No Such Model' }));
    expect([BadRequestError, NotFoundError].some((C) => error instanceof C)).toBe(true);
  });
});

describe('§4.4 image models and §4.5 models', () => {
  it('image models come as a bare array or inside { data }', async () => {
    const bare = await service.images.availableModels();
    expect(bare.map((m) => m.display_name)).toEqual(['Fake Image', 'Fake Image XL']);
    const enveloped = await FakeService.start({ imageModelsEnvelope: true });
    const c = new ServiceClient({ baseUrl: enveloped.baseUrl, apiKey: enveloped.apiKey });
    expect((await c.images.availableModels()).map((m) => m.display_name)).toEqual(['Fake Image', 'Fake Image XL']);
    await c.close();
    await enveloped.close();
  });

  it('image models are recognised by type "image"; extra fields are kept', async () => {
    const models = await service.models.list();
    expect(models.filter(isImageModel).map((m) => m.id)).toEqual(['fake-image', 'fake-image-xl']);
    expect(models.find((m) => m.id === 'fake-vision')).toMatchObject({ vision: true, owned_by: 'fake-service' });
  });
});

describe('errors, retries and timeouts', () => {
  it('close() at shutdown aborts a request the service never answers instead of waiting for its timeout', async () => {
    // A service that takes the request and never answers (headers timeout: 60 s).
    const server = createServer(() => undefined);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const silent = new ServiceClient({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'k', headersTimeoutMs: 60_000 });
    const pending = silent.models.list().then(
      () => 'answered',
      (error: unknown) => error,
    );
    await once(server, 'request');
    await silent.close();
    const outcome = await pending;
    server.closeAllConnections();
    server.close();
    expect(outcome).toBeInstanceOf(ServiceError);
  });

  it.each([
    [401, 'AuthenticationError', AuthenticationError, 'authentication', /API key/],
    [403, 'PermissionDeniedError', PermissionDeniedError, 'permission_denied', /does not allow/],
    [404, 'NotFoundError', NotFoundError, 'not_found', /could not find|not available/],
    [400, 'BadRequestError', BadRequestError, 'bad_request', /rejected the request/],
    [422, 'BadRequestError', BadRequestError, 'bad_request', /rejected the request/],
  ] as const)(
    'HTTP %i is a %s with a stable code and a user sentence',
    async (status, _name, Class, code, sentence) => {
      fake.enqueue('chat', { status });
      const error = await caught(service.chat.completions.create(chatBody));
      expect(error).toBeInstanceOf(Class);
      expect(error.code).toBe(code);
      expect(error.userMessage).toMatch(sentence);
      expect(requestsTo('chat')).toBe(1);
    },
  );

  it('429 and 5xx are retried (up to 2 times) with backoff, honouring retry-after', async () => {
    fake.enqueue('chat', { status: 429, headers: { 'retry-after': '2' } });
    fake.enqueue('chat', { status: 503 });
    const completion = await service.chat.completions.create(chatBody);
    expect(completion.choices[0]!.message.content).toBeTruthy();
    expect(requestsTo('chat')).toBe(3);
    expect(sleeps[0]).toBe(2000);
    expect(sleeps[1]).toBeGreaterThan(0);
  });

  it('after 2 retries the error is final: RateLimitError carries retry-after for the user', async () => {
    for (let i = 0; i < 3; i++) fake.enqueue('chat', { status: 429, headers: { 'retry-after': '3' } });
    const error = await caught(service.chat.completions.create(chatBody));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(3000);
    expect(error.userMessage).toMatch(/Try again in 3 s/);
    expect(requestsTo('chat')).toBe(3);
  });

  it('a retry-after longer than the cap is not waited out', async () => {
    fake.enqueue('chat', { status: 429, headers: { 'retry-after': '3600' } });
    const error = await caught(service.chat.completions.create(chatBody));
    expect(error).toBeInstanceOf(RateLimitError);
    expect(requestsTo('chat')).toBe(1);
  });

  it('5xx after retries is a ServerError; a streaming request is retried only before its first byte', async () => {
    for (let i = 0; i < 3; i++) fake.enqueue('chat', { status: 502 });
    expect(await caught(service.chat.completions.create({ ...chatBody, stream: true }))).toBeInstanceOf(ServerError);
    expect(requestsTo('chat')).toBe(3);
  });

  it('a connection reset before any byte is a ConnectionError after retries', async () => {
    for (let i = 0; i < 3; i++) fake.enqueue('chat', { resetConnection: true });
    const error = await caught(service.chat.completions.create(chatBody));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(requestsTo('chat')).toBe(3);
  });

  it('a reset is retried and then succeeds', async () => {
    fake.enqueue('chat', { resetConnection: true });
    await service.chat.completions.create(chatBody);
    expect(requestsTo('chat')).toBe(2);
  });

  it('headers timeout and silence between chunks are TimeoutErrors', async () => {
    const c = client({ headersTimeoutMs: 100, bodyTimeoutMs: 100 });
    fake.enqueue('chat', { delayHeadersMs: 1000 });
    expect(await caught(c.chat.completions.create(chatBody))).toMatchObject({ code: 'timeout', phase: 'headers' });
    fake.enqueue('chat', { stream: { chunkDelayMs: 1000 } });
    const stream = await c.chat.completions.create({ ...chatBody, stream: true });
    expect(await caught(text(stream))).toMatchObject({ code: 'timeout', phase: 'body' });
    await c.close();
  });

  it('an unreachable service is a ConnectionError', async () => {
    const c = client({ baseUrl: 'http://127.0.0.1:9', maxRetries: 0 });
    expect(await caught(c.models.list())).toBeInstanceOf(ConnectionError);
    await c.close();
  });

  it('the API key never appears in an error, a user sentence, or a log line', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger({ level: 'trace', secrets: [fake.apiKey], destination });
    const key = fake.apiKey;
    const echoing = {
      error: { message: `Incorrect API key provided: ${key}`, type: 'invalid_request_error', code: 'invalid_api_key' },
    };
    const scripted = [
      { status: 401, body: echoing },
      { status: 400, body: { error: { message: `bad ${key}` } } },
      { status: 500, body: `oops ${key}` },
      { status: 500, body: `oops ${key}` },
      { status: 500, body: `oops ${key}` },
    ];
    for (const s of scripted) fake.enqueue('chat', s);
    fake.enqueue('chat', { stream: { errorMidStream: { message: `mid ${key}` } } });
    const errors: ServiceError[] = [];
    errors.push(await caught(service.chat.completions.create(chatBody)));
    errors.push(await caught(service.chat.completions.create(chatBody)));
    errors.push(await caught(service.chat.completions.create(chatBody)));
    errors.push(await caught(text(await service.chat.completions.create({ ...chatBody, stream: true }))));
    errors.push(
      await caught(new ServiceClient({ baseUrl: fake.baseUrl, apiKey: 'sk-wrong-key-0123456789' }).models.list()),
    );
    for (const error of errors) {
      log.error({ err: error, headers: { authorization: `Bearer ${key}` } }, `failed: ${error.message} ${key}`);
      expect(`${error.message} ${error.userMessage} ${String(error.stack)}`).not.toContain(key);
    }
    expect(lines.length).toBe(errors.length);
    expect(lines.join('\n')).not.toContain(key);
  });
});
