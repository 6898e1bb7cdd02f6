/**
 * A text answer's request as its answer state keeps it (answer-state.ts), and as Regenerate or
 * an edited mention sends it again: checked then against the configuration of the day.
 *
 * Kept: the request body as sent, except each image a platform keeps (a Discord message's
 * attachment, a Slack file: `Attachment.ref`), whose `image_url` becomes `kept-image:<n>`, the
 * state naming the image's reference (`imageRefs[n]`). A state is then a few kilobytes
 * however many images the question carried; an image with no lasting place (a Discord slash
 * command's upload, a link) is kept whole, within the state's cap.
 *
 * Sent again ({@link requestToday}): each kept image downloaded again by its reference and
 * prepared as a new one is (the image workers, today's MAX_INPUT_IMAGES and byte caps), the
 * channel's system prompt and models of today (/settings; a model the user chose stays),
 * the earlier turns fitted to today's HISTORY_TOKEN_BUDGET, `max_tokens` held to today's
 * MAX_TOKENS_LIMIT.
 */

import type { Core } from '../core.ts';
import type { Note } from '../delivery/answer-stream.ts';
import { InputError } from '../errors.ts';
import { joinSentences, sentence } from '../i18n/words.ts';
import { collectImages, skippedLine } from '../media/attachments.ts';
import type { PreparedImage } from '../media/images.ts';
import { type Attachment, AttachmentAccessError, type CommandContext, type ImageFinder } from '../platform.ts';
import type { ChatMessage, ContentPart } from '../service/schemas.ts';
import { fitHistory } from '../tokens.ts';
import type { AnswerState, KeptImageRef, KeptRequest } from './answer-state.ts';
import { subjectOf } from './usage.ts';

/** The `image_url` of an image kept by reference: this prefix, then its index in `imageRefs`. */
export const KEPT_IMAGE = 'kept-image:';

/**
 * Where the platform keeps each image (its source's `ref`, where it has one), by the image's
 * data URL: what {@link keptForm} keeps instead of the bytes.
 * @param sources the attachment each image was made from (`sources[i]` is `images[i]`'s).
 */
export function imageRefsOf(
  images: readonly PreparedImage[],
  sources: readonly Attachment[],
): Map<string, KeptImageRef> {
  const refs = new Map<string, KeptImageRef>();
  images.forEach((image, i) => {
    const ref = sources[i]?.ref;
    if (ref) refs.set(image.url, { ref, name: image.name });
  });
  return refs;
}

/**
 * The request as a state keeps it: each image whose data URL `refs` names replaced by
 * `kept-image:<n>`, `imageRefs[n]` its reference.
 * @param refs the references of the request's images, by their data URLs.
 */
export function keptForm(
  request: KeptRequest,
  refs: ReadonlyMap<string, KeptImageRef> | undefined,
): { request: KeptRequest; imageRefs: KeptImageRef[] } {
  const imageRefs: KeptImageRef[] = [];
  if (request.endpoint !== 'chat' || !refs?.size) return { request, imageRefs };
  const messages = request.body.messages.map((message): ChatMessage => {
    if (typeof message.content === 'string') return message;
    const content = message.content.map((part): ContentPart => {
      const ref = part.type === 'image_url' ? refs.get(part.image_url.url) : undefined;
      if (!ref) return part;
      imageRefs.push(ref);
      return { type: 'image_url', image_url: { url: `${KEPT_IMAGE}${imageRefs.length - 1}` } };
    });
    return { ...message, content } as ChatMessage;
  });
  return { request: { endpoint: 'chat', body: { ...request.body, messages } }, imageRefs };
}

/**
 * A kept request as it is sent again today (see the file's comment), with the lines to show
 * under its answer (earlier turns the smaller history budget left out).
 * @param request the state's request, or an edited mention's version of it.
 * @param find finds the kept images again (ComponentContext.postedImage, an edit's adapter).
 * @throws InputError when an image is gone or cannot be used today, or there are more than are
 *   read today; ServiceError subclasses when the channel's model needs the service's list; the
 *   platform's errors finding an image; the abort of `ctx.signal`.
 */
