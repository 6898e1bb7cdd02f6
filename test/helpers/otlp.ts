/**
 * An OTLP/HTTP traces receiver for tests: a local HTTP server accepting `POST /v1/traces` in
 * OTLP's JSON encoding (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding: the
 * bot exports it with OTEL_EXPORTER_OTLP_PROTOCOL=http/json), keeping every span it received,
 * flattened, with attribute values read from their `AnyValue` wrappers.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A received span: ids in hex, kind as OTLP numbers it (1 internal, 2 server, 3 client). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  /** When the span started and ended, in ns since the epoch. */
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
}

/** A running receiver. */
export interface OtlpReceiver {
  /** The base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it (`http://127.0.0.1:<port>`). */
  url: string;
  /** How many requests arrived, on any path. */
  readonly requests: number;
  /** The headers of each export request. */
  headers: IncomingHttpHeaders[];
  /** Every span received so far. */
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};

/** An OTLP AnyValue as a plain value (int64s arrive as numbers or strings). */
function plainValue(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plainValue);
  return undefined;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: Array<{ key: string; value: AnyValue }>;
  status?: { code?: number; message?: string };
}

interface ExportRequest {
  resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }>;
}

/** Starts a receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const headers: IncomingHttpHeaders[] = [];
  let requests = 0;
  const server = createServer((request, response) => {
    requests += 1;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (
        request.method !== 'POST' ||
        request.url !== '/v1/traces' ||
        !request.headers['content-type']?.includes('json')
      ) {
        response.writeHead(415).end();
        return;
      }
      headers.push(request.headers);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
      for (const resource of body.resourceSpans ?? [])
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            received.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: span.kind,
              startNs: BigInt(span.startTimeUnixNano),
              endNs: BigInt(span.endTimeUnixNano),
              attributes: Object.fromEntries((span.attributes ?? []).map((a) => [a.key, plainValue(a.value)])),
              status: span.status ?? {},
            });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return requests;
    },
    headers,
    spans: () => [...received],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
