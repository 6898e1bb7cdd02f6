/**
 * The core's ReplyChannel on Slack, for every kind of answer: messages posted with
 * `chat.postMessage` and edited with `chat.update` as tokens arrive, files with
 * `filesUploadV2`, or in a thread streamed natively (stream.ts); where the answer goes (a
 * channel, a thread, a DM) is the target's choice (target.ts).
 */
import type { WebClient } from '@slack/web-api';
import type { NamedWait } from '../../core/delivery/bucket.ts';
import { english, type Sentence } from '../../core/i18n/words.ts';
import { type BucketId, messageRef, parseMessageRef } from '../../core/keys.ts';
import type { MessageHandle, OutgoingMessage, ReplyChannel } from '../../core/platform.ts';
import type { Logger } from '../../log.ts';
import { AnswerRendering } from './answer-rendering.ts';
import { buttonsBlock } from './blocks.ts';
import { explainSlackError, slackDidNotAnswer, slackErrorCode } from './errors.ts';
import { uploadFiles } from './files.ts';
import { SLACK_MESSAGE_LIMITS } from './message-limits.ts';
import { mrkdwnOf } from './mrkdwn.ts';
import { PostedQuestion } from './question.ts';
import { NativeStream } from './stream.ts';
import type { SlackTarget } from './target.ts';
import { appendBucket, isPlainText, postBucket, postMessage, updateBucket } from './writes.ts';

/** Longest wait for `assistant.threads.setStatus` before the answer goes on, in ms. */
const STATUS_WAIT_MS = 1_000;

/**
 * One answer on Slack. `defer` posts a /chat's question and shows "is thinking…" (Slack was acked
 * when the request arrived); `sendEphemeral` is the caller's (response_url for a slash command,
 * chat.postEphemeral for a mention, a plain message in a DM), after removing a question that no
 * answer followed.
 *
 * Once a Web API call of the answer gets no answer from Slack (the client's deadline passed,
 * after its retry), every later write of the answer fails at once with that error instead of
 * waiting out the deadline again: the user reads why after one deadline, not after each retry.
 */
export class SlackReply implements ReplyChannel {
  readonly limits = SLACK_MESSAGE_LIMITS;
  private threadTs: string | undefined;
  /** What stops the answer when the user stops its stream in Slack's client. */
  private userStop: (() => void) | undefined;
  private deferred: Promise<void> | undefined;
  /** Whether this answer streams natively, decided at its first message (see send). */
  private nativeChosen: boolean | undefined;
  /** A /chat's question (target.announce), once made. */
  private readonly question: PostedQuestion | undefined;
  /** The error of a Web API call of this answer that Slack did not answer, once there is one. */
  private unanswered: { error: unknown } | undefined;
  /** The message the first text rewrote (target.rewrite), or the first handed out by messageAt. */
  private rewritten: string | undefined;
  /** How the answer's messages are rendered from its Markdown (its tables' form kept across them). */
  private readonly rendering: AnswerRendering;

  constructor(
    private readonly client: WebClient,
    private readonly target: SlackTarget,
    private readonly ephemeral: (message: OutgoingMessage) => Promise<void>,
    private readonly log: Logger,
  ) {
    this.threadTs = target.threadTs;
    this.rendering = new AnswerRendering(log, target.words);
    const { announce } = target;
    this.question =
      announce && new PostedQuestion(client, target.channel, announce, (run) => this.call(run), log, target.scheduler);
  }

  /** The thread the answer goes into, once known (a mention's, or the posted question's). */
  get answerThreadTs(): string | undefined {
    return this.threadTs;
  }

  /**
   * Posts a /chat's question first (its thread is the answer's); then, in a thread that streams
   * natively (a mention's, a DM thread, a question's), shows "is thinking…"
   * (`assistant.threads.setStatus`) until the first text, where Slack allows it, waiting at most
   * STATUS_WAIT_MS for it. Idempotent: later calls wait for the same.
   * @throws what chat.postMessage threw for the question (nothing else: the status is a nicety).
   */
  defer(): Promise<void> {
    this.deferred ??= this.showStatus();
    return this.deferred;
  }

  private async showStatus(): Promise<void> {
    await this.announce();
    const { native, team, channel } = this.target;
    if (native && this.threadTs && native.streaming.statusAllowed(team)) {
      const words = await (this.target.words ?? english);
      const status = this.client.assistant.threads
        .setStatus({ channel_id: channel, thread_ts: this.threadTs, status: words.t('slack.reply.thinking') })
        .catch((error: unknown) => {
          native.streaming.refuseStatus(team, error);
          this.log.debug(
            { err: error instanceof Error ? error.message : String(error) },
            'slack refused the thinking status',
          );
        });
      // A nicety: the answer does not wait long for it.
      await Promise.race([status, new Promise((resolve) => setTimeout(resolve, STATUS_WAIT_MS).unref())]);
    }
  }

