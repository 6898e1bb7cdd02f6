/**
 * Prometheus metrics (prom-client) from the bot's events: commands by name, platform and
 * outcome; service requests by endpoint and status, with their latency; time to first token
 * and stream duration; tokens in and out; money spent
 * (`spend_total`, by model and currency: the price table's); platform 429s; open streams; the votes on answers
 * (`feedback_total`, read from the store when scraped); configuration reloads, applied or refused
 * (`config_reloads_total`); mentions and DMs a platform never delivered, found by the sweep
 * (`missed_events_total`, core/sweep.ts); models unavailable and the fallback asked instead
 * (`fallbacks_total{from,to}`, core/service/fallback.ts); Node's own metrics (event-loop delay among them:
 * `nodejs_eventloop_lag_p99_seconds`); and the signals the alert rules read
 * (metrics-signals.ts: health checks, each platform's last event, spend cap notices).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type {
  BotEvents,
  CommandOutcome,
  FallbackReport,
  RateLimitReport,
  ServiceResponse,
  SpendReport,
  StreamReport,
  TokenReport,
} from '../core/events.ts';
import type { TallyLine } from '../core/state/feedback.ts';
import { defineSignals, type SignalSources } from './metrics-signals.ts';

/** The metrics of one bot, in a registry of their own. */
export interface BotMetrics {
  registry: Registry;
  /** Stops listening to the bot's events. */
  close(): void;
}

/** Longest wait for the store's feedback tally when /metrics is scraped, in ms (the last figures are kept past it). */
const FEEDBACK_READ_MS = 1_000;

/**
 * Distinct model names a label takes, at most (`fallbacks_total`): a model a user typed is a
 * label too, so past this many the others count as `other` (a series per typo would grow forever).
 */
const MAX_MODEL_LABELS = 100;

/** A label of at most `max` distinct values (each at most 200 characters): the first ones seen, then `other`. */
function boundedLabel(max: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    const label = value.slice(0, 200);
    if (seen.has(label)) return label;
    if (seen.size >= max) return 'other';
    seen.add(label);
    return label;
  };
}

const SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120];

/** The bot's metrics, registered in `registry` with names starting with `prefix`. */
function defineMetrics(registry: Registry, prefix: string) {
  const registers = [registry];
  return {
    commands: new Counter({
      name: `${prefix}commands_total`,
      help: 'Invocations by command, platform and outcome (ok or an error code).',
      labelNames: ['command', 'platform', 'outcome'],
      registers,
    }),
    requests: new Counter({
      name: `${prefix}service_requests_total`,
      help: 'Responses of the generation service by endpoint and status (or error code).',
      labelNames: ['endpoint', 'status'],
      registers,
    }),
    latency: new Histogram({
      name: `${prefix}service_response_seconds`,
      help: "Time to the service's response headers, by endpoint.",
      labelNames: ['endpoint'],
      buckets: SECONDS,
      registers,
    }),
    firstToken: new Histogram({
      name: `${prefix}time_to_first_token_seconds`,
      help: 'Time from a chat request to its first text, by platform.',
      labelNames: ['platform'],
      buckets: SECONDS,
      registers,
    }),
    duration: new Histogram({
      name: `${prefix}stream_duration_seconds`,
      help: 'Duration of streamed answers, by platform and outcome.',
      labelNames: ['platform', 'outcome'],
      buckets: SECONDS,
      registers,
    }),
    tokens: new Counter({
      name: `${prefix}tokens_total`,
      help: 'Tokens used, by direction (prompt or completion) and whether they were estimated.',
      labelNames: ['direction', 'estimated'],
      registers,
    }),
    spend: new Counter({
      name: `${prefix}spend_total`,
      help: "Money spent on the service by this process, by model and currency (the price table's, PRICES_FILE), in the currency's units; sum over instances.",
      labelNames: ['model', 'currency'],
      registers,
    }),
    rateLimited: new Counter({
      name: `${prefix}platform_rate_limited_total`,
      help: 'Responses with status 429 from Discord or Slack, by route.',
      labelNames: ['platform', 'route'],
      registers,
    }),
    missed: new Counter({
      name: `${prefix}missed_events_total`,
      help: 'Mentions and DMs the platform never delivered, found by the periodic sweep and answered late, by platform.',
      labelNames: ['platform'],
      registers,
    }),
    reloads: new Counter({
      name: `${prefix}config_reloads_total`,
      help: 'Configuration reloads (SIGHUP) by result: applied, or refused (a bad value; the running configuration stays).',
      labelNames: ['result'],
      registers,
    }),
    open: new Gauge({
      name: `${prefix}open_streams`,
      help: 'Answers streaming now, by platform.',
      labelNames: ['platform'],
      registers,
    }),
  };
}

/**
 * `feedback_total{kind,vote,model}`: the votes on answers stored now (state/feedback.ts's tally
 * of every place), read from the store each time /metrics is scraped. A gauge, not a counter:
 * a changed vote moves from one count to the other (👍 then 👎 by one user leaves one 👎), so
 * the figures always equal the votes the store keeps, and every instance sharing the store
 * reports the same figures (aggregate them with `max`, not `sum`). A store that does not answer
 * within FEEDBACK_READ_MS leaves the figures last read.
 */
