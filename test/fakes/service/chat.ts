/**
 * `POST /v1/chat/completions` (§4.1): the body checked strictly (messages, content parts,
 * images only for vision models and users' messages, sampling parameters), then the reply
 * (scripted, set by the test, or `Echo: <last user text>`) as one JSON completion with usage,
 * or streamed as chunks (role first, then pieces, then `finish_reason`) through sse.ts.
 */
import type { ServerResponse } from 'node:http';
import { invalid } from './errors.ts';
import { chatModel, visionModelIds } from './models.ts';
import { sendJson } from './respond.ts';
import { writeSse } from './sse.ts';
import type { ServiceState } from './state.ts';
import type { ChatMessage, ChatRequestBody, StreamScript, StreamUsage } from './types.ts';
import { cutText, newId, now, tokensOf } from './util.ts';
import {
  checkBoolean,
  checkEnum,
  checkImageDataUrl,
  checkNumber,
  checkString,
  describe,
  isObject,
  type Json,
  rejectUnknown,
  requireField,
  shown,
} from './validation.ts';

const CHAT_FIELDS = [
  'model',
  'messages',
  'temperature',
  'max_tokens',
  'stream',
  'top_p',
  'frequency_penalty',
  'presence_penalty',
  'web_search',
  'response_format',
] as const;

/** Checks a chat body field by field (in the spec's order) and against the model's abilities. */
function validateChat(state: ServiceState, body: Json): ChatRequestBody {
  rejectUnknown(body, CHAT_FIELDS);
  checkString(body, 'model', { required: true, nonEmpty: true });
  const messages = requireField(body, 'messages');
  if (!Array.isArray(messages)) {
    throw invalid(
      'messages',
      `Invalid type for 'messages': expected a non-empty array of messages, but got ${describe(messages)} instead.`,
    );
  }
  if (messages.length === 0) {
    throw invalid(
      'messages',
      "Invalid 'messages': empty array. Expected an array with at least 1 message, but got an empty array instead.",
    );
  }
  messages.forEach((m: unknown, i) => validateMessage(m, `messages[${i}]`));
  checkNumber(body, 'temperature', 0, 2);
  checkNumber(body, 'max_tokens', 1, Infinity, { integer: true });
  checkBoolean(body, 'stream');
  checkNumber(body, 'top_p', 0, 1);
  checkNumber(body, 'frequency_penalty', -2, 2);
  checkNumber(body, 'presence_penalty', -2, 2);
  checkEnum(body, 'web_search', [false, 'auto', 'force', 'images']);
  checkEnum(body, 'response_format', ['json']);

  const chat = body as unknown as ChatRequestBody;
  const model = chatModel(state, chat.model);
  if (!model.vision) rejectImageParts(state, chat);
  return chat;
}

/** Refuses the first image part of a request to a model without vision. */
function rejectImageParts(state: ServiceState, chat: ChatRequestBody): void {
  chat.messages.forEach((m, i) => {
    if (typeof m.content === 'string') return;
    const j = m.content.findIndex((p) => p.type === 'image_url');
    if (j >= 0) {
      throw invalid(
        `messages[${i}].content[${j}]`,
        `Invalid 'messages[${i}].content[${j}]': the model '${chat.model}' does not support image input; use a model with vision support (${visionModelIds(state).join(', ') || 'none listed'}).`,
      );
    }
  });
}

/** Checks one message: its role, and its content (a string or content parts). */
function validateMessage(m: unknown, at: string): void {
  if (!isObject(m))
    throw invalid(at, `Invalid type for '${at}': expected a message object, but got ${describe(m)} instead.`);
  rejectUnknown(m, ['role', 'content'], `${at}.`);
  const role = requireField(m, 'role', `${at}.role`);
  if (role !== 'system' && role !== 'user' && role !== 'assistant') {
    throw invalid(
      `${at}.role`,
      `Invalid value for '${at}.role': expected one of 'system', 'user', 'assistant', but got ${shown(role)} instead.`,
    );
  }
  const content = requireField(m, 'content', `${at}.content`);
  if (typeof content === 'string') return;
  if (!Array.isArray(content)) {
    throw invalid(
      `${at}.content`,
      `Invalid type for '${at}.content': expected a string or an array of content parts, but got ${describe(content)} instead.`,
    );
  }
  if (content.length === 0) {
    throw invalid(
      `${at}.content`,
      `Invalid '${at}.content': empty array. Expected a string or at least 1 content part.`,
    );
  }
  content.forEach((p: unknown, j) => validatePart(p, `${at}.content[${j}]`, role));
}