  /**
   * Runs one Web API call of this answer.
   * @throws what the call threw; at once, without calling, the error of an earlier call Slack
   *   did not answer.
   */
  private async call<T>(run: () => Promise<T>): Promise<T> {
    if (this.unanswered) throw this.unanswered.error;
    try {
      return await run();
    } catch (error) {
      if (slackDidNotAnswer(error)) this.unanswered = { error };
      throw error;
    }
  }

  /** Whether a text message now would stream natively (a thread, and no refusal remembered). */
  private streamsNatively(): boolean {
    const { native, team, channel } = this.target;
    return Boolean(native && this.threadTs && native.streaming.allowed(team, channel) && this.nativeChosen !== false);
  }

  /** Posts the question if the target has one (once: callers wait for the same post); its thread holds the answer. @throws what chat.postMessage threw. */
  private async announce(): Promise<void> {
    const ts = await this.question?.post();
    if (ts) this.threadTs = ts;
  }

  async send(message: OutgoingMessage): Promise<MessageHandle> {
    const rewrite = this.target.rewrite;
    if (rewrite && this.rewritten === undefined && !message.files?.length && !message.mentionUser) {
      this.rewritten = rewrite;
      const handle = this.updating(this.target.channel, rewrite);
      await handle.edit(message);
      return handle;
    }
    await this.announce();
    this.question?.markAnswered();
    const plainText = isPlainText(message);
    // A write that would stream spent no post budget (buckets): a post instead waits for one here.
    const unbudgeted = plainText && this.streamsNatively();
    // Decided at the answer's first message: with the workspace's startStream budget spent, the
    // answer is posted and updated at once instead of waiting up to a minute for it.
    if (plainText && this.nativeChosen === undefined && this.streamsNatively())
      this.nativeChosen = await this.target.native!.streaming.takeStart(this.target.team);
    if (plainText && this.streamsNatively()) {
      const streamed = await this.startNative(message);
      if (streamed) return streamed;
    }
    if (message.files?.length) return this.upload(message);
    return this.post(message, unbudgeted);
  }

  /**
   * Starts the answer's native stream (stream.ts) with its first text.
   * @returns its handle, or undefined when Slack refused native streaming here (remembered:
   *   the answer is posted and updated instead).
   * @throws what the start threw, when it is not such a refusal.
   */
  private async startNative(message: OutgoingMessage): Promise<MessageHandle | undefined> {
    const { native, team, channel } = this.target;
    const threadTs = this.threadTs!;
    try {
      const stream = await this.call(() =>
        NativeStream.start(
          this.client,
          { channel, threadTs, recipient: native!.recipient },
          message.content,
          this.log,
          native!.streaming.startClientFor(this.client.token),
        ),
      );
      // A streaming message takes no blocks: Slack's client shows its own stop control, whose
      // use (stopped_by_user) stops the answer as the Stop button does elsewhere.
      stream.onUserStop = () => this.userStop?.();
      // A stream's first text takes no blocks: the buttons of a message started by its answer's
      // final write (the last page, with Regenerate) come when it is closed, unless an edit came.
      const words = await (this.target.words ?? english);
      let started = message.buttons?.length ? buttonsBlock(message.buttons, words) : [];
      return {
        // The final write ends the stream with the message's buttons (Regenerate) under it.
        edit: (m, final) => {
          started = [];
          return this.call(() =>
            stream.write(m.content, final === true, final ? buttonsBlock(m.buttons ?? [], words) : []),
          );
        },
        close: () => (started.length ? this.call(() => stream.write(message.content, true, started)) : stream.close()),
        ref: messageRef({ platform: 'slack', team, channel: stream.channel, ts: stream.ts }),
      };
    } catch (error) {
      if (!native!.streaming.refuse(team, channel, error)) throw error;
      this.log.info(
        { err: error instanceof Error ? error.message : String(error) },
        'slack refused native streaming here; posting and updating instead',
      );
      return undefined;
    }
  }

  /**
   * Uploads the message's files with its text as their comment (files.ts `uploadFiles`), where
   * the answer goes, not a text continuation's thread: an image is for the channel to see. Its
   * handle names the files (`fileRefs`) and ignores edits.
   */
  private async upload(message: OutgoingMessage): Promise<MessageHandle> {
    const { channel, threadTs } = this.target;
    const comment = mrkdwnOf(message.content, SLACK_MESSAGE_LIMITS.maxChars);
    const fileRefs = await this.call(() =>
      uploadFiles(this.client, { channel, threadTs }, comment, message.files ?? []),
    );
    return { fileRefs, edit: async () => this.log.debug('files cannot be edited on Slack; edit ignored') };
  }

