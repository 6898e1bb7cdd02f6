/**
 * Tests of the fake generation service itself, spoken to with bare undici (no project client).
 */
import { createParser } from 'eventsource-parser';
import sharp from 'sharp';
import { fetch, request, errors as undiciErrors } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY, FakeService, type RecordedRequest } from './service.ts';

let fake: FakeService;

beforeAll(async () => {
  fake = await FakeService.start();
});
afterEach(() => {
  fake.reset();
});
afterAll(async () => {
  await fake.close();
});

const auth = () => ({ authorization: `Bearer ${fake.apiKey}` });

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await request(`${fake.baseUrl}${path}`, {
    method: 'POST',
    headers: { ...auth(), 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) as any };
}

async function get(path: string, headers: Record<string, string> = auth()) {
  const res = await request(`${fake.baseUrl}${path}`, { headers });
  const data = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, data, json: () => JSON.parse(data.toString('utf8')) as any };
}

/** Opens a stream and collects every network read ('data' event) until the end or an error. */
async function readStream(path: string, body: unknown, opts: { headersTimeout?: number } = {}) {
  const res = await request(`${fake.baseUrl}${path}`, {
    method: 'POST',
    headers: { ...auth(), 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...(opts.headersTimeout ? { headersTimeout: opts.headersTimeout } : {}),
  });
  const reads: Buffer[] = [];
  const error = await new Promise<Error | undefined>((resolve) => {
    res.body.on('data', (chunk: Buffer) => reads.push(chunk));
    res.body.on('end', () => resolve(undefined));
    res.body.on('error', (err: Error) => resolve(err));
  });
  return { status: res.statusCode, headers: res.headers, reads, text: Buffer.concat(reads).toString('utf8'), error };
}

/** Parses SSE with a real parser; returns the data of every event and the comments. */
function parseSse(text: string) {
  const data: string[] = [];
  const comments: string[] = [];
  const parser = createParser({ onEvent: (e) => data.push(e.data), onComment: (c) => comments.push(c) });
  parser.feed(text);
  return { data, comments };
}

function chatDeltas(events: string[]): string {
  return events
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as { choices: Array<{ delta?: { content?: string } }> })
    .map((c) => c.choices[0]?.delta?.content ?? '')
    .join('');
}

const chatBody = (extra: Record<string, unknown> = {}) => ({
  model: 'fake-chat',
  messages: [{ role: 'user', content: 'Hello there' }],
  ...extra,
});

let pngDataUrl: string;
let jpegDataUrl: string;
beforeAll(async () => {
  const img = sharp({ create: { width: 8, height: 8, channels: 3, background: '#3366cc' } });
  pngDataUrl = `data:image/png;base64,${(await img.clone().png().toBuffer()).toString('base64')}`;
  jpegDataUrl = `data:image/jpeg;base64,${(await img.clone().jpeg().toBuffer()).toString('base64')}`;
});

describe('auth and routing', () => {
  it('refuses requests without the key, or with a wrong one, without echoing the key', async () => {
    const none = await post('/v1/chat/completions', chatBody(), { authorization: '' });
    expect(none.status).toBe(401);
    expect(none.json()).toEqual({
      error: {
        message: 'Incorrect API key provided.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      },
    });
    const wrong = await get('/v1/models', { authorization: 'Bearer sk-wrong-secret-123' });
    expect(wrong.status).toBe(401);
    expect(wrong.data.toString()).not.toContain('sk-wrong-secret-123');
    expect(wrong.json().error.code).toBe('invalid_api_key');
    expect(fake.requests.map((r) => r.route)).toEqual(['chat', 'models']);
  });

  it('answers 404 for unknown paths and 405 for wrong methods, OpenAI style', async () => {
    const missing = await get('/v1/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.json().error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringContaining('/v1/nothing-here'),
    });
    const wrongMethod = await get('/v1/chat/completions');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toBe('POST');
    const postToModels = await post('/v1/models', {});
    expect(postToModels.status).toBe(405);
  });

  it('wants JSON bodies sent as application/json', async () => {
    const plain = await post('/v1/chat/completions', JSON.stringify(chatBody()), { 'content-type': 'text/plain' });
    expect(plain.status).toBe(415);
    const broken = await post('/v1/chat/completions', '{"model":');
    expect(broken.status).toBe(400);
    expect(broken.json().error.code).toBe('invalid_json');
    const array = await post('/v1/chat/completions', '[]');
    expect(array.status).toBe(400);
  });
});

