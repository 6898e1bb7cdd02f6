/**
 * Traces (issue 43, item 1), end to end on Discord: the whole bot against FakeDiscord and
 * FakeService, with an OTLP/HTTP receiver of its own here (POST /v1/traces, OTLP's JSON
 * encoding: OTEL_EXPORTER_OTLP_PROTOCOL=http/json). With OTEL_EXPORTER_OTLP_ENDPOINT set, a /chat
 * is one trace: its root span (the interaction) carries the reference the bot logged for it, and
 * holds the deferral, store calls, the chat completion (GenAI attributes, the fake's usage) and
 * each platform write with its wait in the scheduler; the log lines carry its trace id. Without
 * an endpoint, no SDK is loaded or started and the receiver hears nothing. A Slack /chat the same.
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTracingStarted } from '../../src/ops/tracing.ts';
import type { FakeDiscord } from '../fakes/discord.ts';
import type { FakeService } from '../fakes/service.ts';
import type { FakeSlack } from '../fakes/slack.ts';
import { useE2E } from '../helpers/e2e.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp.ts';
import { discordEnv, slackEnv, startTestBot, type TestBot } from './harness.ts';

const SLACK_CHANNEL = 'C0TRACES';

let service: FakeService;
let discord: FakeDiscord;
let slack: FakeSlack;
let receiver: OtlpReceiver;

useE2E({ discord: {}, slack: { channels: [{ id: SLACK_CHANNEL, name: 'traces' }] } }, (e2e) => {
  ({ service, discord, slack } = e2e);
});

/** The variables that turn tracing on, towards the receiver, in OTLP's JSON encoding. */
const tracingEnv = () => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=sekrit-collector-key',
});

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());

/** Whether sdk-node (CommonJS) is among the modules this process loaded. */
/**
 * The spans that ended after `root`, named with how much later (none, when the root waited for
 * all: the trace's times are on one clock, ops/trace-clock.ts).
 */
const endedAfter = (spans: ReceivedSpan[], root: ReceivedSpan) =>
  spans.filter((s) => s.endNs > root.endNs).map((s) => `${s.name} +${Number(s.endNs - root.endNs) / 1e6} ms`);

const sdkLoaded = () =>
  Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/@opentelemetry/sdk-node/'));

/** Runs a /chat in a channel of its own; resolves with the interaction's id once the bot is done with it. */
async function chat(testBot: TestBot, prompt: string): Promise<string> {
  const channel = discord.addChannel(`traces-${Math.random().toString(36).slice(2, 8)}`);
  const done = testBot.outcomes((o) => o.conversationId === `discord:${discord.guildId}:${channel.id}`);
  const interaction = discord.dispatchInteraction({ command: 'chat', options: { prompt }, channelId: channel.id });
  const [outcome] = await done;
  expect(outcome!.ok).toBe(true);
  return interaction.id;
}

