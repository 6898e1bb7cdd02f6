/**
 * Prometheus metrics (prom-client) from the bot's events: commands by name, platform and
 * outcome; service requests by endpoint and status, with their latency; time to first token
 * and stream duration; tokens in and out; platform 429s; open streams; and Node's own metrics
 * (event-loop delay among them: `nodejs_eventloop_lag_p99_seconds`).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type {
  BotEvents,
  CommandOutcome,
  RateLimitReport,
  ServiceResponse,
  StreamReport,
  TokenReport,
} from '../core/events.ts';

/** The metrics of one bot, in a registry of their own. */
export interface BotMetrics {
  registry: Registry;
  /** Stops listening to the bot's events. */
  close(): void;
}

const SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120];

/**
 * Creates the registry and starts counting the bot's events.
 * @param options.prefix metric name prefix (default `genbot_`).
 */
export function createMetrics(events: BotEvents, options: { prefix?: string } = {}): BotMetrics {
  const prefix = options.prefix ?? 'genbot_';
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix });
  const commands = new Counter({
    name: `${prefix}commands_total`,
    help: 'Invocations by command, platform and outcome (ok or an error code).',
    labelNames: ['command', 'platform', 'outcome'],
    registers: [registry],
  });
  const requests = new Counter({
    name: `${prefix}service_requests_total`,
    help: 'Responses of the generation service by endpoint and status (or error code).',
    labelNames: ['endpoint', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: `${prefix}service_response_seconds`,
    help: "Time to the service's response headers, by endpoint.",
    labelNames: ['endpoint'],
    buckets: SECONDS,
    registers: [registry],
  });
  const firstToken = new Histogram({
    name: `${prefix}time_to_first_token_seconds`,
    help: 'Time from a chat request to its first text, by platform.',
    labelNames: ['platform'],
    buckets: SECONDS,
    registers: [registry],
  });
  const duration = new Histogram({
    name: `${prefix}stream_duration_seconds`,
    help: 'Duration of streamed answers, by platform and outcome.',
    labelNames: ['platform', 'outcome'],
    buckets: SECONDS,
    registers: [registry],
  });
  const tokens = new Counter({
    name: `${prefix}tokens_total`,
    help: 'Tokens used, by direction (prompt or completion) and whether they were estimated.',
    labelNames: ['direction', 'estimated'],
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: `${prefix}platform_rate_limited_total`,
    help: 'Responses with status 429 from Discord or Slack, by route.',
    labelNames: ['platform', 'route'],
    registers: [registry],
  });
  const open = new Gauge({
    name: `${prefix}open_streams`,
    help: 'Answers streaming now, by platform.',
    labelNames: ['platform'],
    registers: [registry],
  });
  for (const platform of ['discord', 'slack']) open.set({ platform }, 0);

  const onCommand = (o: CommandOutcome) =>
    commands.inc({ command: o.command, platform: o.platform, outcome: o.ok ? 'ok' : (o.errorCode ?? 'error') });
  const onResponse = (r: ServiceResponse) => {
    requests.inc({ endpoint: r.endpoint, status: String(r.status) });
    latency.observe({ endpoint: r.endpoint }, r.ms / 1000);
  };
  const onStart = (s: { platform: string }) => open.inc({ platform: s.platform });
  const onEnd = (s: StreamReport) => {
    open.dec({ platform: s.platform });
    if (s.firstTokenMs !== undefined) firstToken.observe({ platform: s.platform }, s.firstTokenMs / 1000);
    duration.observe({ platform: s.platform, outcome: s.outcome }, s.durationMs / 1000);
  };
  const onTokens = (t: TokenReport) => {
    tokens.inc({ direction: 'prompt', estimated: String(t.estimated) }, t.prompt);
    tokens.inc({ direction: 'completion', estimated: String(t.estimated) }, t.completion);
  };
  const onRateLimited = (r: RateLimitReport) => rateLimited.inc({ platform: r.platform, route: r.route });
  events.on('command.done', onCommand);
  events.on('service.response', onResponse);
  events.on('stream.start', onStart);
  events.on('stream.end', onEnd);
  events.on('tokens', onTokens);
  events.on('platform.rate_limited', onRateLimited);
  return {
    registry,
    close: () => {
      events.off('command.done', onCommand);
      events.off('service.response', onResponse);
      events.off('stream.start', onStart);
      events.off('stream.end', onEnd);
      events.off('tokens', onTokens);
      events.off('platform.rate_limited', onRateLimited);
    },
  };
}
