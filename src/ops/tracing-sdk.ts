/**
 * The OpenTelemetry SDK, started when tracing is on: imported by tracing.ts `startTracing` with a
 * dynamic `import()` only then, so a bot without an OTLP endpoint never loads sdk-node (nor its
 * hundreds of modules). sdk-node registers the tracer provider, the W3C propagators and the
 * AsyncLocalStorage context manager that carries a span across awaits; spans go through one
 * batch processor (OTEL_BSP_* tune it) to an OTLP/HTTP exporter (protobuf, OTLP's default, or
 * JSON: `OTEL_EXPORTER_OTLP_PROTOCOL`). No metrics or logs are sent (the bot's metrics are
 * Prometheus', its logs pino's), and no library is auto-instrumented: the spans are the bot's own.
 * https://opentelemetry.io/docs/languages/js/exporters/#usage-with-nodejs
 */
import { context, type DiagLogger, DiagLogLevel, diag, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { NodeSDK, tracing } from '@opentelemetry/sdk-node';
import type { Logger } from 'pino';
import type { TracingConfig, TracingHandle } from './tracing.ts';

/**
 * The SDK's own problems (an export the collector refused or never answered: spans lost) as warn
 * lines of the bot's log: the first, then at most one a minute with the count of those between.
 * Its info and debug messages are dropped.
 */
function diagnostics(log: Logger): DiagLogger {
  let last = 0;
  let skipped = 0;
  const warn = (message: string, ...args: unknown[]) => {
    const now = Date.now();
    if (now - last < 60_000) {
      skipped += 1;
      return;
    }
    const cause = args.find((a): a is Error => a instanceof Error);
    log.warn({ otel: message, err: cause, repeated: skipped }, 'tracing: the OpenTelemetry SDK reports a problem');
    last = now;
    skipped = 0;
  };
  const none = () => undefined;
  return { error: warn, warn, info: none, debug: none, verbose: none };
}

/**
 * Starts sdk-node with an OTLP/HTTP exporter to `config.tracesUrl`; the SDK's problems go to `log`
 * ({@link diagnostics}).
 * @returns the handle that flushes and stops it; its `shutdown` also unregisters the API's
 *   globals, so that a bot started later in the same process (tests) may start its own.
 */
export function startSdk(config: TracingConfig, log: Logger): TracingHandle {
  const problems = diagnostics(log);
  diag.setLogger(problems, DiagLogLevel.WARN);
  const options = { url: config.tracesUrl, headers: config.headers };
  const exporter = config.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufExporter(options);
  const processor = new tracing.BatchSpanProcessor(exporter);
  const sdk = new NodeSDK({
    serviceName: config.serviceName,
    spanProcessors: [processor],
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  return {
    forceFlush: () => processor.forceFlush().catch((error: unknown) => problems.error('span export failed', error)),
    shutdown: async () => {
      await sdk.shutdown().catch((error: unknown) => problems.error('span export failed at the stop', error));
      trace.disable();
      context.disable();
      propagation.disable();
      diag.disable();
    },
  };
}
