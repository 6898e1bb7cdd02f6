/**
 * Messages addressed to the bot on Slack (Events API, over HTTP or Socket Mode):
 * `app_mention` in channels, answered in the mention's thread, and `message` events in the
 * bot's DMs (`message.im`), answered in the DM (in the thread when the user wrote in one).
 * Each becomes a platform-neutral mention (core/features/mention.ts), except one saying `forget`
 * alone (`@bot forget`), which clears its conversation's history as /forget does: in a thread,
 * where Slack runs no slash command, this is how a thread is forgotten (or by the message
 * shortcut, shortcuts.ts).
 *
 * Slack delivers an event again when it thinks the first delivery was not acked
 * (`X-Slack-Retry-Num`): each event id, and each message, is claimed in the shared store
 * first, so a retry never produces a second answer, whichever instance it reaches.
 */
import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { answerClaimTtlMs, LATE_NOTICE } from '../../core/catch-up.ts';
import { runInvocation } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { asksToForget, forget } from '../../core/features/forget.ts';
import { answerMention } from '../../core/features/mention.ts';
import { channelKey, conversationKey, messageRef, slackClaims } from '../../core/keys.ts';
import type { CommandContext } from '../../core/platform.ts';
import { RESTARTING, type RunningCommands } from '../../core/running.ts';
import { type Logger, newReference } from '../../log.ts';
import { type MessageChanged, onMessageChanged, userNotice } from './edits.ts';
import { type SlackFile, slackFileAttachment } from './files.ts';
import { SlackReply } from './reply.ts';
import type { SlackStreaming } from './stream.ts';
import { plainTextOf } from './text.ts';
import { readThread } from './thread.ts';
import type { SlackDirectory } from './users.ts';
import { postEphemeral } from './writes.ts';

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

/** The fields of `app_mention` and `message` events this file reads (conversations.history gives the same). */
export interface SlackUserMessage {
  type: string;
  subtype?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  channel: string;
  channel_type?: string;
  files?: SlackFile[];
}

/** What an event handler needs from the adapter. */
export interface SlackEventDeps {
  core: Core;
  log: Logger;
  running: RunningCommands;
  botToken: string;
  /** SLACK_API_URL's origin when set: with Slack's file hosts, where the bot token may go (files.ts slackFileHost). */
  apiOrigin: string | undefined;
  directory: SlackDirectory;
  /** Where Slack refused native streaming (answers in threads stream natively elsewhere). */
  streaming: SlackStreaming;
}

/** Where an event came from. */
export interface EventMeta {
  eventId: string;
  teamId: string;
  kind: 'mention' | 'dm';
  botUserId: string | undefined;
}

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
 * thread the answer goes to (a channel mention's own, or the thread the message is in).
 */
function rememberSeen(core: Core, message: SlackUserMessage, meta: EventMeta): void {
  const dm = meta.kind === 'dm';
  const at = { platform: 'slack', team: meta.teamId, channel: message.channel } as const;
  core.seen.see('slack', conversationKey(at), message.ts, { dm });
  const thread = message.thread_ts ?? (dm ? undefined : message.ts);
  if (thread) core.seen.see('slack', conversationKey({ ...at, thread }), message.ts, { dm });
}

async function onUserMessage(
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
      text: RESTARTING,
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

/** One message's invocation: its logger (bound to ref and command), reference, what it does and its text (the bot's mention removed). */
interface MessageInvocation {
  log: Logger;
  ref: string;
  command: 'mention' | 'forget';
  text: string;
  /** Answered by catch-up after downtime: the answer says so. */
  late?: boolean;
}

async function answer(
  message: SlackUserMessage,
  meta: EventMeta,
  client: WebClient,
  deps: SlackEventDeps,
  invocation: MessageInvocation,
  signal: AbortSignal,
): Promise<void> {
  const { log, ref, command, text } = invocation;
  const user = message.user!;
  const inChannel = meta.kind === 'mention';
  const threadTs = inChannel ? (message.thread_ts ?? message.ts) : message.thread_ts;
  const ephemeral = userNotice(client, { channel: message.channel, user, threadTs, inChannel }, deps.core.scheduler);
  const native = {
    streaming: deps.streaming,
    recipient: inChannel ? { teamId: meta.teamId, userId: user } : undefined,
  };
  const reply = new SlackReply(
    client,
    { team: meta.teamId, channel: message.channel, threadTs, continueInThread: false, native },
    ephemeral,
    log,
  );
  const ctx: CommandContext = {
    platform: 'slack',
    conversationId: conversationKey({
      platform: 'slack',
      team: meta.teamId,
      channel: message.channel,
      thread: threadTs,
    }),
    channelKey: channelKey({ platform: 'slack', team: meta.teamId, channel: message.channel }),
    isDirectMessage: !inChannel,
    user: deps.directory.user(client, user),
    options: {},
    files: {},
    signal,
    log,
    ref,
    reply,
  };
  if (command === 'forget') {
    await runInvocation('forget', ctx, deps.core, () =>
      forget(ctx, deps.core, threadTs ? 'Forgetting a thread' : '/forget'),
    );
    return;
  }
  const attachments = (message.files ?? []).map((file) => slackFileAttachment(file, fileDepsOf(deps)));
  await runInvocation('mention', ctx, deps.core, async () => {
    // A message in a thread it started elsewhere: the thread is the conversation when the bot keeps none (thread.ts).
    const where = {
      channel: message.channel,
      ts: message.ts,
      botUserId: meta.botUserId,
      conversationId: ctx.conversationId,
    };
    const thread =
      message.thread_ts && message.thread_ts !== message.ts
        ? await readThread(client, { ...where, threadTs: message.thread_ts }, deps, log)
        : {};
    const notices = [...(thread.notice ? [thread.notice] : []), ...(invocation.late ? [LATE_NOTICE] : [])];
    await answerMention(ctx, deps.core, {
      text,
      attachments,
      ...(notices.length ? { notices } : {}),
      ...(thread.context ? { context: thread.context } : {}),
      ref: messageRef({ platform: 'slack', team: meta.teamId, channel: message.channel, ts: message.ts }),
    });
  });
}

/** What downloading a user's Slack file needs (files.ts slackFileAttachment). */
function fileDepsOf(deps: SlackEventDeps): Parameters<typeof slackFileAttachment>[1] {
  return { botToken: deps.botToken, downloader: deps.core.downloader, apiOrigin: deps.apiOrigin };
}
