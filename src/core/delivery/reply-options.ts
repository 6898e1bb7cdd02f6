/**
 * The options of a streamed answer's reply (streaming-reply.ts): its scheduler, its controls, the
 * messages it writes over, the words of its own lines; and of its final write.
 */
import type { Logger } from '../../log.ts';
import type { Words } from '../i18n/words.ts';
import type { Button, MessageHandle } from '../platform.ts';
import type { WriteScheduler } from './scheduler.ts';

/** Options of a StreamingReply. */
export interface StreamingReplyOptions {
  /** The bot's scheduler: budgets shared with every other answer; its clock times the final write's retries. */
  scheduler: WriteScheduler;
  log?: Logger;
  /** Attempts of each final write before giving up; default 3. */
  finalAttempts?: number;
  /** Buttons shown on the message being streamed until the final write (e.g. Stop). */
  controls?: Button[];
  /**
   * Called once when a write fails because a message of the answer was deleted
   * (ReplyChannel.isDeleted): someone chose to remove the answer, which is then stopped.
   */
  onDeleted?: () => void;
  /**
   * Messages of an earlier answer to write over, in order (ReplyChannel.messageAt): taken as
   * posted with unknown content, so each one's first write is an edit (spending its
   * `MessageHandle.buckets`, else the reply's `edit` buckets).
   */
  over?: readonly MessageHandle[];
  /** The place's words (i18n/languages.ts) of the reply's own lines (empty, replaced, not posted); default English. */
  words?: Words;
}

/** Options of StreamingReply.finish. */
export interface FinishOptions {
  /** What an empty answer shows. */
  emptyText?: string;
  /** Buttons the last message carries from its final write on (Regenerate); none when absent or empty. */
  controls?: Button[];
}
