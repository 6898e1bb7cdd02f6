/**
 * Turns a stream of text deltas into writes of platform messages, every one through the write
 * scheduler (scheduler.ts), which keeps the platform's budgets:
 * - the first message as soon as there is text (never a blank one);
 * - then edits, one write of this answer at a time, no closer than `minEditIntervalMs`, the
 *   newest text each time (pending edits coalesce in the scheduler);
 * - text beyond the platform limit continues in follow-up messages (split.ts keeps code
 *   fences balanced across the cut), written in order;
 * - `finish()` submits final writes, which go first, until every message shows its final page
 *   (each retried on failure); a continuation that cannot be posted is noted in the first message;
 *   a final text on fewer pages than were posted leaves the later messages saying they were replaced;
 * - a message someone deleted (ReplyChannel.isDeleted) ends the writes: `onDeleted` stops the answer;
 * - `shownAnswer` says what the messages show of the answer (what the history keeps when a write failed);
 * - before the first text, a status line (`status()`: a place in the queue, "is thinking…")
 *   may occupy the first message, replaced by the answer;
 * - `controls` (a Stop button) ride on the message being streamed and leave it in its final write;
 *   `finish()`'s `controls` (Regenerate) ride on the last message from its final write on;
 * - `over` (Regenerate, an edited mention's re-answer) starts on messages posted before: page 1
 *   is written over the first, page 2 over the second…, pages past them are posted as usual,
 *   and a final text on fewer pages leaves the rest saying they were replaced, without buttons.
 *
 * A delta costs O(its length): the pages are computed once per write (about once a second), and
 * then only from the last completed page on (PageSplitter), however long the answer grows.
 */
import { ShownError } from '../errors.ts';
import { english, type Words } from '../i18n/words.ts';
import type { Button, MessageHandle, ReplyChannel } from '../platform.ts';
import { noteInFirst, withHeldNote } from './answer-notes.ts';
import { AnswerPages, markOf, onlyControlsDiffer, shownText, unmarked } from './answer-pages.ts';
import type { NamedWait } from './bucket.ts';
import type { FinishOptions, StreamingReplyOptions } from './reply-options.ts';
import type { WriteScheduler } from './scheduler.ts';

export { type Clock, systemClock } from './clock.ts';
export type { FinishOptions, StreamingReplyOptions } from './reply-options.ts';

/** Replies made so far in this process: each one's scheduler key is `reply:<n>`. */
let replies = 0;

/** How long before an answer's next write its stream is read again (readWaitMs), in ms: the text read must be in before the write runs. */
export const READ_LEAD_MS = 50;

/** One streamed answer, possibly spanning several messages. Single use. */
export class StreamingReply {
  /** The answer's text, its status line and their pages (cut from the text as the channel renders it). */
  private readonly body: AnswerPages;
  private readonly handles: MessageHandle[] = [];
  /** What each message currently shows: its page, with its mark (answer-pages.ts `unmarked`) while it carries controls. */
  private readonly shown: string[] = [];
  /** Whether each message's last write showed answer text (not the status line before it). */
  private readonly showsText: boolean[] = [];
  /** A message of the answer was deleted (ReplyChannel.isDeleted): nothing more is written. */
  private deleted = false;
  /** An intermediate write waiting in (or running through) the scheduler. */
  private queued: Promise<unknown> | undefined;
  /** When (scheduler clock, ms) the last write that showed answer text started; undefined before the first. */
  private textWrittenAt: number | undefined;
  private finishing = false;
  private failure: unknown;
  /** The message whose final write failed. */
  private failedIndex = 0;
  /** The buttons of the last message once finished ({@link FinishOptions.controls}). */
  private finalControls: Button[] | undefined;
  /** The final text as finish() made it, before a held note (below). */
  private finalText = '';
  /** The wait a platform named beyond MAX_HOLD_MS that held a write of this answer back, once one did: the final text then says so. */
  private held: NamedWait | undefined;
  /** The bot's scheduler (the answer's other posts, e.g. its file, spend the same budgets: one-off.ts). */
  readonly scheduler: WriteScheduler;
  /** The scheduler key of this answer's writes (one at a time, in order): unique in the process, and short (a flat string). */
  private readonly id = `reply:${++replies}`;

