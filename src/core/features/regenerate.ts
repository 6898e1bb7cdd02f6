/**
 * A finished answer asked for again, in place: a press of its **Regenerate** button sends the
 * same request (the body answer-state.ts kept: the same messages, model and sampling) again;
 * an edit of the mention it answered, within EDIT_REANSWER_MINUTES, sends it with the edited
 * text as the last user message. Either way the new answer streams (with Stop) over the
 * answer's messages (the refs answer-state.ts kept: page 1 into its first message, page 2 into
 * its second…; more pages follow as new messages, fewer leave the rest saying they were
 * replaced), ends with a Regenerate button again, and replaces the old exchange in the
 * history (state/history.ts `replaceExchange`) instead of adding one. It is admitted and
 * counted like any chat (quotas, tokens); one regeneration of an answer runs at a time.
 *
 * A press is checked when it runs, against the requester the bot stored and the presser's
 * admin rights now (as Stop's: delivery/stops.ts), and whether they may post there now
 * (rights.ts); an edit, against the stored requester. The request goes out as the configuration
 * of the day has it (kept-request.ts `requestToday`: its images downloaded again, the channel's
 * models and system prompt, the limits), and not at all when its state was dropped by its user's
 * bound or forgotten with its conversation (answer-index.ts): the presser is told which.
 */
import type { Logger } from '../../log.ts';
import type { Core } from '../core.ts';
import { beginAnswer } from '../delivery/answer-session.ts';
import { ForbiddenError, InputError, ShownError } from '../errors.ts';
import { type Sentence, sentence } from '../i18n/words.ts';
import { editClaims, storeKeys } from '../keys.ts';
import type { CommandContext, ComponentContext, ImageFinder, MessageHandle, ReplyChannel } from '../platform.ts';
import { ensureMayPost } from '../rights.ts';
import type { ChatMessage } from '../service/schemas.ts';
import type { GoneReason } from './answer-index.ts';
import { runRequest } from './answer-run.ts';
import {
  type AnswerState,
  answerOfMention,
  findAnswerState,
  type KeptRequest,
  type MentionAnswer,
} from './answer-state.ts';
import { startDeferral } from './deferral.ts';
import { replaceExchange } from './exchange.ts';
import { requestToday } from './kept-request.ts';
import { admit, reserveTokens } from './usage.ts';

/**
 * The sentence for a press of an answer whose state is gone, by why: its conversation forgotten
 * since (/forget), pushed out by its user's newer answers (REGENERATE_STATES_PER_USER), or expired.
 */
function goneSentence(gone: GoneReason | 'expired', core: Core): Sentence {
  if (gone === 'forgotten') return sentence('answers.regenerate.forgotten');
  return gone === 'dropped'
    ? sentence('answers.regenerate.dropped', { newest: core.limits.regenerateStatesPerUser })
    : sentence('answers.regenerate.expired');
}

/** How long a regeneration holds its answer at most, in ms (one whose process died frees it then). */
const HOLD_MS = 15 * 60_000;

/** How long an edit's claim is kept, in ms (a platform delivers an event again within minutes). */
const EDIT_CLAIM_TTL_MS = 60 * 60_000;

/**
 * Handles a press of `regenerate:<id>:<requester>` (`ctx.args[0]`: the answer's id): the stored
 * requester or an admin regenerates the answer into the pressed message.
 * @throws InputError when the state is gone (expired, dropped, forgotten: the sentence says
 *   which) or a regeneration of it runs; ForbiddenError for anyone else, or a presser who may
 *   not post there; as {@link rerun}.
 */
