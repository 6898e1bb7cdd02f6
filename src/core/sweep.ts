/**
 * The sweep: a bot that notices it went deaf. A platform connection can look healthy (Discord's
 * gateway acknowledges heartbeats, Slack's socket answers pings) while the platform delivers
 * nothing, and a mention sent then is never answered. Every `SWEEP_MINUTES` (live; 0: off) a
 * sweep does catch-up's reading (core/catch-up.ts `readAndAnswer`, the platform's own
 * `CatchUpSource`) over the conversations active lately only — those where the bot was
 * addressed within `CATCH_UP_MAX_AGE_MINUTES` (state/seen.ts), the {@link SWEEP_MAX_CONVERSATIONS}
 * most recent — since the newest message seen there, and answers, marked late as catch-up's
 * answers are, each message addressed to the bot that nobody claimed (state/claims.ts: the live
 * path claims each message it answers, so an event that arrives late and the sweep never both
 * answer). Messages younger than {@link sweepGraceMs} are left to their live delivery. Each
 * message so answered counts in `genbot_missed_events_total{platform}` (the
 * `platform.missed_events` event); each sweep logs one line with its counts.
 *
 * Deafness: when the platform has delivered nothing for `EVENT_SILENCE_MINUTES` (live; 0: never)
 * and a sweep during that silence found missed messages, the connection is re-established
 * ({@link SweptConnection.reconnect}: Discord resumes each shard's session on a new WebSocket,
 * Socket Mode opens a new socket; HTTP mode has none to re-establish) and {@link Sweep.deafness}
 * names it — the adapter's /healthz check then fails — until the platform delivers an event of
 * a user again, so that an orchestrator restarts a bot that cannot recover.
 */
import type { Logger } from '../log.ts';
import { type CatchUpResult, type CatchUpSource, readAndAnswer } from './catch-up.ts';
import type { Core } from './core.ts';
import type { SeenConversation } from './state/seen.ts';

/** The most conversations one sweep reads (the most recently active), so that a sweep stays cheap. */
export const SWEEP_MAX_CONVERSATIONS = 50;

/** How often a sweep that is off (`SWEEP_MINUTES=0`) looks whether a reload turned it on, in ms. */
const OFF_RECHECK_MS = 60_000;

/**
 * How young a message the sweep leaves to its live delivery, in ms: 30 s, or half the sweep's
 * interval when that is shorter.
 * @param intervalMs the sweep's interval, in ms.
 */
export function sweepGraceMs(intervalMs: number): number {
  return Math.min(30_000, intervalMs / 2);
}

/** What the sweep knows of a platform connection. */
export interface SweptConnection {
  /** When the platform last delivered anything (ms since 1970; the start before the first): silence is measured from it. */
  lastEventAt(): number;
  /**
   * When the platform last delivered an event of a user (a message, an interaction, a command;
   * not a session's own start such as Discord's READY), ms since 1970: deafness ends after one.
   */
  lastDeliveryAt(): number;
  /** Re-establishes the connection (resolves once asked; never rejects); absent when there is none (HTTP mode). */
  reconnect?(): Promise<void>;
  /**
   * Whether the connection looks up now (a deafness is one of a connection that looks healthy: a
   * connection down is the library's to re-establish, and /healthz says so already).
   */
  looksUp?(): boolean;
}

/** What one sweep did, for its log line. */
export interface SweepResult extends CatchUpResult {
  /** Messages nobody had answered, answered late now. */
  missed: number;
  /** Whether the connection was found deaf (and re-established) by this sweep. */
  deaf: boolean;
}

/** The periodic sweep of one platform (see the file's comment). */
export class Sweep<M> {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SweepResult> | undefined;
  private stopped = true;
  /** When the last sweep that found missed messages ended (ms since 1970). */
  private lastMissedAt = 0;
  /** Missed messages found since the platform's last event. */
  private quietMissed = 0;
  /** When the connection was last re-established by a sweep (ms since 1970). */
  private reconnectedAt = 0;
  /** Set while the connection is deaf: since when, and how many messages were missed then. */
  private deaf: { since: number; missed: number } | undefined;

