/**
 * The span of a generation request, after OpenTelemetry's GenAI semantic conventions
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/): named
 * `{gen_ai.operation.name} {gen_ai.request.model}` (`chat fake-chat`), kind CLIENT, with the
 * requested model, and once the answer is over the model that answered, the token counts of its
 * `usage` and its `finish_reason`. A streamed answer's span lasts until the stream is over (read
 * to its end, failed, left or aborted). With tracing off the API's no-op span takes the calls.
 */
import { type Span, SpanKind } from '@opentelemetry/api';
import { recordFailure, startChildSpan } from '../../ops/tracing.ts';

/** `gen_ai.operation.name` values the bot uses: chat completions, legacy completions, images. */
export type GenerationOperation = 'chat' | 'text_completion' | 'generate_content';

/**
 * Starts the span of one generation request (a child of the active span: the invocation's; none outside one).
 * @param model the request's `model` (the service's default when absent: the name is then the operation alone).
 */
export function startGenerationSpan(operation: GenerationOperation, model: string | undefined): Span {
  return startChildSpan(model ? `${operation} ${model}` : operation, {
    kind: SpanKind.CLIENT,
    attributes: {
      'gen_ai.operation.name': operation,
      'gen_ai.provider.name': 'openai',
      ...(model ? { 'gen_ai.request.model': model } : {}),
    },
  });
}

/** What an answer tells of itself: the response's model, its usage (§2.2, as it came), its finish reason. */
export interface GenerationOutcome {
  model?: unknown;
  usage?: unknown;
  finishReason?: unknown;
}

/**
 * Ends a generation span, once (a span already ended is left alone), with what the answer said:
 * `gen_ai.response.model`, `gen_ai.usage.input_tokens` / `output_tokens` (the usage's
 * `prompt_tokens` / `completion_tokens`), `gen_ai.response.finish_reasons`; with `error`, the
 * failure (exception, status ERROR).
 */
export function endGenerationSpan(span: Span, outcome: GenerationOutcome | undefined, error?: unknown): void {
  if (!span.isRecording()) return;
  if (typeof outcome?.model === 'string') span.setAttribute('gen_ai.response.model', outcome.model);
  const usage = outcome?.usage as { prompt_tokens?: unknown; completion_tokens?: unknown } | undefined;
  if (typeof usage?.prompt_tokens === 'number') span.setAttribute('gen_ai.usage.input_tokens', usage.prompt_tokens);
  if (typeof usage?.completion_tokens === 'number')
    span.setAttribute('gen_ai.usage.output_tokens', usage.completion_tokens);
  if (typeof outcome?.finishReason === 'string')
    span.setAttribute('gen_ai.response.finish_reasons', [outcome.finishReason]);
  if (error !== undefined) recordFailure(span, error);
  span.end();
}

/** The outcome of a whole (non-streamed) completion: its model, usage and first choice's finish_reason. */
export function outcomeOf(completion: unknown): GenerationOutcome {
  const c = completion as { model?: unknown; usage?: unknown; choices?: Array<{ finish_reason?: unknown }> };
  return { model: c.model, usage: c.usage, finishReason: c.choices?.[0]?.finish_reason };
}