  /** The place's words, in which the reply's own lines are (`options.words`, else English). */
  readonly words: Words;
  /** Number of API calls made (sends + edits): for logs and tests. */
  writes = 0;

  constructor(
    private readonly channel: ReplyChannel,
    private readonly options: StreamingReplyOptions,
  ) {
    this.scheduler = options.scheduler;
    this.words = options.words ?? english;
    this.body = new AnswerPages(channel.limits.rendering, this.words.t('answers.stream.replaced_page'));
    // Posted messages whose content is unknown: `shown` stays empty there, so each is dirty.
    this.handles.push(...(options.over ?? []));
    // A write of the answer outside its own (a Slack /chat's question) may be held back too.
    channel.onHeld?.((wait) => this.heldBack(wait));
  }

  /** The text received so far. */
  get content(): string {
    return this.body.text;
  }

  /** Number of messages the answer occupies so far. */
  get messageCount(): number {
    return this.handles.length;
  }

  /** Where the answer's last message is (MessageHandle.ref), once posted, where the platform names it. */
  get lastMessageRef(): string | undefined {
    return this.handles.at(-1)?.ref;
  }

  /** Where each of the answer's messages is (MessageHandle.ref), in order: undefined when one is not named by its platform. */
  get messageRefs(): string[] | undefined {
    const refs = this.handles.map((h) => h.ref);
    return refs.every((r) => r !== undefined) ? (refs as string[]) : undefined;
  }

  /**
   * Shows `text` (one short line) in the first message until the answer's first text, e.g.
   * "⏳ Queued: 3 ahead of you." or "is thinking…". Ignored once text arrived or while finishing.
   */
  status(text: string): void {
    if (this.body.text !== '' || this.finishing) return;
    this.body.status = text;
    this.kick();
  }

  /**
   * How long (ms) reading more of the answer's stream may wait: until shortly
   * ({@link READ_LEAD_MS}) before this answer's next write may run (the last write that showed
   * text, plus the channel's `minEditIntervalMs`). A write shows the newest text when it runs, so
   * text read sooner would only wait for it, and a stream read once per write instead of once per
   * network read costs the bot far fewer steps (docs/architecture.md, "Streaming: one read of the stream per write"). 0 before
   * the first text is written (it goes at once) and once finishing.
   */
  readWaitMs(): number {
    if (this.finishing || this.textWrittenAt === undefined) return 0;
    const due = this.textWrittenAt + this.channel.limits.minEditIntervalMs - READ_LEAD_MS;
    return Math.max(0, due - this.scheduler.clock.now());
  }

  /** Resolves after `ms` (the scheduler's clock): with {@link readWaitMs}, the pace of the answer's stream (text-of.ts `Pace`). */
  sleep(ms: number): Promise<void> {
    return this.scheduler.clock.sleep(ms);
  }

  /**
   * The answer's text as its messages show it now, as far as they show it: each message's text
   * (its page without its mark, a page of the answer as it was at that message's last write),
   * joined by line breaks where the pages were cut; '' when no message shows answer text (only a
   * status line, or nothing posted). What the history keeps of an answer whose final write
   * failed (features/exchange.ts `keepShown`).
   */
  get shownAnswer(): string {
    return shownText(this.shown.slice(0, this.handles.length), this.showsText, this.body.replacedPage);
  }

  /** Whether the first message shows a status line and no answer yet. */
  get showsStatusOnly(): boolean {
    return !this.body.hasText && this.shown[0] !== undefined;
  }