describe('models', () => {
  it('lists chat models (one with vision) and image models', async () => {
    const res = await get('/v1/models');
    expect(res.status).toBe(200);
    const list = res.json();
    expect(list.object).toBe('list');
    const byId = new Map<string, any>(list.data.map((m: any) => [m.id, m]));
    expect([...byId.keys()]).toEqual(['fake-chat', 'fake-vision', 'fake-image', 'fake-image-xl']);
    expect(byId.get('fake-vision')).toMatchObject({ object: 'model', vision: true, owned_by: 'fake-service' });
    expect(byId.get('fake-chat').vision).toBeUndefined();
    expect(byId.get('fake-chat').type).toBeUndefined();
    expect(byId.get('fake-image').type).toBe('image');
    expect(typeof byId.get('fake-chat').created).toBe('number');
  });

  it('lists image models as a bare array, or in an envelope when asked', async () => {
    const bare = await get('/v1/images/available-models');
    expect(bare.json()).toEqual([
      { display_name: 'Fake Image', description: expect.any(String) },
      { display_name: 'Fake Image XL', description: expect.any(String) },
    ]);
    const other = await FakeService.start({
      imageModelsEnvelope: true,
      apiKey: 'sk-other',
      models: [{ id: 'm1' }],
      imageModels: [{ display_name: 'Only', description: 'd' }],
    });
    try {
      const res = await request(`${other.baseUrl}/v1/images/available-models`, {
        headers: { authorization: 'Bearer sk-other' },
      });
      expect(await res.body.json()).toEqual({ data: [{ display_name: 'Only', description: 'd' }] });
      const models = await request(`${other.baseUrl}/v1/models`, { headers: { authorization: 'Bearer sk-other' } });
      expect(((await models.body.json()) as any).data.map((m: any) => m.id)).toEqual(['m1']);
    } finally {
      await other.close();
    }
  });
});

