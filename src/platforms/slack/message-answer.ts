/**
 * The answer to a message addressed to the bot on Slack (events.ts decides which are): a
 * mention is answered in its thread, and so is a DM, which is a conversation of the agent view
 * (issue 21, item 1): a top-level message in the app's Messages tab opens a thread, answered
 * there natively streamed with "is thinking…" first (reply.ts), and its first question sets the
 * thread's title (`assistant.threads.setTitle`, once: a claim in the store). In a DM,
 * `imagine …` generates an image into the thread (/imagine, with its `--options`), and "summarize
 * this channel" reads the channel the user views (viewed-channel.ts). `forget` alone clears its
 * conversation's history (a top-level one in a DM: the DM's own, where answers went before the
 * agent view).
 */

import type { WebClient } from '@slack/web-api';
import { LATE_NOTICE } from '../../core/catch-up.ts';
import { runCommand, runInvocation } from '../../core/command.ts';
import { forget } from '../../core/features/forget.ts';
import { answerMention, type MentionContext } from '../../core/features/mention.ts';
import type { Sentence } from '../../core/i18n/words.ts';
import { channelKey, conversationKey, messageRef, slackClaims } from '../../core/keys.ts';
import type { CommandContext } from '../../core/platform.ts';
import { firstLineOf } from '../../core/text-scan.ts';
import type { Logger } from '../../log.ts';
import { readOptions } from './commands.ts';
import { userNotice } from './edits.ts';
import type { EventMeta, SlackEventDeps, SlackUserMessage } from './event-types.ts';
import { slackFileAttachment } from './files.ts';
import { SlackReply } from './reply.ts';
import { readThread } from './thread.ts';
import { asksToSummarizeChannel, viewedChannelContext } from './viewed-channel.ts';

/** One message's invocation: its logger (bound to ref and command), reference, what it does and its text (the bot's mention removed). */
export interface MessageInvocation {
  log: Logger;
  ref: string;
  command: 'mention' | 'forget';
  text: string;
  /** Answered by catch-up after downtime: the answer says so. */
  late?: boolean;
}

/** Longest thread title the bot sets, in characters (Slack documents no limit; a title is one line of a list). */
export const TITLE_CHARS = 80;
/** How long a thread's title is remembered as set, in ms. */
const TITLE_CLAIM_MS = 30 * 24 * 60 * 60_000;

/**
 * A thread's title from its first question: the first line, spaces collapsed, cut at a word
 * within {@link TITLE_CHARS} characters with `…`. Linear.
 */
export function titleOf(question: string): string {
  const line = firstLineOf(question);
  if (line.length <= TITLE_CHARS) return line;
  const cut = line.lastIndexOf(' ', TITLE_CHARS - 1);
  return `${line.slice(0, cut > TITLE_CHARS / 2 ? cut : TITLE_CHARS - 1)}…`;
}

/**
 * The prompt of a message that starts with `imagine` (`imagine a fox`, `Imagine: a fox
 * --aspect_ratio portrait`), for /imagine; undefined for any other message ("imagined…").
 */
export function imagineText(text: string): string | undefined {
  const trimmed = text.trimStart();
  if (trimmed.slice(0, 7).toLowerCase() !== 'imagine') return undefined;
  const rest = trimmed.slice(7);
  if (rest !== '' && !/^[\s:,]/.test(rest)) return undefined;
  return rest.replace(/^[\s:,]+/, '');
}

/**
 * Sets the title of an agent (or assistant) thread once, from its first question. Never throws:
 * Slack's refusal (a DM that is no agent conversation, no `assistant:write`) is logged.
 */
async function titleThread(
  client: WebClient,
  deps: SlackEventDeps,
  at: { team: string; channel: string; threadTs: string },
  question: string,
  log: Logger,
): Promise<void> {
  const title = titleOf(question);
  if (!title) return;
  const first = await deps.core.claims
    .claim(slackClaims.threadTitle(at.team, at.channel, at.threadTs), TITLE_CLAIM_MS)
    .catch(() => true);
  if (!first) return;
  await client.assistant.threads
    .setTitle({ channel_id: at.channel, thread_ts: at.threadTs, title })
    .catch((error: unknown) =>
      log.info({ err: error instanceof Error ? error.message : String(error) }, 'slack refused the thread title'),
    );
}

