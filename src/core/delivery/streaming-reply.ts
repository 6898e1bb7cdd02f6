/**
 * Turns a stream of text deltas into edits of platform messages:
 * - the first message as soon as there is text;
 * - then paced edits, at most one API call in flight, no closer than `minEditIntervalMs`;
 * - text beyond the platform limit continues in follow-up messages (split.ts keeps code
 *   fences balanced across the cut);
 * - `finish()` makes a final pass that always lands the complete text (retried on failure).
 */
import { splitMessage } from './split.ts';
import type { MessageHandle, ReplyChannel } from '../platform.ts';
import type { Logger } from '../../log.ts';
import { ShownError } from '../command.ts';

/** Time source, injectable for tests. `now()` in ms. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Options of {@link StreamingReply}. */
export interface StreamingReplyOptions {
  clock?: Clock;
  log?: Logger;
  /** Attempts of each final write before giving up; default 3. */
  finalAttempts?: number;
}

/** One streamed answer, possibly spanning several messages. Single use. */
export class StreamingReply {
  private text = '';
  private readonly handles: MessageHandle[] = [];
  /** What each message currently shows. */
  private readonly shown: string[] = [];
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private pump: Promise<void> | undefined;
  private finishing = false;
  private failure: unknown;
  /** The message whose final write failed. */
  private failedIndex = 0;
  private readonly clock: Clock;

  /** Number of API calls made (sends + edits): for logs and tests. */
  writes = 0;

  constructor(
    private readonly channel: ReplyChannel,
    private readonly options: StreamingReplyOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
  }

  /** The text received so far. */
  get content(): string {
    return this.text;
  }

  /** Number of messages the answer occupies so far. */
  get messageCount(): number {
    return this.handles.length;
  }

  /** Adds a delta; a write is scheduled (never more than one in flight). */
  append(delta: string): void {
    if (delta === '') return;
    this.text += delta;
    this.schedule();
  }

  /**
   * Writes the complete text and resolves when every message shows its final page.
   * @param finalText replaces the accumulated text (e.g. pretty-printed JSON, or text with an
   *   error notice appended); an empty answer is shown as `emptyText`.
   * @throws the last platform error when a final write failed `finalAttempts` times; a
   *   ShownError when it was a continuation that failed and the first message now says so.
   */
  async finish(finalText?: string, emptyText = '*(the model returned an empty answer)*'): Promise<void> {
    if (finalText !== undefined) this.text = finalText;
    if (this.text.trim() === '') this.text = emptyText;
    this.finishing = true;
    // A pump started before finish() may have stopped early after a failed intermediate edit.
    do {
      this.schedule();
      await this.pump;
    } while (this.failure === undefined && this.dirty());
    if (this.failure !== undefined) {
      if (this.failedIndex > 0 && (await this.noteInFirst(this.failure))) throw new ShownError(this.failure, this.text);
      throw this.failure;
    }
  }

  /**
   * When a continuation could not be posted (a missing permission, the platform failing), the
   * first message says what is missing and why, so the user is not left with half an answer.
   * @returns whether the note was written.
   */
  private async noteInFirst(error: unknown): Promise<boolean> {
    const first = this.handles[0];
    if (!first || this.shown[0] === undefined) return false;
    const reason = this.channel.explain?.(error) ?? 'the platform refused it.';
    const note = `\n\n⚠️ The rest of the answer could not be posted: ${reason}`;
    const { maxChars, measure = (t: string) => t.length } = this.channel.limits;
    let head = this.shown[0];
    while (head.length > 0 && measure(head + note) > maxChars) head = head.slice(0, Math.max(0, head.length - (measure(head + note) - maxChars) - 1));
    try {
      await first.edit({ content: `${head}${note}` });
      return true;
    } catch (noteError) {
      this.options.log?.warn({ err: noteError }, 'could not note the missing continuation in the first message');
      return false;
    }
  }

  private pages(): string[] {
    const { maxChars, measure } = this.channel.limits;
    return splitMessage(this.text, maxChars, measure);
  }

  /** Whether there is something to write: text that is not only whitespace (platforms refuse that), not shown yet. */
  private dirty(): boolean {
    if (this.text.trim() === '') return false;
    const pages = this.pages();
    return pages.some((page, i) => this.shown[i] !== page);
  }

  private schedule(): void {
    if (this.pump) return;
    this.pump = this.run().finally(() => {
      this.pump = undefined;
    });
  }

  private async run(): Promise<void> {
    while (this.dirty()) {
      const wait = this.lastWriteAt + this.channel.limits.minEditIntervalMs - this.clock.now();
      if (wait > 0) await this.clock.sleep(wait);
      const pages = this.pages();
      for (let i = 0; i < pages.length; i++) {
        const page = pages[i]!;
        if (this.shown[i] === page) continue;
        // After a failed write, stop until the next delta (or finish) brings a reason to retry.
        if (!(await this.write(i, page))) return;
      }
    }
  }

  /**
   * Sends or edits message `i`. False when it failed: an intermediate write is then skipped
   * (a later one carries newer text); a final one is retried, and its last error kept.
   */
  private async write(i: number, page: string): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      this.lastWriteAt = this.clock.now();
      this.writes++;
      try {
        const handle = this.handles[i];
        if (handle) await handle.edit({ content: page });
        else this.handles[i] = await this.channel.send({ content: page });
        this.shown[i] = page;
        this.failure = undefined;
        return true;
      } catch (error) {
        this.options.log?.warn({ err: error, message: i, attempt, final: this.finishing }, 'streaming write failed');
        // Read after the failure: finish() may have begun while this write was in flight, and
        // then this write is already one of the final ones.
        if (!this.finishing) return false;
        if (attempt >= (this.options.finalAttempts ?? 3)) {
          this.failure = error;
          this.failedIndex = i;
          return false;
        }
        await this.clock.sleep(Math.min(4_000, 500 * 2 ** (attempt - 1)));
      }
    }
  }
}
