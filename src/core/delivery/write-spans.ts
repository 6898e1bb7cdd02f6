/**
 * Write spans (docs/architecture.md "Tracing"): with tracing on, each write submitted to the
 * scheduler is a span `<platform>.write` in the trace of the invocation that submitted it, from
 * its submission until it is written, superseded or failed, with a child span `scheduler.wait`
 * from its submission to the start of its platform call (the time the budgets held it, also the
 * attribute `genbot.scheduler.wait_ms`), and the platform call run inside it. A write refused
 * for the rate limit and run again adds an event `retry`. With tracing off, or for a write made
 * outside any traced invocation, the request is submitted as it is.
 */
import { context, trace } from '@opentelemetry/api';
import { isTracingStarted, recordFailure, startChildSpan, traceTime } from '../../ops/tracing.ts';
import type { Clock } from './clock.ts';
import type { WriteRequest, WriteResult } from './write-request.ts';

/**
 * Submits `request` through `submit` (WriteScheduler's own submission), in a write span when
 * tracing is on; the wait is measured on the scheduler's `clock` (ms).
 * @returns what `submit` resolves with; @throws what it throws (recorded on the span).
 */
export function submitTraced(
  request: WriteRequest,
  submit: (request: WriteRequest) => Promise<WriteResult>,
  clock: Clock,
): Promise<WriteResult> {
  if (!isTracingStarted()) return submit(request);
  const parent = context.active();
  if (!trace.getSpan(parent)) return submit(request);
  const first = request.buckets[0];
  const span = startChildSpan(
    `${first?.platform ?? 'platform'}.write`,
    { attributes: { 'genbot.write.kind': first?.kind ?? 'unknown', 'genbot.write.final': request.final } },
    parent,
  );
  const inSpan = trace.setSpan(parent, span);
  const submittedAt = traceTime(parent);
  const submittedOnClock = clock.now();
  let started = false;
  const run = () => {
    if (!started) {
      started = true;
      startChildSpan('scheduler.wait', { startTime: submittedAt }, inSpan).end();
      span.setAttribute('genbot.scheduler.wait_ms', clock.now() - submittedOnClock);
    } else span.addEvent('retry');
    return context.with(inSpan, () => request.run());
  };
  return submit({ ...request, run }).then(
    (result) => {
      span.setAttribute('genbot.write.result', result);
      span.end();
      return result;
    },
    (error: unknown) => {
      recordFailure(span, error);
      span.end();
      throw error;
    },
  );
}
