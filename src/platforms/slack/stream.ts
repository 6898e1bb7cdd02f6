/**
 * Slack's native text streaming for answers in threads (Slack docs, "Text streaming":
 * `chat.startStream` → `chat.appendStream`… → `chat.stopStream`): the core's StreamingReply
 * writes whole pages; a page that grows by appending becomes `chat.appendStream` calls with
 * the new text only, and its final write `chat.stopStream`. Outside DMs `recipient_team_id`
 * and `recipient_user_id` are sent, as Slack requires.
 *
 * Where Slack refuses to stream (`unknown_method`, `feature_not_enabled`, `not_in_channel`,
 * `missing_recipient_team_id` / `missing_recipient_user_id`, a channel type it does not take,
 * `ratelimited`), the answer falls back to post-then-`chat.update`, and the refusal is
 * remembered for an hour: per workspace when the workspace cannot stream at all, per channel
 * otherwise. A stream Slack closes mid-answer (`message_not_in_streaming_state`: streams
 * expire after about 5 minutes) goes on with `chat.update` of the same message: no text is lost,
 * and its Markdown is rendered there as a posted answer's is (answer-rendering.ts).
 */
import type { KnownBlock } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import { type Clock, systemClock } from '../../core/delivery/clock.ts';
import { storeKeys } from '../../core/keys.ts';
import type { StateStore } from '../../core/state/store.ts';
import type { Logger } from '../../log.ts';
import { AnswerRendering } from './answer-rendering.ts';
import { slackErrorCode } from './errors.ts';
import { patiently } from './rate-limits.ts';
import { escapeSlackText } from './text.ts';

/** Slack's refusals that mean "this workspace cannot stream" (remembered per workspace). */
const WORKSPACE_REFUSALS: ReadonlySet<string> = new Set([
  'unknown_method',
  'feature_not_enabled',
  'method_deprecated',
  'not_allowed_token_type',
  'missing_scope',
]);
/** Refusals that concern one channel (remembered per channel). */
const CHANNEL_REFUSALS: ReadonlySet<string> = new Set([
  'not_in_channel',
  'channel_not_found',
  'channel_type_not_supported',
  'invalid_channel_type',
  'missing_recipient_team_id',
  'missing_recipient_user_id',
  'is_archived',
  'restricted_action_thread_locked',
  'messages_tab_disabled',
]);
/** A stream Slack has closed (expired after ~5 minutes, or stopped). */
const CLOSED_STREAM: ReadonlySet<string> = new Set([
  'message_not_in_streaming_state',
  'streaming_state_conflict',
  'message_not_found',
  'stopped_by_user',
]);

/** `chat.startStream` calls a workspace may make per {@link START_WINDOW_MS} (tier 2). */
const STARTS_PER_WINDOW = 20;
const START_WINDOW_MS = 60_000;
/** Longest wait for the shared store's count of starts, in ms. */
const STORE_WAIT_MS = 250;

/** Start clients kept at most (one per workspace token). */
const MAX_START_CLIENTS = 1_000;

/** How long a refusal is remembered, in ms. */
const REFUSAL_TTL_MS = 60 * 60_000;

/** Where Slack refused to stream; shared by every answer of an adapter. */
export class SlackStreaming {
  private readonly refused = new Map<string, number>();
  /** Times of the `chat.startStream` calls of each workspace in the current window. */
  private readonly starts = new Map<string, number[]>();

  /** The start clients made, by token (at most {@link MAX_START_CLIENTS}: the map starts afresh past it). */
  private readonly startClients = new Map<string, WebClient>();

  /**
   * @param store the bot's store: when shared (Redis), the startStream budget is counted there.
   * @param clock the clock refusals and the local startStream window are kept on, in ms: the
   *   write scheduler's (one clock for every budget).
   * @param newStartClient makes the client for `chat.startStream` with a workspace's bot token:
   *   one that throws on a 429 (`rejectRateLimitedCalls`) instead of waiting out Slack's
   *   Retry-After (up to a minute), so that the answer is posted and updated at once.
   */
  constructor(
    private readonly store?: StateStore,
    private readonly clock: Pick<Clock, 'now'> = systemClock,
    private readonly newStartClient?: (token: string) => WebClient,
  ) {}

