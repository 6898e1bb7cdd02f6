/**
 * Catch-up after downtime: mentions and DMs sent while the bot was stopped, or while a Discord
 * gateway session was lost for good, are never delivered again (Discord replays only a resumed
 * session; Socket Mode does not retry). After a start, an adapter reads each conversation where
 * messages to the bot were seen (state/seen.ts) since the newest one seen, at most
 * {@link CATCH_UP_PER_CONVERSATION} messages and none older than `CATCH_UP_MAX_AGE_MINUTES`, and
 * answers those addressed to the bot that no instance answered: each answer, live or late,
 * first claims its message in the store (state/claims.ts), so two instances never both answer
 * one and a platform's redelivery is not answered twice. The late answer says so
 * ({@link LATE_NOTICE}).
 *
 * It is background work: one conversation read at a time, {@link CatchUpSource.readSpacingMs}
 * apart, and at most {@link CATCH_UP_CONCURRENCY} late answers at once, which go through the
 * same write scheduler as every answer.
 */

import type { Logger } from '../log.ts';
import type { Core } from './core.ts';
import { sentence } from './i18n/words.ts';
import { newerId, type SeenConversation } from './state/seen.ts';

/** The line under a late answer. */
export const LATE_NOTICE = sentence('answers.late');

/** The most messages read per conversation by one catch-up. */
export const CATCH_UP_PER_CONVERSATION = 50;

/** Late answers written at once. */
export const CATCH_UP_CONCURRENCY = 2;

/** How long a message's "answered" claim is kept, in ms: an hour, or longer than the catch-up age bound. */
export function answerClaimTtlMs(maxAgeMinutes: number): number {
  return Math.max(60 * 60_000, (maxAgeMinutes + 10) * 60_000);
}

/**
 * Claims the "answered" marker of a message (keys.ts `discordClaims.message`,
 * `slackClaims.message`) for {@link answerClaimTtlMs}.
 * @returns true when this caller answers it; true as well when the store cannot be reached
 *   (answering twice beats never answering), which is logged.
 */
export async function claimAnswer(core: Core, log: Logger, key: string): Promise<boolean> {
  try {
    return await core.claims.claim(key, answerClaimTtlMs(core.limits.catchUpMaxAgeMinutes));
  } catch (error) {
    log.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not claim the message; answering');
    return true;
  }
}

/** One platform's side of a catch-up. */
export interface CatchUpSource<M> {
  platform: 'discord' | 'slack';
  /** Pause between two conversations' reads, in ms (the platform's read budget). */
  readSpacingMs: number;
  /** Whether this process catches up in the conversation (Discord: a guild of its shards). */
  owns(entry: SeenConversation): boolean;
  /**
   * Reads a conversation's messages newer than `entry.last` and sent at `sinceMs` or later, at
   * most `limit`. @returns those addressed to the bot, oldest first, and the newest id read.
   * @throws the platform's error (logged; the next conversation is read).
   */
  read(entry: SeenConversation, sinceMs: number, limit: number): Promise<{ messages: M[]; newest?: string }>;
  /** The claim key of a message (the one the live path claims). */
  claimKey(message: M): string;
  /** When a message was sent, in ms since 1970 (the sweep leaves the youngest to their live delivery). */
  sentAt?(message: M): number;
  /** Answers a message as late; resolves when the answer is over (never rejects). */
  answer(message: M): Promise<void>;
  /** True once the adapter stops: no more reads or answers are started. */
  stopping(): boolean;
}

/** What one catch-up did, for its log line. */
export interface CatchUpResult {
  conversations: number;
  answered: number;
  /** Messages another instance (or the live path) answered first. */
  claimedElsewhere: number;
  failedReads: number;
}

/** Waits `ms` (unref'd: a pending catch-up does not hold the process). */
function pause(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms).unref());
}

/** Which conversations a pass reads, and which of their messages it leaves alone. */
export interface CatchUpPass {
  /** The conversations, among those remembered and owned (most recently seen first). */
  pick?(entries: SeenConversation[]): SeenConversation[];
  /**
   * Messages sent after this time (ms since 1970) are left to their live delivery, and the
   * conversation's newest seen does not move past them (the next pass reads them again).
   */
  sentBeforeMs?: number;
}