/** Answers one message (already claimed), as the file's comment says. Never throws (runInvocation). */
export async function answer(
  message: SlackUserMessage,
  meta: EventMeta,
  client: WebClient,
  deps: SlackEventDeps,
  invocation: MessageInvocation,
  signal: AbortSignal,
): Promise<void> {
  const { log, command, text } = invocation;
  const inChannel = meta.kind === 'mention';
  // Every answer goes into a thread but a DM's top-level `forget`, which forgets the DM's own.
  const threadTs = message.thread_ts ?? (inChannel || command !== 'forget' ? message.ts : undefined);
  const ctx = contextOf(message, meta, client, deps, invocation, { threadTs, signal });
  if (command === 'forget') {
    await runInvocation('forget', ctx, deps.core, () =>
      forget(ctx, deps.core, threadTs ? 'Forgetting a thread' : '/forget'),
    );
    return;
  }
  const titled =
    !inChannel && threadTs
      ? titleThread(client, deps, { team: meta.teamId, channel: message.channel, threadTs }, text, log)
      : undefined;
  const prompt = inChannel ? undefined : imagineText(text);
  const imagine = prompt === undefined ? undefined : deps.commands.find((c) => c.name === 'imagine');
  if (prompt !== undefined && imagine) {
    const asker = { user_id: message.user!, channel_id: message.channel };
    await runCommand(imagine, ctx, deps.core, () => readOptions(imagine, prompt, client, deps, asker));
  } else {
    await runInvocation('mention', ctx, deps.core, () => answerQuestion(message, meta, client, deps, invocation, ctx));
  }
  await titled;
}

/** The invocation's context: its conversation (the thread), its SlackReply, who asks. */
function contextOf(
  message: SlackUserMessage,
  meta: EventMeta,
  client: WebClient,
  deps: SlackEventDeps,
  invocation: MessageInvocation,
  at: { threadTs: string | undefined; signal: AbortSignal },
): CommandContext {
  const { log, ref } = invocation;
  const { threadTs } = at;
  const user = message.user!;
  const inChannel = meta.kind === 'mention';
  const ephemeral = userNotice(client, { channel: message.channel, user, threadTs, inChannel }, deps.core.scheduler);
  const native = {
    streaming: deps.streaming,
    recipient: inChannel ? { teamId: meta.teamId, userId: user } : undefined,
  };
  const where = { platform: 'slack', team: meta.teamId, channel: message.channel } as const;
  const locale = { user: deps.directory.locale(client, meta.teamId, user) };
  // The answer's own words (its buttons' labels, the thinking status) are the place's.
  const words = deps.core.languages.forPlace({ channelKey: channelKey(where), locale });
  const target = { team: meta.teamId, channel: message.channel, threadTs, continueInThread: false, native, words };
  return {
    platform: 'slack',
    conversationId: conversationKey({ ...where, thread: threadTs }),
    channelKey: channelKey(where),
    isDirectMessage: !inChannel,
    locale,
    user: deps.directory.user(client, { team: meta.teamId, id: user }),
    options: {},
    files: {},
    signal: at.signal,
    log,
    ref,
    startedAt: performance.now(),
    reply: new SlackReply(client, target, ephemeral, log),
  };
}

/**
 * Answers the question: with the thread the message is in when the bot keeps none for it
 * (thread.ts), or, in a DM asking to summarize a channel, the channel the user views.
 */
async function answerQuestion(
  message: SlackUserMessage,
  meta: EventMeta,
  client: WebClient,
  deps: SlackEventDeps,
  invocation: MessageInvocation,
  ctx: CommandContext,
): Promise<void> {
  const { text, log } = invocation;
  let context: MentionContext | undefined;
  let notice: Sentence | undefined;
  if (meta.kind === 'dm' && asksToSummarizeChannel(text)) {
    const at = { team: meta.teamId, user: message.user!, botUserId: meta.botUserId };
    context = await viewedChannelContext(client, at, deps);
  } else if (message.thread_ts && message.thread_ts !== message.ts) {
    // A message in a thread it started elsewhere: the thread is the conversation when the bot keeps none.
    const where = { team: meta.teamId, channel: message.channel, ts: message.ts, botUserId: meta.botUserId };
    const thread = await readThread(
      client,
      { ...where, threadTs: message.thread_ts, conversationId: ctx.conversationId },
      deps,
      log,
    );
    ({ context, notice } = thread);
  }
  // Lines under a public answer: in the place's words.
  const said = notice ? [(await deps.core.languages.forPlace(ctx)).say(notice)] : [];
  const notices = [...said, ...(invocation.late ? [LATE_NOTICE] : [])];
  const fileDeps = { client, downloader: deps.core.downloader, apiOrigin: deps.apiOrigin };
  await answerMention(ctx, deps.core, {
    text,
    attachments: (message.files ?? []).map((file) => slackFileAttachment(file, fileDeps)),
    ...(notices.length ? { notices } : {}),
    ...(context ? { context } : {}),
    ref: messageRef({ platform: 'slack', team: meta.teamId, channel: message.channel, ts: message.ts }),
  });
}
