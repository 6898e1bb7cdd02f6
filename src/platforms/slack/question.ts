/**
 * The question a Slack /chat in a channel shows: Slack shows nobody a slash command's text, so
 * the bot posts it (`chat.postMessage`, attributed and quoted: text.ts `questionText`) for the
 * channel to see, and the answer goes into that message's thread. It is posted as soon as the
 * command's options are read, and removed (`chat.delete`) when the command fails before any
 * answer (the user alone is told why), as Discord's "is thinking…" reply is. A post Slack held
 * back for a long wait (a 429 naming an hour) is told to the answer, which then says so.
 */

import type { WebClient } from '@slack/web-api';
import type { NamedWait } from '../../core/delivery/bucket.ts';
import type { OneOffScheduler } from '../../core/delivery/one-off.ts';
import { english, type Words } from '../../core/i18n/words.ts';
import type { Logger } from '../../log.ts';
import { questionText } from './text.ts';
import { postMessage } from './writes.ts';

/** Who asked what: `question()` is read when the question is posted (after the options were parsed). */
export interface QuestionSource {
  /** The asker's name as Slack sent it with the command. */
  asker: string;
  /** The question (the parsed prompt); undefined when there is none to show. */
  question: () => string | undefined;
  /** The words of the channel it is shown in (`core.languages.forPlace`); English when absent. */
  words?: Promise<Words> | undefined;
}

/** One /chat's question message, posted at most once. */
export class PostedQuestion {
  private posting: Promise<string | undefined> | undefined;
  /** Whether the answer's first message went out (the question then stays). */
  private answered = false;
  /** A wait Slack named beyond MAX_HOLD_MS (core/delivery/bucket.ts) that held the post back, once one did. */
  private held: NamedWait | undefined;
  /** Who is told of it (the answer, which then says so). */
  private heldListener: ((wait: NamedWait) => void) | undefined;

  constructor(
    private readonly client: WebClient,
    private readonly channel: string,
    private readonly source: QuestionSource,
    /** Runs one Web API call of the answer (SlackReply's, which remembers a call Slack did not answer). */
    private readonly call: <T>(run: () => Promise<T>) => Promise<T>,
    private readonly log: Logger,
    /** The bot's write scheduler, whose channel post budget the question spends. */
    private readonly scheduler: OneOffScheduler,
  ) {}

  /**
   * Posts the question, once: later calls wait for the same post.
   * @returns its ts (the answer's thread), or undefined when there is no question to show.
   * @throws what chat.postMessage threw (for every call).
   */
  post(): Promise<string | undefined> {
    this.posting ??= this.postOnce();
    return this.posting;
  }

  /** Tells `listener` when the post was, or is from now on, held back by a wait Slack named beyond MAX_HOLD_MS. */
  onHeld(listener: (wait: NamedWait) => void): void {
    this.heldListener = listener;
    if (this.held) listener(this.held);
  }

  /** Notes that the answer's first message is going out: the question stays whatever happens next. */
  markAnswered(): void {
    this.answered = true;
  }

  /**
   * Removes the question when it was posted and no answer went out (the command failed first):
   * waits for a post under way. Never throws (a failure is logged).
   */
  async withdraw(): Promise<void> {
    if (!this.posting || this.answered) return;
    const ts = await this.posting.catch(() => undefined);
    if (!ts || this.answered) return;
    try {
      await this.call(() => this.client.chat.delete({ channel: this.channel, ts }));
    } catch (error) {
      this.log.warn({ err: error }, 'could not remove the question of a command that failed');
    }
  }

  private async postOnce(): Promise<string | undefined> {
    const question = this.source.question();
    if (!question) return undefined;
    const args = {
      channel: this.channel,
      text: questionText(this.source.asker, question, await (this.source.words ?? english)),
      unfurl_links: false,
      unfurl_media: false,
    };
    const posted = await this.call(() =>
      postMessage(this.scheduler, this.client, args, (wait) => {
        this.held ??= wait;
        this.heldListener?.(wait);
      }),
    );
    return posted.ts;
  }
}