describe('chat completions', () => {
  it('answers a chat completion object with an echo and plausible usage', async () => {
    const res = await post(
      '/v1/chat/completions',
      chatBody({
        temperature: 0.2,
        max_tokens: 50,
        top_p: 1,
        frequency_penalty: -2,
        presence_penalty: 2,
        web_search: 'auto',
      }),
    );
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const body = res.json();
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'fake-chat',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: Hello there' }, finish_reason: 'stop' }],
    });
    expect(body.id).toMatch(/^chatcmpl-/);
    expect(Number.isInteger(body.created)).toBe(true);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    expect(fake.chatRequests()).toHaveLength(1);
    expect(fake.chatRequests()[0]!.temperature).toBe(0.2);
  });

  it('takes image parts on the vision model and counts ~85 tokens per image', async () => {
    const text = {
      model: 'fake-vision',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is it?' }] }],
    };
    const withImages = {
      model: 'fake-vision',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is it?' },
            { type: 'image_url', image_url: { url: pngDataUrl } },
            { type: 'image_url', image_url: { url: jpegDataUrl } },
          ],
        },
      ],
    };
    const a = (await post('/v1/chat/completions', text)).json();
    const b = await post('/v1/chat/completions', withImages);
    expect(b.status).toBe(200);
    expect(b.json().usage.prompt_tokens - a.usage.prompt_tokens).toBe(170);
    expect(b.json().choices[0].message.content).toBe('Echo: What is it?');
  });

  it('uses the scripted reply, and valid JSON by default in JSON mode', async () => {
    const json = await post('/v1/chat/completions', chatBody({ response_format: 'json' }));
    expect(JSON.parse(json.json().choices[0].message.content)).toEqual({ echo: 'Hello there' });
    fake.setChatReply((body) => `model=${body.model} n=${body.messages.length}`);
    const scripted = await post('/v1/chat/completions', chatBody());
    expect(scripted.json().choices[0].message.content).toBe('model=fake-chat n=1');
  });

  it('streams OpenAI chunks in many small network reads, then [DONE]', async () => {
    const reply = 'Streaming replies arrive piece by piece: héllo wörld, 😀 and more text to cut into many chunks.';
    fake.setChatReply(reply);
    const res = await readStream('/v1/chat/completions', chatBody({ stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.error).toBeUndefined();

    const events = res.text.split('\n\n').filter((e) => e !== '');
    expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true);
    for (const e of events) expect(e.startsWith('data: ')).toBe(true);
    const data = events.map((e) => e.slice('data: '.length));
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.length).toBeGreaterThan(10);
    for (const c of chunks) {
      expect(Object.keys(c)).toEqual(['id', 'object', 'created', 'model', 'choices']);
      expect(c).toMatchObject({ id: chunks[0].id, object: 'chat.completion.chunk', model: 'fake-chat' });
    }
    expect(chunks[0].id).toMatch(/^chatcmpl-/);
    expect(chunks[0].choices[0]).toEqual({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null });
    expect(chunks.at(-1).choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'stop' });
    for (const c of chunks.slice(1, -1)) {
      expect(c.choices[0].finish_reason).toBeNull();
      expect(c.choices[0].delta.content.length).toBeGreaterThan(0);
      expect([...c.choices[0].delta.content].length).toBeLessThanOrEqual(6);
    }
    expect(chatDeltas(data)).toBe(reply);

    // Delivered in many reads, and events are cut across reads (some reads end mid-event).
    expect(res.reads.length).toBeGreaterThan(events.length);
    expect(res.reads.some((r) => !r.toString('latin1').endsWith('\n\n'))).toBe(true);
    expect(res.text.length / res.reads.length).toBeLessThan(60);
  });

  it('streams JSON mode as pieces that only parse once joined', async () => {
    const res = await readStream('/v1/chat/completions', chatBody({ stream: true, response_format: 'json' }));
    const { data } = parseSse(res.text);
    expect(JSON.parse(chatDeltas(data))).toEqual({ echo: 'Hello there' });
  });

  const refusals: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ['temperature above 2', { temperature: 2.5 }, 'temperature', /0 to 2/],
    ['temperature of the wrong type', { temperature: '1' }, 'temperature', /0 to 2/],
    ['max_tokens zero', { max_tokens: 0 }, 'max_tokens', /at least 1/],
    ['max_tokens decimal', { max_tokens: 1.5 }, 'max_tokens', /integer/],
    ['top_p above 1', { top_p: 1.1 }, 'top_p', /0 to 1/],
    ['frequency_penalty below -2', { frequency_penalty: -3 }, 'frequency_penalty', /-2 to 2/],
    ['presence_penalty above 2', { presence_penalty: 2.1 }, 'presence_penalty', /-2 to 2/],
    ['stream as a string', { stream: 'yes' }, 'stream', /boolean/],
    ['web_search unknown value', { web_search: 'always' }, 'web_search', /'auto', 'force', 'images'/],
    ['web_search true', { web_search: true }, 'web_search', /false, 'auto'/],
    ['response_format object (OpenAI form)', { response_format: { type: 'json_object' } }, 'response_format', /'json'/],
    ['response_format text', { response_format: 'text' }, 'response_format', /'json'/],
    ['unknown field', { n: 2 }, 'n', /Unknown parameter: 'n'/],
    [
      'role unknown',
      { messages: [{ role: 'tool', content: 'x' }] },
      'messages[0].role',
      /'system', 'user', 'assistant'/,
    ],
    [
      'unknown message field',
      { messages: [{ role: 'user', content: 'x', name: 'bob' }] },
      'messages[0].name',
      /Unknown parameter/,
    ],
    ['no messages', { messages: [] }, 'messages', /at least 1/],
  ];
  it.each(refusals)('refuses %s with a 400 naming the param', async (_name, extra, param, message) => {
    const res = await post('/v1/chat/completions', chatBody(extra));
    expect(res.status).toBe(400);
    const { error } = res.json();
    expect(error.type).toBe('invalid_request_error');
    expect(error.param).toBe(param);
    expect(error.message).toContain(`'${param}'`);
    expect(error.message).toMatch(message);
    expect(['invalid_value', 'unknown_parameter']).toContain(error.code);
  });

  it('refuses a GIF data URL, undecodable base64, and images for a model without vision', async () => {
    const gif = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';
    const part = (url: string) => ({
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        { type: 'image_url', image_url: { url } },
      ],
    });
    const gifRes = await post('/v1/chat/completions', { model: 'fake-vision', messages: [part(gif)] });
    expect(gifRes.status).toBe(400);
    expect(gifRes.json().error.param).toBe('messages[0].content[1].image_url.url');
    expect(gifRes.json().error.message).toMatch(/data:image\/jpeg;base64.*data:image\/png;base64/);

    const bad64 = await post('/v1/chat/completions', {
      model: 'fake-vision',
      messages: [part('data:image/png;base64,@@@@')],
    });
    expect(bad64.status).toBe(400);
    expect(bad64.json().error.param).toBe('messages[0].content[1].image_url.url');

    const noVision = await post('/v1/chat/completions', { model: 'fake-chat', messages: [part(pngDataUrl)] });
    expect(noVision.status).toBe(400);
    expect(noVision.json().error.param).toBe('messages[0].content[1]');
    expect(noVision.json().error.message).toContain('fake-vision');

    const inSystem = await post('/v1/chat/completions', {
      model: 'fake-vision',
      messages: [{ ...part(pngDataUrl), role: 'system' }],
    });
    expect(inSystem.status).toBe(400);
  });

  it('answers 404 model_not_found for an unknown model, 400 for missing fields', async () => {
    const unknown = await post('/v1/chat/completions', chatBody({ model: 'gpt-99' }));
    expect(unknown.status).toBe(404);
    expect(unknown.json().error).toMatchObject({ code: 'model_not_found', param: 'model' });
    const image = await post('/v1/chat/completions', chatBody({ model: 'fake-image' }));
    expect(image.status).toBe(400);
    const missing = await post('/v1/chat/completions', { messages: chatBody().messages });
    expect(missing.status).toBe(400);
    expect(missing.json().error).toMatchObject({ param: 'model', code: 'missing_required_parameter' });
  });
});

