/**
 * `POST /v1/completions` (§4.2), the legacy text completion: the body checked strictly, then
 * the reply (scripted, set by the test, or `Echo: <prompt>`) as one JSON completion with
 * usage, or streamed as `text_completion` chunks through sse.ts.
 */
import type { ServerResponse } from 'node:http';
import { chatModel } from './models.ts';
import { sendJson } from './respond.ts';
import { writeSse } from './sse.ts';
import type { ServiceState } from './state.ts';
import type { CompletionRequestBody, StreamScript } from './types.ts';
import { cutText, newId, now, tokensOf } from './util.ts';
import { checkBoolean, checkNumber, checkString, type Json, rejectUnknown } from './validation.ts';

const COMPLETION_FIELDS = ['model', 'prompt', 'temperature', 'max_tokens', 'stream'] as const;

/** Checks a text-completion body field by field; the model must be a listed language model. */
function validateCompletion(state: ServiceState, raw: Json): CompletionRequestBody {
  rejectUnknown(raw, COMPLETION_FIELDS);
  checkString(raw, 'model', { required: true, nonEmpty: true });
  checkString(raw, 'prompt', { required: true });
  checkNumber(raw, 'temperature', 0, 2);
  checkNumber(raw, 'max_tokens', 1, Infinity, { integer: true });
  checkBoolean(raw, 'stream');
  const body = raw as unknown as CompletionRequestBody;
  chatModel(state, body.model);
  return body;
}

/** Answers a text completion, streamed when asked (or when the test scripted a stream). */
export async function handleCompletion(
  state: ServiceState,
  raw: Json,
  res: ServerResponse,
  script: StreamScript | undefined,
): Promise<void> {
  const body = validateCompletion(state, raw);
  let text: string;
  if (script?.pieces) text = script.pieces.join('');
  else if (script?.text !== undefined) text = script.text;
  else if (state.completionReply) text = await state.completionReply(body);
  else text = `Echo: ${body.prompt}`;

  const id = newId('cmpl-');
  const created = now();
  if (body.stream === true || script) {
    const rnd = state.nextRandom();
    const pieces = script?.pieces ?? cutText(text, rnd);
    const head = { id, object: 'text_completion', created, model: body.model };
    const chunks: unknown[] = pieces.map((piece) => ({
      ...head,
      choices: [{ text: piece, index: 0, logprobs: null, finish_reason: null }],
    }));
    chunks.push({ ...head, choices: [{ text: '', index: 0, logprobs: null, finish_reason: 'stop' }] });
    await writeSse(state, res, 'completions', '/v1/completions', chunks, script ?? {}, rnd);
    return;
  }
  const promptTokens = tokensOf(body.prompt);
  const completionTokens = tokensOf(text);
  sendJson(state, res, 'completions', '/v1/completions', 200, {
    id,
    object: 'text_completion',
    created,
    model: body.model,
    choices: [{ text, index: 0, logprobs: null, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  });
}
