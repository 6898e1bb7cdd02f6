/**
 * The operator's endpoint (HTTP_PORT) of a whole bot, on Slack (HTTP mode) with its state in
 * a real Redis: /healthz answers 200 while every part answers and 503 with the reason while
 * Redis is down, then 200 again; /metrics is Prometheus text that a parser reads, and it
 * counts a /chat, the service's response, the stream and its tokens.
 */

import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import type { FakeService } from '../fakes/service.ts';
import type { FakeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import type { TestRedis } from '../helpers/redis.ts';
import type { TestBot } from './harness.ts';

let service: FakeService;
let slack: FakeSlack;
let redis: TestRedis;
let testBot: TestBot;
let opsUrl: string;

useE2E(
  { slack: { channels: [{ id: 'C0OPS', name: 'ops' }] }, redis: true, bot: { env: { HTTP_PORT: '0' } } },
  (e2e) => {
    ({ service, slack, redis, bot: testBot } = e2e);
    opsUrl = `http://127.0.0.1:${testBot.bot.ops!.port}`;
  },
);

async function health(): Promise<{
  status: number;
  body: { status: string; checks: Record<string, string>; reasons?: string[] };
}> {
  const response = await fetch(`${opsUrl}/healthz`);
  return { status: response.status, body: (await response.json()) as never };
}

type Family = {
  name: string;
  type: string;
  metrics: Array<{ labels?: Record<string, string>; value?: string; buckets?: Record<string, string>; count?: string }>;
};

async function metrics(): Promise<Family[]> {
  const response = await fetch(`${opsUrl}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusTextFormat(await response.text()) as Family[];
}

const family = (families: Family[], name: string) => families.find((f) => f.name === name)!;

describe('HTTP_PORT: /healthz and /metrics', () => {
  it('/healthz is 200 while Slack and Redis answer, 503 naming the store while Redis is down, and 200 again once it is back', async () => {
    expect(await health()).toEqual({ status: 200, body: { status: 'ok', checks: { slack: 'ok', store: 'ok' } } });
    await redis.kill();
    const down = await health();
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('unhealthy');
    expect(down.body.checks.slack).toBe('ok');
    expect(down.body.reasons![0]).toMatch(/^store \(redis\) not answering: /);
    await redis.restart();
    await expect.poll(async () => (await health()).status, { timeout: 15_000, interval: 200 }).toBe(200);
  });

  it('/metrics parses as Prometheus text and counts a /chat: the command, the service response, the stream and its tokens', async () => {
    service.setChatReply('Four words right here.');
    const done = testBot.outcomes((o) => o.command === 'chat');
    const ack = await slack.sendSlashCommand(`http://127.0.0.1:${testBot.bot.slack!.port}`, {
      command: '/chat',
      text: 'count me',
      channel_id: 'C0OPS',
    });
    expect(ack.ackedInTime).toBe(true);
    expect((await done)[0]!.ok).toBe(true);

    const families = await metrics();
    expect(family(families, 'genbot_commands_total').metrics).toContainEqual({
      labels: { command: 'chat', platform: 'slack', outcome: 'ok' },
      value: '1',
    });
    expect(family(families, 'genbot_service_requests_total').metrics).toContainEqual({
      labels: { endpoint: '/v1/chat/completions', status: '200' },
      value: '1',
    });
    // (This parser keeps a histogram's buckets but not its labels: one stream, so one observation.)
    const firstToken = family(families, 'genbot_time_to_first_token_seconds');
    expect(firstToken.type).toBe('HISTOGRAM');
    expect(firstToken.metrics.map((m) => m.buckets!['+Inf'])).toEqual(['1']);
    expect(family(families, 'genbot_stream_duration_seconds').metrics.map((m) => m.buckets!['+Inf'])).toEqual(['1']);
    const tokens = family(families, 'genbot_tokens_total').metrics;
    expect(Number(tokens.find((m) => m.labels?.direction === 'completion')!.value)).toBe(6);
    expect(family(families, 'genbot_open_streams').metrics.find((m) => m.labels?.platform === 'slack')!.value).toBe(
      '0',
    );
    expect(family(families, 'genbot_nodejs_eventloop_lag_p99_seconds').type).toBe('GAUGE');
  });

  it('answers 404 elsewhere', async () => {
    expect((await fetch(`${opsUrl}/`)).status).toBe(404);
  });
});