describe('text completions', () => {
  it('answers a text_completion object, and streams text chunks then [DONE]', async () => {
    const res = await post('/v1/completions', {
      model: 'fake-chat',
      prompt: 'Once upon',
      max_tokens: 20,
      temperature: 1,
    });
    expect(res.status).toBe(200);
    const body = res.json();
    expect(body.id).toMatch(/^cmpl-/);
    expect(body).toMatchObject({
      object: 'text_completion',
      model: 'fake-chat',
      choices: [{ text: 'Echo: Once upon', index: 0, finish_reason: 'stop' }],
    });
    expect(body.usage.total_tokens).toBeGreaterThan(0);

    fake.setCompletionReply(' a time, there was a fake.');
    const stream = await readStream('/v1/completions', { model: 'fake-chat', prompt: 'Once upon', stream: true });
    const { data } = parseSse(stream.text);
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.every((c) => c.object === 'text_completion')).toBe(true);
    expect(chunks.map((c) => c.choices[0].text).join('')).toBe(' a time, there was a fake.');
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');

    const bad = await post('/v1/completions', { model: 'fake-chat', prompt: 'x', temperature: -1 });
    expect(bad.status).toBe(400);
    expect(bad.json().error.param).toBe('temperature');
    const unknown = await post('/v1/completions', { model: 'fake-chat', prompt: 'x', suffix: 'y' });
    expect(unknown.json().error.param).toBe('suffix');
  });
});

