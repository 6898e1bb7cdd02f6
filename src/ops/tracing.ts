/**
 * Traces (OpenTelemetry, docs/architecture.md "Tracing"): one trace per user action, its root
 * span the interaction or event, with child spans for the acknowledgement, the store calls, the
 * service request and each platform write. The code here uses only `@opentelemetry/api`; the
 * SDK (`@opentelemetry/sdk-node`, tracing-sdk.ts) is imported, and started, only when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set
 * ({@link startTracing}). Without it the API's no-op tracer is what runs, and the helpers that
 * would allocate (a root's bookkeeping, a wrapped store) return at their first line.
 *
 * Context crosses awaits through the SDK's AsyncLocalStorage context manager (sdk-node sets it
 * up), so a span started anywhere under a root span is that root's child.
 */
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  INVALID_SPAN_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { Logger } from 'pino';
import { AnchoredSpan, anchoredClock, type TraceClock } from './trace-clock.ts';

/** The instrumentation scope's name: every span the bot makes is this tracer's. */
export const TRACER_NAME = 'genbot';

/**
 * The tracer of the running SDK, taken when it starts (a tracer taken earlier would keep the
 * provider of an SDK stopped since: a second bot in one process, as in tests); the API's no-op
 * one while none runs.
 */
let tracer: Tracer = trace.getTracer(TRACER_NAME);

/** What {@link startTracing} needs of the configuration (config.ts `tracing`). */
export interface TracingConfig {
  /** Where spans go: the full OTLP/HTTP traces URL (`…/v1/traces`). */
  tracesUrl: string;
  /** `http/protobuf` (OTLP's default) or `http/json`. */
  protocol: 'http/protobuf' | 'http/json';
  /** Headers sent with every export (`OTEL_EXPORTER_OTLP_HEADERS`: an API key; never logged). */
  headers: Record<string, string>;
  /** The `service.name` resource attribute. */
  serviceName: string;
}

/** A started SDK (tracing-sdk.ts). */
export interface TracingHandle {
  /** Exports every span ended so far. Never rejects (an unreachable collector is logged by the SDK's diag). */
  forceFlush(): Promise<void>;
  /** Flushes, then stops the SDK: later spans are no-ops. Never rejects. */
  shutdown(): Promise<void>;
}

let started: TracingHandle | undefined;

/** The span the helpers hand their work while tracing is off (the API's non-recording span). */
const NO_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Whether the SDK runs (an endpoint was configured and {@link startTracing} started it). */
export function isTracingStarted(): boolean {
  return started !== undefined;
}

/**
 * Starts the SDK when `config` is set (an OTLP endpoint was configured): imports tracing-sdk.ts
 * (and with it sdk-node) then, and only then. Once per process: a second call returns the running one.
 * @returns the handle, or undefined when tracing is off (nothing imported, nothing started).
 */
export async function startTracing(config: TracingConfig | undefined, log: Logger): Promise<TracingHandle | undefined> {
  if (!config) return undefined;
  if (started) return started;
  const { startSdk } = await import('./tracing-sdk.ts');
  const handle = startSdk(config, log);
  tracer = trace.getTracer(TRACER_NAME);
  started = {
    forceFlush: () => handle.forceFlush(),
    shutdown: async () => {
      if (started === wrapper) started = undefined;
      await handle.shutdown();
    },
  };
  const wrapper = started;
  log.info({ tracesUrl: config.tracesUrl, protocol: config.protocol, service: config.serviceName }, 'tracing on');
  return started;
}