export async function pressRegenerate(ctx: ComponentContext, core: Core): Promise<void> {
  // The presser asked for the new answer when they pressed: a long one notifies them (answer-notice.ts).
  const startedAt = performance.now();
  const [id = ''] = ctx.args;
  const found = await findAnswerState(core, id);
  if (!('state' in found)) throw new InputError(goneSentence(found.gone, core));
  const { state } = found;
  if (!ctx.replyInPlace) throw new InputError('answers.regenerate.expired');
  // Refusals are the presser's alone (the runner tells them in their words).
  if (state.requesterId !== ctx.user.id && !(await ctx.user.isAdmin()))
    throw new ForbiddenError('answers.regenerate.not_yours');
  // The new answer rewrites public messages (and may post more) for the presser: only where they may post.
  await ensureMayPost(ctx.user);
  await ctx.acknowledge();
  // Without every message of the answer (a state kept before they were named, a channel the
  // bot's token may not see), the new answer starts in the pressed message, as the reply's first send.
  const inPlace = ctx.replyInPlace();
  const over = messagesOver(inPlace, state.messages);
  const run: CommandContext = {
    platform: ctx.platform,
    conversationId: state.conversationId,
    channelKey: state.channelKey,
    isDirectMessage: false,
    user: ctx.user,
    options: {},
    files: {},
    signal: ctx.signal,
    log: ctx.log,
    ref: ctx.ref,
    startedAt,
    // The presser's language tags: the new answer's public lines are in the place's words.
    ...(ctx.locale ? { locale: ctx.locale } : {}),
    reply: over ? inPlace : ctx.replyInPlace(),
  };
  await rerun(run, core, id, state, { over, images: ctx.postedImage });
}

/**
 * Handles for the messages at `refs` in `reply` (ReplyChannel.messageAt), in order.
 * @returns undefined when there are none, or the reply cannot write over one of them.
 */
function messagesOver(reply: ReplyChannel, refs: readonly string[] | undefined): MessageHandle[] | undefined {
  if (!refs?.length || !reply.messageAt) return undefined;
  const handles: MessageHandle[] = [];
  for (const ref of refs) {
    const handle = reply.messageAt(ref);
    if (!handle) return undefined;
    handles.push(handle);
  }
  return handles;
}

/** An edit of a message that mentioned the bot, as an adapter reads it. */
export interface MentionEdit {
  /** The message (keys.ts `messageRef`). */
  mention: string;
  /** Who wrote it (only its author can edit it). */
  authorId: string;
  /** Its text now, the bot's mention removed (as a mention's text). */
  text: string;
  /** When it was posted and when edited, ms since the epoch, as the platform says. */
  sentAt: number;
  editedAt: number;
}

/**
 * Whether an edit re-answers its mention: within EDIT_REANSWER_MINUTES of the message, by the
 * person whose question the bot answered, with a text that changed (and is not empty), and the
 * first delivery of this edit (a claim on the message and the edit's time, shared by every
 * instance). An edit left alone is logged at debug; a store that fails is told to the store's
 * health (logged once per outage) and the edit left alone.
 * @returns the answer to rewrite, or undefined when the edit does nothing. Never throws.
 */
export async function editToReanswer(
  core: Core,
  edit: MentionEdit,
  log: Logger,
): Promise<{ link: MentionAnswer; state: AnswerState } | undefined> {
  try {
    const found = await findEditToReanswer(core, edit);
    if (!found)
      log.debug(
        { mention: edit.mention },
        'edit left alone (outside the window, not the asker, same text, or a repeat)',
      );
    return found;
  } catch (error) {
    core.storeHealth.failed(error, log);
    return undefined;
  }
}

/** {@link editToReanswer}'s checks. @throws the store's error. */
async function findEditToReanswer(
  core: Core,
  edit: MentionEdit,
): Promise<{ link: MentionAnswer; state: AnswerState } | undefined> {
  const windowMs = core.limits.editReanswerMinutes * 60_000;
  const text = edit.text.trim();
  if (windowMs <= 0 || !text || edit.editedAt - edit.sentAt > windowMs) return undefined;
  const found = await answerOfMention(core, edit.mention);
  if (!found || found.state.requesterId !== edit.authorId || found.state.request.endpoint !== 'chat') return undefined;
  if (text === (found.state.prompt ?? '').trim()) return undefined;
  const first = await core.claims.claim(editClaims.edit(edit.mention, edit.editedAt), EDIT_CLAIM_TTL_MS);
  return first ? found : undefined;
}

/**
 * Re-answers an edited mention (found by {@link editToReanswer}) in `ctx`, over the answer's
 * messages (ReplyChannel.messageAt; the linked message alone for a state that names none; a
 * new reply when the reply can write over neither): the kept request with the edited text as
 * its last user message.
 * @param images finds the question's images again by their references (the adapter's).
 * @throws as {@link rerun}.
 */
