/**
 * One exchange (a question and its answer) in the conversation's history: appended when an
 * answer is given, with ids that let Regenerate and an edited mention replace it in place
 * later (state/history.ts `replaceExchange`), and the link from a mention to its answer.
 */

import type { Core } from '../core.ts';
import { english } from '../i18n/words.ts';
import { randomHex } from '../ids.ts';
import { workspaceOf } from '../keys.ts';
import type { CommandContext } from '../platform.ts';
import { STORE_UNSAVED_NOTE } from '../state/health.ts';
import type { StoredMessage } from '../state/history.ts';
import { type KeptTurns, linkMention } from './answer-state.ts';

/** The ids of a new exchange's turns (the same in the conversation and its linked ones). */
export type ExchangeIds = Omit<KeptTurns, 'conversations'>;

/** The ids of a new exchange's turns, and what its question's turn adds after the user's text. */
export function newExchange(askedTail: string): ExchangeIds {
  return { question: randomHex(9), answer: randomHex(9), askedTail };
}

/**
 * The conversations an exchange is stored in: the answer's, and the linked ones (a Slack
 * /chat's question thread, known once the question is posted: read when the answer is done).
 */
export function conversationsOf(ctx: CommandContext): string[] {
  return [ctx.conversationId, ...(ctx.linkedConversations?.() ?? [])];
}

/**
 * Appends one exchange to the conversation's history (and its linked ones), its turns named by
 * `exchange`'s ids when given. Where the store does not take it (down, past its deadline, SQLite
 * locked or out of room), it waits in memory and is stored once the store takes writes again
 * (state/pending-turns.ts).
 * @returns the lines to show under the answer: {@link STORE_UNSAVED_NOTE} when the exchange
 *   could not be stored and this conversation was not told of the outage yet, else none.
 */
export async function remember(
  ctx: CommandContext,
  core: Core,
  turns: { asked: string; answer: string; exchange?: ExchangeIds },
): Promise<string[]> {
  const at = Date.now();
  const { exchange } = turns;
  const stored: StoredMessage[] = [
    { role: 'user', content: turns.asked, at, userId: ctx.user.id, ...(exchange ? { id: exchange.question } : {}) },
    { role: 'assistant', content: turns.answer, at, ...(exchange ? { id: exchange.answer } : {}) },
  ];
  const conversations = conversationsOf(ctx);
  // Part of the conversation from now on, as this process reads it, while the writes run.
  const held = conversations.map((conversationId) => core.pendingTurns.hold(conversationId, stored));
  try {
    for (const [i, conversationId] of conversations.entries()) {
      try {
        await core.history.append(conversationId, ...stored);
      } catch (error) {
        // This conversation and the rest wait for the store; the append that failed may land after all (restore skips it then).
        for (const waiting of conversations.slice(i)) core.pendingTurns.add(waiting, stored);
        return core.storeHealth.failed(error, ctx.log, ctx.conversationId) ? [english.say(STORE_UNSAVED_NOTE)] : [];
      }
    }
  } finally {
    for (const release of held) release();
  }
  core.storeHealth.succeeded(ctx.log);
  return [];
}

/**
 * Replaces an exchange's turns in every conversation that keeps them: the answer, and the
 * question when it was edited. A store that is down keeps the old ones (logged once per outage).
 */
export async function replaceExchange(
  ctx: CommandContext,
  core: Core,
  exchange: KeptTurns,
  replacement: { question?: string; answer: string },
): Promise<void> {
  const at = Date.now();
  try {
    for (const conversationId of exchange.conversations)
      await core.history.replaceExchange(conversationId, exchange, { ...replacement, at });
    core.storeHealth.succeeded(ctx.log);
  } catch (error) {
    core.storeHealth.failed(error, ctx.log);
  }
}

/**
 * Links a mention (its keys.ts `messageRef`) to its answer for the edit window
 * (`EDIT_REANSWER_MINUTES`; nothing when it is 0, or the answer's message has no reference).
 */
