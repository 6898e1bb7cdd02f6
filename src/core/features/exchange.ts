/**
 * One exchange (a question and its answer) in the conversation's history: appended when an
 * answer is given, with ids that let Regenerate and an edited mention replace it in place
 * later (state/history.ts `replaceExchange`), and the link from a mention to its answer.
 */

import type { Core } from '../core.ts';
import { randomHex } from '../ids.ts';
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
  for (const [i, conversationId] of conversations.entries()) {
    try {
      await core.history.append(conversationId, ...stored);
    } catch (error) {
      // This conversation and the rest wait for the store; the append that failed may land after all (restore skips it then).
      for (const waiting of conversations.slice(i)) core.pendingTurns.add(waiting, stored);
      return core.storeHealth.failed(error, ctx.log, ctx.conversationId) ? [STORE_UNSAVED_NOTE] : [];
    }
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
  await linkMention(core, ctx.log, mention, { id, answer, at: Date.now() }, minutes * 60_000 + 60_000);
}
