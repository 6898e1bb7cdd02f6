/**
 * The chat feature: history + prompt (+ files, images) → streamed chat completion (§4.1) → a reply
 * edited in place as tokens arrive → both turns appended to the conversation's history.
 * (`/complete`, which streams the same way without history: complete.ts.)
 */

import type { Core } from '../core.ts';
import { type AnswerSession, beginAnswer } from '../delivery/answer-session.ts';
import type { Note } from '../delivery/answer-stream.ts';
import { sendOnce } from '../delivery/one-off.ts';
import type { StreamingReply } from '../delivery/streaming-reply.ts';
import { ShownError, withReference } from '../errors.ts';
import { sentence, type Words } from '../i18n/words.ts';
import { imagesNote } from '../media/attachments.ts';
import type { PreparedImage } from '../media/images.ts';
import { type ContextFile, filePart, filesNote } from '../media/text-files.ts';
import type { CommandContext } from '../platform.ts';
import { howToForget, imageResultsNotPosted } from '../sentences.ts';
import type { ChatCompletionRequest, ChatMessage, ContentPart } from '../service/schemas.ts';
import { STORE_DOWN_NOTE } from '../state/health.ts';
import type { StoredMessage } from '../state/history.ts';
import type { TokenReservation } from '../state/quotas.ts';
import { estimateMessageTokens, fitHistory } from '../tokens.ts';
import { extractImageLinks } from './answer.ts';
import { runRequest } from './answer-run.ts';
import { type AnswerState, type KeptImageRef, type KeptRequest, newAnswerId } from './answer-state.ts';
import { type Deferral, startDeferral } from './deferral.ts';
import { conversationsOf, ExchangeWrites, linkAnswer, newExchange } from './exchange.ts';
import { keptForm } from './kept-request.ts';
import { admit, reserveTokens } from './usage.ts';

/** Sampling parameters a user may set (§4.1; ranges checked by the command definitions). */
export type Sampling = Partial<
  Pick<ChatCompletionRequest, 'temperature' | 'max_tokens' | 'top_p' | 'frequency_penalty' | 'presence_penalty'>
>;

/** A chat request from a user. */
export interface ChatRequest {
  prompt: string;
  /** Model id; when absent, the channel's vision model for a request with images, else its chat model. */
  model?: string;
  /** temperature, max_tokens, top_p, frequency_penalty, presence_penalty: sent only when given. */
  sampling?: Sampling;
  /** §4.1 web_search; `false` (the server's default) when absent. */
  webSearch?: false | 'auto' | 'force' | 'images';
  /** §4.1 JSON mode: the answer is parsed and shown pretty-printed. */
  json?: boolean;
  /** Images for vision (§4.1 image input), already prepared by media/images.ts. */
  images?: PreparedImage[];
  /**
   * Where the platform keeps the request's images (the question's and the context's), by their
   * data URLs (`PreparedImage.url` → the Attachment's `ref` and name): the answer's Regenerate
   * state keeps these instead of the bytes (kept-request.ts).
   */
  imageRefs?: ReadonlyMap<string, KeptImageRef>;
  /** Files as context (text files, PDFs' text), each sent as a text part after the prompt (media/files.ts). */
  files?: ContextFile[];
  /** Short lines shown under the answer (e.g. files not used), not stored in the history. */
  notes?: Note[];
  /** The place's words (core.languages.forPlace), when the caller has them already; else looked up. */
  words?: Words;
  /**
   * Earlier messages the platform holds (a mention's reply chain or thread), oldest first: sent
   * instead of the stored history (`replacesHistory`) or after it; trimmed to the history budget
   * like it. Not stored.
   */
  context?: { messages: ChatMessage[]; replacesHistory: boolean };
  /** The context holds images: the channel's vision model answers when no `model` is given. */
  vision?: boolean;
  /**
   * A mention's answer: the user's own text (an edit is compared against it) and where the
   * mention is (keys.ts `messageRef`), to find the answer again when it is edited.
   */
  mention?: { text: string; ref?: string | undefined };
  /** The message action answered (its id), when one is: what the answer's feedback record names as its command. */
  command?: string;
}

/**
 * Answers `request` in `ctx`'s conversation, streaming the answer into the reply.
 * The channel's system prompt (/settings) comes first; the history is trimmed, oldest turns
 * first, to the history budget (the answer then ends with a line saying how many were left
 * out). Once the answer's stream ended well, the user's and the assistant's turns are appended
 * to the history before its final write (images and files are noted as `[2 images: cat.webp,
 * dog.gif]`, `[1 file: a.py]`, never stored; a store that does not take them keeps them waiting,
 * and the final write says so once per conversation: exchange.ts `remember`); a failed answer
 * leaves the history as it was, and one whose last writes failed keeps what the user was shown of
 * it, marked as cut, or nothing (exchange.ts `ExchangeWrites`).
 * A finished answer carries a Regenerate button (answer-state.ts, regenerate.ts), except one
 * whose image results (web search mode "images") follow it.
 * @throws as answer-stream.ts `streamAnswer`; ImagesNotSupportedError when the service refuses the
 *   images for the model (the sentence names DEFAULT_VISION_MODEL).
 */