export async function reanswerEdit(
  ctx: CommandContext,
  core: Core,
  found: { link: MentionAnswer; state: AnswerState },
  text: string,
  images?: ImageFinder,
): Promise<void> {
  const { link, state } = found;
  const prompt = text.trim();
  const over = messagesOver(ctx.reply, state.messages) ?? messagesOver(ctx.reply, [link.answer]);
  await rerun(ctx, core, link.id, state, { request: withQuestion(state.request, prompt), prompt, over, images });
}

/**
 * Sends a kept request again, as today's configuration has it (kept-request.ts
 * `requestToday`), into `ctx.reply`, written over `change.over` when given (with Stop; a
 * Regenerate button at the end, its state kept again under the same id with the new answer's
 * messages, its images still by reference) and replaces the exchange in the history: the
 * answer, and the question when `change.prompt` is given. A stopped answer replaces it as far
 * as it went, marked `[stopped]`, as a stopped chat is kept.
 * @throws InputError while another regeneration of the answer runs, or when the request cannot
 *   be made today (an image gone); QuotaError; what the request throws (as chat's); ShownError
 *   for an answer that did not end well.
 */
async function rerun(
  ctx: CommandContext,
  core: Core,
  id: string,
  state: AnswerState,
  change: {
    request?: KeptRequest;
    prompt?: string;
    over?: readonly MessageHandle[] | undefined;
    images?: ImageFinder | undefined;
  },
): Promise<void> {
  const held = storeKeys.regenerating(id);
  if (!(await core.store.setIfAbsent(held, HOLD_MS))) throw new InputError('answers.regenerate.running');
  try {
    await admit(ctx, core, 'chat');
    const kept = change.request ?? state.request;
    const today = await requestToday(ctx, core, state, kept, change.images);
    const { request } = today;
    const { text, images } = requestText(request);
    const reservation = await reserveTokens(ctx, core, text, { images, maxTokens: request.body.max_tokens });
    const words = await core.languages.forPlace(ctx);
    const session = beginAnswer(ctx, { scheduler: core.scheduler, stops: core.stops, over: change.over, words });
    const next: AnswerState = { ...state, request: kept, ...(change.prompt ? { prompt: change.prompt } : {}) };
    try {
      const result = await runRequest(ctx, core, request, {
        session,
        deferral: startDeferral(ctx),
        reservation,
        notes: [...state.notes, ...today.notes],
        json: state.json === true,
        images: state.images === true,
        keep: { id, state: () => next },
        feedback: { kind: state.kind, command: state.command ?? state.kind },
      });
      const question = change.prompt && [change.prompt, state.turns?.askedTail].filter(Boolean).join('\n');
      const answer = result.ending === 'stopped' ? `${result.text}\n[stopped]` : result.text;
      const keep = result.ending === 'stopped' || (result.ending === 'done' && result.text.trim() !== '');
      if (state.turns && keep) await replaceExchange(ctx, core, state.turns, { answer, question });
      if (result.ending !== 'done') throw new ShownError(result.error);
    } finally {
      session.close();
      await reservation.settle(0);
    }
  } finally {
    await core.store.release(held).catch((error: unknown) => core.storeHealth.failed(error, ctx.log));
  }
}

/** A chat request with `text` as its last user message's text (its files and images kept). */
function withQuestion(request: KeptRequest, text: string): KeptRequest {
  if (request.endpoint !== 'chat') return request;
  const messages = [...request.body.messages];
  const last = messages.at(-1);
  if (last?.role !== 'user') return request;
  const content: ChatMessage['content'] =
    typeof last.content === 'string'
      ? text
      : last.content.map((part, i) => (i === 0 && part.type === 'text' ? { ...part, text } : part));
  messages[messages.length - 1] = { ...last, content } as ChatMessage;
  return { endpoint: 'chat', body: { ...request.body, messages } };
}

/** A request's text (for the token reservation) and how many images it carries. */
function requestText(request: KeptRequest): { text: string; images: number } {
  if (request.endpoint === 'completions') return { text: request.body.prompt, images: 0 };
  let images = 0;
  const texts: string[] = [];
  for (const message of request.body.messages) {
    if (typeof message.content === 'string') texts.push(message.content);
    else
      for (const part of message.content) {
        if (part.type === 'text') texts.push(part.text);
        else images += 1;
      }
  }
  return { text: texts.join('\n'), images };
}
