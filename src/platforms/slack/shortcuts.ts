/**
 * Message shortcuts on Slack (a message's "More actions" menu; interaction payloads of type
 * `message_action`, docs.slack.dev/reference/interaction-payloads/shortcuts-interaction-payload).
 * The manifest declares them (manifest.ts) and the adapter listens to each (app.shortcut), from
 * the same list (message-actions.ts `slackShortcutsOf`).
 *
 * The message actions of commands/ (core/message-action.ts) are shortcuts too (message-actions.ts);
 * their forms come back as `view_submission`s, registered there.
 *
 * "Forget this thread" clears the history of the thread of the message it is used on (a thread
 * is a conversation of its own, `slack:<team>:<channel>:<thread_ts>`, which no slash command can
 * reach: Slack runs none in a thread), with /forget's rights: anyone in a DM, admins in a
 * channel. It says so in the thread; a refusal goes to the user alone (the payload's
 * `response_url`). "Export this thread" sends the user that thread's conversation, as /export
 * does in a channel: the files in their DM with the bot, a line saying so through the `response_url`.
 */
import type { App, MessageShortcut, RespondFn } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { runInvocation } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import { exportConversation } from '../../core/features/export.ts';
import { forget } from '../../core/features/forget.ts';
import { channelKey, conversationKey } from '../../core/keys.ts';
import type { CommandContext, OutgoingMessage } from '../../core/platform.ts';
import type { RunningCommands } from '../../core/running.ts';
import { EXPORT_THREAD_SHORTCUT_NAME, FORGET_THREAD_SHORTCUT_NAME } from '../../core/sentences.ts';
import { type Logger, newReference } from '../../log.ts';
import { blocksOf, fallbackTextOf } from './blocks.ts';
import { sendDirect } from './direct.ts';
import { SlackReply } from './reply.ts';
import { refusalWhileStopping } from './stopping.ts';
import type { SlackStreaming } from './stream.ts';
import type { SlackDirectory } from './users.ts';

/** What a shortcut's handling needs from the adapter. */
export interface SlackShortcutDeps {
  core: Core;
  log: Logger;
  running: RunningCommands;
  directory: SlackDirectory;
  /** SLACK_API_URL's origin, to download a message's files with the request's token (files.ts). */
  apiOrigin: string | undefined;
  /** Where Slack refused native streaming (answers in threads stream natively elsewhere). */
  streaming: SlackStreaming;
}

/** One message shortcut: what the manifest declares, and what runs when it is used. */
export interface SlackMessageShortcut {
  /** Shown in the message's menu; at most 24 characters. */
  name: string;
  /** The payload's `callback_id`; at most 255 characters. */
  callbackId: string;
  /** Shown under the name; at most 150 characters. */
  description: string;
  /**
   * Handles one use (acked already). Never throws: failures are told and logged by runInvocation.
   * @param respond the payload's response_url (ephemeral answers to the user).
   * @param signal the invocation's own signal (shutdown).
   * @param botUserId the bot's own user id (Bolt's context), when known.
   */
  run(
    shortcut: MessageShortcut,
    client: WebClient,
    respond: RespondFn,
    deps: SlackShortcutDeps,
    signal: AbortSignal,
    botUserId?: string,
  ): Promise<void>;
}

/** "Forget this thread": see the file's comment. */
export const FORGET_THREAD_SHORTCUT: SlackMessageShortcut = {
  name: FORGET_THREAD_SHORTCUT_NAME,
  callbackId: 'forget_thread',
  description: "Clear the bot's conversation history of this message's thread (in a channel: admins)",
  run: forgetThread,
};

/** "Export this thread": the thread's conversation to the user's DM, as /export in a channel (features/export.ts). */
export const EXPORT_THREAD_SHORTCUT: SlackMessageShortcut = {
  name: EXPORT_THREAD_SHORTCUT_NAME,
  callbackId: 'export_thread',
  description: "Get this message's thread's conversation with the bot as Markdown and JSON, in a DM",
  run: exportThread,
};