function feedbackGauge(registry: Registry, prefix: string, read: () => Promise<TallyLine[]>): Gauge {
  return new Gauge({
    name: `${prefix}feedback_total`,
    help: 'Votes on answers stored now (up or down), by kind of answer, vote and model; a changed vote moves between counts.',
    labelNames: ['kind', 'vote', 'model'],
    registers: [registry],
    async collect() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<undefined>(
        (resolve) => (timer = setTimeout(() => resolve(undefined), FEEDBACK_READ_MS)),
      );
      const lines = await Promise.race([read().catch(() => undefined), timeout]);
      clearTimeout(timer);
      for (const line of lines ?? []) {
        this.set({ kind: line.kind, vote: 'up', model: line.model }, line.up);
        this.set({ kind: line.kind, vote: 'down', model: line.model }, line.down);
      }
    },
  });
}

/**
 * `fallbacks_total{from,to}`: each request whose model was unavailable before any of its answer
 * (core/service/fallback.ts), asked of the next model of its chain, by the model that failed and
 * the one asked next (the `model.fallback` event).
 * @returns stops counting.
 */
function countFallbacks(registry: Registry, prefix: string, events: BotEvents): () => void {
  const fallbacks = new Counter({
    name: `${prefix}fallbacks_total`,
    help: 'Requests whose model was unavailable (5xx, a timeout, model not found) before any answer, asked of the next fallback model (FALLBACK_*_MODELS), by the model that failed and the one asked next.',
    labelNames: ['from', 'to'],
    registers: [registry],
  });
  const label = boundedLabel(MAX_MODEL_LABELS);
  const listener = (f: FallbackReport) => fallbacks.inc({ from: label(f.from), to: label(f.to) });
  events.on('model.fallback', listener);
  return () => events.off('model.fallback', listener);
}

/**
 * Creates the registry and starts counting the bot's events.
 * @param options.prefix metric name prefix (default `genbot_`).
 * @param options.feedback reads the store's tally of votes on answers (`feedback_total`; absent: no such metric).
 * @param options.signals what the alert rules' metrics read (metrics-signals.ts; absent parts: no such metric).
 */
export function createMetrics(
  events: BotEvents,
  options: { prefix?: string; feedback?: () => Promise<TallyLine[]>; signals?: SignalSources } = {},
): BotMetrics {
  const prefix = options.prefix ?? 'genbot_';
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix });
  const m = defineMetrics(registry, prefix);
  if (options.feedback) feedbackGauge(registry, prefix, options.feedback);
  const closeSignals = defineSignals(registry, prefix, events, options.signals ?? {});
  for (const platform of ['discord', 'slack']) {
    m.open.set({ platform }, 0);
    m.missed.inc({ platform }, 0);
  }
  for (const result of ['applied', 'refused']) m.reloads.inc({ result }, 0);
  const closeFallbacks = countFallbacks(registry, prefix, events);
  const listeners = {
    'command.done': (o: CommandOutcome) =>
      m.commands.inc({ command: o.command, platform: o.platform, outcome: o.ok ? 'ok' : (o.errorCode ?? 'error') }),
    'service.response': (r: ServiceResponse) => {
      m.requests.inc({ endpoint: r.endpoint, status: String(r.status) });
      m.latency.observe({ endpoint: r.endpoint }, r.ms / 1000);
    },
    'stream.start': (s: { platform: string }) => m.open.inc({ platform: s.platform }),
    'stream.end': (s: StreamReport) => {
      m.open.dec({ platform: s.platform });
      if (s.firstTokenMs !== undefined) m.firstToken.observe({ platform: s.platform }, s.firstTokenMs / 1000);
      m.duration.observe({ platform: s.platform, outcome: s.outcome }, s.durationMs / 1000);
    },
    tokens: (t: TokenReport) => {
      m.tokens.inc({ direction: 'prompt', estimated: String(t.estimated) }, t.prompt);
      m.tokens.inc({ direction: 'completion', estimated: String(t.estimated) }, t.completion);
    },
    spend: (s: SpendReport) => m.spend.inc({ model: s.model, currency: s.currency }, s.micro / 1_000_000),
    'platform.rate_limited': (r: RateLimitReport) => m.rateLimited.inc({ platform: r.platform, route: r.route }),
    'config.reload': (r: { result: 'applied' | 'refused' }) => m.reloads.inc({ result: r.result }),
    'platform.missed_events': (r: { platform: string; count: number }) =>
      m.missed.inc({ platform: r.platform }, r.count),
  };
  events.on('command.done', listeners['command.done']);
  events.on('service.response', listeners['service.response']);
  events.on('stream.start', listeners['stream.start']);
  events.on('stream.end', listeners['stream.end']);
  events.on('tokens', listeners.tokens);
  events.on('spend', listeners.spend);
  events.on('platform.rate_limited', listeners['platform.rate_limited']);
  events.on('config.reload', listeners['config.reload']);
  events.on('platform.missed_events', listeners['platform.missed_events']);
  return {
    registry,
    close: () => {
      closeSignals();
      events.off('command.done', listeners['command.done']);
      events.off('service.response', listeners['service.response']);
      events.off('stream.start', listeners['stream.start']);
      events.off('stream.end', listeners['stream.end']);
      events.off('tokens', listeners.tokens);
      events.off('spend', listeners.spend);
      events.off('platform.rate_limited', listeners['platform.rate_limited']);
      events.off('config.reload', listeners['config.reload']);
      events.off('platform.missed_events', listeners['platform.missed_events']);
      closeFallbacks();
    },
  };
}