describe('image generation', () => {
  it('makes a landscape PNG of 1216x832 behind a url that needs the key', async () => {
    const res = await post('/v1/images/generations', {
      prompt: 'a red fox',
      aspect_ratio: 'landscape',
      style: 'natural',
      seed: 7,
    });
    expect(res.status).toBe(200);
    const body = res.json();
    expect(Number.isInteger(body.created)).toBe(true);
    expect(body.data).toHaveLength(1);
    expect(Object.keys(body.data[0])).toEqual(['url']);
    const url: string = body.data[0].url;
    expect(url).toMatch(new RegExp(`^${fake.baseUrl}/v1/images/view/[^/]+$`));

    const path = new URL(url).pathname;
    expect((await get(path, {})).status).toBe(401);
    const image = await get(path);
    expect(image.status).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    const meta = await sharp(image.data).metadata();
    expect(meta).toMatchObject({ format: 'png', width: 1216, height: 832 });
    expect((await get('/v1/images/view/img_nope')).status).toBe(404);
  });

  it('returns b64_json at the size of the aspect ratio', async () => {
    for (const [ratio, width, height] of [
      ['landscape', 1216, 832],
      ['portrait', 832, 1216],
      [undefined, 1024, 1024],
    ] as const) {
      const res = await post('/v1/images/generations', {
        prompt: 'a fox',
        response_format: 'b64_json',
        ...(ratio ? { aspect_ratio: ratio } : {}),
      });
      expect(res.status).toBe(200);
      const item = res.json().data[0];
      expect(Object.keys(item)).toEqual(['b64_json']);
      const meta = await sharp(Buffer.from(item.b64_json, 'base64')).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['png', width, height]);
    }
  });

  it('returns one item with every requested field for a list of formats, and revised_prompt on enhancement', async () => {
    const res = await post('/v1/images/generations', {
      prompt: 'a fox',
      response_format: ['url', 'b64_json', 'hxd'],
      force_prompt_enhancement: true,
      user_selected_model: 'Fake Image XL',
      negative_prompt: 'blur',
      reference_image: pngDataUrl,
      reference_image_url: 'https://example.com/ref.png',
      denoising_strength: 0.4,
      disable_safety_checker: false,
    });
    expect(res.status).toBe(200);
    const body = res.json();
    expect(body.data).toHaveLength(1);
    const item = body.data[0];
    expect(Object.keys(item).sort()).toEqual(['b64_json', 'hxd', 'revised_prompt', 'url']);
    expect(item.revised_prompt).toContain('a fox');
    const fromHex = Buffer.from(item.hxd, 'hex');
    expect(fromHex.equals(Buffer.from(item.b64_json, 'base64'))).toBe(true);
    const viewed = await get(new URL(item.url).pathname);
    expect(viewed.data.equals(fromHex)).toBe(true);
  });

  const refusals: Array<[string, Record<string, unknown>, number, string]> = [
    ['unknown style', { style: 'anime' }, 400, 'style'],
    ['unknown aspect_ratio', { aspect_ratio: 'wide' }, 400, 'aspect_ratio'],
    ['unknown response_format', { response_format: 'png' }, 400, 'response_format'],
    ['empty response_format list', { response_format: [] }, 400, 'response_format'],
    ['bad entry in the format list', { response_format: ['url', 'jpg'] }, 400, 'response_format'],
    ['unknown image model', { user_selected_model: 'fake-image' }, 404, 'user_selected_model'],
    ['decimal seed', { seed: 1.5 }, 400, 'seed'],
    ['string negative_prompt', { negative_prompt: 3 }, 400, 'negative_prompt'],
    ['JPEG reference_image', { reference_image: 'jpeg' }, 400, 'reference_image'],
    ['reference_image_url not a URL', { reference_image_url: 'not a url' }, 400, 'reference_image_url'],
    ['denoising_strength above 1', { denoising_strength: 1.5 }, 400, 'denoising_strength'],
    ['force_prompt_enhancement as string', { force_prompt_enhancement: 'true' }, 400, 'force_prompt_enhancement'],
    ['unknown field', { size: '1024x1024' }, 400, 'size'],
    ['empty prompt', { prompt: '' }, 400, 'prompt'],
    ['disable_safety_checker without permission', { disable_safety_checker: true }, 403, 'disable_safety_checker'],
  ];
  it.each(refusals)('refuses %s', async (_name, extra, status, param) => {
    const body: Record<string, unknown> = { prompt: 'a fox', ...extra };
    if (body.reference_image === 'jpeg') body.reference_image = jpegDataUrl;
    const res = await post('/v1/images/generations', body);
    expect(res.status).toBe(status);
    expect(res.json().error.param).toBe(param);
    if (status === 403) expect(res.json().error.code).toBe('permission_denied');
  });

  it('lets disable_safety_checker through when started with the permission', async () => {
    const allowed = await FakeService.start({ allowDisableSafetyChecker: true });
    try {
      const res = await request(`${allowed.baseUrl}/v1/images/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEFAULT_API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'x', disable_safety_checker: true, response_format: 'hxd' }),
      });
      expect(res.statusCode).toBe(200);
      const body = (await res.body.json()) as any;
      expect(Buffer.from(body.data[0].hxd, 'hex').subarray(1, 4).toString()).toBe('PNG');
    } finally {
      await allowed.close();
    }
  });
});

describe('reported seeds', () => {
  it('with reportSeed, answers the requested seed, or the one it chose, beside data; without it, no seed', async () => {
    const reporting = await FakeService.start({ reportSeed: true });
    const generate = async (base: string, extra: Record<string, unknown>) => {
      const res = await request(`${base}/v1/images/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEFAULT_API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'x', response_format: 'b64_json', ...extra }),
      });
      return (await res.body.json()) as { seed?: number; data: unknown[] };
    };
    try {
      expect((await generate(reporting.baseUrl, { seed: 42 })).seed).toBe(42);
      const chosen = (await generate(reporting.baseUrl, {})).seed;
      expect(Number.isInteger(chosen)).toBe(true);
      expect(chosen).toBeGreaterThanOrEqual(0);
      expect('seed' in (await generate(fake.baseUrl, { seed: 42 }))).toBe(false);
    } finally {
      await reporting.close();
    }
  });
});

