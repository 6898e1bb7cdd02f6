/**
 * Purging a workspace's data from the store (a Slack workspace that uninstalled the app or
 * revoked its bot token: platforms/slack/uninstall.ts): everything keys.ts `workspaceKeys` names
 * (histories, settings and their list, forgotten markers, opened threads, answer-state lists,
 * mention links, viewed channels, claims naming the workspace, the feedback tally of the place),
 * the records kept under random ids that belong to it (answer and Regenerate states, /imagine
 * button states, feedback records and votes, stop requests, regeneration holds: found by their
 * `owned:<workspace>:<key>` markers, owned.ts `keepOwned`), its conversations in the catch-up map
 * (`seen:<platform>`), and its states on their users' lists. Usage and quota counters stay
 * until they expire: an uninstall must not lift a quota.
 *
 * Why markers and not the records' values: a record's key names no workspace (`answer:<id>`), so
 * finding them by value would read every record of every workspace (answer states weigh up to
 * 8 MiB each) at each uninstall; a marker, written beside the record with its expiry, costs one
 * small key per record and makes the purge a listing of the workspace's own keys by prefix.
 * Records kept before markers existed are not found by them (the answer states listed for a
 * conversation still are); they expire with their TTL (a day, 30 days, 90 days).
 *
 * Bounded: keys are listed and deleted {@link PURGE_BATCH} at a time (store.ts `scanKeys`,
 * `deleteKeys`: one round trip each), with a turn of the event loop between batches, so that a
 * workspace with 100,000 keys never holds other answers up (bench/purge.bench.ts measures it).
 * It runs in the background, after Slack's event was acknowledged.
 */
import { statesListed, unlistStates } from '../features/answer-index.ts';
import { storeKeys, workspaceKeys } from '../keys.ts';
import { dropSeen } from './seen.ts';
import type { StateStore } from './store.ts';

/** Keys listed and deleted in one batch. */
export const PURGE_BATCH = 500;

/** What a purge removed, counted (never the keys themselves: they hold user and channel ids). */
export interface PurgeCounts {
  /** Keys deleted (records and their markers included; a key deleted twice counts twice). */
  keys: number;
  /** Records found by their markers. */
  records: number;
  /** Conversations dropped from the catch-up map. */
  seen: number;
  /** Batches run. */
  batches: number;
  /** How long it took, in ms. */
  ms: number;
}

/** One turn of the event loop (what arrived meanwhile goes first). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Deletes what `workspace` (`slack:<team>` or `discord:<guild | dm>`, keys.ts `workspaceOf`) owns
 * in the store, as the file says. Idempotent: a second purge finds nothing more. Keys written
 * while it runs may stay (an answer finishing then).
 * @param options.batchSize keys a batch (default {@link PURGE_BATCH}).
 * @returns what it removed, counted.
 * @throws the store's error (what was deleted before it stays deleted; running it again finishes the work).
 */
export async function purgeWorkspace(
  store: StateStore,
  workspace: string,
  options: { batchSize?: number } = {},
): Promise<PurgeCounts> {
  const started = performance.now();
  const batchSize = options.batchSize ?? PURGE_BATCH;
  const counts: PurgeCounts = { keys: 0, records: 0, seen: 0, batches: 0, ms: 0 };
  const { prefixes, keys } = workspaceKeys(workspace);
  const owned = storeKeys.owned(workspace, '');
  const lists = storeKeys.conversationAnswerStates('');
  for (const prefix of prefixes) {
    for await (const batch of store.scanKeys(prefix, batchSize)) {
      const doomed = [...batch];
      if (prefix === owned) {
        const records = batch.map((marker) => marker.slice(owned.length));
        counts.records += records.length;
        doomed.push(...records, ...records.flatMap(regenerationHold));
      } else if (prefix.startsWith(lists)) {
        // The states a conversation's list names go with it (those kept before markers too), off their users' lists.
        const listed = (await store.keyv.getMany(batch)).flatMap(statesListed);
        await unlistStates(store, listed);
        doomed.push(...listed.flatMap(({ id }) => [storeKeys.answerState(id), storeKeys.regenerating(id)]));
      }
      await store.deleteKeys(doomed);
      counts.keys += doomed.length;
      counts.batches += 1;
      await turn();
    }
  }
  await store.deleteKeys(keys);
  counts.keys += keys.length;
  const platform = workspace.split(':')[0];
  if (platform === 'slack' || platform === 'discord') counts.seen = await dropSeen(store, platform, `${workspace}:`);
  counts.ms = Math.round(performance.now() - started);
  return counts;
}

/** The regeneration hold of an answer state's key (`answer:<id>` → `regenerating:<id>`), if it is one. */
function regenerationHold(recordKey: string): string[] {
  const answer = storeKeys.answerState('');
  return recordKey.startsWith(answer) ? [storeKeys.regenerating(recordKey.slice(answer.length))] : [];
}
