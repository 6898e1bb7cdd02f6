/**
 * Which answer states (answer-state.ts) are kept, listed twice in the store, and what became of
 * those that are not:
 *
 * - per user (keys.ts `userAnswerStates`, by the quota subject, keys.ts `quotaSubject`): the
 *   user's states, newest last, with their bytes. Keeping one more drops the oldest past
 *   `REGENERATE_STATES_PER_USER` states or past {@link ANSWER_STATES_USER_MAX_BYTES} together.
 * - per conversation (keys.ts `conversationAnswerStates`): the states of the answers given in
 *   it, which /forget removes with the links of the mentions they answered.
 *
 * A state removed leaves a small record in its place, saying why (`dropped`, `forgotten`), for
 * as long as the state would have lived: a press of its button is told that, not that it
 * expired. /forget also notes when it ran (keys.ts `forgotten`): a state of the conversation
 * made before that (an answer that was still streaming, a state the lists missed) is refused
 * when it is read ({@link forgottenSince}).
 *
 * Each list is read and written under the store's lock on its key (state/store.ts `withLock`:
 * in-process on SQLite, shared by every instance on Redis), as feedback tallies are.
 */

import type { Logger } from '../../log.ts';
import type { Core } from '../core.ts';
import { parseConversationKey, quotaSubject, storeKeys } from '../keys.ts';
import type { StateStore } from '../state/store.ts';

/** How long an answer can be regenerated, in ms (the store forgets its state after it): a day. */
export const ANSWER_STATE_TTL_MS = 24 * 3_600_000;

/**
 * The bytes (of their JSON) one user's answer states may take together, by store: twice the
 * largest one state (answer-state.ts ANSWER_STATE_MAX_BYTES), so that a state with images kept
 * whole (a Discord /chat's uploaded image) never holds a user's other answers alone.
 */
export const ANSWER_STATES_USER_MAX_BYTES = { sqlite: 16 * 1024 * 1024, redis: 2 * 1024 * 1024 } as const;

/**
 * Most states a conversation's list names: the oldest leave it (/forget's time still refuses
 * them). Every answer writes its conversation's list under a lock, as it writes the history: a
 * short list keeps that write as small as the history's.
 */
export const CONVERSATION_LIST_MAX = 100;

/** Why a state is no longer kept: dropped by its user's bound, or its conversation forgotten. */
export type GoneReason = 'dropped' | 'forgotten';

/** What the store keeps in a removed state's place (answer-state.ts reads it). */
export interface GoneState {
  version: 1;
  gone: GoneReason;
}

/** One state as the lists name it. */
interface Listed {
  id: string;
  /** When it was kept (or kept again), ms since the epoch. */
  at: number;
  /** Its JSON's bytes (the user's list). */
  bytes?: number;
  /** Whose it is (the conversation's list: /forget takes it off the user's list). */
  subject?: string;
  /** The mention it answered (keys.ts `messageRef`), whose link /forget removes. */
  mention?: string;
}

/** A list as stored. */
interface StoredList {
  version: 1;
  states: Listed[];
}

/** A state just kept, as {@link listAnswerState} lists it. */
export interface KeptEntry {
  id: string;
  /** Who asked (listed under `<platform>:<user id>`, the platform the conversation's). */
  requesterId: string;
  conversationId: string;
  /** The state's JSON's bytes. */
  bytes: number;
  /** The mention answered (keys.ts `messageRef`), whose link /forget removes. */
  mention?: string | undefined;
}

/**
 * Lists a state just kept (again, after a Regenerate: it becomes the user's newest) on its
 * user's and its conversation's lists; drops the user's oldest past the bound (each replaced by
 * a `dropped` record). A store that fails leaves the lists as they were (logged once per outage).
 */
export async function listAnswerState(core: Core, log: Logger, entry: KeptEntry): Promise<void> {
  const platform = parseConversationKey(entry.conversationId)?.platform;
  if (!platform) return;
  const now = Date.now();
  const subject = quotaSubject(platform, entry.requesterId, entry.conversationId);
  const failed = (error: unknown) => core.storeHealth.failed(error, log);
  await Promise.all([
    listForUser(core, log, { ...entry, subject }, now).catch(failed),
    editList(core.store, storeKeys.conversationAnswerStates(entry.conversationId), async (states) => {
      const listed: Listed = {
        id: entry.id,
        at: now,
        subject,
        ...(entry.mention ? { mention: entry.mention } : {}),
      };
      return [...fresh(states, now).filter((s) => s.id !== entry.id), listed].slice(-CONVERSATION_LIST_MAX);
    }).catch(failed),
  ]);
}

/**
 * Lists a state as its user's newest, and drops the user's oldest past the bound (each replaced
 * by a `dropped` record). @throws the store's error.
 */