/** Marks `span` failed with `error` (an exception event, status ERROR). */
export function recordFailure(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/**
 * Runs `work` in a child span of the active context named `name`; the span ends once, when the
 * returned promise settles (a rejection is recorded: exception, status ERROR, and rethrown).
 * Tracing off, or outside any traced invocation (a background sweep: no trace of its own), `work`
 * alone, handed a non-recording span.
 */
export function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  if (!started || !trace.getSpan(context.active())) return work(NO_SPAN);
  const clock = clockOf();
  return tracer.startActiveSpan(name, { attributes, startTime: clock() }, async (begun) => {
    const span = new AnchoredSpan(begun, clock);
    try {
      return await work(span);
    } catch (error) {
      recordFailure(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Starts a child span of `parent` (default: the active context) that the caller ends; a
 * non-recording span when tracing is off or `parent` holds no span (work outside any invocation
 * makes no trace of its own). Its times are on its trace's clock (trace-clock.ts).
 * @param options.startTime its start, a {@link traceTime} of the same trace (default: now).
 */
export function startChildSpan(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; startTime?: number },
  parent: Context = context.active(),
): Span {
  if (!started || !trace.getSpan(parent)) return NO_SPAN;
  const clock = clockOf(parent);
  return new AnchoredSpan(
    tracer.startSpan(name, { ...options, startTime: options.startTime ?? clock() }, parent),
    clock,
  );
}

/**
 * Now on the clock of the trace `ctx` is in (trace-clock.ts), in ms since the epoch (with a
 * fraction): a span's start taken before it is started (startChildSpan's `startTime`).
 * Outside a traced invocation, the wall clock.
 */
export function traceTime(ctx: Context = context.active()): number {
  return clockOf(ctx)();
}

/** An invocation's root span and the work still holding it open ({@link holdInvocation}). */
interface Invocation {
  span: Span;
  holds: number;
  referenced: boolean;
  /** The trace's clock: every time in it is read from this one (trace-clock.ts). */
  clock: TraceClock;
}

const INVOCATION = createContextKey('genbot.invocation');

const invocationOf = (ctx: Context = context.active()) => ctx.getValue(INVOCATION) as Invocation | undefined;

/** The clock of the trace `ctx` is in; outside an invocation, one anchored now (as the SDK would date a span). */
const clockOf = (ctx: Context = context.active()): TraceClock => invocationOf(ctx)?.clock ?? anchoredClock();

function release(invocation: Invocation, error?: unknown): void {
  if (error !== undefined) recordFailure(invocation.span, error);
  if (--invocation.holds === 0) invocation.span.end();
}

/**
 * Runs `handle` (an adapter's handler of one interaction or event) as the root span of a new
 * trace named `name` (`discord.interaction`, `slack.command`, …). The root ends when `handle`
 * has returned (or its promise settled) and every work it started through
 * `RunningCommands.run` has settled ({@link holdInvocation}): the answer a handler leaves
 * running is inside its trace. Tracing off: `handle()` alone.
 */
export function traceInvocation<T>(name: string, attributes: Attributes, handle: () => T): T {
  if (!started) return handle();
  const clock = anchoredClock();
  const options = { kind: SpanKind.SERVER, root: true, attributes, startTime: clock() };
  return tracer.startActiveSpan(name, options, (begun) => {
    const invocation: Invocation = { span: new AnchoredSpan(begun, clock), holds: 1, referenced: false, clock };
    return context.with(context.active().setValue(INVOCATION, invocation), () => {
      let out: T;
      try {
        out = handle();
      } catch (error) {
        release(invocation, error);
        throw error;
      }
      if (out instanceof Promise)
        out.then(
          () => release(invocation),
          (error: unknown) => release(invocation, error),
        );
      else release(invocation);
      return out;
    });
  });
}

/**
 * Keeps the active invocation's root span open until the returned function is called (with the
 * work's error, if it failed: recorded on the root). undefined outside a traced invocation or
 * with tracing off. `RunningCommands.run` holds it for each work it runs.
 */
export function holdInvocation(): ((error?: unknown) => void) | undefined {
  if (!started) return undefined;
  const invocation = invocationOf();
  if (!invocation) return undefined;
  invocation.holds += 1;
  let done = false;
  return (error) => {
    if (done) return;
    done = true;
    release(invocation, error);
  };
}

/**
 * Puts the reference a user may read (`newReference()`, log.ts) on the active invocation's root
 * span as `genbot.reference`: the first reference made under it (the invocation's).
 */
export function noteReference(ref: string): void {
  if (!started) return;
  const invocation = invocationOf();
  if (!invocation || invocation.referenced) return;
  invocation.referenced = true;
  invocation.span.setAttribute('genbot.reference', ref);
}

/**
 * The fields a log line written under a traced invocation gets (pino's `mixin`): its `trace_id`
 * (and `span_id`), beside the invocation's `ref`. A new object each call: pino merges the line's
 * own fields into it. Installed only when tracing is on (log.ts).
 */
export function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  return traceFlags & 1 ? { trace_id: traceId, span_id: spanId } : {};
}
