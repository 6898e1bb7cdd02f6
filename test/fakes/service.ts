/**
 * A local fake of the generation service (docs/service-api.md), for tests.
 *
 * It is a real HTTP server (node:http on 127.0.0.1, random port) that speaks the spec strictly,
 * the way an OpenAI-compatible server would, so the bot's client (undici) is tested against the
 * same bytes a real service sends:
 *
 * - every path needs `Authorization: Bearer <apiKey>` (401 `invalid_api_key` otherwise, without
 *   echoing the key); unknown paths answer 404, wrong methods 405;
 * - request bodies are validated strictly (types, ranges, enums, unknown fields) and refused with
 *   OpenAI-style errors `{ error: { message, type, param, code } }` naming the parameter;
 * - streams are OpenAI SSE (`data: {chunk}\n\n` … `data: [DONE]\n\n`), written in small TCP
 *   writes cut at arbitrary (seeded) byte positions, so events cross network reads;
 * - images are real PNGs (sharp) of the size the aspect ratio asks for.
 *
 * Faults are scripted per request with `enqueue(route, behaviour)` (a one-shot queue per route),
 * or per model with `setModelBehaviour(model, behaviour)` (every request naming it: a model that is down).
 * Every request is recorded in `requests` and announced on `events`.
 *
 * Where the spec says "not shown", OpenAI's conventions are followed:
 * - chat chunk: `{ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason }] }`,
 *   first delta `{ role: 'assistant', content: '' }`, last chunk `delta: {}` + `finish_reason: 'stop'`, then `[DONE]`;
 * - text completion chunk: `{ id, object: 'text_completion', created, model, choices: [{ text, index, logprobs: null, finish_reason }] }`;
 * - image result items: `{ url }`, `{ b64_json }`, `{ hxd: <hex of the PNG bytes> }`; a list of formats gives ONE item
 *   with every requested field; `revised_prompt` is added with `force_prompt_enhancement: true`;
 * - `/v1/models`: `{ object: 'list', data: [{ id, object: 'model', created, owned_by, ...extra }] }`
 *   (image models `type: 'image'`, vision chat models `vision: true`);
 * - `/v1/images/available-models`: a bare array (option `imageModelsEnvelope` wraps it in `{ data }`).
 *
 * The code is split by endpoint under `service/` (a failing test's cause is one short file away):
 *
 * | file | what |
 * |---|---|
 * | fake.ts | {@link FakeService}: start/close, scripting (`enqueue`, `setChatReply`, …), inspection |
 * | types.ts | the public types: routes, models, options, request bodies, records, stream scripts, behaviours, events |
 * | constants.ts | default model lists and key, image sizes, fixed values |
 * | state.ts | what one fake holds, shared by the modules; its sleep and per-stream PRNG |
 * | server.ts | routing, recording, scripted behaviours, auth, method, body and Content-Type checks |
 * | errors.ts | OpenAI-style error bodies (`ApiError`), defaults of canned statuses |
 * | validation.ts | the field checks of request bodies and the wording of their messages |
 * | chat.ts | `POST /v1/chat/completions`, streamed and not |
 * | completions.ts | `POST /v1/completions`, streamed and not |
 * | images.ts | `POST /v1/images/generations`, `GET /v1/images/view/<id>`, `GET /v1/images/available-models` |
 * | models.ts | `GET /v1/models`; chat model lookups |
 * | sse.ts | writing SSE: frames, faults, byte pieces, delays, endings |
 * | respond.ts | whole responses (bytes, JSON), base headers, the 500 |
 * | util.ts | PRNG, ids, timestamps, token estimates |
 */

export { DEFAULT_API_KEY, DEFAULT_IMAGE_MODELS, DEFAULT_MODELS, IMAGE_SIZES } from './service/constants.ts';
export { FakeService } from './service/fake.ts';
export type {
  Behaviour,
  ChatMessage,
  ChatReply,
  ChatRequestBody,
  CompletionReply,
  CompletionRequestBody,
  ContentPart,
  FakeImageModel,
  FakeModel,
  FakeRoute,
  FakeServiceEvents,
  FakeServiceOptions,
  ImageFormat,
  ImageRequestBody,
  RecordedRequest,
  StreamScript,
  StreamUsage,
} from './service/types.ts';
