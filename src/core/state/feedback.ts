/**
 * Feedback on answers in the store: each finished answer's record (its kind, command, model,
 * channel: what a vote is counted under), each user's vote on it (one per user and answer,
 * changeable; a 👎 may carry a reason), and the tallies of votes by kind, model and vote, one
 * for every place together (what /metrics reports) and one per place (keys.ts `placeOf`: a
 * Discord server, a Slack workspace; what /usage shows admins).
 *
 * A vote and the tallies change together under one store lock (`withLock` on the global tally's
 * key: every instance sharing the store takes the same), so that a changed vote moves one count
 * down and the other up, and the tallies always equal the votes cast: 👍 then 👎 by one user
 * and 👍 by another count one 👎 and one 👍. The store has no transaction: a store failing
 * between the vote's write and the tallies' leaves them one apart (the press is told the
 * failure). Records and votes are kept {@link FEEDBACK_TTL_MS}; the tallies keep counting what
 * was cast after the votes themselves expire.
 */
import { placeOf, storeKeys, workspaceOf } from '../keys.ts';
import { keepOwned } from './owned.ts';
import type { StateStore } from './store.ts';

/** A vote on an answer. */
export type Vote = 'up' | 'down';

/** What an answer was: a chat's (/chat), a completion's (/complete), a mention's (and a message action's), an image. */
export type FeedbackKind = 'chat' | 'complete' | 'mention' | 'image';

/** How long an answer's record and its votes are kept, in ms (votes on it are taken as long): 90 days. */
export const FEEDBACK_TTL_MS = 90 * 24 * 3_600_000;

/** Longest model name counted, in characters (a longer one is cut). */
const MAX_MODEL_CHARS = 100;

/** Most (kind, model) pairs a tally counts apart; votes for more models count under {@link OTHER_MODELS}. */
export const MAX_TALLY_PAIRS = 500;

/** The model name votes are counted under past {@link MAX_TALLY_PAIRS}. */
export const OTHER_MODELS = '(other models)';

/** What the store keeps of a finished answer for its feedback (keys.ts `feedback`). */
export interface FeedbackRecord {
  version: 1;
  kind: FeedbackKind;
  /** The command or message action answered (`chat`, `complete`, `mention`, `imagine`, `ask_about_message`…). */
  command: string;
  /** The model that answered (an image's: its display name, `default` for the service's choice). */
  model: string;
  platform: 'discord' | 'slack';
  /** The channel key whose settings applied (keys.ts `channelKey`) and the conversation of the answer. */
  channelKey: string;
  conversationId: string;
  /** Who asked. */
  requesterId: string;
  /** When the answer finished, ms since the epoch. */
  at: number;
}

/** One user's vote on one answer (keys.ts `feedbackVote`), with what it counts under. */
export interface StoredVote {
  version: 1;
  vote: Vote;
  userId: string;
  /** When it was cast (or last changed), ms since the epoch. */
  at: number;
  /** A 👎's reason, as the user typed it (bounded by the caller). */
  reason?: string;
  kind: FeedbackKind;
  command: string;
  model: string;
  channelKey: string;
}

/** One line of a tally: the votes for a kind of answer by one model. */
export interface TallyLine {
  kind: FeedbackKind;
  model: string;
  up: number;
  down: number;
}

/** A tally as the store keeps it: counts by kind, then model. */
interface StoredTally {
  version: 1;
  counts: Partial<Record<FeedbackKind, Record<string, { up: number; down: number }>>>;
}

/** Keeps an answer's record under its feedback id. @throws the store's error. */
export async function keepFeedbackRecord(store: StateStore, id: string, record: FeedbackRecord): Promise<void> {
  // Records and votes carry their workspace's marker: an uninstall finds them (owned.ts).
  await keepOwned(store, workspaceOf(record.channelKey), storeKeys.feedback(id), record, FEEDBACK_TTL_MS);
}

/** An answer's record. @returns undefined when there is none (expired, never kept). @throws the store's error. */
export async function readFeedbackRecord(store: StateStore, id: string): Promise<FeedbackRecord | undefined> {
  const record = (await store.keyv.get(storeKeys.feedback(id))) as FeedbackRecord | undefined;
  return record?.version === 1 ? record : undefined;
}