  /**
   * The `chat.startStream` client for the workspace whose bot token is `token` (the token of
   * the WebClient Bolt handed the request), made once per token; undefined without a token or
   * a maker (the answer's own client is used).
   */
  startClientFor(token: string | undefined): WebClient | undefined {
    if (!token || !this.newStartClient) return undefined;
    let client = this.startClients.get(token);
    if (!client) {
      if (this.startClients.size >= MAX_START_CLIENTS) this.startClients.clear();
      client = this.newStartClient(token);
      this.startClients.set(token, client);
    }
    return client;
  }

  /** Whether `assistant.threads.setStatus` may be tried in `team` (not refused there lately). */
  statusAllowed(team: string): boolean {
    return !this.isRefused(`status:${team}`);
  }

  /** Remembers a refusal of `assistant.threads.setStatus` in `team` (any Slack error: it is only a nicety). */
  refuseStatus(team: string, error: unknown): void {
    const code = slackErrorCode(error);
    // A 429 is a moment's refusal (tier 4), not a workspace without statuses.
    if (code && code !== 'ratelimited') this.refused.set(`status:${team}`, this.clock.now() + REFUSAL_TTL_MS);
  }

  /**
   * Takes one `chat.startStream` of `team`'s budget (tier 2: 20 a minute). With a shared store
   * (Redis: several instances answer one workspace) the count is the store's, a window of a
   * minute from its first start (no start while the store does not answer); otherwise this
   * process's sliding window.
   * @returns false when the budget is spent: the answer is then posted and updated instead.
   */
  async takeStart(team: string): Promise<boolean> {
    if (this.store?.kind === 'redis') {
      // A store that does not answer at once (down, reconnecting) is not waited for; the other
      // instances' starts are then unknown, and a start past Slack's budget would wait out its
      // Retry-After (up to a minute): the answer is posted and updated instead.
      let timer: NodeJS.Timeout | undefined;
      const counted = await Promise.race([
        this.store.increment(storeKeys.startStreams(team), 1, START_WINDOW_MS).then(
          ({ value }) => value,
          () => undefined,
        ),
        new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), STORE_WAIT_MS))),
      ]);
      clearTimeout(timer);
      return counted !== undefined && counted <= STARTS_PER_WINDOW;
    }
    const now = this.clock.now();
    const starts = (this.starts.get(team) ?? []).filter((at) => at > now - START_WINDOW_MS);
    const ok = starts.length < STARTS_PER_WINDOW;
    if (ok) starts.push(now);
    this.starts.set(team, starts);
    return ok;
  }

  /** Whether answers in `channel` of `team` may try native streaming. */
  allowed(team: string, channel: string): boolean {
    return !this.isRefused(team) && !this.isRefused(`${team}:${channel}`);
  }

  /**
   * Remembers a refusal of `chat.startStream` when it is one that says streaming cannot work
   * there. @returns whether it was such a refusal (the caller falls back).
   */
  refuse(team: string, channel: string, error: unknown): boolean {
    const code = slackErrorCode(error);
    if (!code) return false;
    // The startStream budget is spent (the estimate missed): no native start in the workspace
    // until Slack's Retry-After has passed.
    if (code === 'ratelimited' || code === 'rate_limited') {
      const retryAfterSec = (error as { retryAfter?: unknown }).retryAfter;
      this.refused.set(
        team,
        this.clock.now() + (typeof retryAfterSec === 'number' ? retryAfterSec * 1000 : START_WINDOW_MS),
      );
      return true;
    }
    if (WORKSPACE_REFUSALS.has(code)) this.refused.set(team, this.clock.now() + REFUSAL_TTL_MS);
    else if (CHANNEL_REFUSALS.has(code)) this.refused.set(`${team}:${channel}`, this.clock.now() + REFUSAL_TTL_MS);
    else return false;
    return true;
  }

  private isRefused(key: string): boolean {
    const until = this.refused.get(key);
    if (until === undefined) return false;
    if (until > this.clock.now()) return true;
    this.refused.delete(key);
    return false;
  }
}

/** Whether an error says the stream is closed (expired or stopped): continue with chat.update. */
export function isClosedStream(error: unknown): boolean {
  const code = slackErrorCode(error);
  return code !== undefined && CLOSED_STREAM.has(code);
}

/** One natively streamed message. */
export class NativeStream {
  /** The text shown so far (as the core wrote it, before escaping). */
  private shown = '';
  private open = true;
  /** Called when Slack says the user stopped the stream (`stopped_by_user`). */
  onUserStop: (() => void) | undefined;
  /** How the message shows its Markdown once Slack closed the stream (made by the first update). */
  private rendering: AnswerRendering | undefined;