async function listForUser(
  core: Core,
  log: Logger,
  entry: KeptEntry & { subject: string },
  now: number,
): Promise<void> {
  await editList(core.store, storeKeys.userAnswerStates(entry.subject), async (states) => {
    const kept = [
      ...fresh(states, now).filter((s) => s.id !== entry.id),
      { id: entry.id, at: now, bytes: entry.bytes },
    ];
    const maxBytes = ANSWER_STATES_USER_MAX_BYTES[core.store.kind];
    let total = kept.reduce((sum, s) => sum + (s.bytes ?? 0), 0);
    const dropped: Listed[] = [];
    while (kept.length > 1 && (kept.length > core.limits.regenerateStatesPerUser || total > maxBytes)) {
      const oldest = kept.shift()!;
      total -= oldest.bytes ?? 0;
      dropped.push(oldest);
    }
    await Promise.all(dropped.map((state) => markGone(core, state, 'dropped', now)));
    if (dropped.length) log.debug({ dropped: dropped.length }, 'oldest answer states dropped');
    return kept;
  });
}

/**
 * /forget's part: notes when the conversation was forgotten, replaces each of its listed states
 * with a `forgotten` record, removes the links of the mentions they answered, takes them off
 * their users' lists and removes the conversation's list.
 * @returns how many states were removed.
 * @throws the store's error.
 */
export async function forgetAnswerStates(core: Core, conversationId: string): Promise<number> {
  const now = Date.now();
  await core.store.keyv.set(storeKeys.forgotten(conversationId), now, ANSWER_STATE_TTL_MS);
  const removed: Listed[] = [];
  await editList(core.store, storeKeys.conversationAnswerStates(conversationId), async (states) => {
    removed.push(...fresh(states, now));
    await Promise.all(
      removed.map(async (state) => {
        await markGone(core, state, 'forgotten', now);
        if (state.mention) await core.store.keyv.delete(storeKeys.mentionAnswer(state.mention));
      }),
    );
    return [];
  });
  for (const subject of new Set(removed.flatMap((s) => (s.subject ? [s.subject] : [])))) {
    const ids = new Set(removed.filter((s) => s.subject === subject).map((s) => s.id));
    await editList(core.store, storeKeys.userAnswerStates(subject), async (states) =>
      states.filter((s) => !ids.has(s.id)),
    );
  }
  return removed.length;
}

/**
 * When the conversation was last forgotten, if that was after `at` (a state made then is not sent again).
 * @returns the time, ms since the epoch, or undefined.
 * @throws the store's error.
 */
export async function forgottenSince(
  core: Core,
  conversationId: string,
  at: number | undefined,
): Promise<number | undefined> {
  const forgotten = (await core.store.keyv.get(storeKeys.forgotten(conversationId))) as number | undefined;
  if (typeof forgotten !== 'number') return undefined;
  // A state from before states noted their time is as old as can be.
  return at === undefined || at <= forgotten ? forgotten : undefined;
}

/**
 * Replaces a removed state with a record of why, for the rest of the state's life.
 * @throws the store's error.
 */
export async function markGone(
  core: Core,
  state: { id: string; at: number },
  gone: GoneReason,
  now = Date.now(),
): Promise<void> {
  const left = state.at + ANSWER_STATE_TTL_MS - now;
  const key = storeKeys.answerState(state.id);
  if (left <= 0) await core.store.keyv.delete(key);
  else await core.store.keyv.set(key, { version: 1, gone } satisfies GoneState, left);
}

/** The states of a list still alive (a state lives {@link ANSWER_STATE_TTL_MS} from when it was kept). */
function fresh(states: readonly Listed[], now: number): Listed[] {
  return states.filter((s) => s.at + ANSWER_STATE_TTL_MS > now);
}

/**
 * Reads, changes and writes a list under the store's lock on its key; an empty list is deleted.
 * @throws the store's error.
 */
async function editList(
  store: StateStore,
  key: string,
  change: (states: Listed[]) => Promise<Listed[]>,
): Promise<void> {
  await store.withLock(key, async () => {
    const stored = (await store.keyv.get(key)) as StoredList | undefined;
    const states = await change(stored?.version === 1 ? stored.states : []);
    if (states.length) await store.keyv.set(key, { version: 1, states } satisfies StoredList, ANSWER_STATE_TTL_MS);
    else if (stored) await store.keyv.delete(key);
  });
}

/**
 * The states a conversation's list names (its stored value, as read by an uninstall's purge:
 * state/purge.ts), with their users' subjects. @returns [] for anything else.
 */
export function statesListed(stored: unknown): Array<{ id: string; subject?: string | undefined }> {
  const list = stored as StoredList | undefined;
  return list?.version === 1 && Array.isArray(list.states)
    ? list.states.map(({ id, subject }) => ({ id, subject }))
    : [];
}

/**
 * Takes states off their users' lists (those of a purged workspace: state/purge.ts), each list
 * edited once under its lock; the states themselves are the caller's to delete.
 * @throws the store's error.
 */
export async function unlistStates(
  store: StateStore,
  states: ReadonlyArray<{ id: string; subject?: string | undefined }>,
): Promise<void> {
  const bySubject = new Map<string, Set<string>>();
  for (const { id, subject } of states) {
    if (!subject) continue;
    const ids = bySubject.get(subject) ?? new Set<string>();
    ids.add(id);
    bySubject.set(subject, ids);
  }
  for (const [subject, ids] of bySubject)
    await editList(store, storeKeys.userAnswerStates(subject), async (listed) => listed.filter((s) => !ids.has(s.id)));
}
