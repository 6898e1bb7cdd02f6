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

/** How long a claimed event id or message is remembered, in ms (Slack retries within minutes). */
export const EVENT_CLAIM_TTL_MS = 60 * 60_000;

/** The fields of `app_mention` and `message` events this file reads. */
interface SlackUserMessage {
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
interface EventMeta {
  eventId: string;
  teamId: string;
  kind: 'mention' | 'dm';
  botUserId: string | undefined;
}

/** Message subtypes that are a person writing (a plain message, or one with files). */
const USER_SUBTYPES: ReadonlySet<string | undefined> = new Set([undefined, 'file_share', 'thread_broadcast']);

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

async function onUserMessage(
  message: SlackUserMessage,
  meta: EventMeta,
  client: WebClient,
  deps: SlackEventDeps,
): Promise<void> {
  if (message.bot_id || !message.user || !USER_SUBTYPES.has(message.subtype)) return;
  const ref = newReference();
  const text = plainTextOf(message.text ?? '', meta.botUserId);
  const command = asksToForget(text) && !message.files?.length ? 'forget' : 'mention';
  const log = deps.log.child({
    platform: 'slack',
    ref,
    command,
    event: meta.eventId,
    kind: meta.kind,
    channel: message.channel,
  });
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
  void deps.running.run(
    (signal) => answer(message, meta, client, deps, { log, ref, command, text }, signal),
    (error) => log.error({ err: error }, 'slack event handler failed'),
  );
}

/** Claims every key; false when any was claimed before (this delivery is a repeat). */
async function firstDelivery(core: Core, log: Logger, keys: string[]): Promise<boolean> {
  try {
    for (const key of keys) if (!(await core.claims.claim(key, EVENT_CLAIM_TTL_MS))) return false;
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
    await answerMention(ctx, deps.core, {
      text,
      attachments,
      ...(thread.notice ? { notices: [thread.notice] } : {}),
      ...(thread.context ? { context: thread.context } : {}),
      ref: messageRef({ platform: 'slack', team: meta.teamId, channel: message.channel, ts: message.ts }),
    });
  });
}

/** What downloading a user's Slack file needs (files.ts slackFileAttachment). */
function fileDepsOf(deps: SlackEventDeps): Parameters<typeof slackFileAttachment>[1] {
  return { botToken: deps.botToken, downloader: deps.core.downloader, apiOrigin: deps.apiOrigin };
}