/** Checks one content part: text, or (in a user's message) an image as a JPEG or PNG data URL. */
function validatePart(p: unknown, pat: string, role: unknown): void {
  if (!isObject(p))
    throw invalid(pat, `Invalid type for '${pat}': expected a content part object, but got ${describe(p)} instead.`);
  const type = requireField(p, 'type', `${pat}.type`);
  if (type === 'text') {
    rejectUnknown(p, ['type', 'text'], `${pat}.`);
    const text = requireField(p, 'text', `${pat}.text`);
    if (typeof text !== 'string')
      throw invalid(
        `${pat}.text`,
        `Invalid type for '${pat}.text': expected a string, but got ${describe(text)} instead.`,
      );
  } else if (type === 'image_url') {
    rejectUnknown(p, ['type', 'image_url'], `${pat}.`);
    if (role !== 'user') {
      throw invalid(
        `${pat}.type`,
        `Invalid '${pat}.type': image_url parts are only allowed in messages with role 'user', but this message has role '${String(role)}'.`,
      );
    }
    const iu = requireField(p, 'image_url', `${pat}.image_url`);
    if (!isObject(iu))
      throw invalid(
        `${pat}.image_url`,
        `Invalid type for '${pat}.image_url': expected an object { url }, but got ${describe(iu)} instead.`,
      );
    rejectUnknown(iu, ['url'], `${pat}.image_url.`);
    checkImageDataUrl(`${pat}.image_url.url`, requireField(iu, 'url', `${pat}.image_url.url`), ['jpeg', 'png']);
  } else {
    throw invalid(
      `${pat}.type`,
      `Invalid value for '${pat}.type': expected one of 'text', 'image_url', but got ${shown(type)} instead.`,
    );
  }
}

/** The text of the last user message (its text parts joined by newlines). */
function lastUserText(messages: ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    return m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
  }
  return '';
}

/** The reply: the script's, the test's, or `Echo: <last user text>` (`{"echo":…}` in JSON mode). */
async function replyText(
  state: ServiceState,
  body: ChatRequestBody,
  script: StreamScript | undefined,
): Promise<string> {
  if (script?.pieces) return script.pieces.join('');
  if (script?.text !== undefined) return script.text;
  if (state.chatReply) return await state.chatReply(body);
  const last = lastUserText(body.messages);
  return body.response_format === 'json' ? JSON.stringify({ echo: last }) : `Echo: ${last}`;
}

/** The chunks of a streamed reply: the role, the pieces (with the script's extras), the finish. */
function streamChunks(head: Json, pieces: string[], script: StreamScript | undefined): unknown[] {
  const chunks: unknown[] = [
    { ...head, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
  ];
  pieces.forEach((piece, i) => {
    chunks.push({ ...head, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
    if (i === 0 && script?.emptyDeltas) {
      chunks.push({ ...head, choices: [{ index: 0, delta: {}, finish_reason: null }] });
      chunks.push({ ...head, choices: [{ index: 0, finish_reason: null }] });
    }
  });
  if (script?.toolCalls) {
    const call = {
      index: 0,
      id: newId('call_'),
      type: 'function',
      function: { name: 'lookup', arguments: '{"q":"x"}' },
    };
    chunks.push({ ...head, choices: [{ index: 0, delta: { tool_calls: [call] }, finish_reason: null }] });
  }
  chunks.push({
    ...head,
    choices: [
      { index: 0, delta: {}, finish_reason: script?.finishReason ?? (script?.toolCalls ? 'tool_calls' : 'stop') },
    ],
  });
  return chunks;
}

/** The fake's prompt token estimate: 3, plus 4 and the text's tokens per message, 85 per image. */
function promptTokensOf(messages: ChatMessage[]): number {
  return messages.reduce((sum, m) => {
    if (typeof m.content === 'string') return sum + 4 + tokensOf(m.content);
    return sum + 4 + m.content.reduce((s, p) => s + (p.type === 'text' ? tokensOf(p.text) : 85), 0);
  }, 3);
}

/** A streamed reply's `usage`: the fixed counts, or the fake's own. */
function usageOf(usage: StreamUsage, body: ChatRequestBody, text: string) {
  const counted =
    usage === 'counted' ? { prompt_tokens: promptTokensOf(body.messages), completion_tokens: tokensOf(text) } : usage;
  return { ...counted, total_tokens: counted.prompt_tokens + counted.completion_tokens };
}

/** Answers a chat completion, streamed when asked (or when the test scripted a stream). */
export async function handleChat(
  state: ServiceState,
  raw: Json,
  res: ServerResponse,
  script: StreamScript | undefined,
): Promise<void> {
  const body = validateChat(state, raw);
  const text = await replyText(state, body, script);
  const id = newId('chatcmpl-');
  const created = now();
  if (body.stream === true || script) {
    const rnd = state.nextRandom();
    const pieces = script?.pieces ?? cutText(text, rnd);
    const head = { id, object: 'chat.completion.chunk', created, model: body.model };
    const chunks = streamChunks(head, pieces, script);
    const usage = script?.usage ?? state.streamUsage;
    if (usage) chunks.push({ ...head, choices: [], usage: usageOf(usage, body, text) });
    await writeSse(state, res, 'chat', '/v1/chat/completions', chunks, script ?? {}, rnd);
    return;
  }
  const promptTokens = promptTokensOf(body.messages);
  const completionTokens = tokensOf(text);
  sendJson(state, res, 'chat', '/v1/chat/completions', 200, {
    id,
    object: 'chat.completion',
    created,
    model: body.model,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  });
}