  /** Adds a delta; a write is scheduled (one of this answer at a time). O(delta) until the write runs. */
  append(delta: string): void {
    if (delta === '') return;
    this.body.append(delta);
    this.kick();
  }

  /**
   * Writes the complete text and resolves when every message shows its final page.
   * @param finalText replaces the accumulated text (e.g. pretty-printed JSON, or text with an
   *   error notice appended); an empty answer is shown as `options.emptyText`.
   * @throws the last platform error when a final write failed `finalAttempts` times; a
   *   ShownError when it was a continuation that failed and the first message now says so. A
   *   final write that would only remove the controls of a message whose text is whole is
   *   logged when it fails, not thrown: the user saw the whole answer.
   */
  async finish(finalText?: string, options: FinishOptions = {}): Promise<void> {
    this.body.finalize(finalText, options.emptyText ?? this.words.t('answers.stream.empty'));
    this.finalText = this.body.text;
    if (this.held) this.body.finalize(withHeldNote(this.finalText, this.held, this.words), '');
    if (options.controls?.length) this.finalControls = options.controls;
    this.finishing = true;
    let attempt = 0;
    while (this.dirty()) {
      const index = this.firstDirty();
      try {
        // Replaces a pending intermediate write (or waits for a running one): final writes go first.
        await this.submit(true);
        attempt = 0;
      } catch (error) {
        attempt += 1;
        // Debug: a write that fails for good is logged once by whoever reports the answer.
        this.options.log?.debug({ err: error, message: index, attempt, final: true }, 'streaming write failed');
        // A message deleted (by the user, a moderator) is not written again: the answer is over.
        const deleted = this.wasDeleted(error);
        if (deleted || attempt >= (this.options.finalAttempts ?? 3)) {
          if (!deleted && onlyControlsDiffer(this.pages()[index], this.shown[index])) {
            // The user saw the whole text: a button left in place is no failure of the answer.
            this.options.log?.warn(
              { err: error, message: index },
              'could not replace the controls (Stop button) of a message whose text is whole',
            );
            this.shown[index] = this.pages()[index]!;
            attempt = 0;
            continue;
          }
          this.failure = error;
          this.failedIndex = index;
          break;
        }
        await this.scheduler.clock.sleep(Math.min(4_000, 500 * 2 ** (attempt - 1)));
      }
    }
    // Messages whose writing must be ended (Slack native streams) are, whatever their last write was.
    const closeFailed = (error: unknown) =>
      this.options.log?.warn({ err: error }, 'could not close a streamed message');
    if (this.failure === undefined) for (const handle of this.handles) await handle.close?.().catch(closeFailed);
    else {
      if (this.deleted) throw this.failure;
      const answer = { channel: this.channel, log: this.options.log, words: this.words };
      const noted = this.failedIndex > 0 && (await noteInFirst(this.handles[0], this.shown[0], answer, this.failure));
      if (noted) throw new ShownError(this.failure);
      throw this.failure;
    }
  }

  /**
   * A write of this answer goes out (or runs) after the bot held it back for a wait the platform
   * named beyond MAX_HOLD_MS: the final text ends with a sentence saying so (answer-notes.ts), from
   * the next final write on. Once per answer.
   */
  private heldBack(wait: NamedWait): void {
    if (this.held) return;
    this.held = wait;
    if (this.finishing) this.body.finalize(withHeldNote(this.finalText, wait, this.words), '');
  }

  /** Submits one intermediate write unless one is waiting already; after it, another if there is more to write. */
  private kick(): void {
    if (this.queued || this.finishing || this.deleted || !this.dirty()) return;
    this.queued = this.submit(false).then(this.afterWrite, this.afterFailedWrite);
  }

