/**
 * Messages addressed to the bot on Slack (Events API, over HTTP or Socket Mode):
 * `app_mention` in channels and `message` events in the bot's DMs (`message.im`; in an
 * assistant view's threads Bolt's Assistant hands them over, agent.ts), each answered in its
 * thread (message-answer.ts: a top-level DM opens an agent thread). Each becomes a
 * platform-neutral mention (core/features/mention.ts), except one saying `forget` alone (`@bot
 * forget`), which clears its conversation's history as /forget does: in a thread, where Slack
 * runs no slash command, this is how a thread is forgotten (or by the message shortcut,
 * shortcuts.ts), and `imagine …` in a DM, which runs /imagine.
 *
 * Slack delivers an event again when it thinks the first delivery was not acked
 * (`X-Slack-Retry-Num`): each event id, and each message, is claimed in the shared store
 * first, so a retry never produces a second answer, whichever instance it reaches.
 */
import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { answerClaimTtlMs } from '../../core/catch-up.ts';
import type { Core } from '../../core/core.ts';
import { asksToForget } from '../../core/features/forget.ts';
import { conversationKey, slackClaims } from '../../core/keys.ts';
import { type Logger, newReference } from '../../log.ts';
import { type MessageChanged, onMessageChanged } from './edits.ts';
import type { EventMeta, SlackEventDeps, SlackUserMessage } from './event-types.ts';
import { answer, type MessageInvocation } from './message-answer.ts';
import { refusalWhileStopping } from './stopping.ts';
import { plainTextOf } from './text.ts';
import { postEphemeral } from './writes.ts';

export type { EventMeta, SlackEventDeps, SlackUserMessage } from './event-types.ts';

/** The bot events the app subscribes to (the manifest's `bot_events` come from here). */
export const SLACK_BOT_EVENTS = [
  'app_mention',
  'message.im',
  // Edits of mentions (message_changed) in channels, private channels and group DMs (edits.ts).
  'message.channels',
  'message.groups',
  'message.mpim',
] as const;

/** The bot scopes these events need: receiving them, and reading the files users attach. */
export const SLACK_EVENT_SCOPES = ['app_mentions:read', 'im:history', 'files:read'] as const;

/** Message subtypes that are a person writing (a plain message, or one with files). */
const USER_SUBTYPES: ReadonlySet<string | undefined> = new Set([undefined, 'file_share', 'thread_broadcast']);

/** Whether a person wrote the message (not a bot, not a system message). */
export function isPersonMessage(message: SlackUserMessage): message is SlackUserMessage & { user: string } {
  return !message.bot_id && Boolean(message.user) && USER_SUBTYPES.has(message.subtype);
}

/** Registers the listeners of {@link SLACK_BOT_EVENTS} on a Bolt app. */
export function registerMessageEvents(app: App, deps: SlackEventDeps): void {
  // Bolt's context carries the bot's user id (from auth.test at start): its mentions are dropped from the prompt.
  app.event('app_mention', async ({ event, body, client, context }) => {
    await onUserMessage(
      event as unknown as SlackUserMessage,
      { eventId: body.event_id, teamId: body.team_id, kind: 'mention', botUserId: context.botUserId },
      client,
      deps,
    );
  });
  app.event('message', async ({ event, body, client, context }) => {
    const message = event as unknown as SlackUserMessage;
    if (message.subtype === 'message_changed') {
      const meta = { teamId: body.team_id, botUserId: context.botUserId };
      return onMessageChanged(event as unknown as MessageChanged, meta, client, deps);
    }
    if (message.channel_type !== 'im') return;
    await onUserMessage(
      message,
      { eventId: body.event_id, teamId: body.team_id, kind: 'dm', botUserId: context.botUserId },
      client,
      deps,
    );
  });
}

/** A message's invocation: its reference, what it does, its text and its logger. */
function invocationOf(message: SlackUserMessage, meta: EventMeta, deps: SlackEventDeps): MessageInvocation {
  const ref = newReference();
  const text = plainTextOf(message.text ?? '', meta.botUserId);
  const command = asksToForget(text) && !message.files?.length ? 'forget' : 'mention';
  const { eventId: event, kind } = meta;
  const log = deps.log.child({ platform: 'slack', ref, command, event, kind, channel: message.channel });
  return { log, ref, command, text };
}

/**
 * Answers a message that catch-up found (catch-up.ts), claimed already: the answer says it
 * comes late. @returns when the answer is over (never rejects).
 */
export function answerLate(
  message: SlackUserMessage,
  meta: EventMeta,
  client: WebClient,
  deps: SlackEventDeps,
): Promise<void> {
  const invocation = { ...invocationOf(message, meta, deps), late: true };
  rememberSeen(deps.core, message, meta);
  return deps.running.run(
    (signal) => answer(message, meta, client, deps, invocation, signal),
    (error) => invocation.log.error({ err: error }, 'slack late answer failed'),
  );
}

/**
 * Notes where the bot was addressed, for catch-up (state/seen.ts): the channel or DM, and the
 * thread the answer goes to (the message's own, or the thread it is in).
 */
function rememberSeen(core: Core, message: SlackUserMessage, meta: EventMeta): void {
  const dm = meta.kind === 'dm';
  const at = { platform: 'slack', team: meta.teamId, channel: message.channel } as const;
  core.seen.see('slack', conversationKey(at), message.ts, { dm });
  const thread = message.thread_ts ?? message.ts;
  core.seen.see('slack', conversationKey({ ...at, thread }), message.ts, { dm });
}

/**
 * A message addressed to the bot (a mention, or a DM: events here, or Bolt's Assistant for the
 * assistant view's threads, agent.ts): claimed once, then answered (message-answer.ts) among the
 * running commands. Returns once it is acked work (the answer runs on).
 */
export async function onUserMessage(
  message: SlackUserMessage,
  meta: EventMeta,
  client: WebClient,
  deps: SlackEventDeps,
): Promise<void> {
  if (!isPersonMessage(message)) return;
  const invocation = invocationOf(message, meta, deps);
  const { log } = invocation;
  if (deps.running.draining) {
    await postEphemeral(deps.core.scheduler, client, {
      channel: message.channel,
      user: message.user,
      text: await refusalWhileStopping(client, deps, meta.teamId, message.user),
      ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}),
    }).catch((error: unknown) => log.warn({ err: error }, 'could not answer while stopping'));
    return;
  }
  if (
    !(await firstDelivery(deps.core, log, [
      slackClaims.event(meta.eventId),
      slackClaims.message(meta.teamId, message.channel, message.ts),
    ]))
  ) {
    log.info('event already answered (a retry or a second delivery); ignored');
    return;
  }
  rememberSeen(deps.core, message, meta);
  void deps.running.run(
    (signal) => answer(message, meta, client, deps, invocation, signal),
    (error) => log.error({ err: error }, 'slack event handler failed'),
  );
}

/** Claims every key; false when any was claimed before (this delivery is a repeat). */
async function firstDelivery(core: Core, log: Logger, keys: string[]): Promise<boolean> {
  try {
    // The message's claim outlives catch-up's age bound: catch-up claims the same (catch-up.ts).
    const ttlMs = answerClaimTtlMs(core.limits.catchUpMaxAgeMinutes);
    for (const key of keys) if (!(await core.claims.claim(key, ttlMs))) return false;
    return true;
  } catch (error) {
    // Without the store a repeat cannot be told apart: answering twice beats never answering.
    log.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'could not record the event; answering anyway',
    );
    return true;
  }
}