  /** @param now the clock (ms since 1970), for tests. */
  constructor(
    private readonly core: Core,
    private readonly source: CatchUpSource<M>,
    private readonly connection: SweptConnection,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts sweeping every `SWEEP_MINUTES` (read again before each wait: a reload applies). */
  start(): void {
    this.stopped = false;
    this.schedule();
  }

  /** Stops sweeping (a sweep running goes on to its end; the source's `stopping` ends it early). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Why the connection is deaf (missed messages found while it delivered nothing), or undefined
   * when it is not, or when a user's event arrived since.
   */
  deafness(): string | undefined {
    const deaf = this.deaf;
    if (!deaf) return undefined;
    if (this.connection.lastDeliveryAt() > deaf.since) {
      this.deaf = undefined;
      this.log.info({ platform: this.source.platform }, `${this.source.platform} delivers events again`);
      return undefined;
    }
    return `${this.source.platform} deaf: ${deaf.missed} message(s) to the bot found undelivered while the connection delivered nothing for ${this.core.limits.eventSilenceMinutes} min (reconnected)`;
  }

  /** Runs one sweep now (or waits for the one running) and logs it. Never rejects. */
  sweep(): Promise<SweepResult> {
    this.running ??= this.once().finally(() => (this.running = undefined));
    return this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    const minutes = this.core.limits.sweepMinutes;
    const wait = minutes > 0 ? minutes * 60_000 : OFF_RECHECK_MS;
    this.timer = setTimeout(() => {
      const due = this.core.limits.sweepMinutes > 0 ? this.sweep() : Promise.resolve();
      void due.then(() => this.schedule());
    }, wait);
    this.timer.unref();
  }

  private async once(): Promise<SweepResult> {
    const platform = this.source.platform;
    this.deafness(); // ends a deafness a user's event has ended since
    const empty = { conversations: 0, answered: 0, claimedElsewhere: 0, failedReads: 0 };
    let read: CatchUpResult = empty;
    try {
      read = await readAndAnswer(this.core, this.source, this.log, this.pass(), this.now);
    } catch (error) {
      this.log.warn({ err: error, platform }, `${platform} sweep could not read the conversations seen`);
    }
    const missed = read.answered;
    if (missed > 0) {
      if (this.connection.lastEventAt() > this.lastMissedAt) this.quietMissed = 0;
      this.quietMissed += missed;
      this.lastMissedAt = this.now();
      this.core.events.emit('platform.missed_events', { platform, count: missed });
    }
    const deaf = await this.checkSilence();
    const silentSeconds = Math.round((this.now() - this.connection.lastEventAt()) / 1000);
    this.log.info({ ...read, missed, silentSeconds, deaf }, `${platform} sweep finished`);
    return { ...read, missed, deaf };
  }

  /** Which conversations a sweep reads: the most recently active, within the catch-up age bound. */
  private pass() {
    const now = this.now();
    const activeSince = now - this.core.limits.catchUpMaxAgeMinutes * 60_000;
    return {
      pick: (entries: SeenConversation[]) =>
        entries.filter((e) => e.at >= activeSince).slice(0, SWEEP_MAX_CONVERSATIONS),
      sentBeforeMs: now - sweepGraceMs(this.core.limits.sweepMinutes * 60_000),
    };
  }

  /**
   * Finds the connection deaf when it looks up but has been quiet (no event, no reconnection) for
   * `EVENT_SILENCE_MINUTES` while sweeps in that quiet found missed messages; then re-establishes it.
   * @returns whether it was found deaf now.
   */
  private async checkSilence(): Promise<boolean> {
    const silenceMs = this.core.limits.eventSilenceMinutes * 60_000;
    if (silenceMs <= 0) return false;
    const quietSince = Math.max(this.connection.lastEventAt(), this.reconnectedAt);
    if (this.now() - quietSince < silenceMs || this.lastMissedAt < quietSince) return false;
    if (this.connection.looksUp && !this.connection.looksUp()) return false;
    const platform = this.source.platform;
    this.deaf = { since: this.deaf?.since ?? this.now(), missed: this.quietMissed };
    this.reconnectedAt = this.now();
    this.log.warn(
      { platform, silentSeconds: Math.round((this.now() - this.connection.lastEventAt()) / 1000) },
      this.connection.reconnect
        ? `${platform} connection deaf (missed messages while nothing was delivered); reconnecting`
        : `${platform} deaf (missed messages while nothing was delivered); nothing to reconnect in HTTP mode`,
    );
    await this.connection.reconnect?.();
    return true;
  }
}