  /**
   * Posts the message (chat.postMessage) in the answer's thread, if it has one, its text rendered
   * from Markdown (markdown blocks: blocks.ts); its handle edits it with chat.update.
   * `unbudgeted`: the write was scheduled as a native stream's start (no post budget), so the post
   * waits for the channel's here. A message with a `mentionUser` (a long answer's notice) mentions
   * them first (blocks.ts). @throws what the Web API throws.
   */
  private async post(message: OutgoingMessage, unbudgeted = false): Promise<MessageHandle> {
    const channel = this.target.channel;
    const { scheduler } = this.target;
    const posted = await this.rendering.send(message, (blocks, text) => {
      const args = {
        channel,
        text,
        ...(blocks ? { blocks } : {}),
        unfurl_links: false,
        unfurl_media: false,
        ...(this.threadTs ? { thread_ts: this.threadTs } : {}),
      };
      return this.call(() =>
        unbudgeted && scheduler ? postMessage(scheduler, this.client, args) : this.client.chat.postMessage(args),
      );
    });
    const ts = posted.ts;
    if (!ts) throw new Error('chat.postMessage returned no ts');
    if (this.target.continueInThread) this.threadTs ??= ts;
    return this.updating(posted.channel ?? channel, ts);
  }

  /** The handle of a message of the bot's: each edit is a chat.update. */
  private updating(channel: string, ts: string): MessageHandle {
    return {
      edit: async (m) => {
        // Every edit names the blocks that show its text (and its buttons: none for a streamed
        // answer's final write), which replace the message's.
        await this.rendering.send(m, (blocks, text) =>
          this.call(() => this.client.chat.update({ channel, ts, text, ...(blocks ? { blocks } : {}) })),
        );
      },
      ref: messageRef({ platform: 'slack', team: this.target.team, channel, ts }),
    };
  }

  /**
   * A message of the bot's in this channel (Regenerate's, an edited mention's earlier answer),
   * rewritten with chat.update (the workspace's budget); undefined for another platform or
   * channel. Once one is handed out, sends post new messages (`target.rewrite` is not used).
   */
  messageAt(ref: string): MessageHandle | undefined {
    const at = parseMessageRef(ref);
    if (at?.platform !== 'slack' || at.channel !== this.target.channel) return undefined;
    this.rewritten ??= at.ts;
    const buckets: BucketId[] = [{ platform: 'slack', kind: 'update', scope: this.target.team }];
    return { ...this.updating(at.channel, at.ts), buckets };
  }

  onUserStop(stop: () => void): void {
    this.userStop = stop;
  }

  /** A /chat's question held back by a long wait Slack named: the answer says so (ReplyChannel.onHeld). */
  onHeld(listener: (wait: NamedWait) => void): void {
    this.question?.onHeld(listener);
  }

  explain(error: unknown): Sentence | undefined {
    return explainSlackError(error);
  }

  /** Slack's `message_not_found` for a write of the answer: its message was deleted. */
  isDeleted(error: unknown): boolean {
    return slackErrorCode(error) === 'message_not_found';
  }

  /**
   * A post spends the channel's budget; an edit, the workspace's `chat.update` budget; natively
   * streamed, an append spends the workspace's `chat.appendStream` budget (a start is counted by
   * SlackStreaming.takeStart, which posts the answer instead when none is left: it never waits).
   * A message with files, cards or image links is posted (or uploaded and shared), never streamed.
   */
  buckets(kind: 'send' | 'edit', index = 0, message?: OutgoingMessage): BucketId[] {
    const { team, channel } = this.target;
    if (this.target.rewrite && index === 0) return [updateBucket(team)];
    const posted = kind === 'send' && message !== undefined && !isPlainText(message);
    if (this.streamsNatively() && !posted) return kind === 'send' ? [] : [appendBucket(team)];
    return [kind === 'send' ? postBucket(channel) : updateBucket(team)];
  }

  /** Tells the user alone, after removing a /chat's question that no answer followed. Never throws. */
  async sendEphemeral(message: string | OutgoingMessage): Promise<void> {
    await this.question?.withdraw();
    try {
      await this.ephemeral(typeof message === 'string' ? { content: message } : message);
    } catch (error) {
      this.log.warn({ err: error }, 'could not send an ephemeral message on Slack');
    }
  }
}