export async function chat(ctx: CommandContext, core: Core, request: ChatRequest): Promise<void> {
  await admit(ctx, core, 'chat');
  const images = request.images ?? [];
  const files = (request.files ?? []).map(filePart);
  const reservation = await reserveTokens(ctx, core, [request.prompt, ...files].join('\n'), {
    images: images.length,
    maxTokens: request.sampling?.max_tokens,
  });
  try {
    // The request is made ready (reads and all) in a function of its own, which is over before
    // the answer streams: only this frame and answerChat's wait while it does.
    const prepared = await prepareChat(ctx, core, request, reservation);
    // The answer's public lines (queue, notes, buttons) are in the place's words.
    const session = beginAnswer(ctx, { scheduler: core.scheduler, stops: core.stops, words: prepared.words });
    try {
      await answerChat(ctx, core, request, { ...prepared, session, reservation });
    } finally {
      session.close();
    }
  } finally {
    // What was reserved and never counted (no answer came) is given back.
    await reservation.settle(0);
  }
}

/**
 * What {@link chat} sends, once the request's tokens are reserved: the model, the messages
 * (system prompt, the history that fits, the question), the notes under the answer, the
 * deferral under way, and the place's words (core.languages.forPlace) the answer is framed in.
 */
async function prepareChat(
  ctx: CommandContext,
  core: Core,
  request: ChatRequest,
  reservation: TokenReservation,
): Promise<{
  model: string;
  sent: ChatMessage[];
  images: PreparedImage[];
  notes: Note[];
  deferral: Deferral;
  at: number;
  words: Words;
}> {
  // Before the history is read: a /forget after it refuses this answer's Regenerate (answer-index.ts).
  const at = Date.now();
  const deferral = startDeferral(ctx);
  const images = request.images ?? [];
  // The history is read while the channel's settings are (each a store query a command waits for).
  const reading = readHistory(ctx, core, request.context);
  const placeWords = request.words ?? core.languages.forPlace(ctx);
  const channel = await core.models.forChannel(ctx.channelKey, ctx.signal);
  const model = request.model ?? (images.length || request.vision ? channel.vision.value : channel.chat.value);
  const files = (request.files ?? []).map((file): ContentPart => ({ type: 'text', text: filePart(file) }));
  const content: string | ContentPart[] =
    images.length || files.length
      ? [
          { type: 'text', text: request.prompt },
          ...files,
          ...images.map((i): ContentPart => ({ type: 'image_url', image_url: { url: i.url } })),
        ]
      : request.prompt;
  const system: ChatMessage[] = channel.systemPrompt ? [{ role: 'system', content: channel.systemPrompt }] : [];
  const question: ChatMessage = { role: 'user', content };
  const notes: Note[] = [...(ctx.notices ?? []), ...(request.notes ?? [])];
  const { history, storeDown } = await reading;
  if (storeDown) notes.push(STORE_DOWN_NOTE);
  const { kept, dropped } = fitHistory(history, [...system, question], core.limits.historyTokenBudget);
  if (dropped > 0)
    notes.push(sentence('answers.history.left_out', { count: dropped, how_to_forget: howToForget(ctx) }));

  const sent = [...system, ...kept, question];
  // Where a token quota holds, the history sent joins the reservation (a store write nothing waits for; settling corrects it).
  if (reservation.reserved > 0) void reservation.extend(estimateMessageTokens([...system, ...kept]));
  return { model, sent, images, notes, deferral, at, words: await placeWords };
}

/**
 * The history sent with a chat: the conversation's stored one (a store that is down gives none,
 * `storeDown`) with its turns that wait for the store (state/pending-turns.ts), then the
 * request's context; the context alone when it replaces the history.
 */
async function readHistory(
  ctx: CommandContext,
  core: Core,
  context: ChatRequest['context'],
): Promise<{ history: ChatMessage[]; storeDown: boolean }> {
  if (context?.replacesHistory) return { history: context.messages, storeDown: false };
  const asChat = (turns: StoredMessage[]) => turns.map(({ role, content }): ChatMessage => ({ role, content }));
  // The conversation's turns that wait for the store (it did not take them) are part of it meanwhile.
  const withWaiting = (stored: StoredMessage[]) => asChat(core.pendingTurns.withWaiting(ctx.conversationId, stored));
  try {
    const stored = await core.history.get(ctx.conversationId);
    core.storeHealth.succeeded(ctx.log);
    return { history: [...withWaiting(stored), ...(context?.messages ?? [])], storeDown: false };
  } catch (error) {
    const storeDown = core.storeHealth.failed(error, ctx.log, ctx.conversationId);
    return { history: [...withWaiting([]), ...(context?.messages ?? [])], storeDown };
  }
}

