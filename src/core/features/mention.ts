/**
 * The mention feature: a user mentions the bot (or writes to it in a DM), with or without
 * images; the answer streams in as a reply that has looked at the images (§4.1 image input)
 * and joins the conversation's history, exactly like /chat. Platform adapters decide when a
 * message is addressed to the bot and turn it into a {@link MentionRequest}.
 */

import type { Core } from '../core.ts';
import { InputError } from '../errors.ts';
import { collectImages, skippedLine } from '../media/attachments.ts';
import type { Attachment, CommandContext } from '../platform.ts';
import { chat } from './chat.ts';
import { startDeferral } from './deferral.ts';
import { subjectOf } from './usage.ts';

/** A message addressed to the bot, as an adapter hands it over. */
export interface MentionRequest {
  /** The message text, the bot's own mention removed and other mentions shown as names. */
  text: string;
  /** The message's own files first, then those of the message it replies to (one level). */
  attachments: readonly Attachment[];
  /** Sentences from the adapter to show under the answer (e.g. a replied-to message it could not read). */
  notices?: readonly string[];
}

/** The instruction sent when a message holds images and no text. */
export const DEFAULT_IMAGE_PROMPT = 'Describe this image.';
/** The same for several images. */
export const DEFAULT_IMAGES_PROMPT = 'Describe these images.';

/**
 * Answers a mention or DM in `ctx`'s conversation: downloads and prepares the images (capped,
 * at most `core.inputImages.maxCount`), then chats with the vision model when there are
 * images. Files not used are named in one line under the answer.
 * @throws InputError when there is neither text nor a usable image (the sentence says why);
 *   otherwise as {@link chat}.
 */
export async function answerMention(ctx: CommandContext, core: Core, request: MentionRequest): Promise<void> {
  // Under way while the images download; the answer's first text waits for it (chat's deferral).
  void startDeferral(ctx);
  const { images, skipped, notices } = await collectImages(request.attachments, core.inputImages, {
    images: core.images,
    key: subjectOf(ctx),
    signal: ctx.signal,
    log: ctx.log,
  });
  const notes = [...(request.notices ?? []), ...notices];
  const line = skippedLine(skipped);
  if (line) notes.push(line);
  const text = request.text.trim();
  const prompt = text || (images.length > 1 ? DEFAULT_IMAGES_PROMPT : images.length === 1 ? DEFAULT_IMAGE_PROMPT : '');
  if (!prompt) {
    throw new InputError(
      notes.length ? notes.join('\n') : 'Ask me something after the mention, or attach an image for me to look at.',
    );
  }
  await chat(ctx, core, { prompt, images, notes });
}
