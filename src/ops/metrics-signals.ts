/**
 * The metrics the alert rules (`deploy/prometheus/alerts.yml`) need beside metrics.ts's event
 * counters, each cheap: read when /metrics is scraped, or counted on an event that is rare.
 *
 * - `health_check_up{check}`: 1 while a /healthz check passes (`store`, `discord`, `slack`), 0
 *   while it fails; the checks run at each scrape, as /healthz runs them (each bounded by
 *   server.ts's CHECK_TIMEOUT_MS). The alert "store unreachable" reads `check="store"`.
 * - `platform_last_event_timestamp_seconds{platform}`: when the platform last delivered an event
 *   to the bot (Discord: a gateway dispatch; Slack: a verified request or Socket Mode envelope),
 *   in seconds since the epoch; the adapter's start before the first. `time() - it` is the
 *   platform's silence.
 * - `spend_cap_notices_total{scope,period}`: requests whose spend reached 80 % of a cap
 *   (state/spend.ts NOTICE_SHARE) first in its period, i.e. the notices users were told; one
 *   series, at 0, per configured cap from the start, so that the first notice is an increase.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { BotEvents, CapNoticeReport } from '../core/events.ts';
import type { SpendPeriod, SpendScope } from '../core/state/spend.ts';
import { type HealthCheck, runChecks } from './server.ts';

/** A platform's adapter as the event-silence gauge reads it. */
export interface EventSource {
  platform: 'discord' | 'slack';
  /** When it last delivered an event, in ms since the epoch (its start before the first). */
  lastEventAt(): number;
}

/** What {@link defineSignals} reads. */
export interface SignalSources {
  /** The /healthz checks (bot.ts). */
  checks?: readonly HealthCheck[];
  /** The configured platforms' adapters. */
  events?: readonly EventSource[];
  /** The spending caps that are on (each gets its notice counter at 0 from the start). */
  spendCaps?: ReadonlyArray<{ scope: SpendScope; period: SpendPeriod }>;
}

/**
 * Registers the three metrics in `registry` (names starting with `prefix`) and counts the cap
 * notices of `events`.
 * @returns stops listening to `events`.
 */
export function defineSignals(
  registry: Registry,
  prefix: string,
  events: BotEvents,
  sources: SignalSources,
): () => void {
  const registers = [registry];
  const { checks, events: platforms } = sources;
  if (checks?.length)
    new Gauge({
      name: `${prefix}health_check_up`,
      help: 'Whether each /healthz check passes now (1) or fails (0), by check (store, discord, slack); run at each scrape.',
      labelNames: ['check'],
      registers,
      async collect() {
        for (const [name, reason] of await runChecks(checks)) this.set({ check: name }, reason === undefined ? 1 : 0);
      },
    });
  if (platforms?.length)
    new Gauge({
      name: `${prefix}platform_last_event_timestamp_seconds`,
      help: 'When each platform last delivered an event to the bot (its start before the first), in seconds since the epoch.',
      labelNames: ['platform'],
      registers,
      collect() {
        for (const source of platforms) this.set({ platform: source.platform }, source.lastEventAt() / 1000);
      },
    });
  const notices = new Counter({
    name: `${prefix}spend_cap_notices_total`,
    help: 'Requests whose spend reached 80 % of a spending cap first in its period (the notice users are told), by scope and period.',
    labelNames: ['scope', 'period'],
    registers,
  });
  for (const cap of sources.spendCaps ?? []) notices.inc({ scope: cap.scope, period: cap.period }, 0);
  const onNotice = (n: CapNoticeReport) => notices.inc({ scope: n.scope, period: n.period });
  events.on('spend.cap_notice', onNotice);
  return () => events.off('spend.cap_notice', onNotice);
}
