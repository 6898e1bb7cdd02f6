/**
 * A long answer's notice. An answer streams into messages posted at its first text and edited
 * since, and neither Discord nor Slack notifies anyone of an edit: an asker who looked away while
 * it streamed is never told it is done. So an answer that took longer than
 * `NOTIFY_AFTER_SECONDS` (default 30; 0: never), counted from the command (what the user waited:
 * the queue, the files, the stream), ends with one short message of the bot's own words that
 * mentions its asker alone (OutgoingMessage.mentionUser), posted where the answer's next message
 * would go: under it. Discord: the interaction's follow-up, or a message in the mention's channel
 * or thread, `allowed_mentions` naming the asker alone; Slack: a message in the answer's thread
 * (Slack notifies a user mentioned in a thread), posted, never streamed.
 *
 * A short message under the answer, not the final text posted anew in place of the streamed one:
 * the answer's messages stay where they are (Regenerate and an edited mention write over them by
 * their references, 👍 / 👎 are on them, the history links them), the notice is one write (one of
 * the channel's post budget, through the write scheduler) where a repost is a delete and a post
 * per page, and no model text is ever in a message that may ping.
 *
 * Who is told: the invocation's user (the asker; for Regenerate, the presser, who asked for this
 * answer; for an edited mention, its author). When: an answer that ended `done` or `cut` (its
 * text is there, with the line that says why it stopped). Not one that was stopped (Stop, Slack's
 * own stop, a deleted reply: someone was looking) nor one that failed before any text (the user
 * is told why, where only they see it). Off for a channel with `/settings notify:false`.
 */
import type { Core } from '../core.ts';
import type { AnswerSession } from '../delivery/answer-session.ts';
import type { AnswerEnding } from '../delivery/answer-stream.ts';
import { sendOnce } from '../delivery/one-off.ts';
import type { CommandContext } from '../platform.ts';

/**
 * Whether an answer that ended so, `tookMs` after its command, notifies its asker: it ended
 * `done` or `cut`, and took longer than `afterSeconds` (0: never).
 */
export function notifiesAsker(ending: AnswerEnding, tookMs: number, afterSeconds: number): boolean {
  return afterSeconds > 0 && (ending === 'done' || ending === 'cut') && tookMs > afterSeconds * 1000;
}

/**
 * Posts the notice of a long answer (see the file's comment) under it, once its last write is
 * done, when {@link notifiesAsker} says so and the channel's `notify` setting is not off (a store
 * that does not answer leaves it on, the default). Through the write scheduler, in the budget of
 * the reply's next message, in the session's words (the place's: the notice is public): that it
 * is ready (`answers.notice.ready`), or, cut short by a fault, that its last line says why
 * (`answers.notice.cut`), after the asker's mention. Never throws: a notice that cannot be posted
 * is logged (the answer itself is whole).
 */
export async function noticeLongAnswer(
  ctx: CommandContext,
  core: Core,
  session: AnswerSession,
  ending: AnswerEnding,
): Promise<void> {
  const tookMs = performance.now() - session.startedAt;
  const { reply } = session;
  if (!notifiesAsker(ending, tookMs, core.limits.notifyAfterSeconds) || reply.messageCount === 0) return;
  try {
    if ((await core.settings.get(ctx.channelKey)).notify === false) return;
  } catch (error) {
    core.storeHealth.failed(error, ctx.log);
  }
  const content = session.words.t(ending === 'done' ? 'answers.notice.ready' : 'answers.notice.cut');
  try {
    await sendOnce(reply.scheduler, ctx.reply, { content, mentionUser: ctx.user.id }, reply.messageCount);
    ctx.log.debug({ tookMs: Math.round(tookMs) }, 'long answer: its asker was notified');
  } catch (error) {
    ctx.log.warn({ err: error }, 'could not notify the asker of a long answer');
  }
}