  // The functions a write is submitted with are made once per answer rather than once per write
  // (a write waits about a second in the scheduler: long enough for its closures to be promoted
  // and marked by full collections, a thousand answers at once).
  /** An intermediate write is over: the next one, if there is more to write. */
  private readonly afterWrite = (): void => {
    this.queued = undefined;
    this.kick();
  };
  /** An intermediate write failed: skipped, a later write carries newer text (finish() retries final ones). */
  private readonly afterFailedWrite = (error: unknown): void => {
    this.options.log?.debug({ err: error, final: false }, 'streaming write failed');
    if (this.wasDeleted(error)) this.queued = undefined;
    else this.afterWrite();
  };

  /** Whether `error` says a message of the answer was deleted; the first time, `onDeleted` is called. */
  private wasDeleted(error: unknown): boolean {
    if (!this.channel.isDeleted?.(error)) return false;
    if (!this.deleted) this.options.onDeleted?.();
    this.deleted = true;
    return true;
  }
  /** Runs the write submitted last, for the message it was submitted for (a newer submit replaces a pending one in the scheduler). */
  private readonly runWrite = (): Promise<void> => this.writeOne(this.submittedIndex);
  private readonly onHeld = (wait: NamedWait): void => this.heldBack(wait);
  /** The message the last submitted write is for. */
  private submittedIndex = 0;

  /** Submits a write of the first page that differs from what is shown. */
  private submit(final: boolean): Promise<unknown> {
    const index = this.firstDirty();
    const handle = this.handles[index];
    this.submittedIndex = index;
    return this.scheduler.submit({
      key: this.id,
      stream: this.id,
      buckets: handle?.buckets ?? this.channel.buckets?.(handle ? 'edit' : 'send', index) ?? [],
      final,
      minIntervalMs: final ? 0 : this.channel.limits.minEditIntervalMs,
      run: this.runWrite,
      onHeld: this.onHeld,
    });
  }

  /**
   * Writes the first page that differs from what is shown (reading the newest text now), when it
   * is still message `expected` (whose buckets the write was submitted with); otherwise nothing:
   * the caller submits again for the message now first.
   */
  private async writeOne(expected: number): Promise<void> {
    const pages = this.pages();
    const index = pages.findIndex((page, i) => this.shown[i] !== page);
    if (index < 0 || index !== expected) return;
    const page = pages[index]!;
    const { content, controls: mark } = unmarked(page);
    if (content.trim() === '') return;
    const controls = mark === 'controls' ? this.options.controls : mark === 'final' ? this.finalControls : undefined;
    this.writes++;
    if (this.body.hasText) this.textWrittenAt = this.scheduler.clock.now();
    const handle = this.handles[index];
    // An edit names the buttons (none, or the final controls, in a final write), so controls
    // shown before are replaced. A page is final once the answer is finishing or the text has
    // moved on to a later page.
    const final = this.finishing || index < pages.length - 1;
    // Where an edit that names no buttons leaves them (Discord), a message already showing these
    // controls is edited without naming them again.
    const shown = this.shown[index];
    const same = this.channel.editsKeepButtons === true && shown !== undefined && markOf(shown) === mark;
    const names = (this.options.controls || this.finalControls) && !same;
    if (handle) await handle.edit({ content, ...(names ? { buttons: controls ?? [] } : {}) }, final);
    else this.handles[index] = await this.channel.send({ content, ...(controls ? { buttons: controls } : {}) });
    this.shown[index] = page;
    this.showsText[index] = this.body.hasText;
  }

  /** What each message should show: its page, marked with `\u0000` when it carries the controls (AnswerPages). */
  private pages(): readonly string[] {
    return this.body.pages(this.channel.limits, {
      finishing: this.finishing,
      messages: this.handles.length,
      controls: Boolean(this.options.controls?.length),
      finalControls: Boolean(this.finalControls),
    });
  }

  private firstDirty(): number {
    return Math.max(
      0,
      this.pages().findIndex((page, i) => this.shown[i] !== page),
    );
  }

  /** Whether there is something to write: text that is not only whitespace (platforms refuse that), not shown yet. */
  private dirty(): boolean {
    return this.pages().some((page, i) => this.shown[i] !== page);
  }
}