/**
 * Registers a listener for each shortcut: acked at once, run among the running commands (refused
 * while stopping).
 * @param shortcuts every message shortcut of the app (message-actions.ts `slackShortcutsOf`).
 */
export function registerMessageShortcuts(
  app: App,
  deps: SlackShortcutDeps,
  shortcuts: readonly SlackMessageShortcut[],
): void {
  for (const shortcut of shortcuts) {
    app.shortcut<MessageShortcut>(
      { callback_id: shortcut.callbackId, type: 'message_action' },
      async ({ shortcut: body, ack, client, respond, context }) => {
        await ack();
        if (deps.running.draining) {
          const team = body.team?.id ?? body.user.team_id ?? 'unknown';
          const text = await refusalWhileStopping(client, deps, team, body.user.id);
          await respond({ response_type: 'ephemeral', text }).catch((error: unknown) =>
            deps.log.warn({ err: error }, 'could not answer while stopping'),
          );
          return;
        }
        void deps.running.run(
          (signal) => shortcut.run(body, client, respond, deps, signal, context.botUserId),
          (error) => deps.log.error({ err: error }, 'shortcut handler failed'),
        );
      },
    );
  }
}

/**
 * The context of a shortcut used on a message: the conversation of its thread (a reply's
 * `thread_ts`; a message without one starts, or is the parent of, its own), the user's answers
 * through the payload's response_url, public ones in the thread, and the user's DM (/export's files).
 */
function threadContext(
  shortcut: MessageShortcut,
  client: WebClient,
  respond: RespondFn,
  deps: SlackShortcutDeps,
  signal: AbortSignal,
  command: string,
): CommandContext {
  const ref = newReference();
  const channel = shortcut.channel.id;
  const log = deps.log.child({ platform: 'slack', ref, command, channel, shortcut: shortcut.callback_id });
  const team = shortcut.team?.id ?? shortcut.user.team_id ?? '';
  const threadTs = typeof shortcut.message.thread_ts === 'string' ? shortcut.message.thread_ts : shortcut.message.ts;
  const ephemeral = async (message: OutgoingMessage) => {
    const blocks = blocksOf(message);
    await respond({ response_type: 'ephemeral', text: fallbackTextOf(message), ...(blocks ? { blocks } : {}) });
  };
  const reply = new SlackReply(client, { team, channel, threadTs, continueInThread: false }, ephemeral, log);
  const where = { platform: 'slack' as const, team, channel };
  return {
    platform: 'slack',
    conversationId: conversationKey({ ...where, thread: threadTs }),
    channelKey: channelKey(where),
    isDirectMessage: channel.startsWith('D') || shortcut.channel.name === 'directmessage',
    locale: { user: deps.directory.locale(client, team, shortcut.user.id) },
    user: deps.directory.user(client, { team, id: shortcut.user.id, name: shortcut.user.name }),
    sendDirect: (message) => sendDirect(client, shortcut.user.id, message),
    options: {},
    files: {},
    signal,
    log,
    ref,
    reply,
  };
}

/** Clears the history of the thread of the message the shortcut was used on, as /forget does. */
async function forgetThread(
  shortcut: MessageShortcut,
  client: WebClient,
  respond: RespondFn,
  deps: SlackShortcutDeps,
  signal: AbortSignal,
): Promise<void> {
  const ctx = threadContext(shortcut, client, respond, deps, signal, 'forget');
  await runInvocation('forget', ctx, deps.core, () => forget(ctx, deps.core, 'Forgetting a thread'));
}

/** Sends the user the history of the thread of the message the shortcut was used on, as /export does. */
async function exportThread(
  shortcut: MessageShortcut,
  client: WebClient,
  respond: RespondFn,
  deps: SlackShortcutDeps,
  signal: AbortSignal,
): Promise<void> {
  const ctx = threadContext(shortcut, client, respond, deps, signal, 'export');
  await runInvocation('export', ctx, deps.core, () => exportConversation(ctx, deps.core));
}