// First in the file: this process has loaded no SDK yet, so its absence afterwards means something.
describe('without an OTLP endpoint', () => {
  it('starts no SDK (never even imports it), sends nothing, and logs no trace ids', async () => {
    const testBot = await startTestBot(discordEnv(service, discord));
    try {
      await chat(testBot, 'hello without traces');
      expect(testBot.bot.tracing).toBeUndefined();
      expect(isTracingStarted()).toBe(false);
      expect(sdkLoaded()).toBe(false);
      expect(testBot.logs.some((line) => 'trace_id' in line)).toBe(false);
    } finally {
      await testBot.stop();
    }
    expect(receiver.requests).toBe(0);
  });
});

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it('a /chat is one trace: its root holds the reference the bot logged, the deferral, store calls, the chat completion and each write with its wait', async () => {
    const testBot = await startTestBot({ ...discordEnv(service, discord), ...tracingEnv() });
    let interactionId: string;
    try {
      expect(isTracingStarted()).toBe(true);
      expect(sdkLoaded()).toBe(true);
      service.setStreamUsage({ prompt_tokens: 17, completion_tokens: 5 });
      interactionId = await chat(testBot, 'hello with traces');
    } finally {
      service.reset();
      // The stop flushes the spans not exported yet (after the running answers ended).
      await testBot.stop();
    }
    expect(isTracingStarted()).toBe(false);
    expect(receiver.headers.every((h) => h['x-collector-key'] === 'sekrit-collector-key')).toBe(true);
    expect(testBot.rawLog()).not.toContain('sekrit-collector-key');

    const spans = receiver.spans();
    const traceIds = new Set(spans.map((s) => s.traceId));
    expect(traceIds.size).toBe(1);
    const [root, ...others] = spans.filter((s) => !s.parentSpanId);
    expect(others).toEqual([]);
    expect(root).toMatchObject({ name: 'discord.interaction', kind: 2 });
    expect(root!.attributes['genbot.command']).toBe('chat');

    // The reference the bot logged for this interaction is on the root; its lines carry the trace id.
    const lines = testBot.logs.filter((line) => line.interaction === interactionId);
    const refs = new Set(lines.map((line) => line.ref));
    expect(refs.size).toBe(1);
    expect(root!.attributes['genbot.reference']).toBe([...refs][0]);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((line) => line.trace_id === root!.traceId)).toBe(true);

    const named = (name: string) => spans.filter((s) => s.name === name);
    expect(named('discord.defer')).toHaveLength(1);
    expect(named('discord.defer')[0]!.parentSpanId).toBe(root!.spanId);
    expect(spans.filter((s) => s.name.startsWith('store.')).length).toBeGreaterThan(0);

    const [completion, ...moreCompletions] = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
    expect(moreCompletions).toEqual([]);
    const model = completion!.attributes['gen_ai.request.model'];
    expect(completion).toMatchObject({ name: `chat ${model}`, kind: 3 });
    expect(completion!.attributes).toMatchObject({
      'gen_ai.response.model': expect.any(String),
      'gen_ai.usage.input_tokens': 17,
      'gen_ai.usage.output_tokens': 5,
      'gen_ai.response.finish_reasons': ['stop'],
    });

    // Each write is a child of the root; one that ran has its wait in the scheduler (an attribute and
    // a child span); one a newer edit replaced before it ran says so and has none.
    const writes = named('discord.write');
    expect(writes.every((w) => w.parentSpanId === root!.spanId)).toBe(true);
    const written = writes.filter((w) => w.attributes['genbot.write.result'] === 'written');
    expect(written.some((w) => w.attributes['genbot.write.final'] === true)).toBe(true);
    for (const write of writes) {
      const waits = spans.filter((s) => s.name === 'scheduler.wait' && s.parentSpanId === write.spanId);
      if (write.attributes['genbot.write.result'] === 'written') {
        expect(write.attributes['genbot.scheduler.wait_ms']).toEqual(expect.any(Number));
        expect(waits).toHaveLength(1);
      } else {
        expect(write.attributes['genbot.write.result']).toBe('superseded');
        expect(waits).toHaveLength(0);
      }
    }
    // The root ends last: it waited for the answer its handler left running.
    expect(endedAfter(spans, root!)).toEqual([]);
    // Every span ended once: no span id is exported twice.
    expect(new Set(spans.map((s: ReceivedSpan) => s.spanId)).size).toBe(spans.length);
  });

  it('a Slack /chat is one trace too: its root (slack.command) holds the logged reference, the ack, store calls, the chat completion and the writes', async () => {
    const from = receiver.spans().length;
    const testBot = await startTestBot({ ...slackEnv(service, slack), ...tracingEnv() });
    try {
      service.setStreamUsage({ prompt_tokens: 23, completion_tokens: 4 });
      const done = testBot.outcomes((o) => o.conversationId.endsWith(`:${SLACK_CHANNEL}`));
      await slack.sendSlashCommand(`http://127.0.0.1:${testBot.bot.slack!.port}`, {
        command: '/chat',
        text: 'hello with traces',
        channel_id: SLACK_CHANNEL,
      });
      expect((await done)[0]!.ok).toBe(true);
    } finally {
      service.reset();
      await testBot.stop();
    }
    const spans = receiver.spans().slice(from);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const roots = spans.filter((s) => !s.parentSpanId);
    expect(roots).toHaveLength(1);
    const root = roots[0]!;
    expect(root).toMatchObject({ name: 'slack.command', kind: 2 });
    expect(root.attributes['genbot.command']).toBe('/chat');
    const lines = testBot.logs.filter((line) => line.command === 'chat' && line.platform === 'slack');
    expect(lines.length).toBeGreaterThan(0);
    expect(new Set(lines.map((line) => line.ref))).toEqual(new Set([root.attributes['genbot.reference']]));
    expect(lines.every((line) => line.trace_id === root.traceId)).toBe(true);
    const names = spans.map((s) => s.name);
    expect(names.filter((n) => n === 'slack.ack')).toHaveLength(1);
    expect(names.some((n) => n.startsWith('store.'))).toBe(true);
    expect(names.some((n) => n === 'slack.write')).toBe(true);
    expect(endedAfter(spans, root)).toEqual([]);
    const completion = spans.find((s) => s.attributes['gen_ai.operation.name'] === 'chat')!;
    expect(completion.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 23, 'gen_ai.usage.output_tokens': 4 });
  });
});