/** The request to the service and the streamed answer of {@link chat}. */
async function answerChat(
  ctx: CommandContext,
  core: Core,
  request: ChatRequest,
  prepared: {
    model: string;
    sent: ChatMessage[];
    images: PreparedImage[];
    notes: Note[];
    session: AnswerSession;
    deferral: Deferral;
    reservation: TokenReservation;
    at: number;
  },
): Promise<void> {
  const { model, sent, images, notes, session, deferral, reservation, at } = prepared;
  const body: KeptRequest = {
    endpoint: 'chat',
    body: {
      model,
      messages: sent,
      ...request.sampling,
      ...(request.webSearch ? { web_search: request.webSearch } : {}),
      ...(request.json ? { response_format: 'json' as const } : {}),
    },
  };
  // The history keeps notes of the files and images, never their content.
  const askedTail = [filesNote(request.files ?? []), imagesNote(images)].filter(Boolean).join('\n');
  const asked = [request.prompt, askedTail].filter(Boolean).join('\n');
  const exchange = newExchange(askedTail);
  const id = newAnswerId();
  const vision = images.length > 0 || request.vision === true;
  // Image results are posted after the answer, which a new answer could not replace: no Regenerate.
  const regenerable = request.webSearch !== 'images';
  const kind = request.mention ? 'mention' : 'chat';
  // Images the platform keeps are kept by reference, not as bytes (kept-request.ts).
  const kept = keptForm(body, request.imageRefs);
  const state = (): AnswerState => ({
    version: 1,
    requesterId: ctx.user.id,
    conversationId: ctx.conversationId,
    channelKey: ctx.channelKey,
    kind,
    request: kept.request,
    notes,
    turns: { ...exchange, conversations: conversationsOf(ctx) },
    at,
    ...(request.model === undefined ? { channelModel: vision ? 'vision' : 'chat' } : {}),
    ...(kept.imageRefs.length ? { imageRefs: kept.imageRefs } : {}),
    ...(request.json ? { json: true } : {}),
    ...(vision ? { images: true } : {}),
    ...(request.mention?.text ? { prompt: request.mention.text } : {}),
    ...(request.mention?.ref ? { mention: request.mention.ref } : {}),
    ...(request.command ? { command: request.command } : {}),
  });
  // Stored before the final write, which says when it could not be; what was shown of it when writes fail.
  const history = new ExchangeWrites(ctx, core, { asked, exchange, session });
  const run = await history.answer(() =>
    runRequest(ctx, core, body, {
      session,
      deferral,
      reservation,
      notes,
      json: request.json === true,
      images: vision,
      ...(regenerable ? { keep: { id, state } } : {}),
      beforeFinal: (shown) => history.beforeFinal(shown),
      feedback: { kind, command: request.command ?? kind },
    }),
  );
  // Stopped or cut: a failed command, already told in the message.
  await history.ended(run.ending, run.text);
  if (run.ending !== 'done') throw new ShownError(run.error);
  if (request.mention?.ref) await linkAnswer(ctx, core, request.mention.ref, id, session.reply.lastMessageRef);
  if (request.webSearch === 'images') await postImageResults(ctx, core, run.text, session.reply);
}

/**
 * Posts the image results of web search mode "images" (§4.1 web search modes: at most 10 image
 * links found in the answer) as a gallery (Discord: a Media Gallery of the links; Slack: image
 * blocks), after the exchange was stored: a post the platform refuses is
 * told to the user with the reference, and the answer and its history stay as they are.
 * @throws ShownError wrapping the platform's refusal (the runner logs it once).
 */
async function postImageResults(ctx: CommandContext, core: Core, answer: string, reply: StreamingReply): Promise<void> {
  const links = extractImageLinks(answer).slice(0, 10);
  if (!links.length) return;
  try {
    await sendOnce(reply.scheduler, ctx.reply, { content: '', imageLinks: links, gallery: true }, reply.messageCount);
  } catch (error) {
    const words = await core.languages.forUser(ctx);
    const explained = ctx.reply.explain?.(error);
    await ctx.reply.sendEphemeral(words.say(withReference(imageResultsNotPosted(explained), ctx.ref)));
    throw new ShownError(error);
  }
}