/** A user's vote on an answer. @returns undefined when they cast none. @throws the store's error. */
export async function readVote(store: StateStore, id: string, userId: string): Promise<StoredVote | undefined> {
  const vote = (await store.keyv.get(storeKeys.feedbackVote(id, userId))) as StoredVote | undefined;
  return vote?.version === 1 ? vote : undefined;
}

/**
 * Casts (or changes) `userId`'s vote on the answer `id`, and counts it in the tallies (every
 * place's and the answer's place's): a changed vote is taken from the count it was in. The same
 * vote again changes nothing (a 👎's reason stays); a changed vote drops the reason.
 * @returns the vote it replaced, if any.
 * @throws the store's error.
 */
export async function castVote(
  store: StateStore,
  id: string,
  record: FeedbackRecord,
  userId: string,
  vote: Vote,
): Promise<{ previous: Vote | undefined }> {
  return store.withLock(storeKeys.feedbackTally(), async () => {
    const previous = await readVote(store, id, userId);
    if (previous?.vote === vote) return { previous: vote };
    const { kind, command, model, channelKey } = record;
    const cast: StoredVote = { version: 1, vote, userId, at: Date.now(), kind, command, model, channelKey };
    await keepOwned(store, workspaceOf(channelKey), storeKeys.feedbackVote(id, userId), cast, FEEDBACK_TTL_MS);
    // The vote replaced is taken from the tallies it was counted in (under its own kind and model).
    const change = (tally: StoredTally) => {
      if (previous) count(tally, previous, previous.vote, -1);
      count(tally, record, vote, 1);
    };
    await Promise.all([updateTally(store, undefined, change), updateTally(store, placeOf(channelKey), change)]);
    return { previous: previous?.vote };
  });
}

/**
 * Keeps `reason` with `userId`'s 👎 on the answer `id` (in place of an earlier one).
 * @returns false when the user's vote on it is not a 👎 (none, a 👍, or expired).
 * @throws the store's error.
 */
export async function keepReason(store: StateStore, id: string, userId: string, reason: string): Promise<boolean> {
  return store.withLock(storeKeys.feedbackTally(), async () => {
    const vote = await readVote(store, id, userId);
    if (vote?.vote !== 'down') return false;
    const kept = { ...vote, reason };
    await keepOwned(store, workspaceOf(vote.channelKey), storeKeys.feedbackVote(id, userId), kept, FEEDBACK_TTL_MS);
    return true;
  });
}

/**
 * The votes counted, by kind and model: every place's together without `place` (/metrics),
 * else one place's (keys.ts `placeOf`).
 * @throws the store's error.
 */
export async function readTally(store: StateStore, place?: string): Promise<TallyLine[]> {
  const tally = await tallyOf(store, place);
  const lines: TallyLine[] = [];
  for (const [kind, models] of Object.entries(tally.counts) as Array<[FeedbackKind, StoredTally['counts']['chat']]>)
    for (const [model, { up, down }] of Object.entries(models ?? {})) lines.push({ kind, model, up, down });
  return lines;
}

async function tallyOf(store: StateStore, place: string | undefined): Promise<StoredTally> {
  const stored = (await store.keyv.get(storeKeys.feedbackTally(place))) as StoredTally | undefined;
  return stored?.version === 1 && stored.counts ? stored : { version: 1, counts: {} };
}

/** Reads a tally, changes it, and writes it back (no expiry). Run under the lock. */
async function updateTally(
  store: StateStore,
  place: string | undefined,
  change: (tally: StoredTally) => void,
): Promise<void> {
  const tally = await tallyOf(store, place);
  change(tally);
  await store.keyv.set(storeKeys.feedbackTally(place), tally);
}

/** Adds `by` to the count of `vote` for the answer's kind and model (never below 0). */
function count(tally: StoredTally, answer: { kind: FeedbackKind; model: string }, vote: Vote, by: number): void {
  const models = tally.counts[answer.kind] ?? {};
  tally.counts[answer.kind] = models;
  let model = answer.model.slice(0, MAX_MODEL_CHARS);
  if (models[model] === undefined && pairs(tally) >= MAX_TALLY_PAIRS) model = OTHER_MODELS;
  const counts = models[model] ?? { up: 0, down: 0 };
  counts[vote] = Math.max(0, counts[vote] + by);
  models[model] = counts;
}

/** How many (kind, model) pairs a tally counts. */
function pairs(tally: StoredTally): number {
  return Object.values(tally.counts).reduce((sum, models) => sum + Object.keys(models ?? {}).length, 0);
}