export async function requestToday(
  ctx: CommandContext,
  core: Core,
  state: Pick<AnswerState, 'channelKey' | 'channelModel' | 'imageRefs'>,
  request: KeptRequest,
  find: ImageFinder | undefined,
): Promise<{ request: KeptRequest; notes: Note[] }> {
  const channel = await core.models.forChannel(state.channelKey, ctx.signal);
  const maxTokens = request.body.max_tokens && Math.min(request.body.max_tokens, core.limits.maxTokens);
  const held = maxTokens === undefined ? {} : { max_tokens: maxTokens };
  if (request.endpoint === 'completions') {
    const model = state.channelModel ? channel.chat.value : request.body.model;
    return { request: { endpoint: 'completions', body: { ...request.body, model, ...held } }, notes: [] };
  }
  const model =
    state.channelModel === 'vision'
      ? channel.vision.value
      : state.channelModel === 'chat'
        ? channel.chat.value
        : request.body.model;
  const images = await imagesAgain(ctx, core, request.body.messages, state.imageRefs ?? [], find);
  const messages = request.body.messages.map((m) => withImages(m, images));
  // The channel's system prompt leads (chat.ts): today's replaces the one sent then.
  const start = messages.findIndex((m) => m.role !== 'system');
  const system: ChatMessage[] = channel.systemPrompt ? [{ role: 'system', content: channel.systemPrompt }] : [];
  const question = messages.slice(-1);
  const earlier = messages.slice(Math.max(0, start), -1);
  const { kept, dropped } = fitHistory(earlier, [...system, ...question], core.limits.historyTokenBudget);
  const notes = dropped > 0 ? [sentence('answers.history.left_out_today', { count: dropped })] : [];
  const body = { ...request.body, model, messages: [...system, ...kept, ...question], ...held };
  return { request: { endpoint: 'chat', body }, notes };
}

/**
 * The kept images downloaded again and prepared (media/attachments.ts `collectImages`, today's
 * caps), as data URLs in `refs`' order.
 * @throws as {@link requestToday}.
 */
async function imagesAgain(
  ctx: CommandContext,
  core: Core,
  messages: readonly ChatMessage[],
  refs: readonly KeptImageRef[],
  find: ImageFinder | undefined,
): Promise<string[]> {
  const count = messages.reduce(
    (sum, m) => sum + (typeof m.content === 'string' ? 0 : m.content.filter((p) => p.type === 'image_url').length),
    0,
  );
  if (count > core.inputImages.maxCount)
    throw new InputError('answers.regenerate.too_many_images', { count, max: core.inputImages.maxCount });
  if (!refs.length) return [];
  const found = await Promise.all(refs.map((kept) => (find ? find(kept.ref) : undefined))).catch((error: unknown) => {
    // The platform will not let the bot read files at all (Slack without files:read): its sentence.
    throw error instanceof AttachmentAccessError ? new InputError(error.sentence) : error;
  });
  const gone = refs.find((_, i) => !found[i]);
  if (gone) throw new InputError('answers.regenerate.image_gone', { name: gone.name });
  const files = found.map((image, i) => ({ ...image!.file, name: refs[i]!.name }));
  const work = { images: core.images, key: subjectOf(ctx), signal: ctx.signal, log: ctx.log };
  const collected = await collectImages(files, core.inputImages, work);
  if (collected.images.length < refs.length) {
    const reasons = joinSentences([...collected.notices, skippedLine(collected.skipped)]);
    throw reasons
      ? new InputError('answers.regenerate.images_unusable_why', { reasons })
      : new InputError('answers.regenerate.images_unusable');
  }
  return collected.images.map((image) => image.url);
}

/** A message with its `kept-image:<n>` parts given their images again. */
function withImages(message: ChatMessage, images: readonly string[]): ChatMessage {
  if (typeof message.content === 'string') return message;
  const content = message.content.map((part): ContentPart => {
    if (part.type !== 'image_url' || !part.image_url.url.startsWith(KEPT_IMAGE)) return part;
    const url = images[Number(part.image_url.url.slice(KEPT_IMAGE.length))];
    // A kept image always has its index (keptForm); one without would be a state written by hand.
    if (url === undefined) throw new InputError('answers.regenerate.images_unusable');
    return { type: 'image_url', image_url: { url } };
  });
  return { ...message, content } as ChatMessage;
}