export async function linkAnswer(
  ctx: CommandContext,
  core: Core,
  mention: string,
  id: string,
  answer: string | undefined,
): Promise<void> {
  const minutes = core.limits.editReanswerMinutes;
  if (minutes <= 0 || !answer) return;
  const link = { id, answer, at: Date.now(), workspace: workspaceOf(ctx.conversationId) };
  await linkMention(core, ctx.log, mention, link, minutes * 60_000 + 60_000);
}

/** What ends an answer in the history that the user saw only in part: stopped, or its last writes failed. */
export const CUT_MARK = '[stopped]';

/** An answer as the history keeps it when the user saw only `shown` of it ({@link CUT_MARK} on a line of its own). */
export function cutAnswer(shown: string): string {
  return `${shown}\n${CUT_MARK}`;
}

/**
 * The history's writes of one answer's exchange ({@link remember}): stored just before the final
 * write (`beforeFinal`); when the answer's writes failed (its final write, or a stopped answer's
 * last one), {@link keepShown} makes the history keep what the user was shown of it, marked as cut
 * ({@link cutAnswer}), or nothing when nothing was shown, so that the next question sees exactly
 * that.
 */
export class ExchangeWrites {
  /** Whether the exchange was stored before the final write. */
  private stored = false;

  constructor(
    private readonly ctx: CommandContext,
    private readonly core: Core,
    private readonly turns: {
      asked: string;
      exchange: ExchangeIds;
      /** The answer's session: its reply's `shownAnswer`, and its signal (aborted: stopped). */
      session: { reply: { shownAnswer: string }; signal: AbortSignal };
    },
  ) {}

  /**
   * Stores the exchange with the answer as shown, just before its final write; an empty answer
   * (filtered, tool calls only, whitespace) is not an exchange worth keeping.
   * @returns {@link remember}'s lines for under the answer.
   */
  beforeFinal(answer: string): Promise<string[]> {
    if (answer.trim() === '') return Promise.resolve([]);
    this.stored = true;
    return remember(this.ctx, this.core, { asked: this.turns.asked, answer, exchange: this.turns.exchange });
  }

  /**
   * Runs the answer (its request, stream and writes): when it throws (a final write that failed,
   * or a stopped answer's), {@link keepShown} first.
   * @throws what `work` threw.
   */
  async answer<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      await this.keepShown();
      throw error;
    }
  }

  /**
   * After the answer ended, `text` as far as it went: a stopped one (Stop, or a shutdown) joins the
   * history as far as it went, marked as cut; one cut off by a fault does not (it may be wrong
   * where it ends); one whose continuation the platform refused keeps what was shown
   * ({@link keepShown}).
   */
  async ended(ending: 'done' | 'stopped' | 'cut', text: string): Promise<void> {
    if (ending === 'stopped') await remember(this.ctx, this.core, { asked: this.turns.asked, answer: cutAnswer(text) });
    if (ending === 'cut') await this.keepShown();
  }

  /**
   * After the answer's writes failed: an exchange stored before the final write is changed in
   * place (in the store, and among the turns waiting for it) to what the messages show, or
   * removed when they show none of it; one not stored is stored now as far as it was shown when
   * the answer was stopped (as Stop keeps one), else left out (an answer a fault cut off may be
   * wrong where it ends). A store that does not take the change is logged (health.ts).
   */
  async keepShown(): Promise<void> {
    const { ctx, core } = this;
    const { asked, exchange, session } = this.turns;
    const shown = session.reply.shownAnswer;
    const answer = shown.trim() === '' ? undefined : cutAnswer(shown);
    if (!this.stored) {
      if (session.signal.aborted && answer) await remember(ctx, core, { asked, answer });
      return;
    }
    const ids = { question: exchange.question, answer: exchange.answer };
    try {
      for (const conversationId of conversationsOf(ctx)) {
        core.pendingTurns.amend(conversationId, ids, answer);
        if (answer === undefined) await core.history.dropExchange(conversationId, ids);
        else await core.history.replaceExchange(conversationId, ids, { answer, at: Date.now() });
      }
      core.storeHealth.succeeded(ctx.log);
    } catch (error) {
      core.storeHealth.failed(error, ctx.log);
    }
  }
}