  private constructor(
    private readonly client: WebClient,
    readonly channel: string,
    readonly ts: string,
    private readonly log: Logger,
  ) {}

  /**
   * Starts a stream in a thread with its first text.
   * @param recipient the user and workspace the answer is for (required by Slack outside DMs).
   * @throws the Web API error (the caller may fall back: {@link SlackStreaming.refuse}).
   */
  static async start(
    client: WebClient,
    target: { channel: string; threadTs: string; recipient?: { teamId: string; userId: string } | undefined },
    text: string,
    log: Logger,
    /** A client that throws on a 429 instead of waiting (the caller then posts instead); `client` when absent. */
    startClient: WebClient = client,
  ): Promise<NativeStream> {
    const started = await startClient.chat.startStream({
      channel: target.channel,
      thread_ts: target.threadTs,
      markdown_text: escapeSlackText(text),
      ...(target.recipient
        ? { recipient_team_id: target.recipient.teamId, recipient_user_id: target.recipient.userId }
        : {}),
    });
    if (!started.ts) throw new Error('chat.startStream returned no ts');
    const stream = new NativeStream(client, started.channel ?? target.channel, started.ts, log);
    stream.shown = text;
    return stream;
  }

  /** Ends the stream as it is, if still open (`chat.stopStream`, once more after a 429); a stream Slack closed already is fine. */
  async close(): Promise<void> {
    if (!this.open) return;
    try {
      await patiently(() => this.client.chat.stopStream({ channel: this.channel, ts: this.ts }));
    } catch (error) {
      if (!isClosedStream(error)) throw error;
    }
    this.open = false;
  }

  /**
   * Shows `text`: appends what is new while the stream is open (`chat.appendStream`); a
   * change that is not an append, or a closed stream, becomes `chat.update` of the message.
   * @param final ends the stream (`chat.stopStream`).
   * @param blocks what the final write adds under the text (Regenerate's actions block):
   *   chat.stopStream's `blocks`, appended by Slack to the streamed message.
   */
  async write(text: string, final: boolean, blocks: KnownBlock[] = []): Promise<void> {
    if (this.open) {
      try {
        if (text.startsWith(this.shown)) {
          const delta = text.slice(this.shown.length);
          if (final) {
            await this.stop(delta, blocks);
            this.shown = text;
            return;
          }
          if (delta)
            await this.client.chat.appendStream({
              channel: this.channel,
              ts: this.ts,
              markdown_text: escapeSlackText(delta),
            });
          this.shown = text;
          return;
        }
        // Not an append (a rewritten ending): the stream ends as it is, the message is then updated.
        await this.client.chat.stopStream({ channel: this.channel, ts: this.ts });
        this.open = false;
      } catch (error) {
        if (!isClosedStream(error)) throw error;
        this.open = false;
        if (slackErrorCode(error) === 'stopped_by_user') {
          // The user stopped it in Slack's client: the answer is stopped, as by the Stop button.
          this.log.info({ ts: this.ts }, 'the user stopped the stream in Slack');
          this.onUserStop?.();
        } else {
          this.log.info({ ts: this.ts }, 'slack closed the stream mid-answer; continuing with chat.update');
        }
      }
    }
    await this.update(text, blocks);
  }

  /** Ends the stream (chat.stopStream) with its last text and the blocks under it. */
  private async stop(delta: string, blocks: KnownBlock[]): Promise<void> {
    await this.client.chat.stopStream({
      channel: this.channel,
      ts: this.ts,
      ...(delta ? { markdown_text: escapeSlackText(delta) } : {}),
      ...(blocks.length ? { blocks } : {}),
    });
    this.open = false;
  }

  /**
   * Shows `text` with chat.update once the stream is closed, its Markdown rendered as a posted
   * answer's is (answer-rendering.ts: markdown and table blocks, the mrkdwn text beside them, the
   * simpler forms where Slack refuses those), with `blocks` under it (the message's blocks replaced).
   */
  private async update(text: string, blocks: KnownBlock[]): Promise<void> {
    this.rendering ??= new AnswerRendering(this.log);
    await this.rendering.send({ content: text }, (rendered, fallback) =>
      this.client.chat.update({
        channel: this.channel,
        ts: this.ts,
        text: fallback,
        blocks: [...(rendered ?? []), ...blocks],
      }),
    );
    this.shown = text;
  }
}
