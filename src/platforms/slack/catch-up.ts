/**
 * Catch-up on Slack (core/catch-up.ts). In Socket Mode, Slack delivers an event only over an
 * open socket and does not send it again later: after each connection (the start, and every
 * reconnection of @slack/socket-mode), the channels, DMs and threads where the bot was
 * addressed (state/seen.ts) are read since the newest message seen — `conversations.history`
 * with `oldest` for a channel or DM, `conversations.replies` for a thread (their history
 * scopes: `channels:history`, `groups:history`, `im:history`, `mpim:history`) — and the
 * messages addressed to the bot (events.ts's rules: a person's message that mentions it, or
 * any person's message in its DM) that no instance answered are answered, late. In HTTP mode
 * (Events API), Slack retries a delivery that was not acknowledged itself (three times: at
 * once, after a minute, after five), then drops it; the same catch-up runs once at the start
 * for what it dropped, and the message claims make it harmless when a retry comes too.
 */
import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { CatchUpRunner, type CatchUpSource, catchUp } from '../../core/catch-up.ts';
import { parseConversationKey, slackClaims } from '../../core/keys.ts';
import { newerId, type SeenConversation } from '../../core/state/seen.ts';
import { answerLate, type EventMeta, isPersonMessage, type SlackEventDeps, type SlackUserMessage } from './events.ts';
import { patiently } from './rate-limits.ts';

/**
 * Pause between two conversations' reads, in ms: `conversations.history` and
 * `conversations.replies` are tier 3 (50 a minute) for internal and Marketplace apps
 * (docs/platform-limits.md); a 429 is waited out once (rate-limits.ts `patiently`).
 */
export const SLACK_READ_SPACING_MS = 1_300;

/** A message read back, with where it is. */
interface FoundMessage {
  message: SlackUserMessage;
  meta: EventMeta;
}

/** `ms` since 1970 as a Slack `ts` (`<seconds>.<6 digits>`). */
function tsAt(ms: number): string {
  return (Math.max(ms, 0) / 1000).toFixed(6);
}

/**
 * The Web API client and the bot's user id that serve one workspace outside a request, or
 * undefined when this bot does not serve it (another single workspace; no installation).
 */
export type WorkspaceClients = (team: string) => Promise<{ client: WebClient; botUserId: string } | undefined>;

/**
 * The single-workspace mode's {@link WorkspaceClients}: the app's own client (SLACK_BOT_TOKEN), for
 * its workspace only, the bot's user and workspace asked once (auth.test).
 */
export function singleWorkspace(app: App): WorkspaceClients {
  let asked: Promise<{ botUserId: string; teamId: string }> | undefined;
  return async (team) => {
    asked ??= app.client.auth.test().then((r) => ({ botUserId: String(r.user_id), teamId: String(r.team_id) }));
    asked.catch(() => (asked = undefined));
    const who = await asked;
    return who.teamId === team ? { client: app.client, botUserId: who.botUserId } : undefined;
  };
}

/** Reads one channel, DM or thread since the newest message seen (and not before `sinceMs`): the messages addressed to the bot, oldest first. */
async function readConversation(
  workspaces: WorkspaceClients,
  entry: SeenConversation,
  since: { sinceMs: number; limit: number },
): Promise<{ messages: FoundMessage[]; newest?: string }> {
  const ref = parseConversationKey(entry.conversation);
  if (ref?.platform !== 'slack') return { messages: [] };
  const served = await workspaces(ref.team);
  if (!served) return { messages: [] };
  const { client, botUserId } = served;
  const who = { botUserId, teamId: ref.team };
  const floor = tsAt(since.sinceMs);
  const oldest = newerId(entry.last, floor) ? entry.last : floor;
  const page = ref.thread
    ? await client.conversations.replies({ channel: ref.channel, ts: ref.thread, oldest, limit: since.limit })
    : await client.conversations.history({ channel: ref.channel, oldest, limit: since.limit });
  const read = ((page.messages ?? []) as SlackUserMessage[])
    .filter((m) => typeof m.ts === 'string' && newerId(m.ts, oldest))
    .sort((a, b) => (newerId(a.ts, b.ts) ? 1 : -1));
  const mention = `<@${who.botUserId}>`;
  const kind: EventMeta['kind'] = entry.dm ? 'dm' : 'mention';
  const messages = read
    .filter((m) => isPersonMessage(m) && (entry.dm || (m.text ?? '').includes(mention)))
    .map((m) => ({
      message: { ...m, channel: ref.channel, ...(entry.dm ? { channel_type: 'im' } : {}) },
      meta: { eventId: 'catch-up', teamId: who.teamId, kind, botUserId: who.botUserId },
    }));
  return { messages, ...(read.length ? { newest: read.at(-1)!.ts } : {}) };
}

/** The Socket Mode client of a Bolt app, when it runs in Socket Mode (Bolt 5 keeps it as `receiver.client`). */
function socketClientOf(app: App): { on(event: 'connected', listener: () => void): unknown } | undefined {
  const client = (app as unknown as { receiver?: { client?: { on?: unknown } } }).receiver?.client;
  return typeof client?.on === 'function' ? (client as ReturnType<typeof socketClientOf>) : undefined;
}

/**
 * Slack's side of a catch-up (and of the sweep, core/sweep.ts): each conversation is read and
 * answered with its own workspace's client (`workspaces`: the single token, or the workspace's
 * installation).
 */
export function slackCatchUpSource(workspaces: WorkspaceClients, deps: SlackEventDeps): CatchUpSource<FoundMessage> {
  const { core } = deps;
  return {
    platform: 'slack',
    readSpacingMs: SLACK_READ_SPACING_MS,
    owns: () => true,
    read: (entry, sinceMs, limit) =>
      patiently(() => readConversation(workspaces, entry, { sinceMs, limit }), core.scheduler.clock),
    claimKey: ({ message, meta }) => slackClaims.message(meta.teamId, message.channel, message.ts),
    sentAt: ({ message }) => Number(message.ts) * 1000,
    answer: async ({ message, meta }) => {
      const served = await workspaces(meta.teamId);
      if (served) await answerLate(message, meta, served.client, deps);
    },
    stopping: () => deps.running.draining,
  };
}

/**
 * Registers Slack's catch-up: in Socket Mode after each connection of the socket; in HTTP
 * mode the adapter requests it once it listens.
 */
export function catchUpAfterConnecting(app: App, workspaces: WorkspaceClients, deps: SlackEventDeps): CatchUpRunner {
  const { core, log } = deps;
  const source = slackCatchUpSource(workspaces, deps);
  const runner = new CatchUpRunner(() =>
    catchUp(core, source, log.child({ catchUp: 'slack' })).then(
      () => undefined,
      (error: unknown) => log.warn({ err: error }, 'slack catch-up failed'),
    ),
  );
  if (core.limits.catchUpMaxAgeMinutes > 0) socketClientOf(app)?.on('connected', () => runner.request());
  return runner;
}
