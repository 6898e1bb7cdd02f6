/**
 * The tracing section of the configuration (its variables' schema, `tracingEnv`, part of
 * config-env.ts's `envSchema`): where the OTLP/HTTP
 * exporter sends spans, in which encoding, with which headers, under which service name.
 * Tracing is on when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is) or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` appended, as OTLP/HTTP says:
 * https://opentelemetry.io/docs/specs/otel/protocol/exporter/#endpoint-urls-for-otlphttp) is set.
 */
import { z } from 'zod';
import type { TracingConfig } from './ops/tracing.ts';

export type { TracingConfig };

const unsetToUndefined = (v: unknown) => (v === '' ? undefined : v);

/**
 * Traces (OpenTelemetry's own variable names, https://opentelemetry.io/docs/specs/otel/protocol/exporter/):
 * on when either endpoint is set. `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,…`, values
 * percent-encoded) usually holds a collector's API key: a secret. The SDK reads its other
 * `OTEL_*` variables (sampler, batch sizes, resource attributes) from the environment itself.
 */
export const tracingEnv = z.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: z.preprocess(unsetToUndefined, z.url().optional()),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.preprocess(unsetToUndefined, z.url().optional()),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.preprocess(
    (v) => unsetToUndefined(v) ?? 'http/protobuf',
    z.enum(['http/protobuf', 'http/json'], { error: 'must be http/protobuf or http/json (grpc is not supported)' }),
  ),
  OTEL_EXPORTER_OTLP_HEADERS: z.preprocess(unsetToUndefined, z.string().optional()),
  OTEL_SERVICE_NAME: z.preprocess((v) => unsetToUndefined(v) ?? 'genbot', z.string().min(1)),
});

/** The tracing variables as parsed. */
type TracingEnv = z.infer<typeof tracingEnv>;

/**
 * Parses `OTEL_EXPORTER_OTLP_HEADERS`: `key=value` pairs separated by commas, values
 * percent-decoded (the W3C Baggage format the spec names).
 * @returns the headers, or undefined when the value is malformed (a pair without `=`, a bad escape).
 */
export function parseOtlpHeaders(value: string | undefined): Record<string, string> | undefined {
  const headers: Record<string, string> = {};
  if (!value) return headers;
  for (const pair of value.split(',')) {
    if (!pair.trim()) continue;
    const at = pair.indexOf('=');
    if (at <= 0) return undefined;
    const key = pair.slice(0, at).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key)) return undefined;
    try {
      headers[key.toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return headers;
}

/** The traces URL of a base endpoint: `http://collector:4318` → `http://collector:4318/v1/traces`. */
export function tracesUrlOf(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/**
 * The tracing section, or undefined when no endpoint is set (tracing off); a problem for a
 * malformed `OTEL_EXPORTER_OTLP_HEADERS` (never echoing its value: it holds a key).
 */
export function tracingOf(e: TracingEnv): { tracing: TracingConfig | undefined; problems: string[] } {
  const headers = parseOtlpHeaders(e.OTEL_EXPORTER_OTLP_HEADERS);
  if (!headers)
    return {
      tracing: undefined,
      problems: ['OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs separated by commas (values percent-encoded)'],
    };
  const url =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (e.OTEL_EXPORTER_OTLP_ENDPOINT ? tracesUrlOf(e.OTEL_EXPORTER_OTLP_ENDPOINT) : undefined);
  if (!url) return { tracing: undefined, problems: [] };
  return {
    tracing: { tracesUrl: url, protocol: e.OTEL_EXPORTER_OTLP_PROTOCOL, headers, serviceName: e.OTEL_SERVICE_NAME },
    problems: [],
  };
}

/** The values of the headers, for the logger to scrub (an API key sent to the collector). */
export function tracingSecrets(e: TracingEnv): string[] {
  return Object.values(parseOtlpHeaders(e.OTEL_EXPORTER_OTLP_HEADERS) ?? {});
}
