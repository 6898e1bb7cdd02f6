/** Where a Slack answer goes (reply.ts's SlackReply): a channel, a thread, a DM, natively streamed or posted. */

import type { OneOffScheduler } from '../../core/delivery/one-off.ts';
import type { Words } from '../../core/i18n/words.ts';
import type { QuestionSource } from './question.ts';
import type { SlackStreaming } from './stream.ts';

/** Where an answer goes. */
export interface SlackTarget {
  /** The workspace (its `chat.update` budget is shared). */
  team: string;
  channel: string;
  /** The thread to answer in (a mention's thread); top level when undefined. */
  threadTs?: string | undefined;
  /**
   * Top-level answers only: true to put the continuations of a long answer in the first
   * message's thread (a slash command in a channel), false to post them after it (a DM).
   */
  continueInThread: boolean;
  /**
   * Native streaming (stream.ts) for text answers in a thread: where Slack refused it before,
   * and who the answer is for (`recipient_*`, required outside DMs; undefined in a DM).
   */
  native?:
    | {
        streaming: SlackStreaming;
        recipient?: { teamId: string; userId: string } | undefined;
      }
    | undefined;
  /** A message of the bot's the first text rewrites (chat.update): Regenerate's pressed message, an edited mention's answer. */
  rewrite?: string | undefined;
  /**
   * A slash command whose text nobody else sees (Slack shows no command to the channel): at
   * `defer()` (or the answer's first message, if that comes first) the question is posted,
   * attributed and quoted, and the answer goes into its thread (question.ts). `question()` is
   * read then (after the options were parsed).
   */
  announce?: QuestionSource | undefined;
  /** The bot's write scheduler: the question's post spends the channel's post budget there (question.ts). */
  scheduler?: OneOffScheduler | undefined;
  /**
   * The words of the answer's place (`core.languages.forPlace`: the channel's /settings locale,
   * else the asker's): its buttons' labels, the question shown, the thinking status. English when absent.
   */
  words?: Promise<Words> | undefined;
}
