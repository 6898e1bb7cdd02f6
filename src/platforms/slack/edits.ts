/**
 * Edits of messages that mentioned the bot on Slack (`message` events of subtype
 * `message_changed`, from the `message.channels`, `message.groups`, `message.mpim` and
 * `message.im` subscriptions): within EDIT_REANSWER_MINUTES of the message, its author's edit
 * of the text re-answers it in place (core/features/regenerate.ts): one new request with the
 * edited text, written over the bot's answer messages with chat.update (SlackReply.messageAt).
 * An edit that no longer mentions the bot (outside a DM), a change without `edited` (Slack
 * adding a link's preview), and every other message are left alone.
 */
import type { WebClient } from '@slack/web-api';
import { runInvocation } from '../../core/command.ts';
import type { Core } from '../../core/core.ts';
import type { OneOffScheduler } from '../../core/delivery/one-off.ts';
import { editToReanswer, reanswerEdit } from '../../core/features/regenerate.ts';
import { messageRef, parseMessageRef } from '../../core/keys.ts';
import type { CommandContext, OutgoingMessage } from '../../core/platform.ts';
import type { RunningCommands } from '../../core/running.ts';
import { type Logger, newReference } from '../../log.ts';
import { blocksOf, fallbackTextOf } from './blocks.ts';
import { postedSlackImage } from './files.ts';
import { SlackReply } from './reply.ts';
import { plainTextOf } from './text.ts';
import type { SlackDirectory } from './users.ts';
import { postEphemeral, postMessage } from './writes.ts';

/** The fields of a `message_changed` event this file reads (Slack's "message_changed" message subtype). */
export interface MessageChanged {
  subtype: 'message_changed';
  channel: string;
  channel_type?: string;
  message?: {
    user?: string;
    bot_id?: string;
    text?: string;
    ts?: string;
    thread_ts?: string;
    edited?: { user?: string; ts?: string };
  };
}

/**
 * How a user is told something only they see in a conversation: `chat.postEphemeral` in a
 * channel (in the thread when given); a plain message in a DM, which is private already. Either
 * spends the channel's post budget in the write scheduler (writes.ts).
 */
export function userNotice(
  client: WebClient,
  where: { channel: string; user: string; threadTs: string | undefined; inChannel: boolean },
  scheduler: OneOffScheduler,
): (message: OutgoingMessage) => Promise<void> {
  return async (m) => {
    const blocks = blocksOf(m);
    const body = {
      channel: where.channel,
      text: fallbackTextOf(m),
      ...(blocks ? { blocks } : {}),
      ...(where.threadTs ? { thread_ts: where.threadTs } : {}),
    };
    if (where.inChannel) await postEphemeral(scheduler, client, { ...body, user: where.user });
    else await postMessage(scheduler, client, body);
  };
}

/** What an edit's handler needs from the adapter (events.ts's deps have it). */
export interface SlackEditDeps {
  core: Core;
  log: Logger;
  running: RunningCommands;
  directory: SlackDirectory;
  /** SLACK_API_URL's origin: the question's images are downloaded again, with the request's token (files.ts). */
  apiOrigin: string | undefined;
}

/** A Slack `ts` (`1700000000.000100`) as ms since the epoch. */
function tsMs(ts: string): number {
  return Math.round(Number(ts) * 1000);
}

/**
 * Re-answers an edited mention when the edit calls for it (regenerate.ts `editToReanswer`: the
 * window, the asker, a changed text, once per edit, whichever instance it reaches); otherwise
 * does nothing. Never throws.
 */
export async function onMessageChanged(
  event: MessageChanged,
  meta: { teamId: string; botUserId: string | undefined },
  client: WebClient,
  deps: SlackEditDeps,
): Promise<void> {
  const m = event.message;
  if (!m?.user || m.bot_id || !m.ts || !m.edited?.ts || deps.running.draining) return;
  const inChannel = event.channel_type !== 'im';
  if (inChannel && !(meta.botUserId && (m.text ?? '').includes(`<@${meta.botUserId}>`))) return;
  const { core } = deps;
  const text = plainTextOf(m.text ?? '', meta.botUserId);
  const edit = {
    mention: messageRef({ platform: 'slack', team: meta.teamId, channel: event.channel, ts: m.ts }),
    authorId: m.user,
    text,
    sentAt: tsMs(m.ts),
    editedAt: tsMs(m.edited.ts),
  };
  const found = await editToReanswer(core, edit, deps.log);
  if (!found) return;
  const answer = parseMessageRef(found.link.answer);
  if (answer?.platform !== 'slack' || answer.channel !== event.channel) return;
  const ref = newReference();
  const log = deps.log.child({ platform: 'slack', ref, command: 'edit', channel: event.channel });
  // Every answer is in a thread, a DM's too (message-answer.ts): its further pages go there.
  const threadTs = m.thread_ts ?? m.ts;
  const notice = userNotice(client, { channel: event.channel, user: m.user, threadTs, inChannel }, deps.core.scheduler);
  const target = { team: meta.teamId, channel: event.channel, threadTs, continueInThread: false };
  const state = found.state;
  const reanswer = found;
  void deps.running.run(
    (signal) => {
      const ctx: CommandContext = {
        platform: 'slack',
        conversationId: state.conversationId,
        channelKey: state.channelKey,
        isDirectMessage: !inChannel,
        locale: { user: deps.directory.locale(client, meta.teamId, m.user!) },
        user: deps.directory.user(client, { team: meta.teamId, id: m.user! }),
        options: {},
        files: {},
        signal,
        log,
        ref,
        startedAt: performance.now(),
        reply: new SlackReply(client, target, notice, log),
      };
      const files = { client, downloader: core.downloader, apiOrigin: deps.apiOrigin };
      // Found again for the asker, in the edit's conversation (files.ts `fileVisibleTo`).
      const images = (ref: string) => postedSlackImage(ref, { user: m.user!, channel: event.channel }, files);
      return runInvocation('edit', ctx, core, () => reanswerEdit(ctx, core, reanswer, text, images));
    },
    (error) => log.error({ err: error }, 'slack edit handler failed'),
  );
}