describe('scripted behaviours', () => {
  it('answers a canned 429 with retry-after once, then normally', async () => {
    fake.enqueue('chat', { status: 429, headers: { 'retry-after': '1' } });
    const limited = await post('/v1/chat/completions', chatBody());
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    expect(limited.json().error).toMatchObject({ code: 'rate_limit_exceeded' });
    const next = await post('/v1/chat/completions', chatBody());
    expect(next.status).toBe(200);
    expect(fake.pending('chat')).toBe(0);
  });

  it('answers canned 500, 503 and raw bodies on the route they were queued for', async () => {
    fake.enqueue('models', { status: 503 });
    fake.enqueue('images', { status: 500, body: '<html>Bad gateway</html>', headers: { 'Content-Type': 'text/html' } });
    expect((await get('/v1/models')).status).toBe(503);
    const html = await post('/v1/images/generations', { prompt: 'x' });
    expect(html.status).toBe(500);
    expect(html.headers['content-type']).toBe('text/html');
    expect(html.text).toBe('<html>Bad gateway</html>');
    expect((await get('/v1/models')).status).toBe(200);
  });

  it('drops the connection mid-stream: no [DONE], the body read fails', async () => {
    fake.enqueue('chat', { stream: { pieces: ['one ', 'two ', 'three ', 'four'], dropAfterChunks: 3 } });
    const res = await readStream('/v1/chat/completions', chatBody({ stream: true }));
    expect(res.status).toBe(200);
    expect(res.error).toBeInstanceOf(Error);
    expect(res.text).not.toContain('[DONE]');
    const { data } = parseSse(res.text);
    expect(data).toHaveLength(3);
    expect(chatDeltas(data)).toBe('one two ');
  });

  it('injects a malformed data line and goes on', async () => {
    fake.enqueue('chat', { stream: { text: 'abc def', malformedLine: 'data: {"choices":[{"delta":' } });
    const res = await readStream('/v1/chat/completions', chatBody({ stream: true }));
    expect(res.error).toBeUndefined();
    expect(res.text).toContain('\ndata: {"choices":[{"delta":\n\n');
    const { data } = parseSse(res.text);
    expect(data[2]).toBe('{"choices":[{"delta":');
    expect(data.at(-1)).toBe('[DONE]');
    expect(chatDeltas(data.filter((_, i) => i !== 2))).toBe('abc def');
  });

  it('sends an error event mid-stream and ends without [DONE]', async () => {
    fake.enqueue('chat', {
      stream: {
        pieces: ['a', 'b', 'c'],
        afterChunks: 3,
        errorMidStream: { message: 'The server had an error', type: 'server_error', code: null },
      },
    });
    const res = await readStream('/v1/chat/completions', chatBody({ stream: true }));
    expect(res.error).toBeUndefined();
    const { data } = parseSse(res.text);
    expect(data).toHaveLength(4);
    expect(JSON.parse(data[3]!)).toEqual({
      error: { message: 'The server had an error', type: 'server_error', code: null },
    });
    expect(chatDeltas(data.slice(0, 3))).toBe('ab');
    expect(res.text).not.toContain('[DONE]');
  });

  it('streams with comments, CRLF and multi-line data that a real SSE parser joins back', async () => {
    fake.enqueue('chat', {
      stream: { text: 'Hello, multi-line world', comments: true, crlf: true, multiLineData: true, emptyDeltas: true },
    });
    const res = await readStream('/v1/chat/completions', chatBody({ stream: true }));
    expect(res.text).toContain(': keep-alive\r\n\r\n');
    expect(res.text).not.toMatch(/[^\r]\n/);
    expect(res.text).toMatch(/\r\ndata:/);
    const { data, comments } = parseSse(res.text);
    expect(comments.length).toBeGreaterThan(1);
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.some((c) => c.choices[0].delta === undefined)).toBe(true);
    expect(chatDeltas(data)).toBe('Hello, multi-line world');
  });

  it('ends with the scripted finish_reason, a tool call, or without [DONE]', async () => {
    fake.enqueue('chat', { stream: { pieces: ['half'], finishReason: 'content_filter', omitDone: true } });
    const filtered = await readStream('/v1/chat/completions', chatBody({ stream: true }));
    expect(filtered.error).toBeUndefined();
    const data = parseSse(filtered.text).data;
    expect(data.at(-1)).not.toBe('[DONE]');
    expect(JSON.parse(data.at(-1)!).choices[0].finish_reason).toBe('content_filter');
    fake.enqueue('chat', { stream: { pieces: [], toolCalls: true } });
    const tools = parseSse((await readStream('/v1/chat/completions', chatBody({ stream: true }))).text)
      .data.slice(0, -1)
      .map((d) => JSON.parse(d));
    expect(tools.at(-2).choices[0].delta.tool_calls[0].function.name).toBe('lookup');
    expect(tools.at(-1).choices[0].finish_reason).toBe('tool_calls');
  });

  it('after stallAfterChunks sends only keep-alive comments until the client leaves', async () => {
    fake.enqueue('chat', { stream: { pieces: ['a', 'b', 'c'], stallAfterChunks: 2, keepAliveMs: 20 } });
    const res = await request(`${fake.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify(chatBody({ stream: true })),
    });
    let text = '';
    for await (const chunk of res.body) {
      text += String(chunk);
      if ((text.match(/: keep-alive/g) ?? []).length >= 3) break;
    }
    const { data, comments } = parseSse(text);
    expect(chatDeltas(data)).toBe('a');
    expect(comments.length).toBeGreaterThanOrEqual(3);
  });

  it('forces a stream even for a non-streaming request, and validates first', async () => {
    fake.enqueue('chat', { stream: { text: 'x' } });
    const refused = await post('/v1/chat/completions', chatBody({ temperature: 9 }));
    expect(refused.status).toBe(400);
    fake.enqueue('chat', { stream: { text: 'xyz' } });
    const res = await readStream('/v1/chat/completions', chatBody());
    expect(chatDeltas(parseSse(res.text).data)).toBe('xyz');
  });

  it('holds the headers back (a headers timeout fires; a patient client gets the answer)', async () => {
    // undici's headers timer has a resolution of about half a second: keep the margins wide.
    fake.enqueue('chat', { delayHeadersMs: 3000 });
    await expect(
      request(`${fake.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify(chatBody()),
        headersTimeout: 300,
      }),
    ).rejects.toBeInstanceOf(undiciErrors.HeadersTimeoutError);

    fake.enqueue('models', { delayHeadersMs: 300 });
    const t0 = Date.now();
    const res = await get('/v1/models');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    expect(res.status).toBe(200);
  });

  it('hangs, and resets the connection', async () => {
    fake.enqueue('models', { hang: true });
    await expect(request(`${fake.baseUrl}/v1/models`, { headers: auth(), headersTimeout: 200 })).rejects.toBeInstanceOf(
      undiciErrors.HeadersTimeoutError,
    );
    fake.enqueue('completions', { resetConnection: true });
    const err = await fetch(`${fake.baseUrl}/v1/completions`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-chat', prompt: 'x' }),
    }).then(
      () => undefined,
      (e: unknown) => e as Error & { cause?: { code?: string } },
    );
    expect(err).toBeInstanceOf(TypeError);
    expect(err?.cause?.code).toMatch(/ECONNRESET|UND_ERR_SOCKET/);
  });

  it('stretches a stream with chunkDelayMs', async () => {
    fake.enqueue('chat', { stream: { pieces: ['a', 'b', 'c', 'd'], chunkDelayMs: 60 } });
    const t0 = Date.now();
    const res = await readStream('/v1/chat/completions', chatBody({ stream: true }));
    // 7 frames (role, 4 pieces, stop, [DONE]): at least 6 delays before events.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(6 * 60 - 20);
    expect(chatDeltas(parseSse(res.text).data)).toBe('abcd');
  });
  it('with wholeEvents writes each event in one piece, chunkDelayMs apart', async () => {
    fake.enqueue('chat', { stream: { pieces: ['a', 'b', 'c', 'd'], chunkDelayMs: 30, wholeEvents: true } });
    const res = await readStream('/v1/chat/completions', chatBody({ stream: true }));
    const { data } = parseSse(res.text);
    expect(chatDeltas(data)).toBe('abcd');
    // 30 ms apart, every event arrives in a read of its own that ends where the event ends.
    expect(res.reads.length).toBe(data.length);
    for (const r of res.reads) expect(r.toString('utf8')).toMatch(/^data: [^\n]*\n\n$/);
  });
});

