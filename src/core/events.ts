/**
 * What the bot reports as it works, for tests, logs and metrics (src/metrics.ts listens):
 * one event per finished invocation, per service response, per streamed answer, per token
 * count, per platform rate limit, per configuration reload and per model fallback. Emitting
 * never blocks or throws into the work.
 */
import { EventEmitter } from 'node:events';

/** What happened to one invocation (a command, a mention, a button press). */
export interface CommandOutcome {
  platform: 'discord' | 'slack';
  /** The command's name, `mention` for a mention or DM, `<command>:button` for a button press. */
  command: string;
  conversationId: string;
  ok: boolean;
  /** Stable error code (ServiceError.code, `invalid_option`, `invalid_input`, `forbidden`, `quota_exceeded`, `internal`). */
  errorCode?: string;
  durationMs: number;
}

/** One response (or failure) of the generation service. */
export interface ServiceResponse {
  /** e.g. `/v1/chat/completions`. */
  endpoint: string;
  /** HTTP status, or the error code when there was no response (`timeout`, `connection`, …). */
  status: number | string;
  /** Time to the response headers, in ms. */
  ms: number;
}

/** A streamed answer, reported when it ends. */
export interface StreamReport {
  platform: 'discord' | 'slack';
  /** Time from the request to the first text, in ms; undefined when no text came. */
  firstTokenMs: number | undefined;
  /** Time from the request to the end, in ms. */
  durationMs: number;
  /** `done`, or the error code that ended it (`aborted`, `stream_interrupted`, …). */
  outcome: string;
}

/** Tokens one request used (the service's `usage`, or estimated when it sent none). */
export interface TokenReport {
  platform: 'discord' | 'slack';
  prompt: number;
  completion: number;
  estimated: boolean;
}

/** Money one request cost, once settled (state/spend.ts): micro-units of the price table's currency. */
export interface SpendReport {
  model: string;
  /** ISO 4217 code. */
  currency: string;
  /** Micro-units (1,000,000 a unit of the currency). */
  micro: number;
  /** The cost comes from the bot's own token count (the service sent no `usage`). */
  estimated: boolean;
}

/** A request whose spend reached 80 % of a cap first in its period (the user is told once a period). */
export interface CapNoticeReport {
  scope: 'user' | 'channel' | 'server';
  period: 'day' | 'month';
}

/** A refusal with status 429 from a platform (whatever the library then did about it). */
export interface RateLimitReport {
  platform: 'discord' | 'slack';
  /** Route or method, e.g. `/channels/:id/messages` or `chat.update`. */
  route: string;
}

/** A request's model that was unavailable, and the next one asked (core/service/fallback.ts). */
export interface FallbackReport {
  /** `chat` (chat completions and completions) or `image`. */
  kind: 'chat' | 'image';
  /** The model that failed (`default`: the service's own choice). */
  from: string;
  /** The model asked next. */
  to: string;
  /** The HTTP status of the failure, or its error code when there was none (`timeout`). */
  status: number | string;
}

/** The bot's events. */
export class BotEvents extends EventEmitter<{
  'command.done': [CommandOutcome];
  'service.response': [ServiceResponse];
  'stream.start': [{ platform: 'discord' | 'slack' }];
  'stream.end': [StreamReport];
  tokens: [TokenReport];
  spend: [SpendReport];
  'spend.cap_notice': [CapNoticeReport];
  'platform.rate_limited': [RateLimitReport];
  /** Mentions and DMs a platform never delivered, found and answered late by a sweep (core/sweep.ts). */
  'platform.missed_events': [{ platform: 'discord' | 'slack'; count: number }];
  /** A configuration reload (SIGHUP, src/reload.ts): applied, or refused (the running configuration stays). */
  'config.reload': [{ result: 'applied' | 'refused' }];
  /** A model unavailable before any of its answer arrived: the next of FALLBACK_*_MODELS asked. */
  'model.fallback': [FallbackReport];
}> {}
