/**
 * Tracing's parts (src/ops/tracing.ts and what uses it), each against a local OTLP/HTTP receiver
 * (JSON): the configuration of OTEL_EXPORTER_OTLP_*; the store's calls as spans naming the
 * key's family only; the scheduler's waits visible on its write spans; spans ended once, a
 * failure recorded; nothing traced outside an invocation. The whole /chat trace is
 * test/e2e/traces.test.ts.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, trace } from '@opentelemetry/api';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { WriteScheduler } from '../../src/core/delivery/scheduler.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import { createLogger } from '../../src/log.ts';
import {
  inSpan,
  isTracingStarted,
  startChildSpan,
  startTracing,
  type TracingHandle,
  traceInvocation,
} from '../../src/ops/tracing.ts';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp.ts';

const base = { SERVICE_BASE_URL: 'http://127.0.0.1:1/v1', SERVICE_API_KEY: 'k', DISCORD_TOKEN: 't' } as const;
const discord = { ...base, DISCORD_APPLICATION_ID: '123456789012345678' };

describe('tracing configuration', () => {
  it('is off without an endpoint; the base endpoint gets /v1/traces, the traces endpoint is used as it is', () => {
    expect(loadConfig(discord).tracing).toBeUndefined();
    expect(loadConfig({ ...discord, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      serviceName: 'genbot',
    });
    const both = loadConfig({
      ...discord,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/ingest',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'genbot-eu',
    });
    expect(both.tracing).toMatchObject({
      tracesUrl: 'https://traces.example.com/ingest',
      protocol: 'http/json',
      serviceName: 'genbot-eu',
    });
  });

  it('reads the headers (percent-decoded) as secrets, and refuses malformed ones or grpc naming the variable, never the value', () => {
    const config = loadConfig({
      ...discord,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%20secret123, X-Team=ops',
    });
    expect(config.tracing?.headers).toEqual({ 'x-api-key': 'abc secret123', 'x-team': 'ops' });
    expect(config.secrets).toEqual(expect.arrayContaining(['abc secret123']));
    for (const [name, value] of [
      ['OTEL_EXPORTER_OTLP_HEADERS', 'no-equals-sign-secret123'],
      ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc'],
      ['OTEL_EXPORTER_OTLP_ENDPOINT', 'not a url'],
    ] as const) {
      let error: unknown;
      try {
        loadConfig({ ...discord, [name]: value });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain(name);
      expect((error as Error).message).not.toContain('secret123');
    }
  });
});

describe('spans', () => {
  let receiver: OtlpReceiver;
  let tracing: TracingHandle | undefined;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    tracing = await startTracing(
      { tracesUrl: `${receiver.url}/v1/traces`, protocol: 'http/json', headers: {}, serviceName: 'genbot-test' },
      pino({ level: 'silent' }),
    );
  });
  afterAll(async () => {
    await tracing?.shutdown();
    await receiver.close();
  });
  afterEach(() => tracing?.forceFlush());

  /** The spans received for the trace whose root is named `root`. */
  async function traceOf(root: string) {
    await tracing!.forceFlush();
    const spans = receiver.spans();
    const top = spans.find((s) => s.name === root && !s.parentSpanId);
    expect(top).toBeDefined();
    return { root: top!, spans: spans.filter((s) => s.traceId === top!.traceId) };
  }

  it('the store: each call is a span of the invocation, naming the backend and the key family, never the key', async () => {
    expect(isTracingStarted()).toBe(true);
    const store = await openStore('sqlite://:memory:');
    try {
      await store.keyv.get('history:discord:G1:C1');
      await traceInvocation('test.store', {}, async () => {
        await store.keyv.set('history:discord:G1:C1', { turns: [] });
        await store.keyv.get('history:discord:G1:C1');
        await store.increment('quota:chat:U0SECRETUSER', 1, 60_000);
      });
    } finally {
      await store.close();
    }
    const { root, spans } = await traceOf('test.store');
    // The invocation's own calls are its children (SQLite's increment reads and writes its keyv inside its span).
    const calls = spans.filter((s) => s.name.startsWith('store.') && s.parentSpanId === root.spanId);
    expect(calls.map((s) => s.name)).toEqual(['store.set', 'store.get', 'store.increment']);
    expect(calls.map((s) => s.attributes['genbot.store.key_family'])).toEqual(['history', 'history', 'quota']);
    const inner = spans.filter((s) => s.name.startsWith('store.') && s.parentSpanId !== root.spanId);
    expect(inner.every((s) => s.parentSpanId === calls[2]!.spanId)).toBe(true);
    expect(calls[0]!.attributes['db.system.name']).toBe('sqlite');
    expect(JSON.stringify(receiver.spans().map((s) => [s.name, s.attributes]))).not.toContain('U0SECRETUSER');
    // The get made outside any invocation made no trace of its own.
    expect(receiver.spans().filter((s) => s.name.startsWith('store.') && s.traceId !== root.traceId)).toEqual([]);
  });

  it('the scheduler: a write its budget held shows the wait (genbot.scheduler.wait_ms and a scheduler.wait span)', async () => {
    const scheduler = new WriteScheduler();
    const family = { platform: 'slack', kind: 'update' } as const;
    scheduler.define(family, { limit: 1, windowMs: 200 });
    const write = (key: string) =>
      scheduler.submit({ key, stream: key, buckets: [{ ...family, scope: 'T1' }], final: true, run: async () => {} });
    await traceInvocation('test.writes', {}, () => Promise.all([write('a'), write('b')]));
    scheduler.close();
    const { root, spans } = await traceOf('test.writes');
    const writes = spans.filter((s) => s.name === 'slack.write');
    expect(writes).toHaveLength(2);
    const waits = writes.map((w) => w.attributes['genbot.scheduler.wait_ms'] as number).sort((a, b) => a - b);
    // The second write waited for the bucket's window (200 ms from the first one's completion).
    expect(waits[1]).toBeGreaterThanOrEqual(199);
    expect(waits[0]).toBeLessThan(waits[1]!);
    for (const w of writes) {
      expect(w.parentSpanId).toBe(root.spanId);
      expect(w.attributes).toMatchObject({ 'genbot.write.kind': 'update', 'genbot.write.result': 'written' });
      expect(spans.filter((s) => s.name === 'scheduler.wait' && s.parentSpanId === w.spanId)).toHaveLength(1);
    }
  });

  it("a trace's times are on its root's clock: a wall clock stepped a minute ahead mid-trace dates no child outside its root", async () => {
    const wallClock = Date.now;
    await traceInvocation('test.clock', {}, async () => {
      // An NTP step (or two reads of a whole-ms clock a thread pause apart) between the root's start and its children's.
      const ahead = wallClock() + 60_000;
      const stepped = vi.spyOn(Date, 'now').mockImplementation(() => ahead);
      try {
        await inSpan('step', {}, () => new Promise((resolve) => setTimeout(resolve, 5)));
        const child = startChildSpan('child', {});
        child.addEvent('retry');
        child.end();
      } finally {
        stepped.mockRestore();
      }
    });
    const { root, spans } = await traceOf('test.clock');
    const children = spans.filter((s) => s.parentSpanId === root.spanId);
    expect(children.map((s) => s.name)).toEqual(['step', 'child']);
    for (const child of children) {
      expect(child.startNs).toBeGreaterThanOrEqual(root.startNs);
      expect(child.endNs).toBeLessThanOrEqual(root.endNs);
    }
    // In the order they happened: the step (5 ms or more) ended before the child started.
    const [step, child] = children;
    expect(step!.endNs - step!.startNs).toBeGreaterThanOrEqual(4_000_000n);
    expect(step!.endNs).toBeLessThanOrEqual(child!.startNs);
  });

  it('a failure is recorded once on its span and on the root, which ends once', async () => {
    const failing = traceInvocation('test.failure', {}, () =>
      inSpan('step', {}, async () => {
        throw new Error('the step broke');
      }),
    );
    await expect(failing).rejects.toThrow('the step broke');
    expect(trace.getSpan(context.active())).toBeUndefined();
    const { root, spans } = await traceOf('test.failure');
    const step = spans.find((s) => s.name === 'step')!;
    expect(step.status).toMatchObject({ code: 2, message: 'the step broke' });
    expect(root.status).toMatchObject({ code: 2 });
    expect(spans.filter((s) => s.spanId === root.spanId)).toHaveLength(1);
  });
});

describe('a collector that refuses the spans', () => {
  it('is one warn line of the bot log (the headers never in it), and the bot goes on', async () => {
    const lines: string[] = [];
    const log = createLogger({
      level: 'info',
      secrets: ['sekrit-collector-key'],
      destination: { write: (line: string) => void lines.push(line) },
    });
    const refusing = createServer((_request, response) => response.writeHead(500).end());
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/v1/traces`;
    const tracing = await startTracing(
      { tracesUrl: url, protocol: 'http/json', headers: { 'x-key': 'sekrit-collector-key' }, serviceName: 't' },
      log,
    );
    try {
      for (let i = 0; i < 3; i++) {
        await traceInvocation('test.refused', {}, async () => undefined);
        await tracing!.forceFlush();
      }
    } finally {
      await tracing!.shutdown();
      await new Promise((resolve) => refusing.close(resolve));
    }
    const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 40);
    expect(warnings).toEqual([
      expect.objectContaining({ msg: 'tracing: the OpenTelemetry SDK reports a problem', repeated: 0 }),
    ]);
    expect(lines.join('\n')).not.toContain('sekrit-collector-key');
  });
});