/**
 * The messages of a read old enough to answer (sent before `sentBeforeMs`, when given); the
 * conversation's newest seen moves to the newest read unless a younger one was left.
 */
function settled<M>(
  core: Core,
  source: CatchUpSource<M>,
  entry: SeenConversation,
  read: { messages: M[]; newest?: string },
  sentBeforeMs: number | undefined,
): M[] {
  const sentAt = source.sentAt;
  const messages =
    sentBeforeMs === undefined || !sentAt ? read.messages : read.messages.filter((m) => sentAt(m) < sentBeforeMs);
  if (read.newest && newerId(read.newest, entry.last) && messages.length === read.messages.length)
    core.seen.see(source.platform, entry.conversation, read.newest, entry.dm ? { dm: true } : {});
  return messages;
}

/**
 * Reads the remembered conversations of a platform and answers, late, what is addressed to the
 * bot and claimed by no one (see the file's comment): catch-up's work, and the sweep's
 * (core/sweep.ts) over the conversations active lately.
 * @param now the clock (ms since 1970), for tests.
 * @throws the store's error when the remembered conversations cannot be read.
 */
export async function readAndAnswer<M>(
  core: Core,
  source: CatchUpSource<M>,
  log: Logger,
  pass: CatchUpPass = {},
  now = Date.now,
): Promise<CatchUpResult> {
  const result: CatchUpResult = { conversations: 0, answered: 0, claimedElsewhere: 0, failedReads: 0 };
  const maxAgeMinutes = core.limits.catchUpMaxAgeMinutes;
  if (maxAgeMinutes <= 0) return result;
  const owned = (await core.seen.list(source.platform)).filter((e) => source.owns(e));
  const entries = pass.pick ? pass.pick(owned) : owned;
  const running = new Set<Promise<void>>();
  for (const entry of entries) {
    if (source.stopping()) break;
    if (result.conversations > 0) await pause(source.readSpacingMs);
    result.conversations += 1;
    let read: { messages: M[]; newest?: string };
    try {
      read = await source.read(entry, now() - maxAgeMinutes * 60_000, CATCH_UP_PER_CONVERSATION);
    } catch (error) {
      result.failedReads += 1;
      log.info({ err: error, conversation: entry.conversation }, 'catch-up could not read a conversation');
      continue;
    }
    for (const message of settled(core, source, entry, read, pass.sentBeforeMs)) {
      if (source.stopping()) break;
      if (!(await claimAnswer(core, log, source.claimKey(message)))) {
        result.claimedElsewhere += 1;
        continue;
      }
      result.answered += 1;
      const answer = source.answer(message).finally(() => running.delete(answer));
      running.add(answer);
      if (running.size >= CATCH_UP_CONCURRENCY) await Promise.race(running);
    }
  }
  await Promise.all(running);
  return result;
}

/**
 * Runs one catch-up of a platform (see the file's comment) and logs what it did.
 * @param now the clock (ms since 1970), for tests.
 */
export async function catchUp<M>(
  core: Core,
  source: CatchUpSource<M>,
  log: Logger,
  now = Date.now,
): Promise<CatchUpResult> {
  const result = await readAndAnswer(core, source, log, {}, now);
  if (core.limits.catchUpMaxAgeMinutes > 0) log.info({ ...result }, `${source.platform} catch-up finished`);
  return result;
}

/**
 * Runs catch-ups one at a time: a request while one runs starts another once it ends (a second
 * gateway session lost meanwhile), several such requests only one.
 */
export class CatchUpRunner {
  private current: Promise<void> | undefined;
  private again = false;

  /** @param run one catch-up (never rejects: its failure is its own to log). */
  constructor(private readonly run: () => Promise<void>) {}

  /** Asks for a catch-up (now, or after the one running). */
  request(): void {
    if (this.current !== undefined) {
      this.again = true;
      return;
    }
    this.current = this.run().finally(() => {
      this.current = undefined;
      if (this.again) {
        this.again = false;
        this.request();
      }
    });
  }

  /** Resolves when no catch-up runs (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.current !== undefined) await this.current;
  }
}