describe('recording', () => {
  it('records method, path, headers, parsed body and time; emits request events', async () => {
    const seen: RecordedRequest[] = [];
    const onRequest = (r: RecordedRequest) => seen.push(r);
    fake.events.on('request', onRequest);
    const before = Date.now();
    await post('/v1/chat/completions', chatBody({ max_tokens: 5 }));
    await get('/v1/models');
    fake.events.off('request', onRequest);

    expect(seen).toHaveLength(2);
    const chat = fake.lastRequest('chat')!;
    expect(chat).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      route: 'chat',
      body: chatBody({ max_tokens: 5 }),
    });
    expect(chat.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(chat.receivedAt).toBeGreaterThanOrEqual(before);
    expect(fake.lastRequest()?.route).toBe('models');
    expect(fake.lastRequest('models')?.body).toBeUndefined();
    expect(fake.lastRequest('images')).toBeUndefined();
  });

  it('closes keep-alive connections on close()', async () => {
    const other = await FakeService.start();
    const res = await request(`${other.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${other.apiKey}` } });
    await res.body.text();
    await other.close();
    await expect(
      request(`${other.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${other.apiKey}` } }),
    ).rejects.toThrow();
  });
});

describe('a model scripted to fail (setModelBehaviour)', () => {
  it('answers every request naming the model so (chat, completions, images), leaves the others and the route queue alone, until removed', async () => {
    fake.setModelBehaviour('fake-chat', { status: 503 });
    fake.setModelBehaviour('Fake Image', { status: 500 });
    fake.enqueue('chat', { stream: { pieces: ['queued'] } });
    const chat = (model: string) =>
      post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });
    expect((await chat('fake-chat')).status).toBe(503);
    expect((await chat('fake-chat')).status).toBe(503);
    expect((await post('/v1/completions', { model: 'fake-chat', prompt: 'hi' })).status).toBe(503);
    const image = (model: string) =>
      post('/v1/images/generations', { prompt: 'x', user_selected_model: model, response_format: 'b64_json' });
    expect((await image('Fake Image')).status).toBe(500);
    expect((await image('Fake Image XL')).status).toBe(200);
    // The route's queue was left for the next request that names no failing model.
    expect(fake.pending('chat')).toBe(1);
    const other = await readStream('/v1/chat/completions', {
      model: 'fake-vision',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    expect(other.text).toContain('queued');
    fake.setModelBehaviour('fake-chat', undefined);
    expect((await chat('fake-chat')).status).toBe(200);
    fake.reset();
    expect((await image('Fake Image')).status).toBe(200);
  });
});
